/**
 * Maverick-Shapley (papers/000, FedMS: Eq. 7–10, 13; Alg. 1, 3, 4).
 *
 * The utility of a coalition Q of round t's clients is a vector: the class-wise validation accuracy
 * V^c_class(w̃_Q) of its aggregated model, one entry per class c (Eq. 7). Per round:
 *
 *   φ_i^c        Shapley value of client i in the scalar game Q ↦ V^c_class(w̃_Q) (Alg. 3 line 8),
 *                estimated by any scalar estimator of scoring/ (Alg. 1 uses GTG, Alg. 3 MR, Alg. 4 TMR);
 *   K̂^t, v̂       the coreset: the coalition with the largest Σ_c V^c_class (Alg. 1 line 24, Alg. 3 line 10);
 *   β^c          class difficulty softmax((1 − v̂^c)/T) (Eq. 10 as written in Alg. 1 line 26, Alg. 3 line 12).
 *
 * Across rounds (Alg. 2 lines 13, 15):
 *
 *   S_i^c ← α S_i^c + (1 − α) φ_i^c   for the round's participants only          (Eq. 8)
 *   Ŝ_i   = Σ_c β^c S_i^c              for every client, with the current round's β (Eq. 9)
 *
 * Layout: matrices over (player, class) are Float64Array, player-major: entry (i, c) is [i·C + c].
 *
 * Choices where the paper leaves room (each also noted at its line):
 * - β comes from the coreset's class accuracies v̂ (Alg. 1/3/4), not from the new global model w^{t+1}
 *   that Eq. 10's V_class(w) could also be read as.
 * - The coreset is searched over the coalitions the estimator had evaluated (Alg. 1 line 24 takes the
 *   argmax over the reconstructed H; with an exact estimator that is every Q ⊆ K^t, as in Alg. 3/4),
 *   plus the grand coalition, whose model is always built (Alg. 1 line 5). The empty coalition (the
 *   old model w^t) is left out unless asked for: "the subset of sampled clients whose aggregation
 *   maximizes total class-wise validation accuracy" (§4.1) aggregates somebody. Ties go to the larger
 *   coalition (more data aggregated), then to the lexicographically smaller member list.
 * - Class-wise values come either from a joint estimator of the vector game (`JointClassEstimator`,
 *   e.g. `msGtg` of ./ms-gtg.ts: Alg. 1 as written — one guided permutation stream for all classes,
 *   truncation on the class vector, Eq. 11 on the β-weighted φ), or from a scalar estimator run once
 *   per class on `coordinateGame(memoizeVector(game), c)`, each class with a fresh generator from the
 *   same seed, so a permutation sampler visits the same coalitions for every class and the shared
 *   memo evaluates each once. The per-class form differs from Alg. 1: with a truncating or
 *   adaptively stopping estimator the classes may see different coalitions and stop at different
 *   times (docs/reproductions.md measures the difference).
 * - Between-round truncation (Alg. 1 line 7, Alg. 4 line 6: proceed only if |v_N − v_0| > ε_b) reads
 *   |·| on the class vector as the max norm: a round is skipped only if no class moved by more than
 *   ε_b, so a gain on one rare class is never truncated away.
 * - Eq. 8 needs an initial S; Alg. 2 line 3 only says "Initialize". Zeros by default, or `initial`.
 */

import { checkFiniteArray, checkPositiveInteger, isArrayLike } from './_checks.js';
import { type Coalition, emptyCoalition, grandCoalition, maskToCoalition, members } from './coalition.js';
import type { Estimate } from './estimate.js';
import { coordinateGame, type Game, memoizeVector, type VectorGame } from './game.js';
import { createRng, type Rng } from './seeded-rng.js';

/** What a class-wise run of an estimator is told about its class (see `ClassEstimator`). */
export interface ClassEstimatorContext {
  /** The class c whose scalar game is being valued. */
  readonly classIndex: number;
  /** Number of classes C. */
  readonly classes: number;
  /** The round's seed; the same for every class. */
  readonly seed: number;
  /** A fresh `createRng(seed)` for this class: every class draws the same random stream. */
  readonly rng: Rng;
}

