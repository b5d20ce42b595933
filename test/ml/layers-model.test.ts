import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { maskToCoalition } from '../../scoring/coalition.js';
import { initBackend } from '../../src/ml/backend.js';
import { createCoalitionEvaluator } from '../../src/ml/coalition.js';
import { layersModelLoadHandler } from '../../src/ml/layers-files.js';
import { layersModelDigests, loadLayersModel, paramsDigest } from '../../src/ml/layers-model.js';
import { createModel, fixedInitialParameters } from '../../src/ml/model-registry.js';
import { forward, type ModelSpec, paramLayout, paramTensors } from '../../src/ml/models.js';
import { trainLocal } from '../../src/ml/train.js';
import { canonicalJson } from '../../src/schema/canonical-json.js';
import { editModelJson, saveModel, tinyCnn, tinyMlp } from './_layers.js';
import { expectNaiveAccuracies } from './_naive_accuracies.js';
import { gaussianMixture, maxAbsDiff, randomVector } from './_synthetic.js';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

function fedscoreOutput(spec: ModelSpec, params: Float32Array, x: Float32Array, n: number, softmax: boolean) {
  return tf.tidy(() => {
    const logits = forward(spec, paramTensors(spec, params), tf.tensor2d(x, [n, x.length / n]));
    return (softmax ? tf.softmax(logits) : logits).dataSync() as Float32Array;
  });
}

function predict(model: tf.LayersModel, x: Float32Array, shape: readonly number[]): Float32Array {
  return tf.tidy(() => (model.predict(tf.tensor(x, [...shape])) as tf.Tensor).dataSync() as Float32Array);
}

