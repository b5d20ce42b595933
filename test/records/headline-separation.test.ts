/**
 * Issue 37's acceptance for the headline (`payout`, scoring/payout.ts): on a utilities file of the
 * issue's kind — 6 silos × 5 rounds, honest silos with clearly ordered true contributions, and a
 * free rider (v(M0 + U_i) = v(M0), v(M − U_i) = v(M) in every round) — written here (its own
 * generator and noise, not the one the candidates were tuned on, scripts/_separation-file.ts), the
 * free rider's share is ≤ 0.02 and it ranks last alone, and the honest silos' ranking has
 * Spearman ≥ 0.9 with their true contributions, for each of 5 noise seeds; and docs/audit.md's
 * self-gains of the headline, computed by the audit's own optimizer on the issue 27 rounds, stay
 * within ×1.25 for one silo and for a pair.
 */
import { describe, expect, it } from 'vitest';
import { undetectedCollusionBounds } from '../../scoring/manipulation/collusion.js';
import { singleSiloBounds } from '../../scoring/manipulation/single-silo.js';
import { spearman } from '../../scoring/metrics.js';
import { type PrivateUtilities, schemeScores } from '../../scoring/private.js';
import { ISSUE_27_NO_TIES, ISSUE_27_TIES } from '../../scripts/_audit-rounds.js';
import { parseUtilitiesFile } from '../../src/records/utilities-file.js';
import { scoreUtilities } from '../../src/records/utility-scores.js';

/** True contributions of the honest silos (LOO in round 1, as in the issue), best first. */
const CONTRIBUTIONS = [0.078, 0.057, 0.041, 0.039, 0.03];
const NAMES = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'rider'];

/** A utilities file: LOO_i ≈ c_i·0.8^(r−1), IOI_i ≈ 1.3·LOO_i, multiplicative noise ±12 %. */
function utilitiesFile(seed: number) {
  let s = seed * 7919 + 17;
  const noise = () => {
    s = (s * 48271) % 2147483647;
    return 1 + 0.12 * (2 * (s / 2147483647) - 1);
  };
  const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
  const rounds = [1, 2, 3, 4, 5].map((round) => {
    const empty = 0.4 + 0.07 * round;
    const scale = 0.8 ** (round - 1);
    const loo = CONTRIBUTIONS.map((c) => c * scale * noise());
    const ioi = loo.map((l) => 1.3 * l * noise());
    const full = empty + loo.reduce((a, b) => a + b, 0);
    return {
      round,
      full: r6(full),
      empty: r6(empty),
      withOnly: [...ioi.map((x) => r6(empty + x)), r6(empty)],
      without: [...loo.map((x) => r6(full - x)), r6(full)],
    };
  });
  return { silos: NAMES, rounds };
}

describe("the headline on a file of issue 37's kind", () => {
  for (const seed of [1, 2, 3, 4, 5])
    it(`separates contributors and pays the free rider ≤ 2 % (noise seed ${seed})`, async () => {
      const file = parseUtilitiesFile(JSON.parse(JSON.stringify(utilitiesFile(seed))), 'generated');
      const scores = await scoreUtilities(file, { source: 'generated', fedscoreVersion: 'test' });
      const board = scores.leaderboard!;
      expect(scores.headline).toBe('payout');
      const rider = board.find((e) => e.name === 'rider')!;
      expect(rider.share!).toBeLessThanOrEqual(0.02);
      expect(rider.rank).toBe(6);
      expect(board.filter((e) => e.rank === 6)).toHaveLength(1);
      expect(board.filter((e) => e.name !== 'rider').every((e) => e.rankRange![1] < 6)).toBe(true);
      const honest = NAMES.slice(0, 5).map((n) => board.find((e) => e.name === n)!.headline);
      expect(spearman(honest, CONTRIBUTIONS)).toBeGreaterThanOrEqual(0.9);
      const total = board.reduce((t, e) => t + (e.share ?? 0), 0);
      expect(total).toBeCloseTo(1, 12);
      for (const e of board) expect(e.interval![0]).toBeLessThanOrEqual(e.interval![1]);
    });
});

describe("docs/audit.md's self-gains for the headline (the audit's optimizer)", () => {
  const rounds: PrivateUtilities[] = [ISSUE_27_TIES, ISSUE_27_NO_TIES];
  it('one silo and a pair, unflagged: at most ×1.25 of the honest headline weight', () => {
    for (const u of rounds) {
      const honest = schemeScores('payout', u);
      const bounds = singleSiloBounds('payout', u);
      bounds.forEach((b, i) => {
        expect(honest[i]!).toBeGreaterThan(0);
        expect((honest[i]! + b.selfGainUndetected.value) / honest[i]!).toBeLessThanOrEqual(1.25);
      });
      for (let a = 0; a < 5; a++)
        for (let b = a + 1; b < 5; b++) {
          const gain = undetectedCollusionBounds('payout', u, [a, b], {}, bounds).totalGain.value;
          const h = honest[a]! + honest[b]!;
          expect((h + gain) / h).toBeLessThanOrEqual(1.25);
        }
    }
  });
});
