/**
 * Trajectory Shapley Value (TSV) and FedTSV's adaptive weights (papers/002, §III, Eq. 9–13, Alg. 2).
 *
 * Round t: participants S_t = {0..n−1} (round-local indices) sent updates Δ_i = θ_i^{t+1} − θ^t; the
 * server computed a validation reference update r = Δ_val^t (Eq. 10). A coalition S is worth
 *
 *   Δ_S = (1/|S|) Σ_{i∈S} Δ_i  (Δ_∅ = 0)                                   (Eq. 9)
 *   v(S) = (1 + ‖Δ_S − r‖² / σ)^{−1},  σ = max(‖r‖², ε)                      (Eq. 11)
 *
 * with the Euclidean distance, the paper's choice ("We use the Euclidean metric … in this work";
 * the angular alternative it mentions is not implemented). Everything v needs is in the round's
 * geometry: the Gram matrix G_ij = ⟨Δ_i, Δ_j⟩, the cross products b_i = ⟨Δ_i, r⟩ and ‖r‖², since
 *
 *   ‖Δ_S − r‖² = Q(S)/W(S)² − 2 L(S)/W(S) + ‖r‖²,
 *   Q(S) = Σ_{i,j∈S} w_i w_j G_ij,  L(S) = Σ_{i∈S} w_i b_i,  W(S) = Σ_{i∈S} w_i,
 *
 * so one coalition costs O(|S|²) and no model evaluation. The weights w are 1 in the paper (Eq. 9
 * is a plain mean); example-count weights (docs/architecture.md's FedAvg convention) are an option.
 *
 * Per-round Shapley values of v are exact for n ≤ 20 (all 2^n utilities by an O(n·2^n) recursion,
 * then `exactShapley`) and sampled by random permutations beyond (the paper uses Monte Carlo, [20]).
 * Cumulative values φ (Eq. 12) and aggregation weights max(0, φ) (Eq. 13, Alg. 2 line 29) are
 * separate pure functions so the round engine folds them over rounds.
 */

import { checkFiniteArray, isArrayLike } from './_checks.js';
import { type Coalition, members } from './coalition.js';
import type { Estimate } from './estimate.js';
import type { Game } from './game.js';
import type { Rng } from './seeded-rng.js';
import { randomPermutation } from './seeded-rng.js';
import { exactShapley } from './shapley.js';

/** Largest round for which `trajectoryShapley` enumerates all coalitions (the issue: "exact for n ≤ 20"). */
export const TRAJECTORY_EXACT_MAX_PLAYERS = 20;

/**
 * The geometry of one round: everything the TSV utility needs, in float64.
 * `gram` is n×n row-major (G_ij = ⟨Δ_i, Δ_j⟩), `cross[i] = ⟨Δ_i, r⟩`, `refNormSq = ‖r‖²`.
 */
export interface UpdateGeometry {
  readonly n: number;
  readonly gram: Float64Array;
  readonly cross: Float64Array;
  readonly refNormSq: number;
}

/** Options of the TSV utility (Eq. 9, 11). */
export interface TrajectoryUtilityOptions {
  /** ε in σ = max(‖r‖², ε) (Eq. 11); default 1e-12. Must be > 0. */
  epsilon?: number;
  /**
   * Aggregation weights w_i > 0 of the coalition mean; default all 1 (papers/002 Eq. 9 is a plain
   * mean). Pass example counts for the FedAvg-weighted convention of docs/architecture.md.
   */
  weights?: ArrayLike<number>;
}

/** Options of `trajectoryShapley`. */
export interface TrajectoryShapleyOptions extends TrajectoryUtilityOptions {
  /**
   * 'exact' (n ≤ 20), 'sampled' (random permutations), or 'auto' (default): exact when
   * n ≤ TRAJECTORY_EXACT_MAX_PLAYERS, sampled otherwise.
   */
  method?: 'auto' | 'exact' | 'sampled';
  /**
   * Sampled method only: the most coalition utilities to compute. v(∅) costs 1 and each permutation
   * costs n (its n prefixes), so ⌊(budget − 1)/n⌋ permutations run. Required when sampling.
   */
  budget?: number;
  /** Sampled method only: the random source. Required when sampling. */
  rng?: Rng;
}