describe('a TF.js Layers model as a fedscore model', () => {
  it('gives the outputs of model.predict (MLP with dropout and a softmax output)', async () => {
    const model = tinyMlp();
    const path = await saveModel(model, 64); // several shards
    const spec = createModel('tfjs-layers', { path, inputShape: [6, 6, 1], numClasses: 3 });
    expect(spec.kind).toBe('tfjs-layers');
    expect(spec.layers).toEqual([
      { kind: 'flatten' },
      { kind: 'dense', inputs: 36, units: 8, relu: true },
      { kind: 'dense', inputs: 8, units: 3, relu: false },
    ]);
    const params = fixedInitialParameters('tfjs-layers', { path }, spec)!;
    expect(params).toHaveLength(spec.paramCount);
    // The flat layout is paramLayout's: kernel then bias per layer, as tfjs's weights in order.
    const weights = model.getWeights().map((w) => w.dataSync());
    for (const [k, e] of paramLayout(spec).entries())
      expect(Array.from(params.subarray(e.offset, e.offset + e.size))).toEqual(Array.from(weights[k]!));
    const data = gaussianMixture(20, [6, 6, 1], 3, 4);
    const ours = fedscoreOutput(spec, params, data.x, 20, true);
    expect(maxAbsDiff(ours, predict(model, data.x, [20, 6, 6, 1]))).toBeLessThan(1e-5);
    // and tfjs reads the files back through fedscore's load handler
    const reloaded = await tf.loadLayersModel(layersModelLoadHandler(path));
    expect(maxAbsDiff(ours, predict(reloaded, data.x, [20, 6, 6, 1]))).toBeLessThan(1e-5);
  });

  it('gives the outputs of model.predict (CNN: same and valid convolutions, max and average pooling)', async () => {
    const model = tinyCnn();
    const path = await saveModel(model);
    const m = loadLayersModel(path, { inputShape: [8, 8, 2], numClasses: 3 });
    expect(m.layers.map((l) => l.kind)).toEqual(['conv', 'pool', 'conv', 'pool', 'flatten', 'dense']);
    expect(m.layers[0]).toEqual({
      kind: 'conv',
      kernel: 3,
      inChannels: 2,
      outChannels: 4,
      pad: 1,
      relu: true,
    });
    const spec = createModel('tfjs-layers', { path, inputShape: [8, 8, 2], numClasses: 3 });
    const data = gaussianMixture(10, [8, 8, 2], 3, 5);
    const ours = fedscoreOutput(spec, m.params, data.x, 10, false);
    expect(maxAbsDiff(ours, predict(model, data.x, [10, 8, 8, 2]))).toBeLessThan(1e-5);
  });

  it('reads a functional chain on flat inputs and a Keras-converter model.json (model_config, plain weight names)', async () => {
    const input = tf.input({ shape: [12] });
    const h = tf.layers.dense({ units: 6, activation: 'relu' }).apply(input) as tf.SymbolicTensor;
    const out = tf.layers
      .dense({ units: 3 })
      .apply(tf.layers.dropout({ rate: 0.5 }).apply(h)) as tf.SymbolicTensor;
    const model = tf.model({ inputs: input, outputs: out });
    const path = await saveModel(model);
    const data = gaussianMixture(7, [1, 12, 1], 3, 6);
    const spec = createModel('tfjs-layers', { path, inputShape: [1, 12, 1], numClasses: 3 });
    expect(spec.layers.map((l) => l.kind)).toEqual(['dense', 'dense']);
    const params = fixedInitialParameters('tfjs-layers', { path }, spec)!;
    expect(
      maxAbsDiff(fedscoreOutput(spec, params, data.x, 7, false), predict(model, data.x, [7, 12])),
    ).toBeLessThan(1e-5);
    // As tensorflowjs_converter writes it from Keras 2: the model under model_config, an
    // InputLayer, weights named '<layer>/kernel' under a model prefix.
    const keras = editModelJson(path, (json) => {
      const layers = json.modelTopology.config.layers as { name: string; config: { name: string } }[];
      const renamed = new Map(layers.map((l, k) => [l.name, k === 0 ? 'input_1' : `layer_${k}`]));
      const text = JSON.stringify(json.modelTopology).replace(
        /"(input\d+|dense_Dense\d+|dropout_Dropout\d+)"/g,
        (_m, n) => `"${renamed.get(n) ?? n}"`,
      );
      json.modelTopology = {
        keras_version: '2.15.0',
        backend: 'tensorflow',
        model_config: { ...JSON.parse(text), class_name: 'Functional' },
      };
      for (const w of json.weightsManifest[0].weights)
        w.name = w.name.replace(/dense_Dense\d+/, (n: string) => renamed.get(n));
    });
    const viaKeras = loadLayersModel(keras, { inputShape: [1, 12, 1], numClasses: 3 });
    expect(Array.from(viaKeras.params)).toEqual(Array.from(params));
    const reloaded = await tf.loadLayersModel(layersModelLoadHandler(keras));
    expect(
      maxAbsDiff(fedscoreOutput(spec, viaKeras.params, data.x, 7, false), predict(reloaded, data.x, [7, 12])),
    ).toBeLessThan(1e-5);
    // Weight names under a model prefix (`model/layer_1/kernel`) are found too.
    const prefixed = editModelJson(keras, (json) => {
      for (const w of json.weightsManifest[0].weights) w.name = `model/${w.name}`;
    });
    expect(Array.from(loadLayersModel(prefixed).params)).toEqual(Array.from(params));
  });

  it('evaluates coalitions combined (first dense layer per silo) as it evaluates them one by one', async () => {
    const path = await saveModel(tinyMlp(3));
    const spec = createModel('tfjs-layers', { path, inputShape: [6, 6, 1], numClasses: 3 });
    const m0 = fixedInitialParameters('tfjs-layers', { path }, spec)!;
    const data = gaussianMixture(60, [6, 6, 1], 3, 7);
    const updates = [0, 1, 2].map((i) => randomVector(spec.paramCount, 20 + i, 0.2));
    const setup = { spec, m0, updates, data, weights: [3, 1, 2] };
    const combined = createCoalitionEvaluator(setup, { mode: 'combined' });
    const naive = createCoalitionEvaluator(setup, { mode: 'naive' });
    try {
      const all = Array.from({ length: 8 }, (_, mask) => maskToCoalition(3, mask));
      const a = await combined.values(all);
      const b = await naive.values(all);
      // Equal but on near-ties, which rounding alone decides (issue 26).
      expectNaiveAccuracies(
        setup,
        all.map((_, m) => m),
        a,
        b,
      );
      expect(maxAbsDiff(a.negLoss, b.negLoss)).toBeLessThan(1e-5);
    } finally {
      combined.dispose();
      naive.dispose();
    }
  });

  it('trains from the file weights with the configured optimizer', async () => {
    const path = await saveModel(tinyCnn(2));
    const spec = createModel('tfjs-layers', { path, inputShape: [8, 8, 2], numClasses: 3 });
    const m0 = fixedInitialParameters('tfjs-layers', { path }, spec)!;
    const data = gaussianMixture(48, [8, 8, 2], 3, 8);
    const r = await trainLocal(spec, m0, data, { seed: 1, epochs: 3, batchSize: 8, learningRate: 1e-2 });
    expect(r.epochLosses[2]!).toBeLessThan(r.epochLosses[0]!);
  });
});

