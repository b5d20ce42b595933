import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/ml/backend.js';
import { initParams, mlp } from '../../src/ml/models.js';
import { createTrainPool, trainParallel } from '../../src/ml/parallel.js';
import { trainLocal } from '../../src/ml/train.js';
import { gaussianMixture, sameBits } from './_synthetic.js';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

describe('trainParallel', () => {
  it('gives, in task order, the same Δ bits as trainLocal in the main thread', async () => {
    const spec = mlp({ inputShape: [8, 8, 1], hidden: [16] });
    const m0 = initParams(spec, 1);
    const tasks = [0, 1, 2].map((i) => ({
      spec,
      m0,
      data: gaussianMixture(96 + 32 * i, [8, 8, 1], 10, i),
      options: { seed: i, epochs: 2, batchSize: 16 },
    }));
    const par = await trainParallel(tasks, { workers: 2 });
    expect(par).toHaveLength(3);
    for (const [i, t] of tasks.entries()) {
      const seq = await trainLocal(t.spec, t.m0, t.data, t.options);
      expect(sameBits(par[i]!.delta, seq.delta)).toBe(true);
      expect(Array.from(par[i]!.epochLosses)).toEqual(Array.from(seq.epochLosses));
      expect(par[i]!.samples).toBe(2 * t.data.n);
    }
  });

  it('a pool is reused across batches and refuses work once closed', async () => {
    const spec = mlp({ inputShape: [8, 8, 1], hidden: [4] });
    const m0 = initParams(spec, 1);
    const task = (seed: number) => ({
      spec,
      m0,
      data: gaussianMixture(32, [8, 8, 1], 10, seed),
      options: { seed },
    });
    const pool = createTrainPool({ workers: 2 });
    try {
      const a = await pool.train([task(1), task(2), task(3)]);
      const b = await pool.train([task(3)]);
      expect(sameBits(a[2]!.delta, b[0]!.delta)).toBe(true);
    } finally {
      await pool.close();
    }
    await expect(pool.train([task(1)])).rejects.toThrow(/^train: the pool is closed/);
  });

  it('reports a failing task by index and rejects bad input up front', async () => {
    const spec = mlp({ inputShape: [8, 8, 1], hidden: [4] });
    const m0 = initParams(spec, 1);
    const data = gaussianMixture(8, [8, 8, 1], 10, 0);
    await expect(trainParallel([{ spec, m0, data, options: { seed: 1, batchSize: 0 } }])).rejects.toThrow(
      /^tasks\[0\]: RangeError: batchSize: /,
    );
    await expect(
      trainParallel([{ spec, m0: new Float32Array(1), data, options: { seed: 1 } }]),
    ).rejects.toThrow(/^tasks\[0\]\.m0: /);
    await expect(trainParallel([], { workers: 0 })).rejects.toThrow(/^workers: /);
    expect(() => createTrainPool({ workers: 1.5 })).toThrow(/^workers: /);
  });
});
