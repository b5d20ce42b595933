/**
 * Subset samplers: which coalitions a subset estimator evaluates, as `permutation-sampler.ts` is
 * for the permutation estimators. A sampler knows nothing about games or estimates
 * (docs/architecture.md, "Conventions").
 */
import { checkPositiveInteger, checkRng } from './_checks.js';
import { type Coalition, coalitionOf } from './coalition.js';
import type { Rng } from './seeded-rng.js';

/** An endless stream of coalitions over players 0..n−1 drawn from rng. */
export type SubsetSampler = (n: number, rng: Rng) => Iterator<Coalition>;

/**
 * Coalitions S ~ Bernoulli(q)ⁿ: each player joins independently with probability q, one draw of
 * rng per player in player order (player i joins when the draw is < q). q = ½ is the uniform
 * distribution over all 2ⁿ subsets (Data Banzhaf's MSR, Wang & Jia 2023); q is the inclusion level
 * of Owen sampling (papers/004 Alg. 1 line 8). Throws RangeError when q is not in [0, 1] or n is
 * not a positive integer, TypeError when rng is not an Rng.
 */
export function bernoulliSubsets(q: number): SubsetSampler {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`q: expected a probability in [0, 1], got ${q}`);
  return function* (n: number, rng: Rng): Iterator<Coalition> {
    checkPositiveInteger('n', n);
    checkRng(rng);
    const members: number[] = [];
    for (;;) {
      members.length = 0;
      for (let i = 0; i < n; i++) if (rng.next() < q) members.push(i);
      yield coalitionOf(n, members);
    }
  };
}

/** Uniformly random subsets of the n players (`bernoulliSubsets(0.5)`). */
export const uniformSubsets: SubsetSampler = bernoulliSubsets(0.5);
