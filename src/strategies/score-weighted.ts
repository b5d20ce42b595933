/**
 * Score-weighted aggregation (papers/003 §5.4, "Performance Gain"): FedAvg whose aggregation weights
 * are the silos' normalized contribution scores — "each update is weighted by the current value of
 * its normalized score, so that top-performing and bottom-performing participants receive weights
 * above and below 1, respectively". Overrides `aggregationWeights` of FedAvg.
 *
 * The normalization is papers/003 §5's (metrics paragraph): (i) subtract the minimum, (ii) divide by
 * the mean, ŝ_i = (s_i − min_j s_j) / mean_j(s_j − min s), so the weights average 1, the best silos
 * get more than 1 and the worst exactly 0.
 *
 * Private-mode safe: the weights come from public history (scores of earlier rounds), so each silo
 * can scale its own update before secure aggregation. Choices where the paper is silent:
 * - "current value": by default the cumulative score (sum of the per-round scores published so far);
 *   `accumulate: 'latest'` uses the silo's most recent per-round score instead.
 * - The minimum and mean are taken over the round's selected silos that have a score; a silo with no
 *   score yet gets weight 1 (neutral), and when the scores do not differ (or only one silo has one)
 *   every weight is 1. Round 1 is therefore plain uniform aggregation.
 * - The base is uniform (the paper compares against "FedAvg (naive uniform aggregation)");
 *   `weights: 'examples'` multiplies the normalized score by n_i.
 */

import Type from 'typebox';
import { SCHEMES, type Scheme } from '../../scoring/private.js';
import { type ParamsOf, parameters, roundSizeParameters } from './_schema.js';
import { baseWeights, fedAvgVariant } from './fedavg.js';
import type { BuiltInStrategyEntry, History, Strategy } from './strategy.js';

/**
 * The scheme a score-driven strategy follows unless configured: EE-median, the private scheme
 * with the smallest unflagged self-gain (docs/audit.md). One owner: score-selection reads it too.
 */
export const DEFAULT_STRATEGY_SCHEME: Scheme = 'eeMedian';

/** The parameters: every silo every round, cumulative EE-median scores (the scheme with the smallest unflagged self-gain, docs/audit.md), uniform base, unless configured. */
export const SCORE_WEIGHTED_PARAMETERS = parameters({
  ...roundSizeParameters(1),
  score: Type.String({
    minLength: 1,
    default: DEFAULT_STRATEGY_SCHEME,
    description: `Score scheme whose published scores weight the silos: a private score (${SCHEMES.join(', ')}) or an estimator the run computes.`,
  }),
  accumulate: Type.Enum(['cumulative', 'latest'] as const, {
    default: 'cumulative',
    description:
      'A silo\'s current score: the sum of its per-round scores so far, or its most recent one (papers/003 §5.4 says "the current value").',
  }),
  weights: Type.Enum(['equal', 'examples'] as const, {
    default: 'equal',
    description:
      'Base the normalized score multiplies: 1 (the paper compares against uniform aggregation) or the example count n_i.',
  }),
});

/** Parameters of `scoreWeighted` (SCORE_WEIGHTED_PARAMETERS'). */
export type ScoreWeightedParams = ParamsOf<typeof SCORE_WEIGHTED_PARAMETERS>;

/**
 * papers/003 §5 normalization: (s − min s) / mean(s − min s). All 1 when the scores are all equal.
 * @throws RangeError when scores is empty or not finite.
 */
export function normalizeScores(scores: ArrayLike<number>): Float64Array {
  const n = scores.length;
  if (n < 1) throw new RangeError('scores: expected at least one score');
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(scores[i])) throw new RangeError(`scores: entry ${i} is not finite (${scores[i]})`);
    min = Math.min(min, scores[i]!);
  }
  let mean = 0;
  for (let i = 0; i < n; i++) mean += (scores[i]! - min) / n;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = mean > 0 ? (scores[i]! - min) / mean : 1;
  return out;
}

/**
 * The current score of every silo from the public history: the sum of its per-round scores
 * ('cumulative') or its last one ('latest'); null for a silo never scored under `score`.
 */
export function currentScores(
  history: History,
  score: string,
  accumulate: 'cumulative' | 'latest',
): (number | null)[] {
  const out: (number | null)[] = new Array(history.participation.length).fill(null);
  for (const r of history.rounds) {
    const row = r.scores[score];
    if (row === undefined) continue;
    row.forEach((v, i) => {
      if (v === null || !Number.isFinite(v) || i >= out.length) return;
      out[i] = accumulate === 'latest' ? v : (out[i] ?? 0) + v;
    });
  }
  return out;
}

const SCORE_WEIGHTED = fedAvgVariant({
  name: 'score-weighted',
  description: 'aggregation weighted by private scores (papers/003 §5.4)',
  parameters: SCORE_WEIGHTED_PARAMETERS,
  networked: 'score-weights',
  requiresFullVisibility: false,
  async aggregate(state, ctx, o) {
    const current = currentScores(ctx.history, o.score, o.accumulate);
    const scored = ctx.selected.filter((s) => current[s] !== null);
    const normalized = scored.length > 0 ? normalizeScores(scored.map((s) => current[s]!)) : [];
    const factor = new Map(scored.map((s, k) => [s, normalized[k]!]));
    const base = baseWeights(ctx, o.weights);
    const weights = Float64Array.from(ctx.selected, (s, k) => base[k]! * (factor.get(s) ?? 1));
    return { weights, state };
  },
});

/**
 * Score-weighted aggregation (papers/003 §5.4) with FedAvg's random selection.
 * @throws RangeError for a bad round size, accumulate or weights.
 */
export const scoreWeighted: (params?: Partial<ScoreWeightedParams>) => Strategy<null> = SCORE_WEIGHTED.create;

/** The registry entry (./registry.ts): `scoreWeighted` from a JSON config. */
export const scoreWeightedEntry: BuiltInStrategyEntry = SCORE_WEIGHTED.entry;
