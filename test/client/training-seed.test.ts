/** src/client/training-seed.ts: fresh CSPRNG training seeds by default, the engine's on request. */
import { describe, expect, it } from 'vitest';
import { TRAINING_SEED_BOUND, trainingSeed } from '../../src/client/training-seed.js';
import { deriveSeed } from '../../src/data/seed.js';

describe('a silo’s training seed', () => {
  it('is fresh by default: 32 draws for one (seed, round, silo) are distinct 31-bit integers', () => {
    const seeds = Array.from({ length: 32 }, () =>
      trainingSeed({ deterministic: false, seed: 1, round: 2, silo: 3 }),
    );
    expect(new Set(seeds).size).toBe(32);
    for (const s of seeds) expect(Number.isInteger(s) && s >= 0 && s < TRAINING_SEED_BOUND).toBe(true);
  });

  it('is the engine’s deriveSeed(seed, round, silo) with deterministic', () => {
    expect(trainingSeed({ deterministic: true, seed: 1, round: 2, silo: 3 })).toBe(deriveSeed(1, 2, 3));
  });
});
