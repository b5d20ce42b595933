/** Small TF.js Layers models saved to temporary directories, for the layers-model tests. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { layersModelSaveHandler } from '../../src/ml/layers-files.js';

export function modelDir(prefix = 'fedscore-layers-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Rewrites the model.json at `path` with `edit` (its weight files stay beside it); returns `path`. */
// biome-ignore lint/suspicious/noExplicitAny: the tests edit arbitrary parts of the JSON
export function editModelJson(path: string, edit: (json: Record<string, any>) => void): string {
  const json = JSON.parse(readFileSync(path, 'utf8'));
  edit(json);
  writeFileSync(path, JSON.stringify(json));
  return path;
}

/** Saves `model` with fedscore's save handler; returns the path of model.json. */
export async function saveModel(model: tf.LayersModel, shardBytes?: number): Promise<string> {
  const dir = modelDir();
  await model.save(layersModelSaveHandler(dir, shardBytes === undefined ? {} : { shardBytes }));
  return join(dir, 'model.json');
}

/** 6×6×1 → Flatten → Dense(8, relu) → Dropout → Dense(3, softmax). */
export function tinyMlp(seed = 1): tf.Sequential {
  const m = tf.sequential();
  m.add(tf.layers.flatten({ inputShape: [6, 6, 1] }));
  m.add(
    tf.layers.dense({
      units: 8,
      activation: 'relu',
      kernelInitializer: tf.initializers.glorotUniform({ seed }),
    }),
  );
  m.add(tf.layers.dropout({ rate: 0.3 }));
  m.add(
    tf.layers.dense({
      units: 3,
      activation: 'softmax',
      kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 1 }),
      biasInitializer: tf.initializers.randomUniform({ minval: -0.5, maxval: 0.5, seed: seed + 2 }),
    }),
  );
  return m;
}

/**
 * 8×8×2 → Conv2D(4, 3, same, linear) → Activation(relu) → MaxPooling2D(2) → Conv2D(5, 3, valid,
 * relu) → AveragePooling2D(2) → Flatten → Dense(3, linear).
 */
export function tinyCnn(seed = 1): tf.Sequential {
  const m = tf.sequential();
  const bias = (s: number) => tf.initializers.randomUniform({ minval: -0.2, maxval: 0.2, seed: s });
  m.add(
    tf.layers.conv2d({
      inputShape: [8, 8, 2],
      filters: 4,
      kernelSize: 3,
      padding: 'same',
      kernelInitializer: tf.initializers.glorotUniform({ seed }),
      biasInitializer: bias(seed + 1),
    }),
  );
  m.add(tf.layers.activation({ activation: 'relu' }));
  m.add(tf.layers.maxPooling2d({ poolSize: 2 }));
  m.add(
    tf.layers.conv2d({
      filters: 5,
      kernelSize: 3,
      activation: 'relu',
      kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 2 }),
      biasInitializer: bias(seed + 3),
    }),
  );
  m.add(tf.layers.averagePooling2d({ poolSize: 2 }));
  m.add(tf.layers.flatten());
  m.add(tf.layers.dense({ units: 3, kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 4 }) }));
  return m;
}
