/** Shared by the manipulation tests: rounds to audit, brute-force oracles and small helpers. */
import fc from 'fast-check';
import {
  everybodyElse,
  fairPrivate,
  includeOneIn,
  leaveOneOut,
  type PrivateUtilities,
  type Scheme,
} from '../../../scoring/private.js';

export const unitRange = { lo: 0, hi: 1 };

/** Scores from the named functions of scoring/private.ts — the server's code — as the oracle. */
export function privateScores(scheme: Scheme, u: PrivateUtilities): Float64Array {
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
export function withReports(
  u: PrivateUtilities,
  i: number,
  withOnly: number,
  without: number,
): PrivateUtilities {
  const a = Array.from(u.withOnly);
  const b = Array.from(u.without);
  a[i] = withOnly;
  b[i] = without;
  return { ...u, withOnly: a, without: b };
}

/** Brute force: max over a (g+1)×(g+1) grid of the box (corners included) of silo t's score change. */
export function gridMax(
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

export const sum = (x: ArrayLike<number>) => Array.from(x).reduce((s, v) => s + v, 0);

/**
 * A late-round accuracy round: v(M0) ∈ [0.5, 0.8], v(M) a little above; honest singleton models
 * below v(M), leave-one-out models above v(M0), so every EE term t_j is positive.
 */
export const lateRound = (nMin: number, nMax: number) =>
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
export const earlyRound = (nMin: number, nMax: number) =>
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
