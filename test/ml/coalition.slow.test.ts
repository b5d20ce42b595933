/**
 * The acceptance cases at full size (slow: ~2 min): MLP 784-200-10, silos trained on
 * Fashion-MNIST shards, 2000 test images: all 256 coalitions of 8 silos, combined vs naive; and
 * 15 silos, the whole table (scalar and class-wise) at once, a sample of it against the tfjs
 * combined path (bit for bit) and naive evaluation (accuracies, up to near-ties: issue 26).
 * Run with `npx vitest run --config vitest.slow.config.ts test/ml` (npm run test:slow).
 */
import { describe, expect, it } from 'vitest';
import { maskToCoalition } from '../../scoring/coalition.js';
import { coalitionTable } from '../../scoring/game.js';
import { loadFashionMnist } from '../../src/data/fashion-mnist.js';
import { initBackend } from '../../src/ml/backend.js';
import { classwiseGame, coalitionGame, createCoalitionEvaluator } from '../../src/ml/coalition.js';
import { initParams, mlp } from '../../src/ml/models.js';
import { trainLocal } from '../../src/ml/train.js';
import { expectNaiveAccuracies } from './_naive_accuracies.js';

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
    expectNaiveAccuracies(
      setup,
      all.map((_, m) => m),
      c,
      v,
    );
    for (let b = 0; b < 256; b++)
      expect(Math.abs(c.negLoss[b]! - v.negLoss[b]!) / Math.abs(v.negLoss[b]!)).toBeLessThan(1e-5);
    expect(new Set(c.accuracy).size).toBeGreaterThan(50);
  }, 600_000);

  it('15 silos: the whole table at once; a sample agrees with the tfjs path bit for bit and with naive accuracies', async () => {
    await initBackend({ backend: 'wasm' });
    const fm = loadFashionMnist({ trainLimit: 15 * 300, testLimit: 2000 });
    const spec = mlp();
    const m0 = initParams(spec, 7);
    const updates: Float32Array[] = [];
    for (let i = 0; i < 15; i++) {
      const shard = {
        ...fm.train,
        n: 300,
        x: fm.train.x.subarray(i * 300 * 784, (i + 1) * 300 * 784),
        y: fm.train.y.subarray(i * 300, (i + 1) * 300),
      };
      updates.push((await trainLocal(spec, m0, shard, { seed: i, weightDecay: 1e-3 })).delta);
    }
    // FedAvg with the labels in an Int32Array, additive with the loader's byte labels: the tfjs
    // path sums the loss with the addon's reduction (glibc's exp and log) for the former, in
    // JavaScript (V8's) for the latter, where the native path's loss agrees to rounding only.
    for (const convention of ['fedavg', 'additive'] as const) {
      const int32 = convention === 'fedavg';
      const setup = {
        spec,
        m0,
        updates,
        data: int32 ? { ...fm.test, y: Int32Array.from(fm.test.y) } : fm.test,
        weights: updates.map((_, i) => 300 + 10 * i),
        convention,
      };
      const ev = createCoalitionEvaluator(setup);
      const table = await coalitionTable(coalitionGame(ev));
      const perClass = await classwiseGame(ev).table!();
      const sample = Array.from({ length: 128 }, (_, k) => (k * 9973 + 17) % 2 ** 15);
      const coalitions = sample.map((m) => maskToCoalition(15, m));
      const t = await createCoalitionEvaluator(setup, { native: false }).values(coalitions);
      const v = await createCoalitionEvaluator(setup, { mode: 'naive' }).values(coalitions);
      const rows = (x: Float64Array) => sample.flatMap((m) => Array.from(x.subarray(m * 10, m * 10 + 10)));
      expect(sample.map((m) => table[m]!)).toEqual(Array.from(t.accuracy));
      expect(rows(perClass)).toEqual(Array.from(t.perClassAccuracy));
      expectNaiveAccuracies(
        setup,
        sample,
        { accuracy: sample.map((m) => table[m]!), perClassAccuracy: rows(perClass) },
        v,
      );
      const negLoss = (await ev.values(coalitions)).negLoss;
      if (int32) expect(Array.from(negLoss)).toEqual(Array.from(t.negLoss));
      for (let b = 0; b < sample.length; b++)
        expect(Math.abs(negLoss[b]! - t.negLoss[b]!)).toBeLessThan(1e-13 * Math.abs(t.negLoss[b]!));
      expect(new Set(table).size).toBeGreaterThan(100);
      ev.dispose();
    }
  }, 600_000);
});
