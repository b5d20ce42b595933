/**
 * Issue 32, S1 — a colluding pair made honest silos' published scores unbounded.
 *
 * The 5-silo rounds of docs/audit.md (v(M) = 0.86, v(M0) = 0.85; the issue 27 round with and
 * without ties). A pair of silos searches its joint reports (a grid over [0.80, 0.90]⁴ around the
 * honest values, neither member flagged by the detector, so quarantine keeps both) for a sign
 * change of the normalizer D of FP, EE or EE-median, and bisects to it. Through `scoreReports`
 * (the scorer of the engine and the service, quarantine on) the honest silos' published scores
 * then grow without bound as D → 0, and the pair picks the sign.
 *
 * Against f7a4317 (main before the fix; this file run there with κ's range written out): both
 * tests failed. Bisected to |D| ≤ 1e-6·D₀ with neither member flagged, the honest silos' published
 * scores reached |FP| = 3.1e5 (464 crossings found), |EE| = 9.2e4 (132) and |EE-median| = 1.8e5
 * (4) — v(M) is 0.86 — and the audit optimizer's search reported every ratio scheme `unbounded`.
 *
 * Now: a ratio scheme falls back as for D = 0 (papers/003 Remark 1) when |D| ≤ κ·Σ|w|
 * (`NORMALIZER_MARGIN` = 0.1, scoring/private.ts), and published scores are clamped to the
 * documented range ±|v(M)|/κ (`ratioScoreBound`): no report of a pair — grid, bisection, or the
 * audit optimizer's search over the whole range [0, 1]⁴ — moves an honest silo's FP, EE or
 * EE-median outside it. (Whether a pair can get an honest silo quarantined is the detector's
 * half of S1: test/security/s1-framing.test.ts.)
 */
import { describe, expect, test } from 'vitest';
import { simulatedIdentities } from '../../protocol/simulate.js';
import { maximize, scoreChange } from '../../scoring/manipulation/_optimizer.js';
import { detectReports } from '../../scoring/manipulation/detection.js';
import {
  checkUtilities,
  type PrivateUtilities,
  ratioScoreBound,
  type Scheme,
  scoreScheme,
} from '../../scoring/private.js';
import { scoreReports, signedReport } from '../../src/consortium/private-scoring.js';

const FULL = 0.86;
const EMPTY = 0.85;
/** docs/audit.md's "issue 27 example, honest reports without ties". */
const HONEST: PrivateUtilities = {
  full: FULL,
  empty: EMPTY,
  withOnly: [0.854, 0.856, 0.855, 0.853, 0.852],
  without: [0.857, 0.855, 0.858, 0.856, 0.854],
};
const RATIO: readonly Scheme[] = ['fp', 'ee', 'eeMedian'];
const N = 5;
const PAIRS = [0, 1, 2, 3].flatMap((a) => [1, 2, 3, 4].filter((b) => b > a).map((b) => [a, b] as const));
/** Per coordinate: from well below to well above the honest values (≈ 0.852–0.858). */
const GRID = [0.832, 0.838, 0.844, 0.85, 0.856, 0.862, 0.868, 0.874];

/** The round with the pair's reports (x = [withOnly_a, without_a, withOnly_b, without_b]). */
function withPair(u: PrivateUtilities, [a, b]: readonly [number, number], x: readonly number[]) {
  const withOnly = Array.from(u.withOnly);
  const without = Array.from(u.without);
  [withOnly[a], without[a], withOnly[b], without[b]] = [x[0]!, x[1]!, x[2]!, x[3]!];
  return { full: u.full, empty: u.empty, withOnly, without };
}

const unflagged = (u: PrivateUtilities, pair: readonly number[]) => {
  const { flagged } = detectReports(u);
  return pair.every((m) => !flagged[m]);
};

/** D = Σ w of a ratio scheme at these reports (whatever the fallback: the sign the pair steers). */
const normalizerOf = (scheme: Scheme, u: PrivateUtilities) =>
  Array.from(scoreScheme(scheme, u).weights).reduce((s, w) => s + w, 0);

type PairPoint = { pair: readonly [number, number]; x: number[] };

/** Every pair's grid points with neither member flagged (scheme-independent). */
function unflaggedGrid(u: PrivateUtilities): PairPoint[] {
  const out: PairPoint[] = [];
  for (const pair of PAIRS)
    for (const w0 of GRID)
      for (const o0 of GRID)
        for (const w1 of GRID)
          for (const o1 of GRID) {
            const x = [w0, o0, w1, o1];
            if (unflagged(withPair(u, pair, x), pair)) out.push({ pair, x });
          }
  return out;
}

/**
 * Where D changes sign between two unflagged grid neighbours (one coordinate one step apart):
 * the segment bisected towards D = 0, keeping the end points unflagged.
 */
