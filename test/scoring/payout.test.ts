/**
 * The headline's weight (scoring/payout.ts): the properties its design rests on, with fast-check
 * where they are invariants, and the lever of issue 37's first version in a round without signal
 * (the quickstart's round 5 kind: every singleton model worse than M0, α at noise level), found
 * by the audit's own optimizer on the old variant and bounded on the new one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { undetectedCollusionBounds } from '../../scoring/manipulation/collusion.js';
import { singleSiloBounds } from '../../scoring/manipulation/single-silo.js';
import { DEFAULT_PAYOUT_VARIANT, type PayoutVariant, payoutWeights } from '../../scoring/payout.js';
import { withPayoutVariant } from '../../scoring/payout-variant.js';
import { checkUtilities, type PrivateUtilities, schemeScores } from '../../scoring/private.js';

/** Issue 37's first headline: the gate alone (1 for any α > 0 when the others' median is ≤ 0). */
const FIRST: PayoutVariant = { base: 'eeMedian', gate: 'alpha', tau: 0.5, tie: 0.1 };

const round = (full: number, empty: number, loo: number[], ioi: number[]): PrivateUtilities => ({
  full,
  empty,
  withOnly: ioi.map((x) => empty + x),
  without: loo.map((x) => full - x),
});

/** A round with signal: four contributors clearly above a zero update, and a free rider (last). */
const SIGNAL = round(0.7, 0.6, [0.03, 0.025, 0.02, 0.018, 0], [0.05, 0.04, 0.035, 0.03, 0]);
/** A round without: five silos of the quickstart's round 5 (LOO ≈ noise, IOI < 0 but one). */
const QUIET = round(
  0.678,
  0.658,
  [0.012, -0.0025, 0.0385, 0.01, 0.002],
  [-0.0815, -0.0615, -0.025, -0.1485, -0.01],
);

const weights = (u: PrivateUtilities, v?: PayoutVariant) => payoutWeights(checkUtilities(u), v);

describe('payoutWeights', () => {
  it('pays a free rider nothing in a round with signal, and the contributors in their order', () => {
    const w = weights(SIGNAL);
    expect(w[4]).toBe(0);
    for (let i = 0; i < 3; i++) expect(w[i]!).toBeGreaterThan(w[i + 1]!);
  });

  it('pays a round without signal its improvement in equal parts, within the tie-break', () => {
    const w = weights(QUIET);
    const even = (QUIET.full - QUIET.empty) / 4;
    const lambda = DEFAULT_PAYOUT_VARIANT.tie;
    for (const x of w) {
      expect(x).toBeGreaterThanOrEqual(even * (1 - lambda) - 1e-15);
      expect(x).toBeLessThanOrEqual(even * (1 + lambda) + 1e-15);
    }
    // the first version shut four of the five gates here
    expect(weights(QUIET, FIRST).filter((x) => x === 0)).toHaveLength(4);
  });

  it('pays nothing for a round that made the model worse and no signal', () => {
    const worse = round(0.6, 0.62, [-0.01, -0.02, 0.004], [-0.05, -0.03, -0.04]);
    expect(Array.from(weights(worse))).toEqual([0, 0, 0]);
  });

  const utilities = fc.integer({ min: 3, max: 8 }).chain((n) =>
    fc.record({
      full: fc.double({ min: 0.3, max: 0.9, noNaN: true }),
      empty: fc.double({ min: 0.1, max: 0.9, noNaN: true }),
      withOnly: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: n, maxLength: n }),
      without: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: n, maxLength: n }),
    }),
  );

  it('is ≥ 0 and at most (1 + λ) times the round improvement in equal parts (no normalizer to reverse)', () => {
    fc.assert(
      fc.property(utilities, (u) => {
        const n = u.withOnly.length;
        const cap = ((1 + DEFAULT_PAYOUT_VARIANT.tie) * Math.max(0, u.full - u.empty)) / (n - 1);
        for (const x of weights(u)) {
          expect(x).toBeGreaterThanOrEqual(0);
          expect(x).toBeLessThanOrEqual(cap * (1 + 1e-12) + 1e-15);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("moves with a silo's own reports only through its gate: nondecreasing in its α (Property 5)", () => {
    // With λ = 0 the weight is c_i · min(base_i⁺, even) · r_i + (1 − c_i) · even: c_i, base_i and
    // even read only the others' reports, r_i is nondecreasing in α_i. Were c_i to read α_i, raising
    // α_i could lower the weight (min(base⁺, even) ≤ even); were base_i to, a lie could move it.
    const noTie: PayoutVariant = { ...DEFAULT_PAYOUT_VARIANT, tie: 0 };
    fc.assert(
      fc.property(
        utilities,
        fc.nat(),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 }),
        (u, k, [x1, y1, x2, y2]) => {
          const i = k % u.withOnly.length;
          const lie = (x: number, y: number) => {
            const v = { ...u, withOnly: u.withOnly.slice(), without: u.without.slice() };
            v.withOnly[i] = x;
            v.without[i] = y;
            return v;
          };
          const alpha = (x: number, y: number) => u.full - y + x - u.empty;
          const [lo, hi] =
            alpha(x1!, y1!) <= alpha(x2!, y2!)
              ? [lie(x1!, y1!), lie(x2!, y2!)]
              : [lie(x2!, y2!), lie(x1!, y1!)];
          expect(weights(lo, noTie)[i]!).toBeLessThanOrEqual(weights(hi, noTie)[i]! * (1 + 1e-12) + 1e-15);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the audit's optimizer: the first version's lever in a round without signal, and none now", () => {
    const gains = (v: PayoutVariant) =>
      withPayoutVariant(v, () => {
        const honest = schemeScores('payout', QUIET);
        const bounds = singleSiloBounds('payout', QUIET);
        let pair = 1;
        for (const [a, b] of [
          [1, 2],
          [2, 3],
        ] as const) {
          const g = undetectedCollusionBounds('payout', QUIET, [a, b], {}, bounds).totalGain.value;
          const h = honest[a]! + honest[b]!;
          if (h > 0) pair = Math.max(pair, (h + g) / h);
        }
        return pair;
      });
    // silo 2 is the one open gate of the first version; a shut partner's lie reopens its own
    expect(gains(FIRST)).toBeGreaterThan(2);
    expect(gains(DEFAULT_PAYOUT_VARIANT)).toBeLessThanOrEqual(1.25);
  });
});
