/**
 * src/consortium/weight-floor.ts: the weight floor, largest share and effective number (issues 27 A1,
 * 32 W1) — the lift, the cap, the bounds they guarantee, the checks of the parameters and of a plan.
 * The lift's known answers use the floor alone (s = 0.9, m = 1: `LOOSE`), the cap's the defaults.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  capWeights,
  checkWeightBounds,
  DEFAULT_WEIGHT_BOUNDS,
  effectiveSilos,
  floorWeights,
  roundFloor,
  weightBoundsOf,
  weightBoundsViolation,
} from '../../src/consortium/weight-floor.js';

/** The floor alone (issue 27's defaults, no effective-number bound). */
const LOOSE = { weightFloor: 0.1, maxWeightShare: 0.9, minEffectiveSilos: 1 };

describe('floorWeights', () => {
  it('lifts the weights below f_k·max and leaves the others bit for bit', () => {
    expect(floorWeights([1.6, 0], LOOSE)).toEqual([1.6, lifted(roundFloor(2, LOOSE), 1.6)]);
    expect(floorWeights([5, 0, 0, 0, 0], LOOSE)).toEqual([5, 0.5, 0.5, 0.5, 0.5]);
    expect(floorWeights([100, 30, 12], LOOSE)).toEqual([100, 30, 12]);
    expect(floorWeights([100, 30, 2], LOOSE)).toEqual([100, 30, 10]);
  });

  it('uses a public scale and round size when the caller knows only its own weight', () => {
    expect(floorWeights([3], LOOSE, { scale: 100, k: 4 })).toEqual([10]);
    expect(floorWeights([30], LOOSE, { scale: 100, k: 4 })).toEqual([30]);
  });

  it('keeps an aggregation of nothing (all 0) and refuses negative or non-finite weights', () => {
    expect(floorWeights([0, 0], LOOSE)).toEqual([0, 0]);
    expect(() => floorWeights([1, -1], LOOSE)).toThrow(/weights\[1\]: expected a finite number ≥ 0/);
    expect(() => floorWeights([1, Number.NaN], LOOSE)).toThrow(/weights\[1\]/);
  });

  it('property: every lifted plan of k ≥ 3 keeps ŵ ≥ f and every share ≤ s, in floating point', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 3, maxLength: 12 }),
        fc.double({ min: 1e-6, max: 1, noNaN: true }),
        fc.double({ min: 0.5, max: 0.999999, noNaN: true }),
        (weights, weightFloor, maxWeightShare) => {
          fc.pre(Math.max(...weights) > 0);
          const b = { weightFloor, maxWeightShare, minEffectiveSilos: 1 };
          const out = floorWeights(weights, b);
          const max = Math.max(...out);
          expect(max).toBe(Math.max(...weights));
          for (const [j, w] of out.entries()) {
            expect(w / max).toBeGreaterThanOrEqual(roundFloor(out.length, b));
            if (weights[j]! / max >= roundFloor(out.length, b)) expect(w).toBe(weights[j]);
          }
          expect(
            weightBoundsViolation(
              out.map((_, j) => j),
              out,
              b,
            ),
          ).toBeUndefined();
        },
      ),
    );
  });
});

describe('roundFloor and the parameters', () => {
  it('raises the floor so that one silo holds at most s', () => {
    expect(roundFloor(2, LOOSE)).toBeCloseTo(1 / 9, 15);
    expect(roundFloor(3, LOOSE)).toBe(0.1);
    expect(roundFloor(2, DEFAULT_WEIGHT_BOUNDS)).toBe(1);
    expect(roundFloor(3, DEFAULT_WEIGHT_BOUNDS)).toBe(0.5);
  });

  it('refuses a floor outside (0, 1] or a share outside [0.5, 1), naming the field', () => {
    expect(() => checkWeightBounds({ ...LOOSE, weightFloor: 0 }, 'encoding')).toThrow(
      /^encoding\.weightFloor: expected a number in \(0, 1\]/,
    );
    expect(() => checkWeightBounds({ ...LOOSE, maxWeightShare: 1 }, 'encoding')).toThrow(
      /^encoding\.maxWeightShare: expected a number in \[0\.5, 1\)/,
    );
    expect(() => weightBoundsOf({ maxWeightShare: 0.4 })).toThrow(/^secureAggregation\.maxWeightShare/);
    expect(() => checkWeightBounds({ ...LOOSE, minEffectiveSilos: 0.5 }, 'encoding')).toThrow(
      /^encoding\.minEffectiveSilos: expected a number in \[1, 255\]/,
    );
    expect(weightBoundsOf(undefined)).toEqual({
      weightFloor: 0.1,
      maxWeightShare: 0.5,
      minEffectiveSilos: 3,
    });
  });
});

