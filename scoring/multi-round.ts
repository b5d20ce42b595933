/**
 * MR and TMR: exact Shapley values per federated round, accumulated over rounds.
 *
 * MR (Song et al. 2019; papers/000 Alg. 3): in round t the server values every subset of that
 * round's participants K^t and computes their exact Shapley values φ^t (papers/003 Eq. 1, via
 * `exactShapley`); the cumulative value is Σ_t φ^t. Players who did not take part in round t
 * (not selected) get 0 for that round.
 * TMR (Wei et al. 2020; papers/000 Alg. 4): between-round truncation — a round whose gain
 * |v(K^t) − v(∅)| is ≤ ε_b contributes zero and costs only those 2 evaluations (Alg. 4 lines
 * 5–6) — and an optional decay λ ∈ (0, 1] of older rounds: after T rounds the cumulative value
 * is Σ_t λ^{T−1−t} φ^t (λ = 1: no decay).
 */
import { checkNonNegative } from './_checks.js';
import { emptyCoalition, grandCoalition } from './coalition.js';
import type { Estimate } from './estimate.js';
import { coalitionTable, type Game, memoize } from './game.js';
import { exactShapley } from './shapley.js';

/** One round given as a game over its participants: local player b is global player players[b]. */
export interface RoundGame {
  readonly players: readonly number[];
  readonly game: Game;
}

/** One round given as its 2^k values over its participants (index = mask over local players). */
export interface RoundTable {
  readonly players: readonly number[];
  readonly table: Float64Array;
}

/** A round of a multi-round valuation. */
export type Round = RoundGame | RoundTable;

/** Options of `multiRoundShapley`. */
export interface MultiRoundOptions {
  /** Total number of players (silos); every round's players are in [0, n). */
  n: number;
}

/** Options of `truncatedMultiRoundShapley`. */
export interface TruncatedMultiRoundOptions extends MultiRoundOptions {
  /** ε_b: a round with |v(K^t) − v(∅)| ≤ ε_b contributes zero. */
  threshold: number;
  /** λ ∈ (0, 1]: weight of a round t of T is λ^{T−1−t} (default 1, no decay). */
  decay?: number;
}

/** A multi-round estimate: the cumulative values plus each round's own values. */
export interface MultiRoundEstimate extends Estimate {
  /** φ^t per round, over all n players (0 for non-participants and truncated rounds). */
  rounds: Float64Array[];
  /** Whether each round was truncated (always false for MR). */
  truncated: boolean[];
}

function checkRounds(rounds: readonly Round[], n: number): void {
  if (!Array.isArray(rounds)) throw new TypeError('rounds: expected an array of rounds');
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`n: expected a positive integer, got ${n}`);
  rounds.forEach((r, t) => {
    if (typeof r !== 'object' || r === null || !Array.isArray(r.players))
      throw new TypeError(`rounds: round ${t} has no players array`);
    const k = r.players.length;
    if (k < 1 || k > 30) throw new RangeError(`rounds: round ${t} has ${k} players, expected 1..30`);
    const seen = new Set<number>();
    for (const p of r.players) {
      if (!Number.isInteger(p) || p < 0 || p >= n)
        throw new RangeError(`rounds: round ${t} names player ${p}, not in [0, ${n})`);
      if (seen.has(p)) throw new RangeError(`rounds: round ${t} names player ${p} twice`);
      seen.add(p);
    }
    if ('table' in r) {
      if (!(r.table instanceof Float64Array) || r.table.length !== 2 ** k)
        throw new RangeError(`rounds: round ${t} table must be a Float64Array of 2^${k} values`);
    } else if (typeof r.game?.values !== 'function' || r.game.n !== k)
      throw new TypeError(`rounds: round ${t} needs a table or a game over its ${k} players`);
  });
}

async function run(
  rounds: readonly Round[],
  n: number,
  threshold: number,
  decay: number,
): Promise<MultiRoundEstimate> {
  const values = new Float64Array(n);
  const perRound: Float64Array[] = [];
  const truncated: boolean[] = [];
  let evaluations = 0;
  for (const r of rounds) {
    const k = r.players.length;
    const full = 2 ** k - 1;
    let table: Float64Array | null = null;
    let gain: number;
    if ('table' in r) {
      table = r.table;
      gain = table[full]! - table[0]!;
    } else {
      const memo = memoize(r.game);
      const before = memo.evaluations;
      const ends = await memo.values([emptyCoalition(k), grandCoalition(k)]);
      gain = ends[1]! - ends[0]!;
      if (Math.abs(gain) > threshold) table = await coalitionTable(memo);
      evaluations += memo.evaluations - before;
    }
    const phi = new Float64Array(n);
    const cut = !(Math.abs(gain) > threshold); // TMR between-round truncation (Alg. 4 line 6)
    if (!cut && table) {
      const local = exactShapley(k, table);
      r.players.forEach((p, b) => {
        phi[p] = local[b]!;
      });
    }
    // Older rounds decay: S ← λ·S + φ^t.
    for (let i = 0; i < n; i++) values[i] = decay * values[i]! + phi[i]!;
    perRound.push(phi);
    truncated.push(cut);
  }
  return { values, evaluations, rounds: perRound, truncated };
}

/**
 * MR: exact Shapley values of each round's participants, summed over rounds.
 * `evaluations` counts coalitions evaluated by round games (tables cost nothing).
 * Throws TypeError on a malformed round, RangeError on n, on a player outside [0, n) or named
 * twice, on a round with more than 30 players, or on a table of the wrong length.
 */
export function multiRoundShapley(
  rounds: readonly Round[],
  options: MultiRoundOptions,
): Promise<MultiRoundEstimate> {
  checkRounds(rounds, options?.n);
  return run(rounds, options.n, -1, 1);
}

/**
 * TMR: MR with between-round truncation at `threshold` and an optional decay of older rounds.
 * A truncated round given as a game costs 2 evaluations (v(∅), v(K^t)).
 * Throws as `multiRoundShapley`, and RangeError when threshold < 0 or decay ∉ (0, 1].
 */
export function truncatedMultiRoundShapley(
  rounds: readonly Round[],
  options: TruncatedMultiRoundOptions,
): Promise<MultiRoundEstimate> {
  checkRounds(rounds, options?.n);
  checkNonNegative('threshold', options.threshold);
  const decay = options.decay ?? 1;
  if (!(decay > 0 && decay <= 1)) throw new RangeError(`decay: expected a number in (0, 1], got ${decay}`);
  return run(rounds, options.n, options.threshold, decay);
}
