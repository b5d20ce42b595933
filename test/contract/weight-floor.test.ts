/**
 * src/contract/weight-floor.ts: the weight floor and largest share (issue 27 A1) — the lift, the bound it
 * guarantees, the checks of the parameters and of a plan.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkWeightBounds,
  DEFAULT_WEIGHT_BOUNDS,
  floorWeights,
  roundFloor,
  weightBoundsOf,
  weightBoundsViolation,
} from '../../src/contract/weight-floor.js';

describe('floorWeights', () => {
  it('lifts the weights below f_k·max and leaves the others bit for bit', () => {
    expect(floorWeights([1.6, 0], DEFAULT_WEIGHT_BOUNDS)).toEqual([
      1.6,
      lifted(roundFloor(2, DEFAULT_WEIGHT_BOUNDS), 1.6),
    ]);
    expect(floorWeights([5, 0, 0, 0, 0], DEFAULT_WEIGHT_BOUNDS)).toEqual([5, 0.5, 0.5, 0.5, 0.5]);
    expect(floorWeights([100, 30, 12], DEFAULT_WEIGHT_BOUNDS)).toEqual([100, 30, 12]);
    expect(floorWeights([100, 30, 2], DEFAULT_WEIGHT_BOUNDS)).toEqual([100, 30, 10]);
  });

  it('uses a public scale and round size when the caller knows only its own weight', () => {
    expect(floorWeights([3], DEFAULT_WEIGHT_BOUNDS, { scale: 100, k: 4 })).toEqual([10]);
    expect(floorWeights([30], DEFAULT_WEIGHT_BOUNDS, { scale: 100, k: 4 })).toEqual([30]);
  });

  it('keeps an aggregation of nothing (all 0) and refuses negative or non-finite weights', () => {
    expect(floorWeights([0, 0], DEFAULT_WEIGHT_BOUNDS)).toEqual([0, 0]);
    expect(() => floorWeights([1, -1], DEFAULT_WEIGHT_BOUNDS)).toThrow(
      /weights\[1\]: expected a finite number ≥ 0/,
    );
    expect(() => floorWeights([1, Number.NaN], DEFAULT_WEIGHT_BOUNDS)).toThrow(/weights\[1\]/);
  });

  it('property: every lifted plan of k ≥ 2 keeps ŵ ≥ f and every share ≤ s, in floating point', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 2, maxLength: 12 }),
        fc.double({ min: 1e-6, max: 1, noNaN: true }),
        fc.double({ min: 0.5, max: 0.999999, noNaN: true }),
        (weights, weightFloor, maxWeightShare) => {
          fc.pre(Math.max(...weights) > 0);
          const b = { weightFloor, maxWeightShare };
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
    expect(roundFloor(2, DEFAULT_WEIGHT_BOUNDS)).toBeCloseTo(1 / 9, 15);
    expect(roundFloor(3, DEFAULT_WEIGHT_BOUNDS)).toBe(0.1);
    expect(roundFloor(2, { weightFloor: 0.1, maxWeightShare: 0.5 })).toBe(1);
  });

  it('refuses a floor outside (0, 1] or a share outside [0.5, 1), naming the field', () => {
    expect(() => checkWeightBounds({ weightFloor: 0, maxWeightShare: 0.9 }, 'encoding')).toThrow(
      /^encoding\.weightFloor: expected a number in \(0, 1\]/,
    );
    expect(() => checkWeightBounds({ weightFloor: 0.1, maxWeightShare: 1 }, 'encoding')).toThrow(
      /^encoding\.maxWeightShare: expected a number in \[0\.5, 1\)/,
    );
    expect(() => weightBoundsOf({ maxWeightShare: 0.4 })).toThrow(/^secureAggregation\.maxWeightShare/);
    expect(weightBoundsOf(undefined)).toEqual({ weightFloor: 0.1, maxWeightShare: 0.9 });
  });
});

describe('weightBoundsViolation', () => {
  it('names a weight below the floor, a share above s, an all-zero plan', () => {
    expect(weightBoundsViolation([0, 2], [1.6, 0], DEFAULT_WEIGHT_BOUNDS)).toEqual({
      field: 'weightFloor',
      detail: expect.stringMatching(/silo 2's normalized weight 0 is below the floor 0\.1/),
    });
    expect(weightBoundsViolation([3], [1], DEFAULT_WEIGHT_BOUNDS)).toEqual({
      field: 'maxWeightShare',
      detail: expect.stringMatching(/silo 3 would hold 1 of Σ w/),
    });
    expect(weightBoundsViolation([0, 1], [0, 0], DEFAULT_WEIGHT_BOUNDS)?.detail).toMatch(/all 0/);
    expect(weightBoundsViolation([0, 1], [1, 0.2], DEFAULT_WEIGHT_BOUNDS)).toBeUndefined();
  });
});

/** f·scale rounded up until it divides back to ≥ f (weight-floor.ts's `lifted`). */
function lifted(floor: number, scale: number): number {
  let x = floor * scale;
  while (x / scale < floor) x += Math.abs(x) * Number.EPSILON;
  return x;
}
