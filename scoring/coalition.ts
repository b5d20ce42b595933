/**
 * Coalitions of players as bitsets.
 *
 * A coalition over n players is a `Uint32Array` of ⌈n/32⌉ words; player i is bit (i & 31) of
 * word i >>> 5. Bitsets keep memo keys short, unions cheap and let n go past 32 (FedOwen and
 * FedTSV run with 100 clients, papers/004 §4, papers/002 §5). Exact methods over all 2^n
 * coalitions use plain integer masks instead (`maskToCoalition`).
 */

/** A set of player indices as a bitset (see the module comment for the layout). */
export type Coalition = Uint32Array;

/** Number of 32-bit words a coalition over n players uses. */
export function wordsFor(n: number): number {
  return Math.max(1, Math.ceil(n / 32));
}

/** The empty coalition over n players. */
export function emptyCoalition(n: number): Coalition {
  return new Uint32Array(wordsFor(n));
}

/** The coalition {members} over n players. Throws RangeError when a member is outside [0, n). */
export function coalitionOf(n: number, members: Iterable<number>): Coalition {
  const c = emptyCoalition(n);
  for (const i of members) {
    if (!Number.isInteger(i) || i < 0 || i >= n)
      throw new RangeError(`members: ${i} is not a player in [0, ${n})`);
    c[i >>> 5]! |= 1 << (i & 31);
  }
  return c;
}

/** The grand coalition of all n players. */
export function grandCoalition(n: number): Coalition {
  const c = emptyCoalition(n);
  for (let i = 0; i < n; i++) c[i >>> 5]! |= 1 << (i & 31);
  return c;
}

/** Whether player i is in coalition c. */
export function has(c: Coalition, i: number): boolean {
  return ((c[i >>> 5]! >>> (i & 31)) & 1) === 1;
}

/** A copy of c with player i added. */
export function withPlayer(c: Coalition, i: number): Coalition {
  const d = c.slice();
  d[i >>> 5]! |= 1 << (i & 31);
  return d;
}

/** A copy of c with player i removed. */
export function withoutPlayer(c: Coalition, i: number): Coalition {
  const d = c.slice();
  d[i >>> 5]! &= ~(1 << (i & 31));
  return d;
}

/** Number of players in c. */
export function size(c: Coalition): number {
  let s = 0;
  for (const w of c) s += popcount(w);
  return s;
}

/** The members of c in increasing order. */
export function members(c: Coalition): number[] {
  const out: number[] = [];
  for (let w = 0; w < c.length; w++) {
    let word = c[w]!;
    while (word !== 0) {
      const low = word & -word;
      out.push(w * 32 + 31 - Math.clz32(low));
      word ^= low;
    }
  }
  return out;
}

/** A string key for memoization; equal coalitions give equal keys. */
export function coalitionKey(c: Coalition): string {
  if (c.length === 1) return (c[0]! >>> 0).toString(36);
  let k = '';
  for (const w of c) k += `${(w >>> 0).toString(36)}.`;
  return k;
}

/** The coalition whose members are the set bits of the integer mask (n ≤ 31). */
export function maskToCoalition(n: number, mask: number): Coalition {
  const c = emptyCoalition(n);
  c[0] = mask >>> 0;
  return c;
}

/** Number of set bits in a 32-bit integer. */
export function popcount(x: number): number {
  let v = x >>> 0;
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
