/**
 * GTG-Shapley (Liu et al. 2022) as given in papers/000 Alg. 1 (scalar utility; the class-wise
 * Maverick variant builds on it elsewhere):
 * - between-round truncation (lines 6–7): when |v(N) − v(∅)| ≤ ε_b the round is not worth
 *   valuing and every player gets 0 (2 evaluations);
 * - guided sampling (lines 9–11): in each block of n permutations, player i leads the i-th;
 * - within-round truncation (lines 13–20): once |v(N) − v_{j−1}| < ε_i the remaining prefixes
 *   are not evaluated and v_j = v_{j−1};
 * - running mean of marginals (line 22): φ_π[j] ← ((r−1)/r)·φ_π[j] + (v_j − v_{j−1})/r;
 * - convergence (line 8): the stopping rule, by default papers/000 Eq. 11 (`gtgConvergence`),
 *   checked after each whole block of n permutations, as the loop of lines 8–9 does.
 * The evaluation budget bounds the run as well; a permutation it cannot pay for is discarded.
 */
import { Budget } from './_budget.js';
import { checkNonNegative } from './_checks.js';
import { RunningMoments } from './_stats.js';
import { permutationDefaults, walkPermutation } from './_walk.js';
import { emptyCoalition, grandCoalition } from './coalition.js';
import type { Game } from './game.js';
import { guidedPermutations, type PermutationSampler } from './permutation-sampler.js';
import type { SampledEstimate } from './sampled-estimate.js';
import type { Rng } from './seeded-rng.js';
import { gtgConvergence, type StoppingRule } from './stopping.js';

/** Options of `gtgShapley`. */
export interface GtgOptions {
  /** Maximum distinct coalition evaluations (v(∅) and v(N) included); never exceeded. */
  budget: number;
  /** Seeded random source (see createRng). */
  rng: Rng;
  /** ε_b, between-round truncation: value nothing when |v(N) − v(∅)| ≤ ε_b (default 0). */
  betweenRoundTolerance?: number;
  /** ε_i, within-round truncation: stop a walk once |v(N) − v_{j−1}| < ε_i (default 0). */
  withinRoundTolerance?: number;
  /** Permutations to walk (default guidedPermutations, Alg. 1 line 11). */
  sampler?: PermutationSampler;
  /** Convergence rule, checked after each block of n walks (default gtgConvergence(), Eq. 11). */
  stop?: StoppingRule;
  /** Prefixes per `values` call when truncating within rounds (default 8). */
  chunkSize?: number;
  /** Cap on walks (default max(1000, budget)); see MonteCarloOptions.maxSamples. */
  maxSamples?: number;
}

/**
 * Shapley values by GTG-Shapley (papers/000 Alg. 1, stopping rule Eq. 11).
 * stderr is the sample standard deviation of per-walk marginals over √walks (with guided
 * permutations, walks within a block are not identically distributed, so it is indicative).
 * Throws TypeError when game, options or rng are malformed, RangeError when budget < 2 or a
 * tolerance, chunkSize or maxSamples is out of range.
 */
export async function gtgShapley(game: Game, options: GtgOptions): Promise<SampledEstimate> {
  const within = options?.withinRoundTolerance ?? 0;
  const between = options?.betweenRoundTolerance ?? 0;
  const { chunkSize, maxSamples } = permutationDefaults(game, { ...options, tolerance: within });
  checkNonNegative('betweenRoundTolerance', between);
  const { n } = game;
  const budget = new Budget(game, options.budget);
  const ends = (await budget.values([emptyCoalition(n), grandCoalition(n)]))!;
  const v0 = ends[0]!;
  const vN = ends[1]!;
  const moments = new RunningMoments(n);
  // Alg. 1 line 7: between-round truncation.
  if (!(Math.abs(vN - v0) > between))
    return {
      values: moments.mean.slice(),
      stderr: moments.stderr(),
      evaluations: budget.evaluations,
      samples: 0,
    };
  const perms = (options.sampler ?? guidedPermutations)(n, options.rng);
  const check = (options.stop ?? gtgConvergence()).start(n);
  let r = 0;
  while (r < maxSamples) {
    const marginal = await walkPermutation(budget, perms.next().value!, v0, vN, within, chunkSize);
    if (marginal === null) break;
    moments.addAll(marginal); // line 22, the running mean
    r++;
    const converged = check({ samples: r, values: moments.mean, evaluations: budget.evaluations });
    if (converged && r % n === 0) break; // line 8 is tested once per block of n (line 9)
  }
  return {
    values: moments.mean.slice(),
    stderr: moments.stderr(),
    evaluations: budget.evaluations,
    samples: r,
  };
}