function crossings(u: PrivateUtilities, scheme: Scheme, grid: readonly PairPoint[]): PairPoint[] {
  const key = (p: PairPoint) => `${p.pair}|${p.x}`;
  const sign = new Map(grid.map((p) => [key(p), Math.sign(normalizerOf(scheme, withPair(u, p.pair, p.x)))]));
  const out: PairPoint[] = [];
  for (const p of grid)
    for (let d = 0; d < 4; d++) {
      const k = GRID.indexOf(p.x[d]!);
      if (k + 1 >= GRID.length) continue;
      const q = { pair: p.pair, x: p.x.slice() };
      q.x[d] = GRID[k + 1]!;
      const sq = sign.get(key(q));
      const sp = sign.get(key(p))!;
      if (sq === undefined || sq === sp) continue;
      // Bisect until |D| ≤ 1e-6 · D₀ (D₀: the honest normalizer), as the attack did.
      const target = 1e-6 * Math.abs(normalizerOf(scheme, u));
      let [lo, hi] = [p.x.slice(), q.x.slice()];
      for (let it = 0; it < 80; it++) {
        const mid = lo.map((v, j) => (v + hi[j]!) / 2);
        const dm = normalizerOf(scheme, withPair(u, p.pair, mid));
        if (Math.abs(dm) <= target) {
          if (unflagged(withPair(u, p.pair, mid), p.pair)) out.push({ pair: p.pair, x: mid });
          break;
        }
        if (Math.sign(dm) === sp) lo = mid;
        else hi = mid;
      }
    }
  return out;
}

/** Per pair, the crossing point nearest D = 0 (|D| / Σ|w|). */
function nearestZero(u: PrivateUtilities, scheme: Scheme, points: readonly PairPoint[]): PairPoint[] {
  const best = new Map<string, { p: PairPoint; r: number }>();
  for (const p of points) {
    const w = scoreScheme(scheme, withPair(u, p.pair, p.x)).weights;
    const r = Math.abs(w.reduce((s, x) => s + x, 0)) / w.reduce((s, x) => s + Math.abs(x), 0);
    const k = String(p.pair);
    if (!best.has(k) || r < best.get(k)!.r) best.set(k, { p, r });
  }
  return [...best.values()].map((b) => b.p);
}

describe('S1: a colluding pair and the normalizer D of FP, EE and EE-median', () => {
  const keys = simulatedIdentities(N, 32);
  const roster = keys.map((k) => k.publicKey);
  /** Published scores (scoreReports, quarantine on) of the honest silos at the pair's reports. */
  const published = (u: PrivateUtilities, scheme: Scheme) => {
    const reports = Array.from({ length: N }, (_, i) =>
      signedReport('c1', 3, i, u.withOnly[i]!, u.without[i]!, keys[i]!),
    );
    const r = scoreReports('c1', 3, reports, roster, u.full, u.empty);
    return { scored: r.scored, scores: Array.from(r.scores[scheme]), quarantined: r.quarantined };
  };

  test("the pair drives D through zero unflagged; honest silos' published scores stay within ±|v(M)|/κ", () => {
    const bound = ratioScoreBound(FULL);
    expect(bound).toBeLessThan(100 * FULL); // a documented, finite range
    const grid = unflaggedGrid(HONEST);
    for (const scheme of RATIO) {
      const all = crossings(HONEST, scheme, grid);
      // The attack exists: unflagged reports on both sides of D = 0, bisected to it.
      expect(all.length, `${scheme}: unflagged reports on both sides of D = 0`).toBeGreaterThan(0);
      let worst = 0;
      for (const { pair, x } of nearestZero(HONEST, scheme, all)) {
        const r = published(withPair(HONEST, pair, x), scheme);
        expect(r.quarantined.map((q) => q.silo).filter((s) => pair.includes(s))).toEqual([]);
        r.scored.forEach((silo, k) => {
          if (!pair.includes(silo)) worst = Math.max(worst, Math.abs(r.scores[k]!));
        });
      }
      for (const { pair, x } of [...grid, ...all]) {
        const scores = scoreScheme(scheme, withPair(HONEST, pair, x)).scores;
        scores.forEach((v, silo) => {
          if (!pair.includes(silo)) worst = Math.max(worst, Math.abs(v));
        });
      }
      expect
        .soft(worst, `${scheme}: largest honest |score| (${all.length} crossings)`)
        .toBeLessThanOrEqual(bound);
    }
  });

  test("the audit optimizer's search over [0, 1]⁴ finds no honest score outside the range", () => {
    const honest = HONEST;
    const u = checkUtilities(honest);
    const bound = ratioScoreBound(FULL);
    for (const scheme of RATIO) {
      const base = scoreScheme(scheme, honest).scores;
      for (const pair of PAIRS) {
        const outsiders = [0, 1, 2, 3, 4].filter((v) => !pair.includes(v));
        const objectives = outsiders.flatMap((v) => [scoreChange(N, v, 1), scoreChange(N, v, -1)]);
        const box = { withOnlyLo: 0, withOnlyHi: 1, withoutLo: 0, withoutHi: 1 };
        const results = maximize(scheme, u, [...pair], [box, box], objectives, 200_000);
        outsiders.forEach((v, q) => {
          const up = results[2 * q]!;
          const down = results[2 * q + 1]!;
          expect(up.unbounded || down.unbounded, `${scheme} pair ${pair}: unbounded`).toBe(false);
          expect(base[v]! + up.value).toBeLessThanOrEqual(bound);
          expect(base[v]! - down.value).toBeGreaterThanOrEqual(-bound);
        });
      }
    }
  });
});