function checkGeometry(geom: UpdateGeometry): void {
  if (typeof geom !== 'object' || geom === null) throw new TypeError('geometry: expected an object');
  const { n } = geom;
  if (!Number.isInteger(n) || n < 1)
    throw new RangeError(`geometry.n: expected a positive integer, got ${n}`);
  if (!(geom.gram instanceof Float64Array)) throw new TypeError('geometry.gram: expected a Float64Array');
  if (!(geom.cross instanceof Float64Array)) throw new TypeError('geometry.cross: expected a Float64Array');
  checkFiniteArray('geometry.gram', geom.gram, n * n);
  checkFiniteArray('geometry.cross', geom.cross, n);
  if (!Number.isFinite(geom.refNormSq) || geom.refNormSq < 0)
    throw new RangeError(`geometry.refNormSq: expected a finite number ≥ 0, got ${geom.refNormSq}`);
  for (let i = 0; i < n; i++)
    if (geom.gram[i * n + i]! < 0)
      throw new RangeError(`geometry.gram: diagonal entry ${i} is negative (${geom.gram[i * n + i]})`);
}

/** Resolved utility parameters: σ (Eq. 11) and the weights. */
interface UtilityParams {
  sigma: number;
  w: Float64Array;
}

function utilityParams(geom: UpdateGeometry, options: TrajectoryUtilityOptions): UtilityParams {
  const epsilon = options.epsilon ?? 1e-12;
  if (typeof epsilon !== 'number' || !Number.isFinite(epsilon) || epsilon <= 0)
    throw new RangeError(`epsilon: expected a finite number > 0, got ${epsilon}`);
  const w = new Float64Array(geom.n).fill(1);
  if (options.weights !== undefined) {
    checkFiniteArray('weights', options.weights, geom.n);
    for (let i = 0; i < geom.n; i++) {
      const wi = options.weights[i]!;
      if (wi <= 0) throw new RangeError(`weights: entry ${i} must be > 0, got ${wi}`);
      w[i] = wi;
    }
  }
  // papers/002 Eq. 11: "A practical choice is σ^t = max{‖Δ_val^t‖², ε}".
  return { sigma: Math.max(geom.refNormSq, epsilon), w };
}

/** v from the coalition's sufficient statistics (Q, L, W); W = 0 is the empty coalition (Δ_∅ = 0). */
function utilityFromStats(q: number, l: number, wSum: number, refNormSq: number, sigma: number): number {
  // Eq. 9: Δ_∅ = 0, so ‖Δ_∅ − r‖² = ‖r‖².
  const dist2 = wSum === 0 ? refNormSq : q / (wSum * wSum) - (2 * l) / wSum + refNormSq;
  // Rounding can push a true 0 slightly below zero; the squared distance is ≥ 0 by definition.
  return 1 / (1 + Math.max(0, dist2) / sigma); // Eq. 11
}

function utilityOfMembers(geom: UpdateGeometry, p: UtilityParams, ms: readonly number[]): number {
  const { n, gram, cross } = geom;
  let q = 0;
  let l = 0;
  let wSum = 0;
  for (let a = 0; a < ms.length; a++) {
    const i = ms[a]!;
    const wi = p.w[i]!;
    wSum += wi;
    l += wi * cross[i]!;
    let row = 0;
    for (let b = 0; b < a; b++) {
      const j = ms[b]!;
      row += p.w[j]! * gram[i * n + j]!;
    }
    q += 2 * wi * row + wi * wi * gram[i * n + i]!;
  }
  return utilityFromStats(q, l, wSum, geom.refNormSq, p.sigma);
}

function checkCoalition(n: number, c: Coalition): void {
  if (!(c instanceof Uint32Array)) throw new TypeError('coalition: expected a Uint32Array bitset');
  const words = Math.max(1, Math.ceil(n / 32));
  if (c.length !== words)
    throw new RangeError(`coalition: expected ${words} words for ${n} players, got ${c.length}`);
  const spare = n & 31;
  if (spare !== 0 && c[words - 1]! >>> spare !== 0)
    throw new RangeError(`coalition: has members outside [0, ${n})`);
}

