/**
 * Issue 35: an experiment whose model is `{ kind: "external", command }` runs local training,
 * evaluation and the full-visibility coalition games (batched `evaluate`) in the trainer. With a
 * PyTorch trainer of fedscore's own `mlp` (test/fl/learner/_torch_mlp.py: the same layout, one
 * full-batch SGD step) and the same initial model, the run gives the TF.js run's utilities, private
 * scores, exact per-round Shapley values and true (retraining) Shapley values within float32
 * rounding. Needs python3 with torch and numpy.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dataShapeOf } from '../../src/fl/consortium-data.js';
import { createLearner } from '../../src/fl/learner/create-learner.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { type ExperimentConfig, parseConfig } from '../../src/records/config.js';
import { runExperiment } from '../../src/sim/experiment.js';

const PY = process.env.FEDSCORE_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const MLP = fileURLToPath(new URL('../fl/learner/_torch_mlp.py', import.meta.url));
const torch = spawnSync(PY, ['-c', 'import torch, numpy'], { encoding: 'utf8' });

const base = {
  name: 'external',
  seed: 3,
  silos: 3,
  rounds: 2,
  data: { dataset: 'synthetic', trainSize: 90, testSize: 60, synthetic: { features: 8, classes: 3 } },
  training: { optimizer: 'sgd', learningRate: 0.1, weightDecay: 0, epochs: 1, batchSize: 1000 },
  scoring: { utility: 'negLoss' },
  comparison: { estimators: { mrsv: {} } },
};
const tfConfig = parseConfig({ ...base, model: { kind: 'mlp', hidden: [5] } });
const ptConfig = parseConfig({ ...base, model: { kind: 'external', command: `${PY} ${MLP} 8 5 3` } });

async function run(cfg: ExperimentConfig, learner: Learner) {
  try {
    return await runExperiment(cfg, { learner, seeds: [3], fedscoreVersion: 'test' });
  } finally {
    await learner.close();
  }
}

describe.runIf(torch.status === 0)('an experiment with an external (PyTorch) model', () => {
  it("gives the TF.js model's utilities, private scores and Shapley references", async () => {
    const tfLearner = await createLearner({
      ...dataShapeOf(tfConfig),
      model: tfConfig.model,
      training: tfConfig.training ?? {},
      backend: 'cpu',
      workers: 1,
      log: () => {},
    });
    const tf = await run(tfConfig, tfLearner);
    // The PyTorch learner, starting from the same M0 the TF.js run used (its initialParameters).
    const inner = await createLearner({
      ...dataShapeOf(ptConfig),
      model: ptConfig.model,
      training: {},
      log: () => {},
    });
    const tfInit = await createLearner({
      ...dataShapeOf(tfConfig),
      model: tfConfig.model,
      training: {},
      backend: 'cpu',
      workers: 1,
      log: () => {},
    });
    const pt = await run(ptConfig, {
      ...inner,
      initialParameters: (seed) => tfInit.initialParameters(seed),
      trainMany: (p, j) => inner.trainMany(p, j),
      evaluate: (p, d) => inner.evaluate(p, d),
      coalitionGames: (c) => inner.coalitionGames(c),
      close: async () => {
        await inner.close();
        await tfInit.close();
      },
    });
    expect(pt.backend).toBe('trainer');
    const [a, b] = [tf.runs[0]!, pt.runs[0]!];
    expect(b.rounds).toHaveLength(2);
    // The utilities agree to float32 rounding (the two runs differ in the order of float32 sums).
    const near = (x: number | null, y: number | null, tol: number) =>
      x === null ? y === null : y !== null && Math.abs(x - y) <= tol;
    for (const [r, ra] of a.rounds.entries()) {
      const rb = b.rounds[r]!;
      const u = [ra.utilities.full, ra.utilities.empty, ...ra.utilities.withOnly, ...ra.utilities.without];
      const v = [rb.utilities.full, rb.utilities.empty, ...rb.utilities.withOnly, ...rb.utilities.without];
      for (const [i, x] of u.entries())
        expect(near(x, v[i]!, 1e-5), `round ${r + 1} utility ${i}: ${x} vs ${v[i]}`).toBe(true);
      // Scores that are differences of utilities (LOO, IOI, the Shapley values) agree to twice that;
      // the normalized ones (FP, EE: a silo's difference over the sum of all, which amplifies the
      // utilities' rounding by the sum's smallness) to 1% of the score's scale.
      for (const method of Object.keys(ra.scores)) {
        const xs = ra.scores[method]!;
        const scale = Math.max(...xs.map((x) => Math.abs(x ?? 0)));
        const tol = ['loo', 'ioi', 'mrsv', 'trueSv'].includes(method) ? 2e-5 : 1e-2 * scale;
        for (const [i, x] of xs.entries())
          expect(
            near(x, rb.scores[method]![i]!, tol),
            `round ${r + 1} ${method}[${i}]: ${x} vs ${rb.scores[method]![i]}`,
          ).toBe(true);
      }
    }
    expect(Object.keys(b.cumulative)).toEqual(expect.arrayContaining(['loo', 'ee', 'mrsv', 'trueSv']));
  }, 180_000);
});
