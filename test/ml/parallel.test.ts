import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/ml/backend.js';
import { cnn003, initParams, mlp } from '../../src/ml/models.js';
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

  it('same bits for a model with large products (cnn003) in the main thread and in a worker', async () => {
    // cnn003's dense layer at batch 64 is a 64×18432·18432×128 product: the native kernels cut
    // it into fixed blocks that the main thread's threads (every core) take from a queue, and a
    // worker with its share of the cores. The bits must not depend on that (threading OpenBLAS
    // itself would change them).
    const spec = cnn003();
    const m0 = initParams(spec, 4);
    const tasks = [0, 1].map((i) => ({
      spec,
      m0,
      data: gaussianMixture(64, [28, 28, 1], 10, 20 + i),
      options: { seed: i, batchSize: 64 },
    }));
    const par = await trainParallel(tasks, { workers: 2 });
    for (const [i, t] of tasks.entries())
      expect(sameBits(par[i]!.delta, (await trainLocal(t.spec, t.m0, t.data, t.options)).delta)).toBe(true);
  }, 60_000);

  it('views into a larger array are sent as themselves, and shared copies are reused across batches; M0 is read afresh', async () => {
    const spec = mlp({ inputShape: [8, 8, 1], hidden: [8] });
    const all = gaussianMixture(200, [8, 8, 1], 10, 9);
    const view = (start: number, n: number) => ({
      ...all,
      n,
      x: all.x.subarray(start * 64, (start + n) * 64),
      y: (all.y as Int32Array).subarray(start, start + n),
    });
    const m0 = initParams(spec, 2);
    const tasks = [view(0, 50), view(120, 70)].map((data, i) => ({ spec, m0, data, options: { seed: i } }));
    const pool = createTrainPool({ workers: 2 });
    try {
      const first = await pool.train(tasks);
      for (const [i, t] of tasks.entries())
        expect(sameBits(first[i]!.delta, (await trainLocal(spec, m0, t.data, t.options)).delta)).toBe(true);
      const again = await pool.train(tasks);
      for (let i = 0; i < 2; i++) expect(sameBits(again[i]!.delta, first[i]!.delta)).toBe(true);
      m0.fill(0.01); // the same array, new values: the next batch must train from these
      const moved = await pool.train(tasks);
      for (const [i, t] of tasks.entries())
        expect(sameBits(moved[i]!.delta, (await trainLocal(spec, m0, t.data, t.options)).delta)).toBe(true);
    } finally {
      await pool.close();
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
