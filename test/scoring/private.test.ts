import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maskToCoalition } from '../../scoring/coalition.js';
import { paper003Example2 } from '../../scoring/games.js';
import {
  checkScheme,
  checkUtilities,
  everybodyElse,
  everybodyElseTerms,
  fairPrivate,
  includeOneIn,
  isRatioScheme,
  leaveOneOut,
  NORMALIZER_MARGIN,
  type PrivateUtilities,
  SCHEMES,
  type Scheme,
  schemeNormalizer,
  schemeScores,
  schemeWeights,
  scoreCheckedScheme,
  scoreScheme,
  utilitiesOfTable,
} from '../../scoring/private.js';
import { exactShapley } from '../../scoring/shapley.js';

const sum = (x: Float64Array) => x.reduce((s, v) => s + v, 0);
/**
 * |Σ scores − v(M)| allowed by rounding: summing n scores that cancel loses up to n·ε·Σ|score_i|
 * (plus the same again inside the normalization), so the bound scales with Σ|score_i|.
 */
const efficiencyTolerance = (x: Float64Array) =>
  4 * (x.length + 2) * Number.EPSILON * x.reduce((s, v) => s + Math.abs(v), 0) + 1e-12;
const finite = fc.double({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true });

/** Random private utilities for 2..12 silos. */
const utilitiesArb = fc.integer({ min: 2, max: 12 }).chain((n) =>
  fc.record({
    full: finite,
    empty: finite,
    withOnly: fc.array(finite, { minLength: n, maxLength: n }),
    without: fc.array(finite, { minLength: n, maxLength: n }),
  }),
);

describe('papers/003 Example 2', () => {
  const table = Float64Array.from([0, 0, 1, 1, 2, 2, 3, 3]);
  const u = utilitiesOfTable(3, table);

  it('EE(A) = 3/4 although A is a null player; EE = (3/4, 1, 5/4)', () => {
    const ee = everybodyElse(u);
    expect(ee[0]).toBeCloseTo(3 / 4, 14);
    expect(ee[1]).toBeCloseTo(1, 14);
    expect(ee[2]).toBeCloseTo(5 / 4, 14);
  });

  it('FP keeps the null player: FP(A) = 0, and FP equals the Shapley value here', () => {
    const fp = fairPrivate(u);
    expect(fp[0]).toBe(0);
    const phi = exactShapley(3, table);
    for (let i = 0; i < 3; i++) expect(fp[i]).toBeCloseTo(phi[i]!, 14);
  });

  it('agrees with the closed-form game object', async () => {
    const known = paper003Example2();
    const v = await known.game.values([0, 1, 2, 3, 4, 5, 6, 7].map((m) => maskToCoalition(3, m)));
    expect(Array.from(v)).toEqual(Array.from(table));
  });
});

describe('LOO and IOI (papers/003 Def. 2, Eq. 3)', () => {
  it('are the two marginals each silo can see', () => {
    const u = { full: 0.8, empty: 0.1, withOnly: [0.5, 0.3, 0.2], without: [0.6, 0.75, 0.8] };
    expect(Array.from(leaveOneOut(u))).toEqual([0.8 - 0.6, 0.8 - 0.75, 0]);
    expect(Array.from(includeOneIn(u))).toEqual([0.5 - 0.1, 0.3 - 0.1, 0.2 - 0.1]);
  });
});

