import { describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/data/dataset.js';
import { deriveSeed } from '../../src/data/seed.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { consortiumTrainer, localTrainer } from '../../src/fl/trainer.js';

const ds = (name: string) => ({ name }) as Dataset;

/** A learner whose update for a job is (seed, base[0]) and which records its jobs. */
function fakeLearner() {
  const jobs: { data: string; seed: number }[][] = [];
  const learner = {
    async trainMany(base: Float32Array, js: readonly { data: Dataset; seed: number }[]) {
      jobs.push(js.map((j) => ({ data: j.data.name, seed: j.seed })));
      return js.map((j) => Float32Array.of(j.seed, base[0]!));
    },
  } as unknown as Learner;
  return { learner, jobs };
}

describe('localTrainer', () => {
  it('trains the silos in one call, each on its own data with seed deriveSeed(seed, round, silo)', async () => {
    const { learner, jobs } = fakeLearner();
    const train = localTrainer(learner, [ds('a'), ds('b'), ds('c')], 11);
    const updates = await train(Float32Array.of(0.5), 4, [2, 0]);
    expect(jobs).toEqual([
      [
        { data: 'c', seed: deriveSeed(11, 4, 2) },
        { data: 'a', seed: deriveSeed(11, 4, 0) },
      ],
    ]);
    expect(updates.map((u) => u[1])).toEqual([0.5, 0.5]);
  });

  it('rejects a silo without data, naming it', async () => {
    const { learner } = fakeLearner();
    await expect(localTrainer(learner, [ds('a')], 1)(new Float32Array(1), 1, [1])).rejects.toThrow(
      /^silos: 1 is not a silo/,
    );
  });
});

describe('consortiumTrainer', () => {
  it("wraps local training with the consortium's update attacks", async () => {
    const { learner } = fakeLearner();
    const train = consortiumTrainer(
      learner,
      { silos: [ds('a'), ds('b')], updateAttacks: [undefined, { kind: 'free-rider', seed: 0 }] },
      3,
    );
    const [a, b] = await train(Float32Array.of(1), 1, [0, 1]);
    expect(Array.from(a!)).toEqual([deriveSeed(3, 1, 0), 1].map(Math.fround));
    expect(Array.from(b!)).toEqual([0, 0]);
  });
});
