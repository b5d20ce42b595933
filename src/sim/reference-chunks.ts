/**
 * The true Shapley value's reference table split into chunks (issue 25: "the reference computations
 * that can be split"): the retraining game's 2^n coalition values (./retraining-game.ts, papers/003 §3.1)
 * cut into contiguous coalition ranges, each computed on its own — by a sweep job on any machine —
 * and put back together into the table one unsplit run computes, value for value. The Shapley
 * value (papers/003 Eq. 1) is then computed from the whole table, so the split changes nothing
 * but where the 2^n retraining runs happen.
 */
import { wantsTrueShapley } from '../records/comparison-config.js';
import type { ExperimentConfig } from '../records/config.js';
import { type CoalitionRange, MAX_RETRAINING_SILOS } from './retraining-game.js';

/** The reference a chunk belongs to: the true Shapley value of the retraining game. */
export const CHUNKED_REFERENCE = 'trueSv';

/** One chunk's values: v(S) for the coalitions S in [from, to), in order. */
export interface ReferenceChunk {
  readonly reference: typeof CHUNKED_REFERENCE;
  readonly from: number;
  readonly to: number;
  readonly values: readonly number[];
}

/**
 * The coalition ranges of `chunks` chunks of the 2^n table: contiguous, in order, covering [0, 2^n)
 * once, sizes differing by at most one; at most 2^n chunks (one coalition each).
 * @throws RangeError naming `--chunks` for fewer than 1, `silos` above 16.
 */
export function chunkRanges(silos: number, chunks: number): CoalitionRange[] {
  if (!Number.isInteger(chunks) || chunks < 1)
    throw new RangeError(`--chunks: expected an integer ≥ 1, got ${chunks}`);
  if (!Number.isInteger(silos) || silos < 1 || silos > MAX_RETRAINING_SILOS)
    throw new RangeError(
      `silos: the retraining game is split for 1..${MAX_RETRAINING_SILOS} silos, got ${silos}`,
    );
  const total = 2 ** silos;
  const k = Math.min(chunks, total);
  const out: CoalitionRange[] = [];
  for (let j = 0; j < k; j++)
    out.push({ from: Math.floor((j * total) / k), to: Math.floor(((j + 1) * total) / k) });
  return out;
}

/**
 * The 2^n table from its chunks (in any order).
 * @throws RangeError when the chunks do not cover [0, 2^n) exactly once or a chunk's values do not
 * match its range.
 */
export function combineChunks(silos: number, chunks: readonly ReferenceChunk[]): Float64Array {
  const total = 2 ** silos;
  const table = new Float64Array(total);
  const seen = new Uint8Array(total);
  for (const c of chunks) {
    if (c.from < 0 || c.to > total || c.from > c.to || c.values.length !== c.to - c.from)
      throw new RangeError(
        `chunk [${c.from}, ${c.to}): ${c.values.length} values for a range of ${c.to - c.from} in [0, ${total})`,
      );
    for (let m = c.from; m < c.to; m++) {
      if (seen[m]) throw new RangeError(`chunks: coalition ${m} is in two chunks`);
      seen[m] = 1;
      table[m] = c.values[m - c.from]!;
    }
  }
  const missing = seen.indexOf(0);
  if (missing >= 0) throw new RangeError(`chunks: coalition ${missing} is in no chunk`);
  return table;
}

/** How many chunks a configuration's sweep jobs split its reference into: 0 when it computes no true Shapley value. */
export function chunksFor(cfg: ExperimentConfig, requested: number): number {
  return wantsTrueShapley(cfg) ? chunkRanges(cfg.silos, requested).length : 0;
}