describe('Fair-Private (papers/003 Def. 3)', () => {
  it('is efficient: scores sum to v(M) (Property 1)', () => {
    fc.assert(
      fc.property(utilitiesArb, (u) => {
        const fp = fairPrivate(u);
        expect(Math.abs(sum(fp) - u.full)).toBeLessThanOrEqual(efficiencyTolerance(fp));
      }),
    );
  });

  it('is symmetric: silos with equal reports get equal scores (Property 3)', () => {
    fc.assert(
      fc.property(utilitiesArb, fc.nat(), (u, k) => {
        const n = u.withOnly.length;
        const i = k % n;
        const j = (i + 1) % n;
        const w = [...u.withOnly];
        const wo = [...u.without];
        w[j] = w[i]!;
        wo[j] = wo[i]!;
        const fp = fairPrivate({ ...u, withOnly: w, without: wo });
        expect(fp[j]).toBe(fp[i]);
      }),
    );
  });

  it('equals exact Shapley for two silos when v(∅) = 0', () => {
    fc.assert(
      fc.property(finite, finite, finite, (a, b, ab) => {
        const table = Float64Array.from([0, a, b, ab]);
        fc.pre(Math.abs(ab) > 1e-6);
        // Σα = v(N) here; FP is α unless Σα is within the normalizer's margin (issue 32, S1).
        const alpha = [(ab - b + a) / 2, (ab - a + b) / 2];
        fc.pre(Math.abs(ab) > NORMALIZER_MARGIN * (Math.abs(alpha[0]!) + Math.abs(alpha[1]!)));
        const fp = fairPrivate(utilitiesOfTable(2, table));
        const phi = exactShapley(2, table);
        expect(fp[0]).toBeCloseTo(phi[0]!, 6);
        expect(fp[1]).toBeCloseTo(phi[1]!, 6);
      }),
    );
  });

  it('falls back to LOO when Σα = 0 (Remark 1)', () => {
    // LOO = (3, 0), IOI = (−1, −2): α = (1, −1), Σα = 0, ΣLOO = 3.
    const u = { full: 1, empty: 0, withOnly: [-1, -2], without: [1 - 3, 1 - 0] };
    expect(Array.from(fairPrivate(u))).toEqual([1, 0]);
  });

  it('gives equal shares when every marginal is zero (Σα = ΣLOO = 0)', () => {
    // Σα = (ΣLOO + ΣIOI)/2, so Σα = ΣLOO = 0 forces ΣIOI = 0: no fallback is left but equal shares.
    const flat = { full: 3, empty: 0, withOnly: [0, 0, 0], without: [3, 3, 3] };
    expect(Array.from(fairPrivate(flat))).toEqual([1, 1, 1]);
  });
});