/**
 * Any scalar Shapley estimator of scoring/, adapted to one call per class, e.g.
 * `(game) => exactShapleyOfGame(game)` or `(game, { rng }) => monteCarlo(game, { budget, rng })`.
 */
export type ClassEstimator = (game: Game, context: ClassEstimatorContext) => Promise<Estimate>;

/** What a joint estimator is told (see `JointClassEstimator`). */
export interface JointEstimatorContext {
  /** Number of classes C (= game.dims). */
  readonly classes: number;
  /** The round's seed. */
  readonly seed: number;
  /** `createRng(seed)`. */
  readonly rng: Rng;
  /** v_0 = V_class(w^t) and v_N = V_class(w^{t+1}), length C (Alg. 1 line 5); already evaluated. */
  readonly v0: Float64Array;
  readonly vN: Float64Array;
  /**
   * β of the best coalition evaluated so far (Eq. 10 on the running argmax of Alg. 1 line 24): what
   * the β-weighted φ of the stopping rule (Eq. 11) uses while the coreset is not final.
   */
  beta(): Float64Array;
}

/** What a joint estimator returns: φ_i^c for every player and class. */
export interface JointEstimate {
  /** φ, n × C player-major. */
  phi: Float64Array;
  /** Standard errors of φ (n × C), when known. */
  stderr?: Float64Array;
}

/**
 * An estimator of all classes at once on the vector game (papers/000 Alg. 1 as written); the memo
 * it gets counts every coalition once whatever it reads.
 */
export interface JointClassEstimator {
  readonly joint: (game: VectorGame, context: JointEstimatorContext) => Promise<JointEstimate>;
}

/** Options of `maverickShapleyRound`. */
export interface MaverickRoundOptions {
  /** Temperature T > 0 of the class-difficulty softmax (Eq. 10; the paper uses 0.01). */
  temperature: number;
  /** Seed handed to every class's estimator run (default 0). */
  seed?: number;
  /**
   * ε_b ≥ 0 of the between-round truncation (Alg. 1 line 7, Alg. 4 line 6): when
   * max_c |v_N^c − v_0^c| ≤ ε_b the estimator is not run and φ = 0. Default: never truncate.
   */
  betweenRoundEpsilon?: number;
  /** Whether the empty coalition (the unchanged model w^t) may be the coreset (default false). */
  includeEmptyCoalition?: boolean;
}

/** The outcome of one round of Maverick-Shapley (Alg. 1 / 3 / 4 line "return φ, β, K̂^t"). */
export interface MaverickRound {
  /** Number of players (the round's participants, round-local order). */
  n: number;
  /** Number of classes C. */
  classes: number;
  /** Class-wise Shapley values φ_i^c, n × C player-major. */
  phi: Float64Array;
  /** Standard errors of φ_i^c (n × C), when the estimator reported them for every class. */
  stderr?: Float64Array;
  /** Class difficulties β^c from the coreset's accuracies (Eq. 10), summing to 1. */
  beta: Float64Array;
  /** The coreset K̂^t: round-local player indices, increasing. */
  coreset: number[];
  /** The coreset's class-wise accuracies v̂ (length C). */
  coresetAccuracy: Float64Array;
  /** Shapley rewards R_i^t = Σ_c β^c φ_i^c of this round (Eq. 13), length n. */
  rewards: Float64Array;
  /** Whether the between-round truncation skipped the estimator (φ = 0). */
  truncated: boolean;
  /** Distinct coalitions the vector game evaluated in this round, over all classes. */
  evaluations: number;
}

/** The coreset of `coresetOf`: members and their class-wise accuracies. */
export interface Coreset {
  /** Player indices of the coreset, increasing. */
  members: number[];
  /** The coalition's value vector (length dims). */
  accuracy: Float64Array;
}