describe('digests', () => {
  it('are the topology and the flat weights, and ignore key order and spacing in model.json', async () => {
    const path = await saveModel(tinyMlp(5));
    const d = layersModelDigests(path);
    expect(d.weights).toBe(paramsDigest(loadLayersModel(path).params));
    expect(d.topology).toMatch(/^[0-9a-f]{64}$/);
    const json = JSON.parse(readFileSync(path, 'utf8'));
    const reordered = Object.fromEntries(Object.entries(json).reverse());
    const other = join(dirname(path), 'reordered.json');
    writeFileSync(other, JSON.stringify(reordered, null, 3));
    expect(layersModelDigests(other)).toEqual(d);
    expect(canonicalJson({ b: [1, { d: 2, c: 'x' }], a: null })).toBe('{"a":null,"b":[1,{"c":"x","d":2}]}');
    const deeper = tf.sequential();
    deeper.add(tf.layers.flatten({ inputShape: [6, 6, 1] }));
    deeper.add(tf.layers.dense({ units: 9, activation: 'relu' }));
    deeper.add(tf.layers.dense({ units: 3 }));
    const wider = await saveModel(deeper);
    expect(layersModelDigests(wider).topology).not.toBe(d.topology);
    const retrained = await saveModel(tinyMlp(6));
    expect(layersModelDigests(retrained).weights).not.toBe(d.weights);
  });

  it('are checked against the consortium file when the configuration carries them', async () => {
    const path = await saveModel(tinyMlp());
    const d = layersModelDigests(path);
    const shape = { inputShape: [6, 6, 1] as const, numClasses: 3 };
    expect(
      createModel('tfjs-layers', { path, topologyDigest: d.topology, weightsDigest: d.weights, ...shape })
        .kind,
    ).toBe('tfjs-layers');
    const wrong = '0'.repeat(64);
    expect(() => createModel('tfjs-layers', { path, topologyDigest: wrong, ...shape })).toThrow(
      `model: the topology digest of ${path} is ${d.topology}, the consortium's is ${wrong} (not the agreed model)`,
    );
    const spec = createModel('tfjs-layers', { path, ...shape });
    expect(() => fixedInitialParameters('tfjs-layers', { path, weightsDigest: wrong }, spec)).toThrow(
      `model: the weights digest of ${path} is ${d.weights}`,
    );
    expect(() => createModel('tfjs-layers', { path, weightsDigest: 'abc', ...shape })).toThrow(
      'weightsDigest: must match pattern',
    );
  });
});

