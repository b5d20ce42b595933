/**
 * Data Banzhaf by maximum sample reuse (MSR; Wang & Jia 2023, the Data Banzhaf baseline of
 * papers/004 App. C).
 *
 * The Banzhaf value is β_i = 2^{−(n−1)} Σ_{S ∌ i} (v(S ∪ i) − v(S)) = E[v(S) | i ∈ S] −
 * E[v(S) | i ∉ S] for S uniform over all 2^n subsets. MSR draws subsets S_1..S_K uniformly
 * (each player in with probability ½), evaluates each once, and estimates
 *   β̂_i = mean{v(S_k) : i ∈ S_k} − mean{v(S_k) : i ∉ S_k},
 * so every evaluation serves every player (papers/004 Alg. 4 spends n evaluations per sampled
 * subset instead; MSR is the estimator Wang & Jia recommend and the issue asks for).
 * stderr_i = √(s²_in/K_in + s²_out/K_out).
 */
import { Budget } from './_budget.js';
import { checkGame, checkPositiveInteger, checkRng } from './_checks.js';
import { RunningMoments } from './_stats.js';
import { type Coalition, has } from './coalition.js';
import type { Game } from './game.js';
import type { SampledEstimate } from './sampled-estimate.js';
import type { Rng } from './seeded-rng.js';
import { uniformSubsets } from './subset-sampler.js';

/** Options of `msrBanzhaf`. */
export interface MsrBanzhafOptions {
  /** Maximum distinct coalition evaluations; never exceeded. */
  budget: number;
  /** Seeded random source (see createRng). */
  rng: Rng;
  /** Subsets per `values` call (default 256). */
  batchSize?: number;
  /**
   * Cap on sampled subsets (default max(1000, 10·budget)); subsets already evaluated are free,
   * so on a small game the budget alone may never end the run.
   */
  maxSamples?: number;
}

/**
 * Banzhaf values by maximum sample reuse. Stops when the next subset does not fit in the
 * budget or maxSamples subsets were drawn. A player never seen on one side gets NaN.
 * Throws TypeError when game, options or rng are malformed, RangeError when budget, batchSize
 * or maxSamples is not a positive integer.
 */
export async function msrBanzhaf(game: Game, options: MsrBanzhafOptions): Promise<SampledEstimate> {
  checkGame(game);
  if (typeof options !== 'object' || options === null) throw new TypeError('options: expected an object');
  checkPositiveInteger('budget', options.budget);
  checkRng(options.rng);
  const batchSize = options.batchSize ?? 256;
  checkPositiveInteger('batchSize', batchSize);
  const maxSamples = options.maxSamples ?? Math.max(1000, 10 * options.budget);
  checkPositiveInteger('maxSamples', maxSamples);
  const { n } = game;
  const budget = new Budget(game, options.budget);
  const inside = new RunningMoments(n);
  const outside = new RunningMoments(n);
  let samples = 0;
  const subsets = uniformSubsets(n, options.rng);
  while (samples < maxSamples) {
    const batch: Coalition[] = [];
    for (let b = 0; b < Math.min(batchSize, maxSamples - samples); b++) batch.push(subsets.next().value!);
    // Subsets are independent samples, so cutting the batch where the budget ends is unbiased.
    const k = budget.affordablePrefix(batch);
    const use = batch.slice(0, k);
    if (k > 0) {
      const v = (await budget.values(use))!;
      for (let b = 0; b < k; b++)
        for (let i = 0; i < n; i++) (has(use[b]!, i) ? inside : outside).add(i, v[b]!);
      samples += k;
    }
    if (k < batch.length) break;
  }
  const values = new Float64Array(n);
  const stderr = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    values[i] =
      inside.count[i]! > 0 && outside.count[i]! > 0 ? inside.mean[i]! - outside.mean[i]! : Number.NaN;
    stderr[i] = Math.sqrt(inside.variance(i) / inside.count[i]! + outside.variance(i) / outside.count[i]!);
  }
  return { values, stderr, evaluations: budget.evaluations, samples };
}
