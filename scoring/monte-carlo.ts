/**
 * Monte Carlo permutation sampling for the Shapley value (Castro et al. 2009; papers/004
 * App. C, Alg. 3) and its truncated variant TMC (Ghorbani & Zou 2019): average, over sampled
 * permutations π, the marginal v(Pre_π(i) ∪ {i}) − v(Pre_π(i)). Each permutation's marginals
 * sum to v(N) − v(∅) (efficiency holds exactly per sample without truncation); with TMC
 * they sum to v(last evaluated prefix) − v(∅), within the tolerance of v(N) − v(∅).
 */
import { Budget } from './_budget.js';
import { RunningMoments } from './_stats.js';
import { permutationDefaults, walkPermutation } from './_walk.js';
import { emptyCoalition, grandCoalition } from './coalition.js';
import type { Game } from './game.js';
import { type PermutationSampler, uniformPermutations } from './permutation-sampler.js';
import type { SampledEstimate } from './sampled-estimate.js';
import type { Rng } from './seeded-rng.js';
import { never, type StoppingRule } from './stopping.js';

/** Options of `monteCarloShapley`. */
export interface MonteCarloOptions {
  /** Maximum distinct coalition evaluations (v(∅) and v(N) included); never exceeded. */
  budget: number;
  /** Seeded random source (see createRng). */
  rng: Rng;
  /** TMC tolerance ε: stop a walk once |v(N) − v(prefix)| < ε (default 0: no truncation). */
  tolerance?: number;
  /** Which permutations to walk (default uniformPermutations). */
  sampler?: PermutationSampler;
  /** When to stop before the budget runs out (default: never; checked after every walk). */
  stop?: StoppingRule;
  /** Prefixes per `values` call when truncating (default 8; the whole walk otherwise). */
  chunkSize?: number;
  /**
   * Cap on walks (default max(1000, budget)). Needed because walks over coalitions already
   * evaluated are free, so on a small game the budget alone may never end the run.
   */
  maxSamples?: number;
}

/**
 * Shapley values by Monte Carlo permutation sampling (TMC when `tolerance` > 0).
 *
 * Walks permutations from the sampler until the budget cannot pay for the next whole walk,
 * the stopping rule says stop, or `maxSamples` walks are done. A walk the budget cannot
 * finish is discarded. The estimate is the mean marginal per player; stderr is the sample
 * standard deviation of the per-walk marginals over √walks.
 *
 * Throws TypeError when game, options or rng are malformed, RangeError when budget < 2, or
 * tolerance, chunkSize or maxSamples are out of range.
 */
export async function monteCarloShapley(game: Game, options: MonteCarloOptions): Promise<SampledEstimate> {
  const { tolerance, chunkSize, maxSamples } = permutationDefaults(game, options);
  const { n } = game;
  const budget = new Budget(game, options.budget);
  const ends = (await budget.values([emptyCoalition(n), grandCoalition(n)]))!;
  const v0 = ends[0]!;
  const vN = ends[1]!;
  const moments = new RunningMoments(n);
  const perms = (options.sampler ?? uniformPermutations)(n, options.rng);
  const check = (options.stop ?? never).start(n);
  let samples = 0;
  while (samples < maxSamples) {
    const marginal = await walkPermutation(budget, perms.next().value!, v0, vN, tolerance, chunkSize);
    if (marginal === null) break;
    moments.addAll(marginal);
    samples++;
    if (check({ samples, values: moments.mean, evaluations: budget.evaluations })) break;
  }
  return { values: moments.mean.slice(), stderr: moments.stderr(), evaluations: budget.evaluations, samples };
}

/** Options of `truncatedMonteCarloShapley`: as `MonteCarloOptions`, with a required tolerance. */
export interface TruncatedMonteCarloOptions extends MonteCarloOptions {
  tolerance: number;
}

/**
 * Truncated Monte Carlo (TMC, Ghorbani & Zou 2019): `monteCarloShapley` with the walk
 * stopped once |v(N) − v(prefix)| < tolerance. Biased by at most `tolerance` per walk in the
 * sum of the values; for a monotone game each skipped marginal lies in [0, tolerance).
 * Throws as `monteCarloShapley`, and RangeError when tolerance is missing.
 */
export function truncatedMonteCarloShapley(
  game: Game,
  options: TruncatedMonteCarloOptions,
): Promise<SampledEstimate> {
  if (typeof options?.tolerance !== 'number')
    throw new RangeError('tolerance: required for truncated Monte Carlo');
  return monteCarloShapley(game, options);
}
