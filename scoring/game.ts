/**
 * Cooperative games: coalitions in, values out.
 *
 * Kept apart from samplers and estimators (docs/architecture.md, "Conventions"): a game only
 * answers "what is v(S) for each S in this batch". Values are asynchronous so a model-backed
 * game (src/ml evaluating coalition models on the test set) plugs in unchanged; batches let
 * such a game share work across coalitions.
 */
import { type Coalition, coalitionKey, emptyCoalition, maskToCoalition } from './coalition.js';

/** A scalar-valued cooperative game over players 0..n−1. */
export interface Game {
  /** Number of players. */
  readonly n: number;
  /** v(S) for each coalition of the batch, in batch order. */
  values(coalitions: readonly Coalition[]): Promise<Float64Array>;
  /**
   * Optional: all 2^n values at once, indexed by integer mask (bit i = player i), the same
   * numbers `values` gives; for games that compute the whole table faster than in batches (the
   * coalition models of src/ml). `coalitionTable` uses it when present; the caller may keep
   * the array. Only offered for n ≤ 30.
   */
  table?(): Promise<Float64Array>;
}

/**
 * A vector-valued game (e.g. per-class accuracies, papers/000 Eq. 7): v(S) ∈ R^dims.
 * `values` returns batch × dims numbers, row-major (row b is coalition b).
 */
export interface VectorGame {
  readonly n: number;
  readonly dims: number;
  values(coalitions: readonly Coalition[]): Promise<Float64Array>;
  /** Optional: all 2^n rows at once, 2^n × dims, row m the coalition of mask m (as `Game.table`). */
  table?(): Promise<Float64Array>;
}

/** A game that remembers every value it has computed and counts what it computed. */
export interface MemoGame extends Game {
  /** Coalitions evaluated by the underlying game (each distinct coalition at most once). */
  readonly evaluations: number;
  /** Coalitions asked for, memo hits included. */
  readonly requests: number;
}

function checkPlayers(n: number): void {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`n: expected a positive integer, got ${n}`);
}

/** A game from a synchronous value function. Throws RangeError when n is not a positive integer. */
export function gameFromFunction(n: number, value: (c: Coalition) => number): Game {
  checkPlayers(n);
  return {
    n,
    async values(coalitions) {
      const out = new Float64Array(coalitions.length);
      for (let b = 0; b < coalitions.length; b++) out[b] = value(coalitions[b]!);
      return out;
    },
  };
}

/**
 * A game given by its table of 2^n values, indexed by integer mask (bit i = player i).
 * Throws RangeError when the table length is not 2^n or n > 30.
 */
export function gameFromTable(n: number, table: Float64Array): Game {
  checkPlayers(n);
  if (n > 30) throw new RangeError(`n: a table game supports at most 30 players, got ${n}`);
  if (table.length !== 2 ** n)
    throw new RangeError(`table: expected 2^${n} = ${2 ** n} values, got ${table.length}`);
  return gameFromFunction(n, (c) => table[c[0]! >>> 0]!);
}

/**
 * Wraps a game so each distinct coalition is computed once; counts evaluations and requests.
 * Within one batch, duplicate and already-known coalitions are not sent to the inner game.
 * When the inner game offers `table`, so does the wrapper: it asks for the table once, counts
 * the coalitions it did not know yet as evaluated (each distinct coalition once, as for
 * `values`) and the 2^n as requested, and answers later batches from it.
 */