describe('Everybody-Else (papers/003 Def. 4)', () => {
  it('is efficient and symmetric (Properties 1, 3)', () => {
    fc.assert(
      fc.property(utilitiesArb, (u) => {
        const ee = everybodyElse(u);
        expect(Math.abs(sum(ee) - u.full)).toBeLessThanOrEqual(efficiencyTolerance(ee));
        const eeMedian = everybodyElse(u, { reduce: 'median' });
        expect(Math.abs(sum(eeMedian) - u.full)).toBeLessThanOrEqual(efficiencyTolerance(eeMedian));
      }),
    );
  });

  it("uses no report of silo i inside β(i), γ(i): i's reports move EE(i) only through the shared normalizer", () => {
    // EE(i) = w_i / Σ_j w_j · v(M) and w_i does not depend on silo i's reports (Property 5), so
    // changing i's reports changes EE(i) exactly by the ratio of the normalizers Σ_j w_j.
    fc.assert(
      fc.property(utilitiesArb, finite, finite, fc.nat(), (u, a, b, k) => {
        const n = u.withOnly.length;
        const i = k % n;
        const w = [...u.withOnly];
        const wo = [...u.without];
        w[i] = a;
        wo[i] = b;
        const v = { ...u, withOnly: w, without: wo };
        const norm = (x: PrivateUtilities) => {
          let s = 0;
          for (let j = 0; j < n; j++) s += x.full - x.withOnly[j]! + (x.without[j]! - x.empty);
          return s; // Σ_j w_j up to the constant factor 1/(2(N−1))
        };
        fc.pre(Math.abs(norm(u)) > 1e-3 && Math.abs(norm(v)) > 1e-3 && Math.abs(u.full) > 1e-3);
        const before = everybodyElse(u)[i]!;
        const after = everybodyElse(v)[i]!;
        expect(after * norm(v)).toBeCloseTo(before * norm(u), 6);
      }),
    );
  });

  it('equals exact Shapley for two silos when v(∅) = 0', () => {
    const table = Float64Array.from([0, 0.3, 0.5, 0.9]);
    const ee = everybodyElse(utilitiesOfTable(2, table));
    const phi = exactShapley(2, table);
    expect(ee[0]).toBeCloseTo(phi[0]!, 14);
    expect(ee[1]).toBeCloseTo(phi[1]!, 14);
  });

  it('median and mean coincide when each silo has two peers (median of two = mean)', () => {
    const u = { full: 0.9, empty: 0.1, withOnly: [0.5, 0.6, 0.4], without: [0.8, 0.85, 0.7] };
    const a = everybodyElse(u);
    const b = everybodyElse(u, { reduce: 'median' });
    for (let i = 0; i < 3; i++) expect(b[i]).toBeCloseTo(a[i]!, 14);
  });

  it('the median variant bounds what one outlying reporter can do to the others', () => {
    const honest = {
      full: 0.9,
      empty: 0.1,
      withOnly: [0.5, 0.55, 0.6, 0.45, 0.5],
      without: [0.85, 0.8, 0.82, 0.86, 0.84],
    };
    const attacked = { ...honest, withOnly: [...honest.withOnly], without: [...honest.without] };
    attacked.withOnly[4] = -100; // silo 4 reports absurd marginals to shift everyone else
    attacked.without[4] = 100;
    const shift = (reduce: 'mean' | 'median') => {
      const a = everybodyElse(honest, { reduce });
      const b = everybodyElse(attacked, { reduce });
      return Math.max(...[0, 1, 2, 3].map((i) => Math.abs(a[i]! - b[i]!)));
    };
    expect(shift('median')).toBeLessThan(0.1);
    expect(shift('mean')).toBeGreaterThan(10 * shift('median'));
  });
});

/** The named score functions — what a server calls — per scheme. */
const namedScores: Record<Scheme, (u: PrivateUtilities) => Float64Array> = {
  loo: leaveOneOut,
  ioi: includeOneIn,
  fp: fairPrivate,
  ee: (u) => everybodyElse(u),
  eeMedian: (u) => everybodyElse(u, { reduce: 'median' }),
};

/** Utilities whose reports take few distinct values, so EE-median has ties among the others. */
const tiedUtilitiesArb = fc.integer({ min: 2, max: 12 }).chain((n) => {
  const level = fc.integer({ min: -4, max: 4 }).map((k) => k / 4);
  return fc.record({
    full: level,
    empty: level,
    withOnly: fc.array(level, { minLength: n, maxLength: n }),
    without: fc.array(level, { minLength: n, maxLength: n }),
  });
});

