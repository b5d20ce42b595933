/**
 * Issue 32, S1 (framing) — a colluding pair's reports get honest silos quarantined.
 *
 * The rounds: docs/audit.md's two 5-silo rounds (v(M) = 0.86, v(M0) = 0.85, the issue-27 example
 * with and without ties) and a 9-silo quickstart round (seed 1, round 3, T = 2000, recorded by
 * `scripts/false-flags.ts record`). Every pair of silos may report anything in [0, 1]; the search
 * is the audit's kind: a grid over each member's two reports (the range ends, v(M0), v(M) and, in
 * the 5-silo rounds, the honest reports' median), then a coordinate search from the best grid
 * points that maximizes the largest z of an honest silo (both signs: the detector before issue
 * 37 flagged |z|). The attack
 * succeeds when `quarantineReports` — the scorer's quarantine — sets an honest report aside.
 *
 * Against main at f7a4317 (the detector of issue 27: robust z among all reports, MAD scale, a
 * silo's own report in its reference) this file failed in all three rounds; among what it printed:
 * in the round with ties the pair (0, 1) reporting (0, 0.858) and (0, 0.858) got silos 3 and 4
 * quarantined, in the round without ties (0.852, 0) and (0.852, 0) got silos 2 and 3, and in the
 * 9-silo round the pair (1, 2) reporting (v(M0), v(M)) = (0.6245, 0.652) twice got silo 0
 * quarantined (`npx tsx scripts/false-flags.ts framing`: 6, 8 and 18 pairs of 10, 10 and 36).
 *
 * Now a silo's z is measured against the other silos' reports, the smallest over every reference
 * set that leaves out two of them (scoring/manipulation/reference-z.ts): one such set leaves out
 * the pair, so the pair's reports cannot lift an honest silo's z above its z among honest
 * reports — and none of these honest silos is flagged there.
 */
import { describe, expect, test } from 'vitest';
import { detectReports } from '../../scoring/manipulation/detection.js';
import { quarantineReports } from '../../scoring/manipulation/quarantine.js';
import type { PrivateUtilities } from '../../scoring/private.js';
import { ISSUE_27_NO_TIES, ISSUE_27_TIES, QUICKSTART_ROUND_3 } from '../../scripts/_audit-rounds.js';

interface Round {
  name: string;
  u: { full: number; empty: number; withOnly: number[]; without: number[] };
}

const ROUNDS: Round[] = [
  {
    name: 'issue 27 example (5 silos, ties)',
    u: ISSUE_27_TIES,
  },
  {
    name: 'issue 27 example without ties (5 silos)',
    u: ISSUE_27_NO_TIES,
  },
  {
    name: 'quickstart seed 1 round 3 (9 silos)',
    u: QUICKSTART_ROUND_3,
  },
];

/** The round with the pair's reports x = [withOnly_a, without_a, withOnly_b, without_b]. */
function lie(u: Round['u'], [a, b]: readonly [number, number], x: readonly number[]): PrivateUtilities {
  const withOnly = [...u.withOnly];
  const without = [...u.without];
  withOnly[a] = x[0]!;
  without[a] = x[1]!;
  withOnly[b] = x[2]!;
  without[b] = x[3]!;
  return { full: u.full, empty: u.empty, withOnly, without };
}

/** The largest z (sign · z) of an honest silo under the pair's reports. */
function objective(u: Round['u'], pair: readonly [number, number], x: readonly number[], sign: 1 | -1) {
  const d = detectReports(lie(u, pair, x));
  let best = Number.NEGATIVE_INFINITY;
  for (let h = 0; h < u.withOnly.length; h++)
    if (h !== pair[0] && h !== pair[1]) best = Math.max(best, sign * d.zWithOnly[h]!, sign * d.zWithout[h]!);
  return best;
}

/** Honest silos quarantined under the pair's reports. */
function framed(u: Round['u'], pair: readonly [number, number], x: readonly number[]): number[] {
  return quarantineReports(lie(u, pair, x))
    .quarantined.map((q) => q.index)
    .filter((i) => i !== pair[0] && i !== pair[1]);
}

/** Grid, then coordinate search from the best grid points; returns the worst reports found. */
function search(u: Round['u'], pair: readonly [number, number], grid: readonly number[]) {
  const found: { x: number[]; framed: number[]; z: number }[] = [];
  for (const sign of [1, -1] as const) {
    const scored: { x: number[]; z: number }[] = [];
    for (const a of grid)
      for (const b of grid)
        for (const c of grid)
          for (const d of grid) {
            const x = [a, b, c, d];
            scored.push({ x, z: objective(u, pair, x, sign) });
          }
    scored.sort((p, q) => q.z - p.z);
    for (const start of scored.slice(0, 2)) {
      let { x, z } = start;
      for (let step = 0.05; step > 1e-4; step /= 2) {
        let improved = true;
        while (improved) {
          improved = false;
          for (let k = 0; k < 4; k++)
            for (const dir of [-1, 1]) {
              const y = [...x];
              y[k] = Math.min(1, Math.max(0, y[k]! + dir * step));
              const zy = objective(u, pair, y, sign);
              if (zy > z) {
                x = y;
                z = zy;
                improved = true;
              }
            }
        }
      }
      found.push({ x, z, framed: framed(u, pair, x) });
    }
    for (const s of scored.slice(0, 20)) found.push({ ...s, framed: framed(u, pair, s.x) });
  }
  return found;
}

describe('S1: a colluding pair cannot get an honest silo quarantined', () => {
  for (const round of ROUNDS) {
    test(round.name, () => {
      const { u } = round;
      const n = u.withOnly.length;
      // the honest round quarantines nothing
      expect(quarantineReports(u).quarantined).toEqual([]);
      const values = [...u.withOnly, ...u.without].sort((a, b) => a - b);
      const grid = [0, 1, u.empty, u.full, ...(n <= 5 ? [values[values.length >> 1]!] : [])];
      const successes: string[] = [];
      for (let a = 0; a < n; a++)
        for (let b = a + 1; b < n; b++)
          for (const f of search(u, [a, b], grid))
            if (f.framed.length > 0)
              successes.push(`pair (${a}, ${b}) reporting ${f.x.join(', ')} → silos ${f.framed.join(', ')}`);
      expect(successes.slice(0, 5)).toEqual([]);
    }, 60_000);
  }
});
