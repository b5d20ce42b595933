/**
 * Permutation samplers: which orders of the players a permutation estimator walks.
 * A sampler knows nothing about games or estimates (docs/architecture.md, "Conventions").
 */
import { checkPositiveInteger, checkRng } from './_checks.js';
import { type Rng, randomPermutation, shuffleInPlace } from './seeded-rng.js';

/** An endless stream of permutations of 0..n−1 drawn from rng. */
export type PermutationSampler = (n: number, rng: Rng) => Iterator<Int32Array>;

/**
 * Uniformly random permutations (Fisher–Yates), as in MC-Shapley (papers/004 App. C, Alg. 3
 * line 3). Throws RangeError when n is not a positive integer, TypeError when rng is not an Rng.
 */
export function* uniformPermutations(n: number, rng: Rng): Iterator<Int32Array> {
  checkPositiveInteger('n', n);
  checkRng(rng);
  for (;;) yield randomPermutation(rng, n);
}

/**
 * Guided permutations of GTG-Shapley (papers/000 Alg. 1, lines 9–11): in each block of n
 * permutations, player i leads permutation i of the block (π[0] = i) and the other players
 * follow in uniformly random order. Each player's marginal is still, over the block, a sample
 * from every position, and every player's first-position marginal v({i}) − v(∅) is measured
 * once per block. Throws as `uniformPermutations`.
 */
export function* guidedPermutations(n: number, rng: Rng): Iterator<Int32Array> {
  checkPositiveInteger('n', n);
  checkRng(rng);
  for (;;) {
    for (let lead = 0; lead < n; lead++) {
      const p = new Int32Array(n);
      p[0] = lead;
      for (let k = 1; k < n; k++) p[k] = k <= lead ? k - 1 : k;
      shuffleInPlace(rng, p.subarray(1));
      yield p;
    }
  }
}
