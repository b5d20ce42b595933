import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  collusionBounds,
  detectReports,
  eeMedianDamageBound,
  eeSelfGain,
  fpSelfGain,
  influenceMatrix,
  ioiSelfGain,
  looSelfGain,
  robustZ,
  SCHEMES,
  type Scheme,
  schemeNormalizer,
  schemeScores,
  schemeWeights,
  sensitivityMatrix,
  simulateAttacks,
  singleSiloBounds,
  undetectedBox,
} from '../../scoring/manipulation.js';
import {
  everybodyElse,
  fairPrivate,
  includeOneIn,
  leaveOneOut,
  type PrivateUtilities,
} from '../../scoring/private.js';
import { createRng } from '../../scoring/random.js';

const unitRange = { lo: 0, hi: 1 };

/** Scores from scoring/private.ts — the server's code — as the oracle. */
function privateScores(scheme: Scheme, u: PrivateUtilities): Float64Array {
  switch (scheme) {
    case 'loo':
      return leaveOneOut(u);
    case 'ioi':
      return includeOneIn(u);
    case 'fp':
      return fairPrivate(u);
    case 'ee':
      return everybodyElse(u);
    case 'eeMedian':
      return everybodyElse(u, { reduce: 'median' });
  }
}

/** The utilities with silo i's reports replaced. */
function withReports(u: PrivateUtilities, i: number, withOnly: number, without: number): PrivateUtilities {
  const a = Array.from(u.withOnly);
  const b = Array.from(u.without);
  a[i] = withOnly;
  b[i] = without;
  return { ...u, withOnly: a, without: b };
}

/** Brute force: max over a (g+1)×(g+1) grid of the box (corners included) of silo t's score change. */
function gridMax(
  scheme: Scheme,
  u: PrivateUtilities,
  attacker: number,
  target: number,
  sign: 1 | -1,
  g = 100,
) {
  const honest = privateScores(scheme, u)[target]!;
  let best = 0;
  for (let p = 0; p <= g; p++)
    for (let q = 0; q <= g; q++) {
      const s = privateScores(scheme, withReports(u, attacker, p / g, q / g))[target]!;
      best = Math.max(best, sign * (s - honest));
    }
  return best;
}

const sum = (x: ArrayLike<number>) => Array.from(x).reduce((s, v) => s + v, 0);

/**
 * A late-round accuracy round: v(M0) ∈ [0.5, 0.8], v(M) a little above; honest singleton models
 * below v(M), leave-one-out models above v(M0), so every EE term t_j is positive.
 */
const lateRound = (nMin: number, nMax: number) =>
  fc.integer({ min: nMin, max: nMax }).chain((n) =>
    fc
      .record({
        empty: fc.double({ min: 0.5, max: 0.8, noNaN: true }),
        gain: fc.double({ min: 0.01, max: 0.1, noNaN: true }),
        a: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: n, maxLength: n }),
        b: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: n, maxLength: n }),
      })
      .map(({ empty, gain, a, b }) => {
        const full = empty + gain;
        return {
          full,
          empty,
          // singleton models in [v(M0) − gain, v(M) − gain/10], leave-one-out in [v(M0) + gain/10, v(M)]
          withOnly: a.map((x) => empty - gain + x * (1.9 * gain)),
          without: b.map((x) => empty + gain / 10 + x * (0.9 * gain)),
        } satisfies PrivateUtilities;
      }),
  );

/** An early round: large improvement v(M) − v(M0), so FP's and EE's normalizers cannot reach 0. */
const earlyRound = (nMin: number, nMax: number) =>
  fc.integer({ min: nMin, max: nMax }).chain((n) =>
    fc
      .record({
        a: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: n, maxLength: n }),
        b: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: n, maxLength: n }),
      })
      .map(({ a, b }) => ({
        full: 0.9,
        empty: 0.1,
        withOnly: a.map((x) => 0.5 + 0.3 * x),
        without: b.map((x) => 0.6 + 0.25 * x),
      })),
  );