/** Options of `coresetOf`. */
export interface CoresetOptions {
  /** Whether the empty coalition is a candidate (default false). */
  includeEmptyCoalition?: boolean;
}

function checkTemperature(temperature: unknown): asserts temperature is number {
  if (typeof temperature !== 'number' || !Number.isFinite(temperature) || temperature <= 0)
    throw new RangeError(`temperature: expected a finite number > 0, got ${String(temperature)}`);
}

/**
 * Class difficulties β^c = exp((1 − acc_c)/T) / Σ_c' exp((1 − acc_c')/T) (papers/000 Eq. 10; Alg. 1
 * line 26 with acc = the coreset's v̂). Harder classes (lower accuracy) get larger weights; the
 * weights sum to 1. Computed with the maximum exponent subtracted, so T as small as the paper's 0.01
 * (or far smaller) does not overflow. Accuracies are normally in [0, 1]; any finite number is accepted.
 * @throws RangeError when accuracies is empty or not finite, or temperature is not a finite number > 0.
 */
export function classDifficulty(accuracies: ArrayLike<number>, temperature: number): Float64Array {
  checkFiniteArray('accuracies', accuracies);
  if (accuracies.length < 1) throw new RangeError('accuracies: expected at least one class');
  checkTemperature(temperature);
  const k = accuracies.length;
  const beta = new Float64Array(k);
  let max = Number.NEGATIVE_INFINITY;
  for (let c = 0; c < k; c++) {
    beta[c] = (1 - accuracies[c]!) / temperature;
    max = Math.max(max, beta[c]!);
  }
  let total = 0;
  for (let c = 0; c < k; c++) {
    beta[c] = Math.exp(beta[c]! - max);
    total += beta[c]!;
  }
  for (let c = 0; c < k; c++) beta[c]! /= total;
  return beta;
}

/** Whether candidate a beats b: larger Σ_c, then larger |Q|, then the lexicographically smaller members. */
function beats(sumA: number, ma: readonly number[], sumB: number, mb: readonly number[]): boolean {
  if (sumA !== sumB) return sumA > sumB;
  if (ma.length !== mb.length) return ma.length > mb.length;
  for (let k = 0; k < ma.length; k++) if (ma[k] !== mb[k]) return ma[k]! < mb[k]!;
  return false;
}

/**
 * The coreset among candidate coalitions: argmax_Q Σ_c v^c(Q) (papers/000 Alg. 1 line 24, Alg. 3 line
 * 10, Alg. 4 line 13). Ties go to the larger coalition, then to the lexicographically smaller members
 * (a choice; the paper does not say), so the result does not depend on the candidates' order.
 * @param n players.
 * @param dims classes C.
 * @param coalitions the candidates.
 * @param values their value vectors, candidates × dims row-major (the `VectorGame.values` layout).
 * @throws RangeError when no candidate is left, a coalition is out of range, or values is malformed.
 */
export function coresetOf(
  n: number,
  dims: number,
  coalitions: readonly Coalition[],
  values: ArrayLike<number>,
  options: CoresetOptions = {},
): Coreset {
  checkPositiveInteger('n', n);
  checkPositiveInteger('dims', dims);
  if (!Array.isArray(coalitions)) throw new TypeError('coalitions: expected an array of coalitions');
  checkFiniteArray('values', values, coalitions.length * dims);
  const tracker = new CoresetTracker(dims, options.includeEmptyCoalition ?? false);
  for (let b = 0; b < coalitions.length; b++) {
    const c = coalitions[b]!;
    if (!(c instanceof Uint32Array))
      throw new TypeError(`coalitions: entry ${b} is not a Uint32Array bitset`);
    const ms = members(c);
    if (ms.length > 0 && ms[ms.length - 1]! >= n)
      throw new RangeError(`coalitions: entry ${b} has a member outside [0, ${n})`);
    tracker.offer(ms, values, b * dims);
  }
  const best = tracker.best();
  if (best === undefined)
    throw new RangeError('coalitions: no candidate coalition (only the empty one, which is excluded)');
  return best;
}

