/**
 * The acceptance case at full size (slow: ~1 min): MLP 784-200-10, 8 silos trained on
 * Fashion-MNIST shards, 2000 test images, all 256 coalitions, combined vs naive.
 * Run with `npx vitest run --config vitest.slow.config.ts test/ml` (npm run test:slow).
 */
import { describe, expect, it } from 'vitest';
import { maskToCoalition } from '../../scoring/coalition.js';
import { loadFashionMnist } from '../../src/data/fashion-mnist.js';
import { initBackend } from '../../src/ml/backend.js';
import { createCoalitionEvaluator } from '../../src/ml/coalition.js';
import { initParams, mlp } from '../../src/ml/models.js';
import { trainLocal } from '../../src/ml/train.js';

describe('combined coalition evaluation at full size', () => {
  it('agrees with naive evaluation on all 2^8 coalitions of Fashion-MNIST silos', async () => {
    await initBackend({ backend: 'wasm' });
    const fm = loadFashionMnist({ trainLimit: 8 * 400, testLimit: 2000 });
    const spec = mlp();
    const m0 = initParams(spec, 3);
    const updates: Float32Array[] = [];
    for (let i = 0; i < 8; i++) {
      const shard = {
        ...fm.train,
        n: 400,
        x: fm.train.x.subarray(i * 400 * 784, (i + 1) * 400 * 784),
        y: fm.train.y.subarray(i * 400, (i + 1) * 400),
      };
      updates.push((await trainLocal(spec, m0, shard, { seed: i, weightDecay: 1e-3 })).delta);
    }
    const setup = { spec, m0, updates, data: fm.test, weights: [1, 2, 3, 4, 5, 6, 7, 8] };
    const all = Array.from({ length: 256 }, (_, m) => maskToCoalition(8, m));
    const c = await createCoalitionEvaluator(setup, { mode: 'combined' }).values(all);
    const v = await createCoalitionEvaluator(setup, { mode: 'naive' }).values(all);
    expect(Array.from(c.accuracy)).toEqual(Array.from(v.accuracy));
    expect(Array.from(c.perClassAccuracy)).toEqual(Array.from(v.perClassAccuracy));
    for (let b = 0; b < 256; b++)
      expect(Math.abs(c.negLoss[b]! - v.negLoss[b]!) / Math.abs(v.negLoss[b]!)).toBeLessThan(1e-5);
    expect(new Set(c.accuracy).size).toBeGreaterThan(50);
  }, 600_000);
});
