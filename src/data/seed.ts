/**
 * Seed streams: one run seed → independent seeds for each random step of setting up a run (data
 * generation, splits, partitions, noise, attacks), so that adding a step does not shift the others.
 */

/** Mixes integers into a 31-bit seed (deterministic, order-sensitive). */
export function deriveSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x01000193);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 12;
  }
  return h >>> 1;
}