/** Running argmax of Σ_c v^c over offered coalitions, with the tie rule of `beats`. */
class CoresetTracker {
  private bestMembers: number[] | undefined;
  private bestSum = 0;
  private readonly bestRow: Float64Array;
  constructor(
    private readonly dims: number,
    private readonly includeEmpty: boolean,
  ) {
    this.bestRow = new Float64Array(dims);
  }
  /**
   * Offers the coalition with these members (or a function listing them, called only when the
   * coalition could win) and value vector values[offset .. offset + dims).
   */
  offer(list: number[] | (() => number[]), values: ArrayLike<number>, offset: number, size?: number): void {
    if ((size ?? (list as number[]).length) === 0 && !this.includeEmpty) return;
    let s = 0;
    for (let d = 0; d < this.dims; d++) s += values[offset + d]!;
    if (this.bestMembers !== undefined && s < this.bestSum) return;
    const ms = typeof list === 'function' ? list() : list;
    if (ms.length === 0 && !this.includeEmpty) return;
    if (this.bestMembers === undefined || beats(s, ms, this.bestSum, this.bestMembers)) {
      this.bestMembers = ms;
      this.bestSum = s;
      for (let d = 0; d < this.dims; d++) this.bestRow[d] = values[offset + d]!;
    }
  }
  best(): Coreset | undefined {
    return this.bestMembers === undefined
      ? undefined
      : { members: this.bestMembers, accuracy: this.bestRow.slice() };
  }
}

/**
 * A vector game that checks what the inner game returns and offers every coalition it evaluates
 * (each once, behind the memo) to a coreset tracker, so no table of evaluated coalitions is kept.
 */
function tracking(game: VectorGame, tracker: CoresetTracker): VectorGame {
  const checked = (v: Float64Array, count: number, what: string) => {
    if (!(v instanceof Float64Array) || v.length !== count * game.dims)
      throw new RangeError(
        `game: ${what} returned ${v?.length} numbers for ${count} coalitions × ${game.dims} classes`,
      );
    for (let k = 0; k < v.length; k++)
      if (!Number.isFinite(v[k])) throw new RangeError(`game: value ${k} of a batch is not finite (${v[k]})`);
    return v;
  };
  const tracked: VectorGame = {
    n: game.n,
    dims: game.dims,
    async values(batch) {
      const v = checked(await game.values(batch), batch.length, 'values');
      for (let b = 0; b < batch.length; b++) tracker.offer(members(batch[b]!), v, b * game.dims);
      return v;
    },
  };
  const inner = game.table;
  if (typeof inner === 'function' && game.n <= 30)
    // The whole table (VectorGame.table): every coalition is offered, member lists built only
    // for the candidates that can win.
    tracked.table = async () => {
      const v = checked(await inner.call(game), 2 ** game.n, 'table');
      for (let m = 0; m < 2 ** game.n; m++)
        tracker.offer(() => members(maskToCoalition(game.n, m)), v, m * game.dims, popcount(m));
      return v;
    };
  return tracked;
}

function popcount(m: number): number {
  let c = 0;
  for (let x = m; x !== 0; x &= x - 1) c++;
  return c;
}

/**
 * One round of Maverick-Shapley (papers/000 Alg. 1 / 3 / 4): class-wise Shapley values by the given
 * scalar estimator, the coreset over the evaluated coalitions, the class difficulties from the
 * coreset's accuracies, and this round's Shapley rewards (Eq. 13).
 *
 * A scalar estimator runs once per class c on `coordinateGame(memoizeVector(game), c)`, classes in
 * order, one at a time, each with `createRng(seed)`; a joint one runs once on the memoized vector
 * game with `createRng(seed)`. `evaluations` counts distinct coalitions over all classes. v(∅) and
 * v(N) are always evaluated (Alg. 1 line 5, Alg. 4 line 4).
 * @param game per-class validation accuracies of coalition models (Eq. 7), n players × C classes;
 *   v(∅) is the current global model w^t.
 * @param estimator a scalar Shapley estimator run per class (see `ClassEstimator`), or a joint one
 *   (see `JointClassEstimator`).
 * @throws TypeError when game or estimator is not usable; RangeError naming the field for bad options,
 *   a game returning malformed values, or an estimate of the wrong length or with non-finite values.
 */
