/**
 * A silo's data written in one of the formats `fedscore client --data` reads (IDX pair, x.npy +
 * y.npy, CSV, image folder), and a small TF.js Layers MLP saved in the Layers format — the files
 * the consortium e2e test and the client's bad-file tests give the silos.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import sharp from 'sharp';
import type { Dataset } from '../../src/data/dataset.js';
import { encodeNpy } from '../../src/data/npy.js';
import { layersModelSaveHandler } from '../../src/ml/layers-files.js';
import { idxBytes } from '../data/_files.js';

export type SiloFormat = 'idx' | 'npy' | 'csv' | 'image-folder';

const pixels = (ds: Dataset) => Uint8Array.from(ds.x, (v) => Math.round(v * 255));

/** Writes `ds` under `dir` in `format`; @returns the path to pass to `--data`. */
export async function writeSiloData(dir: string, ds: Dataset, format: SiloFormat): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const [h, w, c] = ds.shape;
  switch (format) {
    case 'idx': {
      const dims = c === 1 ? [ds.n, h, w] : [ds.n, h, w, c];
      writeFileSync(join(dir, 'train-images-idx3-ubyte'), idxBytes(0x08, dims, pixels(ds)));
      writeFileSync(join(dir, 'train-labels-idx1-ubyte'), idxBytes(0x08, [ds.n], Uint8Array.from(ds.y)));
      return dir;
    }
    case 'npy':
      writeFileSync(join(dir, 'x.npy'), encodeNpy(Float32Array.from(ds.x), [ds.n, h, w, c]));
      writeFileSync(join(dir, 'y.npy'), encodeNpy(Int32Array.from(ds.y), [ds.n]));
      return dir;
    case 'csv': {
      const f = h * w * c;
      const header = [...Array.from({ length: f }, (_, k) => `f${k}`), 'label'].join(',');
      const rows = Array.from({ length: ds.n }, (_, i) =>
        [...Array.from(ds.x.subarray(i * f, (i + 1) * f), (v) => String(v)), String(ds.y[i])].join(','),
      );
      const path = join(dir, 'silo.csv');
      writeFileSync(path, `${header}\n${rows.join('\n')}\n`);
      return path;
    }
    default: {
      const px = pixels(ds);
      const f = h * w * c;
      for (let i = 0; i < ds.n; i++) {
        const folder = join(dir, String(ds.y[i]));
        mkdirSync(folder, { recursive: true });
        await sharp(Buffer.from(px.subarray(i * f, (i + 1) * f)), {
          raw: { width: w, height: h, channels: c as 1 | 3 },
        })
          .png()
          .toFile(join(folder, `${String(i).padStart(5, '0')}.png`));
      }
      return dir;
    }
  }
}

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