/**
 * Builds a round's geometry from the participants' updates Δ_i and the validation reference update
 * r = Δ_val (papers/002 Eq. 10), accumulating in float64. O(n²·d) time.
 * @param updates one update per participant, all of the same length d (the caller keeps ownership).
 * @param reference the reference update r, length d.
 * @throws TypeError when an update is not a Float32Array/Float64Array.
 * @throws RangeError when there are no updates, lengths differ, or an entry is not finite.
 */
export function updateGeometry(
  updates: readonly (Float32Array | Float64Array)[],
  reference: Float32Array | Float64Array,
): UpdateGeometry {
  if (!Array.isArray(updates)) throw new TypeError('updates: expected an array of Float32Array');
  const n = updates.length;
  if (n < 1) throw new RangeError('updates: expected at least one update');
  if (!(reference instanceof Float32Array || reference instanceof Float64Array))
    throw new TypeError('reference: expected a Float32Array or Float64Array');
  const d = reference.length;
  checkFiniteArray('reference', reference);
  for (let i = 0; i < n; i++) {
    const u = updates[i];
    if (!(u instanceof Float32Array || u instanceof Float64Array))
      throw new TypeError(`updates: entry ${i} is not a Float32Array or Float64Array`);
    checkFiniteArray(`updates[${i}]`, u, d);
  }
  const gram = new Float64Array(n * n);
  const cross = new Float64Array(n);
  let refNormSq = 0;
  for (let k = 0; k < d; k++) refNormSq += reference[k]! * reference[k]!;
  for (let i = 0; i < n; i++) {
    const ui = updates[i]!;
    let b = 0;
    for (let k = 0; k < d; k++) b += ui[k]! * reference[k]!;
    cross[i] = b;
    for (let j = 0; j <= i; j++) {
      const uj = updates[j]!;
      let g = 0;
      for (let k = 0; k < d; k++) g += ui[k]! * uj[k]!;
      gram[i * n + j] = g;
      gram[j * n + i] = g;
    }
  }
  return { n, gram, cross, refNormSq };
}

/**
 * The TSV utility v(S) of one coalition (papers/002 Eq. 9, 11), from the round's geometry in O(|S|²).
 * Values lie in (0, 1]; v(∅) = (1 + ‖r‖²/σ)^{−1}, i.e. 1/2 whenever ‖r‖² ≥ ε. The input checks of
 * this one-off call read the whole geometry (O(n²)); for many coalitions use `trajectoryGame`
 * (checked once) or `trajectoryTable`.
 * @throws TypeError/RangeError for a malformed geometry, coalition, epsilon or weights.
 */
export function trajectoryUtility(
  geometry: UpdateGeometry,
  coalition: Coalition,
  options: TrajectoryUtilityOptions = {},
): number {
  checkGeometry(geometry);
  checkCoalition(geometry.n, coalition);
  return utilityOfMembers(geometry, utilityParams(geometry, options), members(coalition));
}

/**
 * The TSV utility as a `Game` (papers/002 Eq. 11), so any estimator of scoring/ can run on it.
 * Each coalition costs O(|S|²); the geometry is validated once, here.
 * @throws TypeError/RangeError for a malformed geometry, epsilon or weights.
 */
export function trajectoryGame(geometry: UpdateGeometry, options: TrajectoryUtilityOptions = {}): Game {
  checkGeometry(geometry);
  const p = utilityParams(geometry, options);
  return {
    n: geometry.n,
    async values(coalitions) {
      const out = new Float64Array(coalitions.length);
      for (let b = 0; b < coalitions.length; b++) {
        const c = coalitions[b]!;
        checkCoalition(geometry.n, c);
        out[b] = utilityOfMembers(geometry, p, members(c));
      }
      return out;
    },
  };
}

/**
 * All 2^n TSV utilities, indexed by integer mask (bit i = player i), in O(n·2^n) time: Q, L, W of a
 * mask follow from those of the mask without its lowest player. Feed it to `exactShapley`.
 * @throws RangeError when n > 20 (the tables would take 4·8·2^n bytes) or on malformed input.
 */