export async function maverickShapleyRound(
  game: VectorGame,
  estimator: ClassEstimator | JointClassEstimator,
  options: MaverickRoundOptions,
): Promise<MaverickRound> {
  if (typeof game !== 'object' || game === null || typeof game.values !== 'function')
    throw new TypeError('game: expected a VectorGame');
  checkPositiveInteger('game.n', game.n);
  checkPositiveInteger('game.dims', game.dims);
  if (
    typeof estimator !== 'function' &&
    (typeof estimator !== 'object' || estimator === null || typeof estimator.joint !== 'function')
  )
    throw new TypeError(
      'estimator: expected a function (game, context) => Estimate or a { joint } estimator',
    );
  if (typeof options !== 'object' || options === null) throw new TypeError('options: expected an object');
  checkTemperature(options.temperature);
  const seed = options.seed ?? 0;
  if (typeof seed !== 'number' || !Number.isFinite(seed))
    throw new RangeError(`seed: expected a finite number, got ${String(seed)}`);
  const epsilon = options.betweenRoundEpsilon;
  if (epsilon !== undefined && (typeof epsilon !== 'number' || !Number.isFinite(epsilon) || epsilon < 0))
    throw new RangeError(`betweenRoundEpsilon: expected a finite number ≥ 0, got ${String(epsilon)}`);

  const { n, dims: classes } = game;
  const tracker = new CoresetTracker(classes, options.includeEmptyCoalition ?? false);
  const memo = memoizeVector(tracking(game, tracker));
  const ends = await memo.values([emptyCoalition(n), grandCoalition(n)]);
  let gain = 0; // max_c |v_N^c − v_0^c|
  for (let c = 0; c < classes; c++) gain = Math.max(gain, Math.abs(ends[classes + c]! - ends[c]!));
  // Alg. 1 line 7 / Alg. 4 line 6: the estimator runs only if |v_N − v_0| > ε_b.
  const truncated = epsilon !== undefined && gain <= epsilon;

  const phi = new Float64Array(n * classes);
  let stderr: Float64Array | undefined = truncated ? undefined : new Float64Array(n * classes);
  if (!truncated && typeof estimator !== 'function') {
    const est = await estimator.joint(memo, {
      classes,
      seed,
      rng: createRng(seed),
      v0: ends.slice(0, classes),
      vN: ends.slice(classes, 2 * classes),
      beta: () => classDifficulty(tracker.best()!.accuracy, options.temperature),
    });
    if (typeof est !== 'object' || est === null) throw new TypeError('estimator: joint returned no estimate');
    checkFiniteArray('estimator: joint phi', est.phi, n * classes);
    phi.set(est.phi);
    if (est.stderr !== undefined && est.stderr.length === n * classes) stderr!.set(est.stderr);
    else stderr = undefined;
  } else if (!truncated) {
    for (let c = 0; c < classes; c++) {
      const context: ClassEstimatorContext = { classIndex: c, classes, seed, rng: createRng(seed) };
      const est = await (estimator as ClassEstimator)(coordinateGame(memo, c), context);
      if (typeof est !== 'object' || est === null)
        throw new TypeError(`estimator: class ${c} returned no estimate`);
      checkFiniteArray(`estimator: class ${c} values`, est.values, n);
      for (let i = 0; i < n; i++) phi[i * classes + c] = est.values[i]!;
      if (stderr !== undefined && est.stderr !== undefined && est.stderr.length === n)
        for (let i = 0; i < n; i++) stderr[i * classes + c] = est.stderr[i]!;
      else stderr = undefined;
    }
  }

  // Alg. 1 line 24 / Alg. 3 line 10: the coreset and its class-wise accuracy v̂.
  const core = tracker.best()!; // v(N) was offered, so there is a candidate
  // Alg. 1 line 26 / Alg. 3 line 12: β from v̂.
  const beta = classDifficulty(core.accuracy, options.temperature);
  const rewards = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let r = 0;
    for (let c = 0; c < classes; c++) r += beta[c]! * phi[i * classes + c]!; // Eq. 13
    rewards[i] = r;
  }
  const result: MaverickRound = {
    n,
    classes,
    phi,
    beta,
    coreset: core.members,
    coresetAccuracy: core.accuracy,
    rewards,
    truncated,
    evaluations: memo.evaluations,
  };
  if (stderr !== undefined) result.stderr = stderr;
  return result;
}