describe('scoreScheme: the one owner of weights, normalizer and fallbacks', () => {
  it('gives the named functions bit for bit, and weights, normalizer and scores agree', () => {
    fc.assert(
      fc.property(fc.oneof(utilitiesArb, tiedUtilitiesArb), (u) => {
        for (const s of SCHEMES) {
          const r = scoreScheme(s, u);
          expect(r.scores).toEqual(namedScores[s](u));
          expect(scoreCheckedScheme(s, checkUtilities(u))).toEqual(r);
          expect(schemeScores(s, u)).toEqual(r.scores);
          expect(schemeWeights(s, u)).toEqual(r.weights);
          expect(schemeNormalizer(s, u)).toBe(r.normalizer);
          if (!isRatioScheme(s)) {
            expect(r.normalizer).toBe(1);
            expect(r.fallback).toBe('none');
            expect(r.scores).toEqual(r.weights);
            continue;
          }
          let d = 0;
          for (const w of r.weights) d += w;
          expect(r.normalizer).toBe(d); // D = Σ_j w_j (Eq. 2, 4), summed in silo order
          if (r.fallback === 'none')
            for (let i = 0; i < r.scores.length; i++) expect(r.scores[i]).toBe((r.weights[i]! / d) * u.full);
          else
            expect(Math.abs(d)).toBeLessThanOrEqual(
              NORMALIZER_MARGIN * r.weights.reduce((t, w) => t + Math.abs(w), 0),
            );
        }
      }),
    );
  });

  it('names the fallback it used (Remark 1)', () => {
    // Σα = 0, ΣLOO = 3: FP falls back to LOO
    const remark1 = { full: 1, empty: 0, withOnly: [-1, -2], without: [1 - 3, 1 - 0] };
    expect(scoreScheme('fp', remark1)).toMatchObject({ fallback: 'loo', normalizer: 0 });
    // every marginal zero: equal shares under FP and EE
    const flat = { full: 3, empty: 0, withOnly: [0, 0, 0], without: [3, 3, 3] };
    expect(scoreScheme('fp', flat).fallback).toBe('equalShares');
    // every EE term zero: withOnly = v(M), without = v(M0)
    const noTerms = { full: 0.9, empty: 0.4, withOnly: [0.9, 0.9, 0.9], without: [0.4, 0.4, 0.4] };
    for (const s of ['ee', 'eeMedian'] as const)
      expect(scoreScheme(s, noTerms)).toMatchObject({
        fallback: 'equalShares',
        scores: new Float64Array(3).fill(0.3),
      });
  });

  it('EE weights equal Σ_{j≠i} t_j / (2(N−1)²), t_j = β-term + γ-term, within the rounding of two sums', () => {
    // The form the manipulation audit used before it called this module. Both evaluate sums of at
    // most N terms; each rounding error is ≤ N·ε·Σ|term|, so the two differ by at most
    // 4N·ε·(Σ|β| + Σ|γ|) / (N−1)² (ε = 2^−52), a relative 1e-12 or better for O(1) utilities.
    fc.assert(
      fc.property(utilitiesArb, (u) => {
        const n = u.withOnly.length;
        const { beta, gamma } = everybodyElseTerms(u);
        const t = beta.map((b, j) => b + gamma[j]!);
        const total = t.reduce((s, x) => s + x, 0);
        const abs = [...beta, ...gamma].reduce((s, x) => s + Math.abs(x), 0);
        const tolerance = (4 * n * Number.EPSILON * abs) / (n - 1) ** 2;
        schemeWeights('ee', u).forEach((w, i) => {
          expect(Math.abs(w - (total - t[i]!) / (2 * (n - 1) ** 2))).toBeLessThanOrEqual(tolerance);
        });
      }),
    );
  });

  it('EE-median weights are the medians of the other silos’ terms (oracle: a sort per silo), ties included', () => {
    const naiveMedian = (x: number[]) => {
      const s = Float64Array.from(x).sort();
      const m = s.length >>> 1;
      return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
    };
    fc.assert(
      fc.property(fc.oneof(utilitiesArb, tiedUtilitiesArb), (u) => {
        const n = u.withOnly.length;
        const { beta, gamma } = everybodyElseTerms(u);
        const others = (x: Float64Array, i: number) => Array.from(x).filter((_, j) => j !== i);
        schemeWeights('eeMedian', u).forEach((w, i) => {
          const mb = naiveMedian(others(beta, i)) / (n - 1);
          const mg = naiveMedian(others(gamma, i)) / (n - 1);
          expect(w).toBe((mb + mg) / 2); // §5.3: the mean of Eq. 5 replaced by the median, same scale
        });
      }),
    );
  });

  it('everybodyElseTerms are the Eq. 5 summands, and t_j = 2(Δ − α(j))', () => {
    fc.assert(
      fc.property(utilitiesArb, (u) => {
        const { beta, gamma } = everybodyElseTerms(u);
        const alpha = schemeWeights('fp', u);
        const delta = u.full - u.empty;
        for (let j = 0; j < u.withOnly.length; j++) {
          expect(beta[j]).toBe(u.full - u.withOnly[j]!);
          expect(gamma[j]).toBe(u.without[j]! - u.empty);
          expect(beta[j]! + gamma[j]!).toBeCloseTo(2 * (delta - alpha[j]!), 10);
        }
      }),
    );
  });
});