export function trajectoryTable(
  geometry: UpdateGeometry,
  options: TrajectoryUtilityOptions = {},
): Float64Array {
  checkGeometry(geometry);
  const { n, gram, cross, refNormSq } = geometry;
  if (n > TRAJECTORY_EXACT_MAX_PLAYERS)
    throw new RangeError(
      `geometry.n: the utility table supports at most ${TRAJECTORY_EXACT_MAX_PLAYERS} players, got ${n}`,
    );
  const p = utilityParams(geometry, options);
  const total = 2 ** n;
  const q = new Float64Array(total);
  const l = new Float64Array(total);
  const wSum = new Float64Array(total);
  const table = new Float64Array(total);
  table[0] = utilityFromStats(0, 0, 0, refNormSq, p.sigma);
  for (let mask = 1; mask < total; mask++) {
    const low = mask & -mask;
    const i = 31 - Math.clz32(low);
    const rest = mask ^ low;
    const wi = p.w[i]!;
    let row = 0;
    for (let r = rest; r !== 0; r &= r - 1) {
      const j = 31 - Math.clz32(r & -r);
      row += p.w[j]! * gram[i * n + j]!;
    }
    q[mask] = q[rest]! + 2 * wi * row + wi * wi * gram[i * n + i]!;
    l[mask] = l[rest]! + wi * cross[i]!;
    wSum[mask] = wSum[rest]! + wi;
    table[mask] = utilityFromStats(q[mask]!, l[mask]!, wSum[mask]!, refNormSq, p.sigma);
  }
  return table;
}

/**
 * Per-round Trajectory Shapley values φ_i(v^t) of the round's participants (papers/002 Eq. 4 on the
 * utility of Eq. 11), in round-local player order.
 *
 * Exact: all 2^n utilities then `exactShapley`; `evaluations` = 2^n. Sampled: ⌊(budget − 1)/n⌋
 * uniformly random permutations, each walked once with O(|prefix|) incremental updates of Q, L, W;
 * φ̂_i is the mean marginal of i, `stderr` its standard error (NaN with a single permutation) and
 * `evaluations` = 1 + n·(permutations) ≤ budget (prefix utilities computed, repeats included).
 * Every permutation telescopes to v(N) − v(∅), so Σ φ̂_i = v(N) − v(∅) exactly up to rounding
 * (efficiency), sampled or not.
 * @throws RangeError when method is 'exact' and n > 20, when sampling without a budget ≥ n + 1 or an
 *   rng, or on malformed geometry/options.
 */
export function trajectoryShapley(
  geometry: UpdateGeometry,
  options: TrajectoryShapleyOptions = {},
): Estimate {
  checkGeometry(geometry);
  const { n } = geometry;
  const method = options.method ?? 'auto';
  if (method !== 'auto' && method !== 'exact' && method !== 'sampled')
    throw new RangeError(`method: expected 'auto', 'exact' or 'sampled', got ${String(method)}`);
  const exact = method === 'exact' || (method === 'auto' && n <= TRAJECTORY_EXACT_MAX_PLAYERS);
  if (exact) {
    if (n > TRAJECTORY_EXACT_MAX_PLAYERS)
      throw new RangeError(
        `method: 'exact' supports at most ${TRAJECTORY_EXACT_MAX_PLAYERS} players, got n = ${n}`,
      );
    const table = trajectoryTable(geometry, options);
    return { values: exactShapley(n, table), evaluations: table.length };
  }
  const { budget, rng } = options;
  if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < n + 1)
    throw new RangeError(`budget: sampling ${n} players needs an integer budget ≥ ${n + 1}, got ${budget}`);
  if (rng === undefined || typeof rng.next !== 'function')
    throw new RangeError('rng: sampling needs a random source (createRng(seed))');
  return sampledTrajectoryShapley(
    geometry,
    utilityParams(geometry, options),
    Math.floor((budget - 1) / n),
    rng,
  );
}

