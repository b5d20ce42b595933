import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maskToCoalition } from '../../scoring/coalition.js';
import { paper003Example2 } from '../../scoring/games.js';
import {
  everybodyElse,
  fairPrivate,
  includeOneIn,
  leaveOneOut,
  type PrivateUtilities,
} from '../../scoring/private.js';
import { exactShapley } from '../../scoring/shapley.js';

/** The private utilities of a game given by its 2^n table (bit i = silo i). */
function utilitiesOfTable(n: number, table: ArrayLike<number>): PrivateUtilities {
  const all = 2 ** n - 1;
  return {
    full: table[all]!,
    empty: table[0]!,
    withOnly: Array.from({ length: n }, (_, i) => table[1 << i]!),
    without: Array.from({ length: n }, (_, i) => table[all & ~(1 << i)]!),
  };
}

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
});
