/**
 * The trainer-process learner with real PyTorch (fedscore_client.trainer) against the TF.js
 * learner: the same MLP in the same flat layout, the same initial parameters, one full-batch SGD
 * step — the two updates agree within float32 rounding, and so do their evaluations. Needs python3
 * with torch and numpy (Debian: python3-torch python3-numpy).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Dataset } from '../../../src/data/dataset.js';
import { createRandom } from '../../../src/data/seeded-draws.js';
import { createTfLearner } from '../../../src/fl/learner/tf-learner.js';
import { createTrainerLearner } from '../../../src/fl/learner/trainer-learner.js';

const PY = process.env.FEDSCORE_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const MLP = fileURLToPath(new URL('./_torch_mlp.py', import.meta.url));
const torch = spawnSync(PY, ['-c', 'import torch, numpy'], { encoding: 'utf8' });

const F = 8;
const H = 5;
const C = 3;
const N = 32;
const random = createRandom(35);
const rand = () => random.uniform();
const data: Dataset = {
  x: Float32Array.from({ length: N * F }, () => rand()),
  y: Int32Array.from({ length: N }, (_, i) => i % C),
  n: N,
  shape: [1, F, 1],
  numClasses: C,
  name: 'mlp-check',
  source: 'test',
};

describe.runIf(torch.status === 0)('a TF.js and a PyTorch silo of the same MLP', () => {
  it('give the same update from the same initial parameters (full-batch SGD) and the same utilities', async () => {
    const tf = await createTfLearner({
      model: { kind: 'mlp', hidden: [H] },
      inputShape: [1, F, 1],
      numClasses: C,
      training: { optimizer: 'sgd', learningRate: 0.1, weightDecay: 0, epochs: 1, batchSize: N },
      backend: 'cpu',
      workers: 1,
      log: () => {},
    });
    const m0 = tf.initialParameters(7);
    const pt = await createTrainerLearner({
      command: `${PY} ${MLP} ${F} ${H} ${C}`,
      inputShape: [1, F, 1],
      numClasses: C,
      initialParameters: m0,
      log: () => {},
    });
    try {
      expect(pt.parameterCount).toBe(tf.parameterCount);
      expect(pt.layout.layout.map((t) => t.name)).toEqual(['w1', 'b1', 'w2', 'b2']);
      const [a] = await tf.trainMany(m0, [{ data, seed: 1 }]);
      const [b] = await pt.trainMany(m0, [{ data, seed: 1 }]);
      let scale = 0;
      let diff = 0;
      for (let i = 0; i < a!.length; i++) {
        scale = Math.max(scale, Math.abs(a![i]!));
        diff = Math.max(diff, Math.abs(a![i]! - b![i]!));
      }
      expect(scale).toBeGreaterThan(1e-3); // the step moved the model
      expect(diff).toBeLessThan(1e-6 + 1e-4 * scale);
      const after = Float32Array.from(m0, (x, i) => x + a![i]!);
      const [u, v] = [await tf.evaluate(after, data), await pt.evaluate(after, data)];
      expect(v.accuracy).toBe(u.accuracy);
      expect(Math.abs(v.loss - u.loss)).toBeLessThan(1e-5);
      expect(Array.from(v.perClass)).toEqual(Array.from(u.perClass));
    } finally {
      await pt.close();
      await tf.close();
    }
  }, 60_000);
});
