import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { gaussianMixture } from '../../../src/data/synthetic.js';
import { createTfLearner } from '../../../src/fl/learner/tf-learner.js';
import { type LayerSpec, modelSpec, registerModel } from '../../../src/ml/model-registry.js';
import { saveModel, tinyCnn } from '../../ml/_layers.js';

// Registered in this (main) thread only: the training workers receive the ModelSpec, not the kind.
registerModel({
  kind: 'tf-learner-test-mlp',
  description: 'flatten → dense(width) → dense(classes)',
  options: Type.Object({ width: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
  build: (o: { width: number }, d) => {
    const f = d.inputShape[0] * d.inputShape[1] * d.inputShape[2];
    const layers: LayerSpec[] = [
      { kind: 'flatten' },
      { kind: 'dense', inputs: f, units: o.width, relu: true },
      { kind: 'dense', inputs: o.width, units: d.numClasses, relu: false },
    ];
    return modelSpec('tf-learner-test-mlp', `test-mlp-${f}-${o.width}`, d.inputShape, d.numClasses, layers);
  },
});

describe('createTfLearner with a user-registered model', () => {
  it('trains it on worker threads (the pool) to the same bits as in the main thread', async () => {
    const options = {
      model: { kind: 'tf-learner-test-mlp', width: 5 },
      inputShape: [1, 6, 1] as const,
      numClasses: 3,
      training: { epochs: 2, batchSize: 8 },
      backend: 'wasm',
    };
    const pooled = await createTfLearner({ ...options, workers: 2 });
    const inline = await createTfLearner({ ...options, workers: 1 });
    try {
      expect(pooled.parameterCount).toBe(6 * 5 + 5 + 5 * 3 + 3);
      const jobs = [0, 1, 2].map((seed) => ({
        data: gaussianMixture({ n: 40 + 8 * seed, numClasses: 3, features: 6, seed }),
        seed,
      }));
      const m0 = pooled.initialParameters(7);
      const viaWorkers = await pooled.trainMany(m0, jobs);
      const inMain = await inline.trainMany(m0, jobs);
      expect(viaWorkers).toHaveLength(3);
      for (const [i, d] of viaWorkers.entries()) {
        expect(d.some((v) => v !== 0)).toBe(true);
        expect(Array.from(d)).toEqual(Array.from(inMain[i]!));
      }
      const u = await pooled.evaluate(m0, jobs[0]!.data);
      expect(u.perClass).toHaveLength(3);
    } finally {
      await pooled.close();
      await inline.close();
    }
  });

  it("trains a user-supplied TF.js Layers model (kind 'tfjs-layers') from its file weights, on the pool as in the main thread", async () => {
    const model = tinyCnn(3);
    const path = await saveModel(model);
    const options = {
      model: { kind: 'tfjs-layers', path },
      inputShape: [8, 8, 2] as const,
      numClasses: 3,
      training: { epochs: 1, batchSize: 8 },
      backend: 'wasm',
    };
    const pooled = await createTfLearner({ ...options, workers: 2 });
    const inline = await createTfLearner({ ...options, workers: 1 });
    try {
      const m0 = pooled.initialParameters(1);
      const fileWeights = Float32Array.from(model.getWeights().flatMap((w) => Array.from(w.dataSync())));
      expect(Array.from(m0)).toEqual(Array.from(fileWeights));
      expect(Array.from(pooled.initialParameters(99))).toEqual(Array.from(m0));
      const shaped = [0, 1, 2].map((seed) => ({
        data: gaussianMixture({ n: 24 + 8 * seed, numClasses: 3, shape: [8, 8, 2], seed }),
        seed,
      }));
      const viaWorkers = await pooled.trainMany(m0, shaped);
      const inMain = await inline.trainMany(m0, shaped);
      for (const [i, d] of viaWorkers.entries()) {
        expect(d.some((v) => v !== 0)).toBe(true);
        expect(Array.from(d)).toEqual(Array.from(inMain[i]!));
      }
      const u = await pooled.evaluate(m0, shaped[0]!.data);
      expect(u.perClass).toHaveLength(3);
    } finally {
      await pooled.close();
      await inline.close();
    }
  });

  it('rejects options the model does not have, naming them', async () => {
    await expect(
      createTfLearner({
        model: { kind: 'tf-learner-test-mlp', width: 0 },
        training: {},
        backend: 'wasm',
        workers: 1,
      }),
    ).rejects.toThrow('width: must be >= 1');
  });
});