export function memoize(game: Game): MemoGame {
  if (isMemo(game)) return game;
  const memo = new Map<MemoKey, number>();
  let full: Float64Array | undefined;
  let evaluations = 0;
  let requests = 0;
  const wrapped: MemoGame & { [MEMO]: true } = {
    [MEMO]: true,
    n: game.n,
    get evaluations() {
      return evaluations;
    },
    get requests() {
      return requests;
    },
    async values(coalitions) {
      requests += coalitions.length;
      if (full) return fromTable(coalitions, full, 1);
      const { keys, missing, missingKeys } = partitionByMemo(coalitions, memo);
      if (missing.length > 0) {
        const v = await game.values(missing);
        if (v.length !== missing.length)
          throw new RangeError(`values: game returned ${v.length} values for ${missing.length} coalitions`);
        for (let m = 0; m < missing.length; m++) memo.set(missingKeys[m]!, v[m]!);
        evaluations += missing.length;
      }
      const out = new Float64Array(coalitions.length);
      for (let b = 0; b < coalitions.length; b++) out[b] = memo.get(keys[b]!)!;
      return out;
    },
  };
  const inner = game.table;
  if (typeof inner === 'function' && game.n <= 30)
    wrapped.table = async () => {
      requests += 2 ** game.n;
      if (!full) {
        full = checkedTable(await inner.call(game), game.n, 1);
        evaluations += 2 ** game.n - memo.size;
        memo.clear();
      }
      return full.slice();
    };
  return wrapped;
}

/** A table from `Game.table`/`VectorGame.table`, checked: 2^n × dims numbers. */
function checkedTable(t: Float64Array, n: number, dims: number): Float64Array {
  if (!(t instanceof Float64Array) || t.length !== 2 ** n * dims)
    throw new RangeError(`table: game returned ${t?.length} numbers, expected 2^${n} × ${dims}`);
  return t;
}

/** Rows of the coalitions (n ≤ 30: the mask is the coalition's one word) from a full table. */
function fromTable(coalitions: readonly Coalition[], full: Float64Array, dims: number): Float64Array {
  const out = new Float64Array(coalitions.length * dims);
  const size = full.length / dims;
  for (let b = 0; b < coalitions.length; b++) {
    const c = coalitions[b]!;
    const m = c[0]! >>> 0;
    if (c.length !== 1)
      throw new RangeError(`coalitions[${b}]: expected a coalition over ${Math.log2(size)} players`);
    if (m >= size)
      throw new RangeError(
        `coalitions[${b}]: player ${31 - Math.clz32(m)} is outside [0, ${Math.log2(size)})`,
      );
    if (dims === 1) out[b] = full[m]!;
    else out.set(full.subarray(m * dims, (m + 1) * dims), b * dims);
  }
  return out;
}

const MEMO = Symbol('fedscore.memo');

/** Memo key: the word itself for up to 32 players (no string building), else `coalitionKey`. */
type MemoKey = number | string;
function memoKey(c: Coalition): MemoKey {
  return c.length === 1 ? c[0]! : coalitionKey(c);
}

/** Splits a batch into its keys and the distinct coalitions the memo does not hold yet. */
function partitionByMemo(coalitions: readonly Coalition[], memo: Map<MemoKey, unknown>) {
  const keys = coalitions.map(memoKey);
  const missing: Coalition[] = [];
  const missingKeys: MemoKey[] = [];
  const pending = new Set<MemoKey>();
  for (let b = 0; b < coalitions.length; b++) {
    const k = keys[b]!;
    if (!memo.has(k) && !pending.has(k)) {
      pending.add(k);
      missing.push(coalitions[b]!);
      missingKeys.push(k);
    }
  }
  return { keys, missing, missingKeys };
}

function isMemo(game: Game): game is MemoGame {
  return (game as { [MEMO]?: true })[MEMO] === true;
}

/** v(S) of a single coalition. */
export async function coalitionValue(game: Game, c: Coalition): Promise<number> {
  return (await game.values([c]))[0]!;
}

/** v(∅). */
export function emptyValue(game: Game): Promise<number> {
  return coalitionValue(game, emptyCoalition(game.n));
}

/**
 * The scalar game v_d(S) = v(S)[d] of one coordinate of a vector game. Wrap the vector game in
 * `memoizeVector` first so that the per-coordinate games share evaluations.
 */