describe('scores agree with scoring/private.ts', () => {
  it('for every scheme on random utilities', () => {
    const finite = fc.double({ min: -2, max: 2, noNaN: true });
    const arb = fc.integer({ min: 2, max: 10 }).chain((n) =>
      fc.record({
        full: finite,
        empty: finite,
        withOnly: fc.array(finite, { minLength: n, maxLength: n }),
        without: fc.array(finite, { minLength: n, maxLength: n }),
      }),
    );
    fc.assert(
      fc.property(arb, (u) => {
        for (const s of SCHEMES) {
          const mine = schemeScores(s, u);
          const theirs = privateScores(s, u);
          // w / Σw is ill-conditioned when Σw nearly cancels: the two codes sum in different orders,
          // so the tolerance scales with the condition number κ = Σ|w| / |Σw|.
          const w = schemeWeights(s, u);
          const kappa = s === 'loo' || s === 'ioi' ? 1 : sum(w.map(Math.abs)) / Math.abs(sum(w));
          fc.pre(kappa < 1e6);
          const scale = Math.max(1, ...Array.from(theirs, Math.abs));
          for (let i = 0; i < mine.length; i++)
            expect(Math.abs(mine[i]! - theirs[i]!)).toBeLessThan(1e-12 * kappa * scale);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('influence (papers/003 Table 9)', () => {
  it('rows sum to 1; EE has a zero diagonal; LOO, IOI, FP are the identity', () => {
    fc.assert(
      fc.property(lateRound(2, 12), (u) => {
        for (const s of SCHEMES) {
          const m = influenceMatrix(s, u);
          m.forEach((row, i) => {
            expect(sum(row)).toBeCloseTo(1, 12);
            for (const x of row) expect(x).toBeGreaterThanOrEqual(0);
            if (s === 'ee' || s === 'eeMedian') expect(row[i]).toBe(0);
            if (s === 'loo' || s === 'ioi' || s === 'fp') expect(row[i]).toBe(1);
          });
        }
      }),
      { numRuns: 100 },
    );
  });

  it('EE row i is t_j / Σ_{k≠i} t_k (positive terms)', () => {
    const u = { full: 0.9, empty: 0.5, withOnly: [0.8, 0.75, 0.85], without: [0.6, 0.7, 0.55] };
    const t = [0.1 + 0.1, 0.15 + 0.2, 0.05 + 0.05];
    const m = influenceMatrix('ee', u);
    expect(m[0]![1]).toBeCloseTo(t[1]! / (t[1]! + t[2]!), 14);
    expect(m[2]![0]).toBeCloseTo(t[0]! / (t[0]! + t[1]!), 14);
  });

  it("reproduces all 36 entries of Table 9 from 6 per-silo terms (transposed: the table's columns are our rows)", () => {
    // Table 9 (Brain, 6 clients, round 10), row = reporting client, column = scored client.
    const table = [
      [0.0, 0.145, 0.151, 0.169, 0.15, 0.167],
      [0.129, 0.0, 0.132, 0.147, 0.131, 0.145],
      [0.17, 0.167, 0.0, 0.194, 0.172, 0.192],
      [0.273, 0.268, 0.28, 0.0, 0.278, 0.309],
      [0.164, 0.161, 0.167, 0.187, 0.0, 0.185],
      [0.262, 0.257, 0.268, 0.3, 0.266, 0.0],
    ];
    // Terms t_j fitted to the table (one scale-free vector; 36 entries, 5 degrees of freedom).
    const t = [0.129, 0.1124, 0.1482, 0.2387, 0.1429, 0.2287];
    const u = {
      full: 0.9,
      empty: 0.5,
      withOnly: t.map((x) => 0.9 - x / 2),
      without: t.map((x) => 0.5 + x / 2),
    };
    const m = influenceMatrix('ee', u);
    // The table is rounded to 3 decimals and averaged over runs ("variance below 0.01").
    for (let i = 0; i < 6; i++)
      for (let j = 0; j < 6; j++) expect(Math.abs(m[i]![j]! - table[j]![i]!)).toBeLessThan(0.0015);
    // Normalizing by Σ_k t_k (all silos) instead of Σ_{k≠i} t_k does not fit the table:
    const total = sum(t);
    expect(Math.abs(t[3]! / total - table[3]![5]!)).toBeGreaterThan(0.05);
  });

  it('EE-median: the reporters whose terms are the median of the others', () => {
    // β-terms v(M) − withOnly: 0.1, 0.2, 0.3, 0.4; γ-terms without − v(M0): 0.4, 0.3, 0.2, 0.1.
    const u = { full: 1, empty: 0, withOnly: [0.9, 0.8, 0.7, 0.6], without: [0.4, 0.3, 0.2, 0.1] };
    const m = influenceMatrix('eeMedian', u);
    // Silo 0: others' β = {0.2, 0.3, 0.4} → median from silo 2; γ = {0.3, 0.2, 0.1} → median from silo 2.
    expect(Array.from(m[0]!)).toEqual([0, 0, 1, 0]);
    // Silo 1: β others {0.1, 0.3, 0.4} → silo 2 (0.3); γ others {0.4, 0.2, 0.1} → silo 2 (0.2).
    expect(Array.from(m[1]!)).toEqual([0, 0, 1, 0]);
    // Silo 2: β others {0.1, 0.2, 0.4} → silo 1 (0.2); γ others {0.4, 0.3, 0.1} → silo 1 (0.3).
    expect(Array.from(m[2]!)).toEqual([0, 1, 0, 0]);
  });
});

describe('sensitivity (normalizer included)', () => {
  it('matches finite differences of the scores; rows sum to 1', () => {
    fc.assert(
      fc.property(lateRound(3, 8), (u) => {
        for (const s of ['loo', 'ioi', 'fp', 'ee'] as const) {
          const m = sensitivityMatrix(s, u);
          const base = schemeScores(s, u);
          const n = base.length;
          const h = 1e-7;
          for (let i = 0; i < n; i++) {
            const raw = new Float64Array(n);
            for (let j = 0; j < n; j++) {
              const da = schemeScores(s, withReports(u, j, u.withOnly[j]! + h, u.without[j]!));
              const db = schemeScores(s, withReports(u, j, u.withOnly[j]!, u.without[j]! + h));
              raw[j] = Math.abs((da[i]! - base[i]!) / h) + Math.abs((db[i]! - base[i]!) / h);
            }
            const total = sum(raw);
            for (let j = 0; j < n; j++) expect(m[i]![j]!).toBeCloseTo(raw[j]! / total, 4);
            expect(sum(m[i]!)).toBeCloseTo(1, 12);
          }
        }
      }),
      { numRuns: 30 },
    );
  });

  it("EE's diagonal is not zero: own reports move the score through the normalizer", () => {
    const u = {
      full: 0.85,
      empty: 0.8,
      withOnly: [0.81, 0.78, 0.83, 0.8],
      without: [0.84, 0.845, 0.83, 0.845],
    };
    for (const [i, row] of sensitivityMatrix('ee', u).entries()) expect(row[i]).toBeGreaterThan(0.1);
  });
});

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
          expect(b[i]!.gain.value).toBeCloseTo(loo, 14);
          expect(c[i]!.gain.value).toBeCloseTo(ioiSelfGain(u, i, unitRange).value, 14);
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
        const bound = singleSiloBounds('fp', u)[i]!.gain;
        expect(bound.exact).toBe(true);
        expect(Math.abs(bound.value - cf.value)).toBeLessThan(1e-12);
      }),
      { numRuns: 25 },
    );
  });

  it('FP (late round): the normalizer can reach 0 and the gain is unbounded', () => {
    const u = {
      full: 0.85,
      empty: 0.8,
      withOnly: [0.81, 0.78, 0.83, 0.8],
      without: [0.84, 0.845, 0.83, 0.845],
    };
    const cf = fpSelfGain(u, 0, unitRange);
    expect(cf).toEqual({ value: Number.POSITIVE_INFINITY, unbounded: true });
    expect(singleSiloBounds('fp', u)[0]!.gain.unbounded).toBe(true);
    // witness: α(0) = −R − ε with without = 1 gives FP(0) = v(M)(R + ε)/ε
    const alpha = schemeWeights('fp', u);
    const rest = sum(alpha) - alpha[0]!;
    const eps = 1e-6;
    const a0 = 2 * (-rest - eps) - u.full + 1 + u.empty;
    expect(a0).toBeGreaterThanOrEqual(0);
    expect(fairPrivate(withReports(u, 0, a0, 1))[0]).toBeGreaterThan(1e3);
  });

  it('EE (bounded case): closed form through the normalizer = grid maximum = vertex bound', () => {
    fc.assert(
      fc.property(earlyRound(3, 7), fc.nat(), (u, k) => {
        const i = k % u.withOnly.length;
        const cf = eeSelfGain(u, i, unitRange);
        expect(cf.unbounded).toBe(false);
        expect(cf.value).toBeGreaterThan(0); // the self-gain is real
        expect(Math.abs(gridMax('ee', u, i, i, 1) - cf.value)).toBeLessThan(1e-12);
        expect(Math.abs(singleSiloBounds('ee', u)[i]!.gain.value - cf.value)).toBeLessThan(1e-12);
      }),
      { numRuns: 25 },
    );
  });

  it('EE (late round): unbounded, with a witness', () => {
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
    expect(everybodyElse(withReports(u, 0, a0, 0))[0]).toBeGreaterThan(1e3);
  });
});

describe('EE-median', () => {
  it('single-silo bounds are exact: no grid point beats them and their reports attain them', () => {
    fc.assert(
      fc.property(lateRound(4, 7), fc.nat(), (u, k) => {
        const n = u.withOnly.length;
        const i = k % n;
        const v = (i + 1) % n;
        const b = singleSiloBounds('eeMedian', u)[i]!;
        expect(b.gain.unbounded).toBe(false);
        expect(b.gain.exact).toBe(true);
        expect(gridMax('eeMedian', u, i, i, 1, 40)).toBeLessThanOrEqual(b.gain.value + 1e-12);
        expect(gridMax('eeMedian', u, i, v, -1, 40)).toBeLessThanOrEqual(b.damage[v]!.value + 1e-12);
        const r = b.damage[v]!.reports![0]!;
        const at = everybodyElse(withReports(u, i, r.withOnly, r.without), { reduce: 'median' })[v]!;
        const honest = everybodyElse(u, { reduce: 'median' })[v]!;
        expect(honest - at).toBeCloseTo(b.damage[v]!.value, 12);
      }),
      { numRuns: 20 },
    );
  });

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

  it('the mean form has no such bound on the same rounds', () => {
    const u = {
      full: 0.85,
      empty: 0.8,
      withOnly: [0.81, 0.78, 0.83, 0.8, 0.79, 0.82],
      without: [0.84, 0.845, 0.83, 0.845, 0.846, 0.835],
    };
    expect(singleSiloBounds('ee', u)[0]!.damage[1]!.unbounded).toBe(true);
    expect(singleSiloBounds('eeMedian', u)[0]!.damage[1]!.unbounded).toBe(false);
    expect(eeMedianDamageBound(u, 0, 1)).toBeLessThan(0.1);
  });
});

describe('collusion', () => {
  it('a member gains at least as much with the coalition as alone; reports attain the values', () => {
    fc.assert(
      fc.property(earlyRound(4, 6), (u) => {
        for (const s of SCHEMES) {
          const single = singleSiloBounds(s, u);
          for (const c of collusionBounds(s, u, 2)) {
            c.members.forEach((m, q) => {
              expect(c.memberGain[q]!.value).toBeGreaterThanOrEqual(single[m]!.gain.value - 1e-12);
            });
            expect(c.total.value).toBeGreaterThanOrEqual(0);
            if (!c.total.unbounded) {
              let v: PrivateUtilities = u;
              c.members.forEach((m, q) => {
                v = withReports(v, m, c.total.reports![q]!.withOnly, c.total.reports![q]!.without);
              });
              const honest = privateScores(s, u);
              const at = privateScores(s, v);
              expect(sum(c.members.map((m) => at[m]! - honest[m]!))).toBeCloseTo(c.total.value, 12);
            }
          }
        }
      }),
      { numRuns: 10 },
    );
  });

  it('EE-median coordinate search (k = 3) never beats the exact candidate grid and is marked inexact', () => {
    fc.assert(
      fc.property(lateRound(5, 6), (u) => {
        const exact = collusionBounds('eeMedian', u, 3);
        const search = collusionBounds('eeMedian', u, 3, { exactBudget: 1 });
        exact.forEach((c, q) => {
          expect(c.total.exact).toBe(true);
          expect(search[q]!.total.exact).toBe(false);
          expect(search[q]!.total.method).toBe('coordinate-search');
          expect(search[q]!.total.value).toBeLessThanOrEqual(c.total.value + 1e-12);
        });
      }),
      { numRuns: 5 },
    );
  });
});

describe('detection', () => {
  // Stratified honest marginals: x_j uniform in slot j of [c − δ, c + δ] (slot width h = 2δ/N).
  // Median within h of c, so every |x_j − med| ≤ δ + 2δ/N. An interval of length 2r meets at most
  // 2r/h + 2 slots, and MAD < r needs ≥ N/2 points within r of the median, so MAD ≥ δ/2 − 2δ/N.
  // Hence |z| ≤ 0.6745 (1 + 2/N) / (1/2 − 2/N) = 1.349 (N + 2)/(N − 4) ≤ 3.372 < 3.5 for N ≥ 8:
  // no honest silo is ever flagged.
  it('never flags honest stratified reports for N ≥ 8 (derived bound 1.349 (N+2)/(N−4))', () => {
    const rng = createRng(7);
    for (let trial = 0; trial < 300; trial++) {
      const n = 8 + (trial % 40);
      const c = 0.005 + 0.02 * rng.next();
      const d = 0.001 + 0.01 * rng.next();
      const m1 = Array.from({ length: n }, (_, j) => c - d + ((j + rng.next()) * 2 * d) / n);
      const m2 = Array.from({ length: n }, (_, j) => c - d + ((j + rng.next()) * 2 * d) / n);
      const u = {
        full: 0.85,
        empty: 0.8,
        withOnly: m1.map((x) => 0.8 + x),
        without: m2.map((x) => 0.85 - x),
      };
      const det = detectReports(u);
      expect(det.flagged.some(Boolean)).toBe(false);
      const bound = (0.6745 * 2 * (n + 2)) / (n - 4);
      for (const z of [...det.zWithOnly, ...det.zWithout]) expect(Math.abs(z)).toBeLessThanOrEqual(bound);
    }
  });

  // Outlier at distance D from c, N−1 honest values in [c − δ, c + δ] (N ≥ 3): the median lies in
  // [c − δ, c + δ] and the MAD ≤ 2δ, so |z_outlier| ≥ 0.6745 (D − δ)/(2δ) > 3.5 once D > 11.38δ.
  it('flags a planted outlier at 11.5δ from honest reports in [c − δ, c + δ]', () => {
    const rng = createRng(11);
    for (let trial = 0; trial < 300; trial++) {
      const n = 3 + (trial % 20);
      const c = 0.01;
      const d = 0.001 + 0.005 * rng.next();
      const ioi = Array.from({ length: n }, () => c - d + 2 * d * rng.next());
      const o = trial % n;
      ioi[o] = c + (trial % 2 === 0 ? 11.5 : -11.5) * d;
      const u = {
        full: 0.85,
        empty: 0.8,
        withOnly: ioi.map((x) => 0.8 + x),
        without: new Array(n).fill(0.84),
      };
      const det = detectReports(u);
      expect(det.flagged[o]).toBe(true);
      expect(Math.abs(det.zWithOnly[o]!)).toBeGreaterThan(3.5);
    }
  });

  it('robust z: the Iglewicz–Hoaglin formula and the MeanAD fallback', () => {
    // median 3, deviations 2,1,0,1,7 → MAD 1
    expect(Array.from(robustZ([1, 2, 3, 4, 10]))).toEqual([-2, -1, 0, 1, 7].map((x) => 0.6745 * x));
    // MAD 0: deviations 0,0,0,0,5 → MeanAD 1
    expect(robustZ([3, 3, 3, 3, 8])[4]).toBeCloseTo(5 / 1.253314, 12);
    expect(Array.from(robustZ([2, 2, 2]))).toEqual([0, 0, 0]);
  });

  it('the undetected box contains the honest reports and its ends sit at |z| = threshold', () => {
    const u = {
      full: 0.85,
      empty: 0.8,
      withOnly: [0.81, 0.805, 0.812, 0.808, 0.803, 0.809],
      without: [0.84, 0.845, 0.842, 0.838, 0.846, 0.841],
    };
    const box = undetectedBox(u, 2, unitRange);
    expect(box.withOnlyLo).toBeLessThanOrEqual(0.812);
    expect(box.withOnlyHi).toBeGreaterThanOrEqual(0.812);
    const z = (a: number) => Math.abs(detectReports(withReports(u, 2, a, 0.842)).zWithOnly[2]!);
    expect(z(box.withOnlyHi)).toBeCloseTo(3.5, 6);
    expect(z(box.withOnlyHi + 1e-4)).toBeGreaterThan(3.5);
    expect(z(box.withOnlyLo)).toBeCloseTo(3.5, 6);
    // the undetected gain cannot exceed the unconstrained one
    for (const s of SCHEMES)
      for (const b of singleSiloBounds(s, u))
        expect(b.gainUndetected.value).toBeLessThanOrEqual(b.gain.value);
  });
});

describe('simulated attacks', () => {
  const u = {
    full: 0.85,
    empty: 0.8,
    withOnly: [0.81, 0.805, 0.812, 0.808, 0.803, 0.809],
    without: [0.84, 0.845, 0.842, 0.838, 0.846, 0.841],
  };

  it('same seed → same reports, other seed → other reports; shares of efficient schemes sum to 0', () => {
    const a = simulateAttacks(u, { seed: 1, randomTrials: 3 });
    const b = simulateAttacks(u, { seed: 1, randomTrials: 3 });
    const c = simulateAttacks(u, { seed: 2, randomTrials: 3 });
    expect(a.map((x) => x.reports)).toEqual(b.map((x) => x.reports));
    expect(a.filter((x) => x.kind === 'random').map((x) => x.reports)).not.toEqual(
      c.filter((x) => x.kind === 'random').map((x) => x.reports),
    );
    expect(a).toHaveLength(6 * (2 + 3));
    for (const o of a)
      for (const s of ['fp', 'ee', 'eeMedian'] as const)
        expect(sum(o.effects[s]!.shareChange)).toBeCloseTo(0, 10);
  });

  it('deflate-others zeroes t_i and is caught on tight honest reports; it raises the attacker under EE', () => {
    const out = simulateAttacks(u, { randomTrials: 0 });
    for (const o of out.filter((x) => x.kind === 'deflateOthers')) {
      expect(o.reports).toEqual({ withOnly: 0.85, without: 0.8 });
      expect(o.detected).toBe(true);
      expect(o.effects.ee!.shareChange[o.attacker]).toBeGreaterThan(0);
    }
  });
});

describe('input checks', () => {
  const u = { full: 1, empty: 0, withOnly: [0.5, 0.5], without: [0.5, 0.5] };
  it('name the parameter', () => {
    expect(() => schemeScores('sv' as Scheme, u)).toThrow(/^scheme:/);
    expect(() => schemeScores('fp', { ...u, without: [0.5] })).toThrow(/^utilities\.without:/);
    expect(() => looSelfGain(u, 2, unitRange)).toThrow(/^silo:/);
    expect(() => fpSelfGain(u, 0, { lo: 1, hi: 0 })).toThrow(/^range:/);
    expect(() => detectReports(u, 0)).toThrow(/^threshold:/);
    expect(() => collusionBounds('ee', u, 3)).toThrow(/^k:/);
    expect(() => eeMedianDamageBound(u, 0, 0)).toThrow(/^victim:/);
    expect(() => simulateAttacks(u, { inflateFactor: 0.5 })).toThrow(/^options\.inflateFactor:/);
  });
});
