/**
 * scoring/manipulation/closed-form.ts: the closed-form self-gains against brute force, the EE
 * identities they rest on (Property 5 holds for the weight, not the score), and the EE-median
 * damage bound.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  eeMedianDamageBound,
  eeSelfGain,
  fpSelfGain,
  ioiSelfGain,
  looSelfGain,
} from '../../../scoring/manipulation/closed-form.js';
import { singleSiloBounds } from '../../../scoring/manipulation/single-silo.js';
import {
  everybodyElse,
  fairPrivate,
  ratioScoreBound,
  schemeNormalizer,
  schemeWeights,
  scoreScheme,
} from '../../../scoring/private.js';
import { earlyRound, gridMax, lateRound, privateScores, sum, unitRange, withReports } from './_rounds.js';

describe('EE and Property 5: what holds and what does not', () => {
  const arb = lateRound(2, 10).chain((u) =>
    fc.record({
      u: fc.constant(u),
      i: fc.integer({ min: 0, max: u.withOnly.length - 1 }),
      a: fc.double({ min: 0, max: 1, noNaN: true }),
      b: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  );

  it('own reports never change the unnormalized weight w_i (mean and median)', () => {
    fc.assert(
      fc.property(arb, ({ u, i, a, b }) => {
        const v = withReports(u, i, a, b);
        for (const s of ['ee', 'eeMedian'] as const) {
          const w = schemeWeights(s, u)[i]!;
          const w2 = schemeWeights(s, v)[i]!;
          // the mean form computes Σ_{j≠i} as Σ_j − t_i: equal up to rounding of a sum of N terms ≤ 2
          expect(Math.abs(w2 - w)).toBeLessThanOrEqual(s === 'ee' ? 1e-14 : 0);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('they change EE(i) only through the normalizer, exactly by the ratio of normalizers', () => {
    fc.assert(
      fc.property(arb, ({ u, i, a, b }) => {
        const v = withReports(u, i, a, b);
        for (const s of ['ee', 'eeMedian'] as const) {
          const d = schemeNormalizer(s, u);
          const d2 = schemeNormalizer(s, v);
          fc.pre(Math.abs(d2) > 1e-6);
          const e = privateScores(s, u)[i]!;
          const e2 = privateScores(s, v)[i]!;
          // EE'(i) · D' = EE(i) · D = w_i · v(M)
          expect(e2 * d2).toBeCloseTo(e * d, 12);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('so the normalized score is NOT invariant: under-reporting t_i raises EE(i)', () => {
    const u = {
      full: 0.85,
      empty: 0.8,
      withOnly: [0.81, 0.78, 0.83, 0.8],
      without: [0.84, 0.845, 0.83, 0.845],
    };
    const honest = everybodyElse(u)[0]!;
    // silo 0 reports a better singleton model and a worse leave-one-out model: t_0 falls from 0.08 to 0.02
    const lied = everybodyElse(withReports(u, 0, 0.84, 0.81))[0]!;
    expect(lied).toBeGreaterThan(honest * 1.2);
  });

  it('changes that keep t_i fixed (both reports shifted equally) leave every EE score unchanged', () => {
    fc.assert(
      fc.property(arb, fc.double({ min: -0.05, max: 0.05, noNaN: true }), ({ u, i }, d) => {
        const v = withReports(u, i, u.withOnly[i]! + d, u.without[i]! + d);
        const e = everybodyElse(u);
        const e2 = everybodyElse(v);
        for (let k = 0; k < e.length; k++) expect(e2[k]).toBeCloseTo(e[k]!, 12);
      }),
      { numRuns: 200 },
    );
  });

  it("EE is an affine function of FP's α: EE(i) = [(N−1)Δ − A + α(i)] / [(N−1)(NΔ − A)] · v(M)", () => {
    fc.assert(
      fc.property(lateRound(2, 12), (u) => {
        const n = u.withOnly.length;
        const alpha = schemeWeights('fp', u);
        const A = sum(alpha);
        const delta = u.full - u.empty;
        const ee = everybodyElse(u);
        for (let i = 0; i < n; i++)
          expect(ee[i]).toBeCloseTo(
            (((n - 1) * delta - A + alpha[i]!) / ((n - 1) * (n * delta - A))) * u.full,
            10,
          );
      }),
      { numRuns: 200 },
    );
  });
});

describe('closed-form self-gains against brute force', () => {
  it('LOO and IOI: max(0, without_i − lo) and max(0, hi − withOnly_i), on the grid and from the bounds', () => {
    fc.assert(
      fc.property(lateRound(2, 6), (u) => {
        const b = singleSiloBounds('loo', u, { range: unitRange });
        const c = singleSiloBounds('ioi', u, { range: unitRange });
        for (let i = 0; i < u.withOnly.length; i++) {
          const loo = looSelfGain(u, i, unitRange).value;
          expect(loo).toBeCloseTo(u.without[i]!, 14);
          expect(b[i]!.selfGain.value).toBeCloseTo(loo, 14);
          expect(c[i]!.selfGain.value).toBeCloseTo(ioiSelfGain(u, i, unitRange).value, 14);
          // LOO and IOI cannot damage anyone
          for (const d of [...b[i]!.damage, ...c[i]!.damage]) expect(d?.value ?? 0).toBe(0);
        }
        expect(gridMax('loo', u, 0, 0, 1, 20)).toBeCloseTo(looSelfGain(u, 0, unitRange).value, 14);
        expect(gridMax('ioi', u, 1, 1, 1, 20)).toBeCloseTo(ioiSelfGain(u, 1, unitRange).value, 14);
      }),
      { numRuns: 20 },
    );
  });

  it('FP (bounded case): closed form = 101×101 grid maximum = vertex bound', () => {
    fc.assert(
      fc.property(earlyRound(2, 7), fc.nat(), (u, k) => {
        const i = k % u.withOnly.length;
        const cf = fpSelfGain(u, i, unitRange);
        expect(cf.unbounded).toBe(false);
        const grid = gridMax('fp', u, i, i, 1);
        expect(Math.abs(grid - cf.value)).toBeLessThan(1e-12);
        const bound = singleSiloBounds('fp', u)[i]!.selfGain;
        expect(bound.exact).toBe(true);
        expect(Math.abs(bound.value - cf.value)).toBeLessThan(1e-12);
      }),
      { numRuns: 25 },
    );
  });

  it('FP (late round): Eq. 2 alone is unbounded; the published score stays within ±|v(M)|/κ (issue 32)', () => {
    const u = {
      full: 0.85,
      empty: 0.8,
      withOnly: [0.81, 0.78, 0.83, 0.8],
      without: [0.84, 0.845, 0.83, 0.845],
    };
    const cf = fpSelfGain(u, 0, unitRange);
    expect(cf).toEqual({ value: Number.POSITIVE_INFINITY, unbounded: true });
    const bound = singleSiloBounds('fp', u)[0]!.selfGain;
    expect(bound.unbounded).toBe(false);
    expect(fairPrivate(u)[0]! + bound.value).toBeLessThanOrEqual(ratioScoreBound(u.full));
    // Eq. 2's witness: α(0) = −R − ε with without = 1 would give FP(0) = v(M)(R + ε)/ε; now |Σα| is
    // within the margin of zero and FP falls back (Remark 1), inside the documented range.
    const alpha = schemeWeights('fp', u);
    const rest = sum(alpha) - alpha[0]!;
    const eps = 1e-6;
    const a0 = 2 * (-rest - eps) - u.full + 1 + u.empty;
    expect(a0).toBeGreaterThanOrEqual(0);
    const witness = scoreScheme('fp', withReports(u, 0, a0, 1));
    expect(witness.fallback).not.toBe('none');
    for (const x of witness.scores) expect(Math.abs(x)).toBeLessThanOrEqual(ratioScoreBound(u.full));
  });

  it('EE (bounded case): closed form through the normalizer = grid maximum = vertex bound', () => {
    fc.assert(
      fc.property(earlyRound(3, 7), fc.nat(), (u, k) => {
        const i = k % u.withOnly.length;
        const cf = eeSelfGain(u, i, unitRange);
        expect(cf.unbounded).toBe(false);
        expect(cf.value).toBeGreaterThan(0); // the self-gain is real
        expect(Math.abs(gridMax('ee', u, i, i, 1) - cf.value)).toBeLessThan(1e-12);
        expect(Math.abs(singleSiloBounds('ee', u)[i]!.selfGain.value - cf.value)).toBeLessThan(1e-12);
      }),
      { numRuns: 25 },
    );
  });

  it('EE (late round): Eq. 4 alone is unbounded; the published score stays within ±|v(M)|/κ (issue 32)', () => {
    const u = {
      full: 0.85,
      empty: 0.8,
      withOnly: [0.81, 0.78, 0.83, 0.8],
      without: [0.84, 0.845, 0.83, 0.845],
    };
    expect(eeSelfGain(u, 0, unitRange).unbounded).toBe(true);
    // t_0 = −T₋₀ + ε with without = 0: t_0 = v(M) − withOnly − v(M0), so withOnly = Δ + T₋₀ − ε
    const t = u.withOnly.map((a, j) => u.full - a + (u.without[j]! - u.empty));
    const rest = sum(t) - t[0]!;
    const a0 = u.full - u.empty + rest - 1e-6;
    expect(a0).toBeGreaterThanOrEqual(0);
    expect(a0).toBeLessThanOrEqual(1);
    // Eq. 4 alone would give EE(0) > 1e3 here; D is within the margin of zero: equal shares.
    const witness = scoreScheme('ee', withReports(u, 0, a0, 0));
    expect(witness.fallback).toBe('equalShares');
    expect(everybodyElse(withReports(u, 0, a0, 0))[0]).toBeLessThanOrEqual(ratioScoreBound(u.full));
    expect(singleSiloBounds('ee', u)[0]!.selfGain.unbounded).toBe(false);
  });
});

describe('EE-median', () => {
  it("damage stays within the bound set by the honest reports' neighbouring order statistics", () => {
    fc.assert(
      fc.property(lateRound(4, 9), (u) => {
        const n = u.withOnly.length;
        const bounds = singleSiloBounds('eeMedian', u);
        for (let i = 0; i < n; i++)
          for (let v = 0; v < n; v++) {
            if (v === i) continue;
            const limit = eeMedianDamageBound(u, i, v);
            expect(Number.isFinite(limit)).toBe(true);
            expect(bounds[i]!.damage[v]!.value).toBeLessThanOrEqual(limit + 1e-12);
          }
      }),
      { numRuns: 40 },
    );
  });

  it('the mean form has no such bound on the same rounds (beyond the range ±|v(M)|/κ of issue 32)', () => {
    const u = {
      full: 0.85,
      empty: 0.8,
      withOnly: [0.81, 0.78, 0.83, 0.8, 0.79, 0.82],
      without: [0.84, 0.845, 0.83, 0.845, 0.846, 0.835],
    };
    const ee = singleSiloBounds('ee', u)[0]!.damage[1]!;
    expect(ee.unbounded).toBe(false);
    expect(ee.exact).toBe(false); // D can reach the margin: only the documented range holds it
    expect(everybodyElse(u)[1]! - ee.value).toBeGreaterThanOrEqual(-ratioScoreBound(u.full));
    expect(singleSiloBounds('eeMedian', u)[0]!.damage[1]!.unbounded).toBe(false);
    expect(eeMedianDamageBound(u, 0, 1)).toBeLessThan(0.1);
  });
});

describe('input checks', () => {
  const u = { full: 1, empty: 0, withOnly: [0.5, 0.5], without: [0.5, 0.5] };
  it('name the parameter', () => {
    expect(() => looSelfGain(u, 2, unitRange)).toThrow(/^silo:/);
    expect(() => fpSelfGain(u, 0, { lo: 1, hi: 0 })).toThrow(/^range:/);
    expect(() => eeMedianDamageBound(u, 0, 0)).toThrow(/^victim:/);
  });
});