function checkParticipants(
  participants: unknown,
  clients: number,
): asserts participants is ArrayLike<number> {
  if (!isArrayLike(participants)) throw new TypeError('participants: expected an array of client indices');
  const seen = new Set<number>();
  for (let k = 0; k < participants.length; k++) {
    const i = participants[k]!;
    if (!Number.isInteger(i) || i < 0 || i >= clients)
      throw new RangeError(`participants: entry ${k} (${i}) is not a client in [0, ${clients})`);
    if (seen.has(i)) throw new RangeError(`participants: client ${i} appears twice`);
    seen.add(i);
  }
}

function checkAlpha(alpha: unknown): asserts alpha is number {
  if (typeof alpha !== 'number' || !Number.isFinite(alpha) || alpha < 0 || alpha > 1)
    throw new RangeError(`alpha: expected a number in [0, 1], got ${String(alpha)}`);
}

function checkAccumulated(accumulated: unknown, classes: number): asserts accumulated is Float64Array {
  if (!(accumulated instanceof Float64Array)) throw new TypeError('accumulated: expected a Float64Array');
  if (accumulated.length === 0 || accumulated.length % classes !== 0)
    throw new RangeError(
      `accumulated: length ${accumulated.length} is not a positive multiple of ${classes} classes`,
    );
  checkFiniteArray('accumulated', accumulated);
}

/**
 * papers/000 §5.1's settings of Maverick-Shapley, the one owner of these defaults (the harness
 * estimator and the FedMS strategy both read them): temperature T = 0.01 of the class
 * difficulties (Eq. 10), decay α = 0.6 of the accumulated class-wise values (Eq. 8; the paper
 * uses 0.6 for Mavericks + Dir(1) and Dir(0.1), 0.8 for Dir(10); its α = 0.7 is S-FedAvg's and
 * GreedyFed's), and the error thresholds ε_b = ε_i = 0.001 (Alg. 1).
 */
export const PAPER000_DEFAULTS = { temperature: 0.01, alpha: 0.6, epsilon: 0.001 } as const;

/**
 * One step of the accumulated class-wise values (papers/000 Eq. 8, Alg. 2 line 13):
 * S_i^c ← α·S_i^c + (1 − α)·φ_i^c for every participant i of the round and every class c; other
 * clients keep S_i^c. Pure: returns a new array.
 * @param accumulated S, clients × classes player-major.
 * @param classes C.
 * @param participants round-local player k is client participants[k].
 * @param phi the round's φ, participants × classes player-major (`MaverickRound.phi`).
 * @param alpha decay α ∈ [0, 1] (the paper uses 0.6–0.8).
 * @throws RangeError naming the field on a length mismatch, a client out of range or repeated,
 *   non-finite numbers, or α outside [0, 1].
 */
export function accumulateClassShapley(
  accumulated: Float64Array,
  classes: number,
  participants: ArrayLike<number>,
  phi: ArrayLike<number>,
  alpha: number,
): Float64Array {
  checkPositiveInteger('classes', classes);
  checkAccumulated(accumulated, classes);
  checkParticipants(participants, accumulated.length / classes);
  checkFiniteArray('phi', phi, participants.length * classes);
  checkAlpha(alpha);
  const next = accumulated.slice();
  for (let k = 0; k < participants.length; k++) {
    const i = participants[k]!;
    for (let c = 0; c < classes; c++)
      next[i * classes + c] = alpha * accumulated[i * classes + c]! + (1 - alpha) * phi[k * classes + c]!; // Eq. 8
  }
  return next;
}

