/**
 * Internal: one permutation walk, shared by MC/TMC (monte-carlo.ts), GTG (gtg.ts) and MS-GTG
 * (ms-gtg.ts, on class-wise vector values).
 *
 * Walks π, measuring v of the prefixes π[0..j]; the marginal of π[j] is v(prefix_j) −
 * v(prefix_{j−1}) (papers/004 App. C, Alg. 3 line 5). With tolerance ε > 0, once
 * |v(N) − v(prefix_{j−1})| < ε the remaining prefixes are not evaluated and v_j = v_{j−1}
 * (TMC; GTG's within-round truncation, papers/000 Alg. 1 lines 15–20), so their marginals
 * are 0. The marginals of one walk always telescope to v(last evaluated prefix) − v(∅).
 *
 * Prefixes are requested in chunks (one `values` call per chunk) so a model-backed game can
 * share work; with ε = 0 a chunk is the whole permutation. With ε > 0, the prefixes of a chunk
 * that follow the truncation point have been paid for but are not used.
 */
import type { Budget } from './_budget.js';
import { checkGame, checkNonNegative, checkPositiveInteger, checkRng } from './_checks.js';
import { type Coalition, emptyCoalition, withPlayer } from './coalition.js';
import type { Game } from './game.js';
import type { Rng } from './seeded-rng.js';

/**
 * Marginals of one walk, indexed by player, or null when the budget cannot pay for the walk
 * (the caller then discards the partial walk, keeping the estimate unbiased).
 */
export async function walkPermutation(
  budget: Budget,
  perm: Int32Array,
  v0: number,
  vN: number,
  tolerance: number,
  chunkSize: number,
): Promise<Float64Array | null> {
  return walkVectorPermutation(
    (batch) => budget.values(batch),
    perm,
    Float64Array.of(v0),
    Float64Array.of(vN),
    tolerance,
    chunkSize,
  );
}

/** max_c |a_c − b_{offset+c}| */
function maxGap(a: ArrayLike<number>, b: ArrayLike<number>, offset: number, dims: number): number {
  let m = 0;
  for (let c = 0; c < dims; c++) m = Math.max(m, Math.abs(a[c]! - b[offset + c]!));
  return m;
}

/**
 * The same walk over a game whose value is a vector of `v0.length` numbers per coalition (MS-GTG's
 * class-wise utilities, ms-gtg.ts; `values` returns them coalition-major): marginals n × dims,
 * player-major, or null when `values` cannot pay. Truncation when max_c |v_N^c − v_{j−1}^c| < ε
 * (papers/000 Alg. 1 line 15 on the class vector); truncated positions keep marginal 0.
 */
export async function walkVectorPermutation(
  values: (batch: readonly Coalition[]) => Promise<Float64Array | null>,
  perm: Int32Array,
  v0: Float64Array,
  vN: Float64Array,
  tolerance: number,
  chunkSize: number,
): Promise<Float64Array | null> {
  const n = perm.length;
  const dims = v0.length;
  const marginal = new Float64Array(n * dims);
  const chunk = tolerance > 0 ? chunkSize : n;
  let prefix: Coalition = emptyCoalition(n);
  let prev: Float64Array = v0;
  let prevOffset = 0;
  let j = 0;
  const settled = () => maxGap(vN, prev, prevOffset, dims) < tolerance;
  while (j < n) {
    if (settled()) return marginal; // truncated: the rest stay 0
    const batch: Coalition[] = [];
    for (let k = j; k < Math.min(n, j + chunk); k++) {
      prefix = withPlayer(prefix, perm[k]!);
      batch.push(prefix);
    }
    const v = await values(batch);
    if (v === null) return null;
    for (let b = 0; b < batch.length; b++, j++) {
      if (b > 0 && settled()) return marginal;
      const p = perm[j]!;
      for (let c = 0; c < dims; c++) marginal[p * dims + c] = v[b * dims + c]! - prev[prevOffset + c]!;
      prev = v;
      prevOffset = b * dims;
    }
  }
  return marginal;
}

/** Checks the options shared by the permutation estimators and fills in defaults. */
export function permutationDefaults(
  game: Game,
  options: { budget: number; rng: Rng; tolerance?: number; chunkSize?: number; maxSamples?: number },
) {
  checkGame(game);
  if (typeof options !== 'object' || options === null) throw new TypeError('options: expected an object');
  checkPositiveInteger('budget', options.budget);
  checkRng(options.rng);
  const tolerance = options.tolerance ?? 0;
  checkNonNegative('tolerance', tolerance);
  const chunkSize = options.chunkSize ?? 8;
  checkPositiveInteger('chunkSize', chunkSize);
  const maxSamples = options.maxSamples ?? Math.max(1000, options.budget);
  checkPositiveInteger('maxSamples', maxSamples);
  if (options.budget < 2) throw new RangeError('budget: at least 2 (v(∅) and v(N)) is needed');
  return { tolerance, chunkSize, maxSamples };
}
