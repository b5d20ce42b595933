/**
 * MS-GTG's joint sampler (papers/000 Alg. 1, lines 8–22, and Eq. 11), for `maverickShapleyRound`
 * (./maverick.ts), which does lines 5–7 (v_0, v_N, between-round truncation) and 23–27 (coreset,
 * β) around it:
 *
 * - one stream of guided permutations for all classes (lines 9–11: in each block of n permutations
 *   player i leads the i-th), each prefix's model evaluated once for its whole class vector;
 * - within-round truncation on the class vector (lines 15–20): a prefix is evaluated while
 *   |v_N − v_{j−1}| ≥ ε_i, read as the max norm over classes (the reading maverick.ts gives the
 *   between-round test), so the walk stops only once no class is still ε_i away from v_N;
 * - per class, the running mean of the marginals (line 22);
 * - the convergence rule (line 8) on φ_i = Σ_c β^c φ_i^c (Eq. 11 and the sentence after it), with β
 *   of the best coalition evaluated so far (the coreset of line 24 is known only after the loop),
 *   checked once per block of n walks like scoring/gtg.ts.
 *
 * The evaluation budget (distinct coalitions, v(∅) and v(N) included) bounds the run as well; a walk
 * it cannot pay for is discarded. With ε_i = 0 and no stopping, the estimate is an unbiased
 * permutation estimate of every class's Shapley value, like scoring/gtg.ts on each class.
 */

import { checkNonNegative, checkPositiveInteger, checkRng } from './_checks.js';
import { RunningMoments } from './_stats.js';
import { walkVectorPermutation } from './_walk.js';
import { type Coalition, coalitionKey, emptyCoalition, grandCoalition } from './coalition.js';
import type { VectorGame } from './game.js';
import type { JointClassEstimator, JointEstimate } from './maverick.js';
import { guidedPermutations, type PermutationSampler } from './permutation-sampler.js';
import { gtgConvergence, type StoppingRule } from './stopping.js';

/** Options of `msGtg`. */
export interface MsGtgOptions {
  /** Maximum distinct coalition evaluations (v(∅) and v(N) included), over all classes at once. */
  budget: number;
  /** ε_i, within-round truncation on the class vector (default 0: never truncate). */
  withinRoundTolerance?: number;
  /** Permutations to walk (default guidedPermutations, Alg. 1 line 11). */
  sampler?: PermutationSampler;
  /** Convergence rule on the β-weighted φ, checked after each block of n walks (default Eq. 11). */
  stop?: StoppingRule;
  /** Prefixes per `values` call when truncating (default 8). */
  chunkSize?: number;
  /** Cap on walks (default max(1000, budget)). */
  maxSamples?: number;
}

/** Distinct coalitions paid for, against a limit (scoring/_budget.ts, for a vector game). */
class VectorBudget {
  private readonly paid = new Set<string>();
  constructor(
    private readonly game: VectorGame,
    private readonly limit: number,
    already: readonly Coalition[],
  ) {
    for (const c of already) this.paid.add(coalitionKey(c));
  }
  /** Distinct coalitions paid for so far. */
  get spent(): number {
    return this.paid.size;
  }
  /** Values of the batch (batch × dims), or null when it does not fit in what is left. */
  async values(batch: readonly Coalition[]): Promise<Float64Array | null> {
    const fresh = new Set<string>();
    for (const c of batch) {
      const k = coalitionKey(c);
      if (!this.paid.has(k)) fresh.add(k);
    }
    if (this.paid.size + fresh.size > this.limit) return null;
    for (const k of fresh) this.paid.add(k);
    return this.game.values(batch);
  }
}

/**
 * MS-GTG as papers/000 Alg. 1 writes it: a `JointClassEstimator` for `maverickShapleyRound`.
 * @throws RangeError when budget < 2 or an option is out of range (when the round runs).
 */
export function msGtg(options: MsGtgOptions): JointClassEstimator {
  const tolerance = options.withinRoundTolerance ?? 0;
  const chunkSize = options.chunkSize ?? 8;
  const maxSamples = options.maxSamples ?? Math.max(1000, options.budget);
  checkPositiveInteger('budget', options.budget);
  if (options.budget < 2) throw new RangeError('budget: at least 2 (v(∅) and v(N)) is needed');
  checkNonNegative('withinRoundTolerance', tolerance);
  checkPositiveInteger('chunkSize', chunkSize);
  checkPositiveInteger('maxSamples', maxSamples);
  return {
    async joint(game, ctx): Promise<JointEstimate> {
      checkRng(ctx.rng);
      const { n } = game;
      const dims = ctx.classes;
      const budget = new VectorBudget(game, options.budget, [emptyCoalition(n), grandCoalition(n)]);
      const moments = new RunningMoments(n * dims);
      const perms = (options.sampler ?? guidedPermutations)(n, ctx.rng);
      const check = (options.stop ?? gtgConvergence()).start(n);
      const weighted = new Float64Array(n);
      let r = 0;
      while (r < maxSamples) {
        const marginal = await walkVectorPermutation(
          (batch) => budget.values(batch),
          perms.next().value!,
          ctx.v0,
          ctx.vN,
          tolerance,
          chunkSize,
        );
        if (marginal === null) break; // the budget cannot pay for another walk
        moments.addAll(marginal); // line 22, every class
        r++;
        // Eq. 11 on φ_i = Σ_c β^c φ_i^c
        const beta = ctx.beta();
        for (let i = 0; i < n; i++) {
          let s = 0;
          for (let c = 0; c < dims; c++) s += beta[c]! * moments.mean[i * dims + c]!;
          weighted[i] = s;
        }
        const converged = check({ samples: r, values: weighted, evaluations: budget.spent });
        if (converged && r % n === 0) break; // line 8, tested once per block of n (line 9)
      }
      return { phi: moments.mean.slice(), stderr: moments.stderr() };
    },
  };
}