/**
 * Maverick-Shapley contribution scores Ŝ_i = Σ_c β^c·S_i^c for every client (papers/000 Eq. 9,
 * Alg. 2 line 15), with the current round's β.
 * @param accumulated S, clients × classes player-major.
 * @param beta class difficulties (length C, e.g. `MaverickRound.beta`).
 * @throws RangeError when the lengths disagree or a number is not finite.
 */
export function maverickScores(accumulated: Float64Array, beta: ArrayLike<number>): Float64Array {
  checkFiniteArray('beta', beta);
  const classes = beta.length;
  if (classes < 1) throw new RangeError('beta: expected at least one class');
  checkAccumulated(accumulated, classes);
  const clients = accumulated.length / classes;
  const scores = new Float64Array(clients);
  for (let i = 0; i < clients; i++) {
    let s = 0;
    for (let c = 0; c < classes; c++) s += beta[c]! * accumulated[i * classes + c]!;
    scores[i] = s;
  }
  return scores;
}

/** What `foldMaverick` needs from each round (a `MaverickRound` plus who took part). */
export interface MaverickRoundRecord {
  /** Round-local player k is client participants[k]. */
  participants: ArrayLike<number>;
  /** φ of the round, participants × classes player-major. */
  phi: ArrayLike<number>;
  /** β of the round (length C). */
  beta: ArrayLike<number>;
}

/** Options of `foldMaverick`. */
export interface MaverickFoldOptions {
  /** Decay α ∈ [0, 1] of Eq. 8. */
  alpha: number;
  /** Initial S (clients × classes); zeros by default (Alg. 2 line 3 leaves it open). */
  initial?: Float64Array;
}

/** The state after folding rounds: S and the scores of the last round. */
export interface MaverickFold {
  /** S after the last round, clients × classes player-major. */
  accumulated: Float64Array;
  /** Ŝ after each round (Eq. 9 with that round's β), one array of length clients per round. */
  scores: Float64Array[];
}

/**
 * Folds rounds into accumulated class-wise values and scores (papers/000 Alg. 2 lines 13 and 15):
 * for each round, Eq. 8 on its participants, then Eq. 9 for every client with the round's β.
 * @throws RangeError naming the field for bad sizes, α, an initial S of the wrong length, or a bad round.
 */
export function foldMaverick(
  clients: number,
  classes: number,
  rounds: Iterable<MaverickRoundRecord>,
  options: MaverickFoldOptions,
): MaverickFold {
  checkPositiveInteger('clients', clients);
  checkPositiveInteger('classes', classes);
  if (typeof options !== 'object' || options === null) throw new TypeError('options: expected an object');
  checkAlpha(options.alpha);
  let accumulated: Float64Array;
  if (options.initial !== undefined) {
    checkAccumulated(options.initial, classes);
    if (options.initial.length !== clients * classes)
      throw new RangeError(
        `initial: expected ${clients}×${classes} = ${clients * classes} entries, got ${options.initial.length}`,
      );
    accumulated = options.initial.slice();
  } else accumulated = new Float64Array(clients * classes);
  const scores: Float64Array[] = [];
  let t = 0;
  for (const round of rounds) {
    if (typeof round !== 'object' || round === null) throw new TypeError(`rounds: entry ${t} is not a round`);
    if (round.beta?.length !== classes)
      throw new RangeError(`rounds: entry ${t} has ${round.beta?.length} class weights, expected ${classes}`);
    accumulated = accumulateClassShapley(accumulated, classes, round.participants, round.phi, options.alpha);
    scores.push(maverickScores(accumulated, round.beta));
    t++;
  }
  return { accumulated, scores };
}