describe('unsupported models are refused with the layer named', () => {
  const shape = { inputShape: [6, 6, 1] as const, numClasses: 3 };
  const refuse = async (build: (m: tf.Sequential) => void, message: string | RegExp, data = shape) => {
    const m = tf.sequential();
    build(m);
    const path = await saveModel(m);
    expect(() => createModel('tfjs-layers', { path, ...data })).toThrow(message);
  };

  it('names unsupported layers, activations, strides, padding and bias settings', async () => {
    await refuse((m) => {
      m.add(tf.layers.flatten({ inputShape: [6, 6, 1] }));
      m.add(tf.layers.batchNormalization({ name: 'batch_normalization_1' }));
      m.add(tf.layers.dense({ units: 3 }));
    }, "model: layer 'batch_normalization_1' (BatchNormalization) is not supported (supported: InputLayer, Dense, Conv2D");
    await refuse((m) => {
      m.add(tf.layers.flatten({ inputShape: [6, 6, 1] }));
      m.add(tf.layers.dense({ units: 4, activation: 'tanh', name: 'd1' }));
      m.add(tf.layers.dense({ units: 3 }));
    }, `model: layer 'd1' (Dense) has activation "tanh", which is not supported (relu or linear; softmax on the output only)`);
    await refuse((m) => {
      m.add(tf.layers.flatten({ inputShape: [6, 6, 1] }));
      m.add(tf.layers.dense({ units: 4, activation: 'softmax', name: 'mid' }));
      m.add(tf.layers.dense({ units: 3 }));
    }, `model: layer 'mid' (Dense) has activation "softmax"`);
    await refuse((m) => {
      m.add(tf.layers.conv2d({ inputShape: [6, 6, 1], filters: 2, kernelSize: 3, strides: 2, name: 'c1' }));
      m.add(tf.layers.flatten());
      m.add(tf.layers.dense({ units: 3 }));
    }, `model: layer 'c1' (Conv2D): strides [2,2] are not supported (1 only)`);
    await refuse((m) => {
      m.add(
        tf.layers.conv2d({ inputShape: [6, 6, 1], filters: 2, kernelSize: 2, padding: 'same', name: 'c2' }),
      );
      m.add(tf.layers.flatten());
      m.add(tf.layers.dense({ units: 3 }));
    }, `model: layer 'c2' (Conv2D): padding 'same' with an even kernel (2) pads unevenly`);
    await refuse((m) => {
      m.add(tf.layers.flatten({ inputShape: [6, 6, 1] }));
      m.add(tf.layers.dense({ units: 3, useBias: false, name: 'nobias' }));
    }, `model: layer 'nobias' (Dense): use_bias false is not supported`);
    await refuse((m) => {
      m.add(tf.layers.maxPooling2d({ inputShape: [6, 6, 1], poolSize: 2, strides: 1, name: 'p' }));
      m.add(tf.layers.flatten());
      m.add(tf.layers.dense({ units: 3 }));
    }, `model: layer 'p' (MaxPooling2D): strides [1,1] differ from pool_size 2 (not supported)`);
    await refuse((m) => {
      m.add(tf.layers.dense({ inputShape: [6, 6, 1], units: 3, name: 'd3' }));
    }, `model: layer 'd3' (Dense) on an input of shape [6, 6, 1] (Keras applies it to the last axis); add a Flatten layer before it`);
  });

  it('names shapes that do not fit the data', async () => {
    const path = await saveModel(tinyMlp());
    expect(() => createModel('tfjs-layers', { path, inputShape: [28, 28, 1], numClasses: 3 })).toThrow(
      'model: the model takes inputs of shape [6, 6, 1], the data has shape 28×28×1 (784 features)',
    );
    expect(() => createModel('tfjs-layers', { path, inputShape: [6, 6, 1], numClasses: 10 })).toThrow(
      'model: the model outputs 3 class scores, the data has 10 classes',
    );
    const wrongWeight = editModelJson(await saveModel(tinyMlp()), (json) => {
      json.weightsManifest[0].weights[0].shape = [8, 36];
    });
    expect(() => loadLayersModel(wrongWeight)).toThrow(
      /model: .*: weight 'dense_Dense\d+\/kernel' has shape \[8, 36\], layer 'dense_Dense\d+' \(Dense\) needs \[36, 8\]/,
    );
    const missing = editModelJson(await saveModel(tinyMlp()), (json) => {
      json.weightsManifest[0].weights[1].name = 'something/else';
    });
    expect(() => loadLayersModel(missing)).toThrow(
      /has no weight 'dense_Dense\d+\/bias' in the weights manifest/,
    );
  });
});
