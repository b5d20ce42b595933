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

/**
 * Every seed stream of a run, in one table: the simulated engine (src/sim/round/, setup.ts) and the
 * networked runs (the silo's src/fl/networked.ts, the service's src/strategies/networked-plan.ts) draw
 * from the same entries, so the two agree by construction rather than by copied constants. The
 * values are historical and frozen: changing one changes every result. test/data/seed.test.ts
 * checks that they are unique within their kind.
 *
 * - `run`: `deriveSeed(seed, stream)` (a second part where noted: the k-th draw or attack).
 * - `round`: `deriveSeed(seed, round, stream)`. The one-part streams `[s]` with s < 1000 (the
 *   largest consortium, config `silos`) are silo s's local training seed (src/fl/trainer.ts), so
 *   every round stream is ≥ 1000. Estimators draw from `deriveSeed(seed, round, ...stream)` with
 *   their own registered streams (src/estimators/registry.ts refuses a taken one).
 * - `sub`: derived from another stream's seed, `deriveSeed(parent, stream)`.
 */
export const SEED_STREAMS = {
  run: {
    /** The synthetic data set's examples (data/registry.ts). */
    syntheticData: 1,
    /** The synthetic data set's class means. */
    syntheticMeans: 2,
    /** The partition; draw k > 1 is `deriveSeed(seed, 3, k)`. */
    partition: 3,
    /** The class-balanced common test split. */
    testSplit: 4,
    /** Label noise. */
    labelNoise: 5,
    /** The k-th configured attack: `deriveSeed(seed, 6, k)`. */
    attack: 6,
    /** The long-tailed transform of the training pool. */
    longTail: 7,
    /** `data.split: 'paper003-code'`: the authors' three 80/20 splits (data/paper003-split.ts, its `sub` streams). */
    paper003Split: 8,
    /** The simulated silos' signing identities. */
    identities: 0x1d,
    /** The initial model M0. */
    initialModel: 0x1417,
  },
  round: {
    /** The strategy's selection of round r. */
    selection: 0x5e1,
    /** The strategy's aggregation weights of round r. */
    weights: 0xa66,
    /** The reference computations of round r (retrained coalitions). */
    references: 0x7e5,
  },
  sub: {
    /** The non-IID silos' Dirichlet draw of a mixed partition, from the partition's seed. */
    mixedNonIid: 0x4d1,
    /** paper003-code split: the data set D drawn from the pool. */
    paper003Data: 0x3d0,
    /** paper003-code split: the first random_split (the silos' examples). */
    paper003First: 0x3d1,
    /** paper003-code split: the second random_split (the partition's labels). */
    paper003Second: 0x3d2,
    /** paper003-code split: the third random_split (the common test set). */
    paper003Test: 0x3d3,
    /** paper003-code split: silo i's local 80/20 split, `deriveSeed(parent, 0x3d4, i)`. */
    paper003Local: 0x3d4,
  },
} as const;

/** Silo indices below this are one-part round streams (local training seeds): config `silos` ≤ this. */
export const MAX_SILO_STREAMS = 1000;
