/**
 * An in-process cache of immutable stored values, bounded in bytes (least recently used first
 * out): the decoded client messages of rounds still aggregating (./aggregation.ts) and the
 * published Σ w_iΔ_i of rounds (./round-rows.ts). The store stays the truth: an entry is only
 * ever added for a row that is committed and is never updated afterwards (messages are inserted
 * once per round, stage and silo and only deleted when the round leaves aggregation; a round's
 * aggregate is written once), so a hit returns what a query would, and a miss — another replica
 * wrote the row, the entry was evicted, the process restarted — falls back to the query.
 *
 * Keys are grouped by round (`consortium`, `round`) so that a round's entries can be dropped at
 * once when they will not be read again.
 */

/** A round of a consortium. */
interface RoundKey {
  readonly consortium: string;
  readonly round: number;
}

/** A byte-bounded LRU of values per round and name. */
export class BlobCache<V> {
  /** Insertion order is recency order: a hit is moved to the end, eviction takes the front. */
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private used = 0;

  /** @param capacity the most bytes held (entries larger than this are not kept). */
  constructor(private readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 0)
      throw new RangeError(`capacity: expected a non-negative integer, got ${capacity}`);
  }

  private static key(round: RoundKey, name: string): string {
    // JSON keeps any consortium id unambiguous (ids may contain the separator of a naive join).
    return JSON.stringify([round.consortium, round.round, name]);
  }

  /** The value stored under `name` for the round, if held (and marks it recently used). */
  get(round: RoundKey, name: string): V | undefined {
    const k = BlobCache.key(round, name);
    const hit = this.entries.get(k);
    if (hit === undefined) return undefined;
    this.entries.delete(k);
    this.entries.set(k, hit);
    return hit.value;
  }

  /** Holds `value` (of about `bytes` bytes), evicting the least recently used entries. */
  set(round: RoundKey, name: string, value: V, bytes: number): void {
    const k = BlobCache.key(round, name);
    this.remove(k);
    if (bytes > this.capacity) return;
    this.entries.set(k, { value, bytes });
    this.used += bytes;
    for (const [old, entry] of this.entries) {
      if (this.used <= this.capacity) break;
      this.entries.delete(old);
      this.used -= entry.bytes;
    }
  }

  /** Forgets every entry of the round. */
  dropRound(round: RoundKey): void {
    const prefix = JSON.stringify([round.consortium, round.round]).slice(0, -1);
    for (const k of [...this.entries.keys()]) if (k.startsWith(`${prefix},`)) this.remove(k);
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.used;
  }

  private remove(k: string): void {
    const old = this.entries.get(k);
    if (old === undefined) return;
    this.entries.delete(k);
    this.used -= old.bytes;
  }
}
