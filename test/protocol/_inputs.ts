/** Shared fixtures of the secure-aggregation tests: seeded random inputs and their plaintext sum. */
import { seededRandomFromInts } from '../../crypto/random-bytes.js';

/** n seeded random vectors of d uint32 words. */
export function randomInputs(n: number, d: number, seed: number): Uint32Array[] {
  const r = seededRandomFromInts(0xabc, seed);
  return Array.from({ length: n }, () => {
    const b = r(4 * d);
    return new Uint32Array(b.buffer, b.byteOffset, d);
  });
}

/** Σ_{v ∈ members} inputs[v] over Z_(2^32). */
export function plainSum(inputs: Uint32Array[], members: readonly number[], d: number): Uint32Array {
  const s = new Uint32Array(d);
  for (const v of members) for (let j = 0; j < d; j++) s[j]! += inputs[v]![j]!;
  return s;
}

/**
 * The largest n_C a threshold t allows for n silos (t ≥ ⌊(n + n_C)/2⌋ + 1 ⇔ n_C ≤ 2t − n − 1,
 * protocol/config.ts): the protocol tests exercise mechanics at any valid t; test/security and
 * test/protocol/config.test.ts test the bound itself.
 */
export function tolerated(n: number, t: number): number {
  return Math.max(0, Math.min(n - 1, 2 * t - n - 1));
}