function sampledTrajectoryShapley(
  geom: UpdateGeometry,
  p: UtilityParams,
  permutations: number,
  rng: Rng,
): Estimate {
  const { n, gram, cross, refNormSq } = geom;
  const sum = new Float64Array(n);
  const sumSq = new Float64Array(n);
  const v0 = utilityFromStats(0, 0, 0, refNormSq, p.sigma);
  for (let m = 0; m < permutations; m++) {
    const perm = randomPermutation(rng, n);
    let q = 0;
    let l = 0;
    let wSum = 0;
    let prev = v0;
    for (let k = 0; k < n; k++) {
      const i = perm[k]!;
      const wi = p.w[i]!;
      let row = 0;
      for (let a = 0; a < k; a++) {
        const j = perm[a]!;
        row += p.w[j]! * gram[i * n + j]!;
      }
      q += 2 * wi * row + wi * wi * gram[i * n + i]!;
      l += wi * cross[i]!;
      wSum += wi;
      const v = utilityFromStats(q, l, wSum, refNormSq, p.sigma);
      const marginal = v - prev;
      sum[i]! += marginal;
      sumSq[i]! += marginal * marginal;
      prev = v;
    }
  }
  const values = new Float64Array(n);
  const stderr = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const mean = sum[i]! / permutations;
    values[i] = mean;
    stderr[i] =
      permutations > 1
        ? Math.sqrt(Math.max(0, (sumSq[i]! - permutations * mean * mean) / (permutations - 1)) / permutations)
        : Number.NaN;
  }
  return { values, evaluations: 1 + n * permutations, stderr };
}

function checkParticipants(name: string, participants: ArrayLike<number>, clients: number): void {
  if (!isArrayLike(participants)) throw new TypeError(`${name}: expected an array of client indices`);
  const seen = new Set<number>();
  for (let k = 0; k < participants.length; k++) {
    const i = participants[k]!;
    if (!Number.isInteger(i) || i < 0 || i >= clients)
      throw new RangeError(`${name}: entry ${k} (${i}) is not a client in [0, ${clients})`);
    if (seen.has(i)) throw new RangeError(`${name}: client ${i} appears twice`);
    seen.add(i);
  }
}

/**
 * One step of the cumulative TSV (papers/002 Eq. 12, Alg. 2 lines 20–26): φ_i^{t+1} = φ_i^t + φ_i(v^t)
 * for participants, φ_i^{t+1} = φ_i^t for everyone else ("If a client i is not included in S_t, its
 * marginal contribution in round t is zero"). Pure: returns a new array. Start from zeros (φ^0 = 0).
 * @param cumulative φ^t, one entry per client of the federation.
 * @param participants round-local player k is client participants[k].
 * @param roundValues φ(v^t) in round-local order (e.g. `trajectoryShapley(...).values`).
 * @throws RangeError on length mismatch, a client out of range or repeated, or non-finite values.
 */
export function accumulateTrajectory(
  cumulative: Float64Array,
  participants: ArrayLike<number>,
  roundValues: ArrayLike<number>,
): Float64Array {
  if (!(cumulative instanceof Float64Array)) throw new TypeError('cumulative: expected a Float64Array');
  checkFiniteArray('cumulative', cumulative);
  checkParticipants('participants', participants, cumulative.length);
  checkFiniteArray('roundValues', roundValues, participants.length);
  const next = cumulative.slice();
  for (let k = 0; k < participants.length; k++) next[participants[k]!]! += roundValues[k]!;
  return next;
}

/**
 * FedTSV aggregation weights of round t's participants (papers/002 Eq. 13 and Alg. 2 line 29):
 * α_i = max(0, φ_i^{t+1}), normalized over the participants, α_i / Σ_{j∈S_t} α_j. When every
 * participant has α = 0, uniform weights 1/|S_t| ("FedTSV falls back to uniform aggregation").
 * Returned in round-local order; they sum to 1.
 * @param cumulative φ^{t+1} (after `accumulateTrajectory` for this round), one entry per client.
 * @throws RangeError when participants is empty, out of range or repeated, or cumulative is not finite.
 */
export function trajectoryWeights(cumulative: Float64Array, participants: ArrayLike<number>): Float64Array {
  if (!(cumulative instanceof Float64Array)) throw new TypeError('cumulative: expected a Float64Array');
  checkFiniteArray('cumulative', cumulative);
  checkParticipants('participants', participants, cumulative.length);
  const k = participants.length;
  if (k < 1) throw new RangeError('participants: expected at least one participant');
  const out = new Float64Array(k);
  let total = 0;
  for (let a = 0; a < k; a++) {
    const alpha = Math.max(0, cumulative[participants[a]!]!); // Eq. 13
    out[a] = alpha;
    total += alpha;
  }
  if (total > 0) for (let a = 0; a < k; a++) out[a]! /= total;
  else out.fill(1 / k);
  return out;
}