export function coordinateGame(game: VectorGame, d: number): Game {
  if (!Number.isInteger(d) || d < 0 || d >= game.dims)
    throw new RangeError(`d: expected 0 ≤ d < ${game.dims}, got ${d}`);
  const coordinate: Game = {
    n: game.n,
    async values(coalitions) {
      const rows = await game.values(coalitions);
      const out = new Float64Array(coalitions.length);
      for (let b = 0; b < coalitions.length; b++) out[b] = rows[b * game.dims + d]!;
      return out;
    },
  };
  const inner = game.table;
  if (typeof inner === 'function' && game.n <= 30)
    coordinate.table = async () => {
      const rows = checkedTable(await inner.call(game), game.n, game.dims);
      const out = new Float64Array(2 ** game.n);
      for (let m = 0; m < out.length; m++) out[m] = rows[m * game.dims + d]!;
      return out;
    };
  return coordinate;
}

/** A vector game that computes each distinct coalition once; counts evaluations. */
export interface MemoVectorGame extends VectorGame {
  readonly evaluations: number;
}

/** Memoizes a vector game (same contract as `memoize`, `table` included). */
export function memoizeVector(game: VectorGame): MemoVectorGame {
  const memo = new Map<MemoKey, Float64Array>();
  let full: Float64Array | undefined;
  let evaluations = 0;
  const wrapped: MemoVectorGame = {
    n: game.n,
    dims: game.dims,
    get evaluations() {
      return evaluations;
    },
    async values(coalitions) {
      if (full) return fromTable(coalitions, full, game.dims);
      const { keys, missing, missingKeys } = partitionByMemo(coalitions, memo);
      if (missing.length > 0) {
        const v = await game.values(missing);
        if (v.length !== missing.length * game.dims)
          throw new RangeError(
            `values: game returned ${v.length} numbers for ${missing.length}×${game.dims}`,
          );
        for (let m = 0; m < missing.length; m++)
          memo.set(missingKeys[m]!, v.slice(m * game.dims, (m + 1) * game.dims));
        evaluations += missing.length;
      }
      const out = new Float64Array(coalitions.length * game.dims);
      for (let b = 0; b < coalitions.length; b++) out.set(memo.get(keys[b]!)!, b * game.dims);
      return out;
    },
  };
  const inner = game.table;
  if (typeof inner === 'function' && game.n <= 30)
    wrapped.table = async () => {
      if (!full) {
        full = checkedTable(await inner.call(game), game.n, game.dims);
        evaluations += 2 ** game.n - memo.size;
        memo.clear();
      }
      return full.slice();
    };
  return wrapped;
}

/** Options for `coalitionTable`. */
export interface TableOptions {
  /** Coalitions per call to `game.values` (default 4096). */
  batchSize?: number;
  /** Called after each batch with (done, total). */
  onProgress?: (done: number, total: number) => void;
}

/**
 * All 2^n values of a game, indexed by integer mask (bit i = player i), evaluated in batches,
 * or from `game.table` in one call when the game offers it (then `batchSize` is not used and
 * `onProgress` is called once). Throws RangeError when n > 30.
 */
export async function coalitionTable(game: Game, options: TableOptions = {}): Promise<Float64Array> {
  const { n } = game;
  if (n > 30) throw new RangeError(`n: the coalition table supports at most 30 players, got ${n}`);
  const batchSize = options.batchSize ?? 4096;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError(`batchSize: expected a positive integer, got ${batchSize}`);
  const total = 2 ** n;
  if (typeof game.table === 'function') {
    const table = checkedTable(await game.table(), n, 1);
    options.onProgress?.(total, total);
    return table;
  }
  const table = new Float64Array(total);
  for (let start = 0; start < total; start += batchSize) {
    const end = Math.min(total, start + batchSize);
    const batch: Coalition[] = [];
    for (let m = start; m < end; m++) batch.push(maskToCoalition(n, m));
    table.set(await game.values(batch), start);
    options.onProgress?.(end, total);
  }
  return table;
}
