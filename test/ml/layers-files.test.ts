import { readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/ml/backend.js';
import {
  layersModelLoadHandler,
  layersModelSaveHandler,
  readLayersModelFiles,
} from '../../src/ml/layers-files.js';
import { editModelJson, modelDir, saveModel, tinyMlp } from './_layers.js';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

describe('layersModelSaveHandler / readLayersModelFiles', () => {
  it('writes model.json and converter-named shards that read back weight by weight', async () => {
    const model = tinyMlp();
    const path = await saveModel(model, 100);
    const dir = dirname(path);
    const shards = readdirSync(dir).filter((f) => f.endsWith('.bin'));
    // 36·8 + 8 + 8·3 + 3 = 323 floats = 1292 bytes in shards of 100 bytes
    expect(shards).toHaveLength(13);
    expect(shards).toContain('group1-shard13of13.bin');
    const json = JSON.parse(readFileSync(path, 'utf8'));
    expect(json.format).toBe('layers-model');
    expect(json.weightsManifest[0].paths[0]).toBe('group1-shard1of13.bin');
    const m = readLayersModelFiles(path);
    expect(m.weightSpecs.map((w) => w.shape)).toEqual([[36, 8], [8], [8, 3], [3]]);
    const weights = model.getWeights();
    m.weightSpecs.forEach((w, k) => {
      expect(Array.from(m.weights.get(w.name)!)).toEqual(Array.from(weights[k]!.dataSync()));
    });
    expect(m.weightData.byteLength).toBe(1292);
  });

  it('round-trips through tf.loadLayersModel with the load handler', async () => {
    const model = tinyMlp(4);
    const dir = modelDir();
    await model.save(layersModelSaveHandler(dir));
    const back = await tf.loadLayersModel(layersModelLoadHandler(join(dir, 'model.json')));
    const x = tf.randomUniform([3, 6, 6, 1], 0, 1, 'float32', 1);
    expect(Array.from((back.predict(x) as tf.Tensor).dataSync())).toEqual(
      Array.from((model.predict(x) as tf.Tensor).dataSync()),
    );
  });
});

describe('bad model files give one clear error each', () => {
  it('a missing shard, a truncated or overlong weights file', async () => {
    const path = await saveModel(tinyMlp(), 1000);
    const dir = dirname(path);
    truncateSync(join(dir, 'group1-shard2of2.bin'), 100);
    expect(() => readLayersModelFiles(path)).toThrow(
      `model: the weight files ${join(dir, 'group1-shard1of2.bin')}, ${join(dir, 'group1-shard2of2.bin')} hold 1100 bytes, ${path} describes 1292 (truncated)`,
    );
    writeFileSync(join(dir, 'group1-shard2of2.bin'), new Uint8Array(300));
    expect(() => readLayersModelFiles(path)).toThrow(`hold 1300 bytes, ${path} describes 1292 (too long)`);
    rmSync(join(dir, 'group1-shard2of2.bin'));
    expect(() => readLayersModelFiles(path)).toThrow(
      `model: weight file ${join(dir, 'group1-shard2of2.bin')} (listed in ${path}) cannot be read (ENOENT)`,
    );
  });

  it('a model.json that is missing, not JSON, a graph model, or without manifest', async () => {
    const dir = modelDir();
    expect(() => readLayersModelFiles(join(dir, 'model.json'))).toThrow(
      `model: model file ${join(dir, 'model.json')} cannot be read (ENOENT)`,
    );
    writeFileSync(join(dir, 'model.json'), '{"modelTopology": ');
    expect(() => readLayersModelFiles(join(dir, 'model.json'))).toThrow(
      `model: ${join(dir, 'model.json')}: not JSON`,
    );
    writeFileSync(
      join(dir, 'model.json'),
      JSON.stringify({ format: 'graph-model', modelTopology: { node: [] } }),
    );
    expect(() => readLayersModelFiles(join(dir, 'model.json'))).toThrow(
      'is a TF.js graph model; fedscore needs a Layers model',
    );
    writeFileSync(join(dir, 'model.json'), JSON.stringify({ modelTopology: { class_name: 'Sequential' } }));
    expect(() => readLayersModelFiles(join(dir, 'model.json'))).toThrow('no weightsManifest');
    writeFileSync(join(dir, 'model.json'), JSON.stringify({ weightsManifest: [] }));
    expect(() => readLayersModelFiles(join(dir, 'model.json'))).toThrow('no modelTopology');
  });

  it('quantized or non-float32 weights, shard paths outside the directory, repeated names', async () => {
    const fresh = () => saveModel(tinyMlp());
    const quantized = editModelJson(await fresh(), (j) => {
      j.weightsManifest[0].weights[0].quantization = { dtype: 'uint8', scale: 0.1, min: 0 };
    });
    expect(() => readLayersModelFiles(quantized)).toThrow(
      'is quantized; export the model without quantization',
    );
    const ints = editModelJson(await fresh(), (j) => {
      j.weightsManifest[0].weights[0].dtype = 'int32';
    });
    expect(() => readLayersModelFiles(ints)).toThrow('is int32; only float32 weights are read');
    const escaping = editModelJson(await fresh(), (j) => {
      j.weightsManifest[0].paths = ['../../etc/passwd'];
    });
    expect(() => readLayersModelFiles(escaping)).toThrow(
      "weight file '../../etc/passwd' is outside the model's directory (only relative paths are read)",
    );
    const url = editModelJson(await fresh(), (j) => {
      j.weightsManifest[0].paths = ['https://example.invalid/w.bin'];
    });
    expect(() => readLayersModelFiles(url)).toThrow('is outside the model');
    const twice = editModelJson(await fresh(), (j) => {
      j.weightsManifest[0].weights[3].name = j.weightsManifest[0].weights[1].name;
    });
    expect(() => readLayersModelFiles(twice)).toThrow(/weight '.*' appears twice in the manifest/);
  });
});
