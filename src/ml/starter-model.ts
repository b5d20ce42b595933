/**
 * The starter model `fedscore init` writes when the user brings none: a small TF.js Layers MLP
 * (Flatten → Dense(16, relu) → Dense(classes, softmax)), saved as Layers files that the
 * `tfjs-layers` model kind loads (model-registry.ts).
 */

import { mkdirSync } from 'node:fs';
import { layersModelSaveHandler } from './layers-files.js';
import * as tf from './tf.js';

/** `fedscore init --model`'s built-in choice. */
export const STARTER_MODEL = 'mlp';

/** Input shape → Flatten → Dense(16, relu) → Dense(classes, softmax), saved under `dir`. */
export async function writeStarterMlp(
  dir: string,
  inputShape: readonly number[],
  classes: number,
  seed: number,
) {
  await tf.setBackend('cpu');
  const m = tf.sequential();
  m.add(tf.layers.flatten({ inputShape: [...inputShape] }));
  m.add(
    tf.layers.dense({
      units: 16,
      activation: 'relu',
      kernelInitializer: tf.initializers.glorotUniform({ seed }),
    }),
  );
  m.add(
    tf.layers.dense({
      units: classes,
      activation: 'softmax',
      kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 1 }),
    }),
  );
  mkdirSync(dir, { recursive: true });
  await m.save(layersModelSaveHandler(dir));
  m.dispose();
}