describe('bad input', () => {
  const good = { full: 1, empty: 0, withOnly: [0.5, 0.5], without: [0.5, 0.5] };
  it.each([
    [{ ...good, without: [0.5] }, /^without: expected 2 values/],
    [{ ...good, withOnly: [0.5, Number.NaN] }, /^withOnly\[1\]: expected a finite number/],
    [{ ...good, full: Number.POSITIVE_INFINITY }, /^full: expected a finite number/],
    [{ ...good, withOnly: [0.5], without: [0.5] }, /^withOnly: expected at least 2 silos/],
  ])('throws a RangeError naming the field (%#)', (u, message) => {
    for (const f of [leaveOneOut, includeOneIn, fairPrivate, everybodyElse]) {
      expect(() => f(u)).toThrow(RangeError);
      expect(() => f(u)).toThrow(message);
    }
  });

  it('throws a TypeError for a missing field and a RangeError for an unknown reduce', () => {
    expect(() => fairPrivate({ ...good, empty: undefined as unknown as number })).toThrow(
      /^empty: expected a number/,
    );
    expect(() => everybodyElse(good, { reduce: 'max' as 'mean' })).toThrow(/^options\.reduce/);
  });

  it('schemeScores names the parameter', () => {
    const u = good;
    expect(() => schemeScores('sv' as Scheme, u)).toThrow(/^scheme:/);
    expect(() => schemeScores('fp', { ...u, without: [0.5] })).toThrow(/^utilities\.without:/);
  });

  it('checkUtilities qualifies field names when given a name; scheme names are checked', () => {
    expect(() => checkUtilities({ ...good, without: [0.5] }, 'utilities')).toThrow(/^utilities\.without:/);
    expect(() => checkUtilities({ ...good, withOnly: [1, Number.NaN] }, 'u')).toThrow(/^u\.withOnly\[1\]:/);
    expect(() => checkUtilities(null as unknown as PrivateUtilities)).toThrow(TypeError);
    expect(() => scoreScheme('fp', { ...good, full: Number.NaN })).toThrow(/^utilities\.full:/);
    expect(() => scoreScheme('sv' as Scheme, good)).toThrow(/^scheme:/);
    expect(checkScheme('eeMedian')).toBe('eeMedian');
    const c = checkUtilities(good);
    expect(c).toEqual({
      full: 1,
      empty: 0,
      withOnly: Float64Array.of(0.5, 0.5),
      without: Float64Array.of(0.5, 0.5),
      n: 2,
    });
  });
});

describe('utilitiesOfTable', () => {
  it('reads v(N), v(∅), v({i}) and v(N ∖ {i}) off the 2^n table (bit i = silo i)', () => {
    const table = Array.from({ length: 16 }, (_, mask) => mask * 10 + 1);
    expect(utilitiesOfTable(4, table)).toEqual({
      full: 151,
      empty: 1,
      withOnly: [11, 21, 41, 81],
      without: [141, 131, 111, 71],
    });
  });

  it('names the bad argument', () => {
    expect(() => utilitiesOfTable(1, [0, 1])).toThrow(/^n: expected an integer in \[2, 30\]/);
    expect(() => utilitiesOfTable(3, [0, 1, 2])).toThrow(/^table: expected 2\^3 = 8 values, got 3/);
    expect(() => utilitiesOfTable(2, [0, 1, Number.NaN, 3])).toThrow(/^table\[2\]: expected a finite number/);
    expect(() => utilitiesOfTable(2, null as never)).toThrow(TypeError);
  });
});