describe('weightBoundsViolation', () => {
  it('names a weight below the floor, a share above s, an all-zero plan', () => {
    expect(weightBoundsViolation([3, 4, 5], [1, 0, 0.2], LOOSE)).toEqual({
      field: 'weightFloor',
      detail: expect.stringMatching(/silo 4's normalized weight 0 is below the floor 0\.1/),
    });
    expect(weightBoundsViolation([0, 1, 2], [1, 0.1, 0.1], { ...LOOSE, maxWeightShare: 0.5 })).toEqual({
      field: 'maxWeightShare',
      detail: expect.stringMatching(/silo 0 would hold 0\.83\d* of Σ w/),
    });
    expect(weightBoundsViolation([0, 1, 2], [0, 0, 0], LOOSE)?.detail).toMatch(/all 0/);
    expect(weightBoundsViolation([0, 1, 2], [1, 0.2, 0.2], LOOSE)).toBeUndefined();
    expect(weightBoundsViolation([0, 1, 2, 3], [1, 1, 0.1, 0.1], DEFAULT_WEIGHT_BOUNDS)).toEqual({
      field: 'minEffectiveSilos',
      detail: expect.stringMatching(/give 2\.39\d* effective participants .* below the consortium's 3/),
    });
  });

  it('refuses fewer than 3 selected silos, whatever the weights', () => {
    for (const selected of [[3], [0, 1]])
      expect(
        weightBoundsViolation(
          selected,
          selected.map(() => 1),
          LOOSE,
        ),
      ).toEqual({
        field: 'selected',
        detail: expect.stringMatching(/fewer than 3/),
      });
  });
});

describe('capWeights', () => {
  it('leaves weights that keep the bounds as floorWeights leaves them', () => {
    expect(capWeights([100, 90, 80, 70], DEFAULT_WEIGHT_BOUNDS)).toEqual([100, 90, 80, 70]);
  });

  it('clips the largest weights (water-filling) until (Σw)²/Σw² ≥ m and no share exceeds s', () => {
    // FedAvg by example counts, one large silo: the others are unchanged, the large one comes down.
    const b = { ...LOOSE, minEffectiveSilos: 3 };
    const w = capWeights([1000, 100, 100, 100, 100], b);
    expect(w.slice(1)).toEqual([100, 100, 100, 100]);
    expect(w[0]!).toBeLessThan(1000);
    expect(effectiveSilos(w)).toBeGreaterThanOrEqual(3);
    expect(effectiveSilos(w)).toBeCloseTo(3, 9);
    // Three silos and m = 3: only equal weights keep it (the floor first lifts 1 and 3 to 3.5).
    // (to the bisection's last halving: within 1e-7 relative, and the same bits every time).
    for (const x of capWeights([7, 3, 1], DEFAULT_WEIGHT_BOUNDS)) expect(x / 3.5 - 1).toBeLessThan(1e-7);
  });

  it('returns a round too small to keep the bounds floored, for the check to refuse', () => {
    expect(capWeights([5, 1], DEFAULT_WEIGHT_BOUNDS)).toEqual([5, 5]);
    expect(weightBoundsViolation([0, 1], [5, 5], DEFAULT_WEIGHT_BOUNDS)?.field).toBe('selected');
  });

  it('property: any k ≥ 3 weights, capped, keep every bound; same input, same bits', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 3, maxLength: 12 }),
        fc.double({ min: 1e-6, max: 1, noNaN: true }),
        fc.double({ min: 0.5, max: 0.999999, noNaN: true }),
        fc.double({ min: 1, max: 3, noNaN: true }),
        (weights, weightFloor, maxWeightShare, minEffectiveSilos) => {
          fc.pre(Math.max(...weights) > 0);
          const b = { weightFloor, maxWeightShare, minEffectiveSilos };
          const out = capWeights(weights, b);
          expect(capWeights(weights, b)).toEqual(out);
          const ids = out.map((_, j) => j);
          expect(weightBoundsViolation(ids, out, b)).toBeUndefined();
          // Only clipped from above: no weight grows past its floored value.
          const floored = floorWeights(weights, b);
          for (const [j, x] of out.entries()) expect(x).toBeLessThanOrEqual(floored[j]!);
        },
      ),
    );
  });
});

/** f·scale rounded up until it divides back to ≥ f (weight-floor.ts's `lifted`). */
function lifted(floor: number, scale: number): number {
  let x = floor * scale;
  while (x / scale < floor) x += Math.abs(x) * Number.EPSILON;
  return x;
}
