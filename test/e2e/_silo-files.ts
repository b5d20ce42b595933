/**
 * A silo's data written in one of the formats `fedscore client --data` reads (IDX pair, x.npy +
 * y.npy, CSV, image folder), and a small TF.js Layers MLP saved in the Layers format — the files
 * the consortium e2e test and the client's bad-file tests give the silos.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import type { LocalFormat } from '../../src/data/local-data.js';
import { writeLocalData } from '../../src/data/write-local-data.js';
import { layersModelSaveHandler } from '../../src/ml/layers-files.js';

export type SiloFormat = LocalFormat;

/** Writes `ds` under `dir` in `format` (src/data/write-local-data.ts); @returns the path to pass to `--data`. */
export const writeSiloData = writeLocalData;

/** Input shape → Flatten → Dense(hidden, relu) → Dense(classes, softmax), saved under `dir`; @returns model.json's path. */
export async function writeLayersMlp(
  dir: string,
  o: { inputShape: [number, number, number]; hidden: number; classes: number; seed: number },
): Promise<string> {
  await tf.setBackend('cpu');
  const m = tf.sequential();
  m.add(tf.layers.flatten({ inputShape: o.inputShape }));
  m.add(
    tf.layers.dense({
      units: o.hidden,
      activation: 'relu',
      kernelInitializer: tf.initializers.glorotUniform({ seed: o.seed }),
    }),
  );
  m.add(
    tf.layers.dense({
      units: o.classes,
      activation: 'softmax',
      kernelInitializer: tf.initializers.glorotUniform({ seed: o.seed + 1 }),
    }),
  );
  mkdirSync(dir, { recursive: true });
  await m.save(layersModelSaveHandler(dir));
  m.dispose();
  return join(dir, 'model.json');
}
