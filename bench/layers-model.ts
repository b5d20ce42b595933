/**
 * `npx tsx bench/layers-model.ts [--quick] [--json]` (or `npm run bench -- layers-model`):
 * training throughput of a user-supplied TF.js Layers MLP (784-200-10, built with tfjs, saved
 * to model.json + weight shards and loaded as model kind `tfjs-layers`) against the built-in `mlp`
 * of the same shape, as a ratio (target ≥ 0.8×). Same data, optimizer (Adam, lr 1e-3, wd 1e-3,
 * batch 64) and backend; the two are timed in alternation, several repeats, medians compared,
 * since these machines are shared and noisy. Also says whether the combined coalition
 * evaluation (first dense layer per silo) applies to the loaded model. `--json` prints the
 * result as one JSON line after the table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as tf from '@tensorflow/tfjs';
import { gaussianMixture } from '../src/data/synthetic.js';
import { describeBackend, initBackend } from '../src/ml/backend.js';
import { createCoalitionEvaluator } from '../src/ml/coalition.js';
import { layersModelSaveHandler } from '../src/ml/layers-files.js';
import { createModel, fixedInitialParameters, LAYERS_MODEL } from '../src/ml/model-registry.js';
import { initParams, mlp } from '../src/ml/models.js';
import { trainLocal } from '../src/ml/train.js';

/** What the bench measured (samples per second of one epoch of local training). */
export interface LayersModelBench {
  backend: string;
  kernels: string;
  samples: number;
  repeats: number;
  builtin: { spec: string; samplesPerSecond: number[]; median: number };
  layers: { spec: string; samplesPerSecond: number[]; median: number };
  /** layers median / built-in median. */
  ratio: number;
  /** Median of the per-repeat ratios (each pair timed back to back). */
  pairedRatio: number;
  coalitionMode: string;
}

const median = (v: readonly number[]) => {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Saves a tfjs Sequential 28×28×1 → Flatten → Dense(200, relu) → Dense(10, softmax); returns model.json. */
async function saveUserMlp(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'fedscore-bench-layers-'));
  const model = tf.sequential();
  model.add(tf.layers.flatten({ inputShape: [28, 28, 1] }));
  model.add(tf.layers.dense({ units: 200, activation: 'relu' }));
  model.add(tf.layers.dense({ units: 10, activation: 'softmax' }));
  await model.save(layersModelSaveHandler(dir));
  model.dispose();
  return join(dir, 'model.json');
}

export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<LayersModelBench> {
  const quick = argv.includes('--quick');
  const info = await initBackend();
  const samples = quick ? 2048 : 8192;
  const repeats = quick ? 3 : 7;
  console.log(
    `\n## layers-model — user-supplied TF.js Layers MLP vs built-in mlp (${describeBackend(info)})\n`,
  );
  const path = await saveUserMlp();
  try {
    const shape = { inputShape: [28, 28, 1] as const, numClasses: 10 };
    const builtin = mlp(shape);
    const user = createModel(LAYERS_MODEL.kind, { path, ...shape });
    const userM0 = fixedInitialParameters(LAYERS_MODEL.kind, { path }, user)!;
    const builtinM0 = initParams(builtin, 1);
    const data = gaussianMixture({ n: samples, numClasses: 10, shape: [28, 28, 1], seed: 3 });
    const options = { seed: 1, epochs: 1, batchSize: 64, learningRate: 1e-3, weightDecay: 1e-3 } as const;
    const rate = async (spec: typeof builtin, m0: Float32Array) => {
      const t = performance.now();
      await trainLocal(spec, m0, data, options);
      return samples / ((performance.now() - t) / 1000);
    };
    // Warm-up: first calls compile kernels and grow the wasm heap.
    await rate(builtin, builtinM0);
    await rate(user, userM0);
    const b: number[] = [];
    const u: number[] = [];
    for (let r = 0; r < repeats; r++) {
      // Alternate which goes first, so drift on a shared machine hits both alike.
      if (r % 2 === 0) {
        b.push(await rate(builtin, builtinM0));
        u.push(await rate(user, userM0));
      } else {
        u.push(await rate(user, userM0));
        b.push(await rate(builtin, builtinM0));
      }
    }
    const test = gaussianMixture({ n: 200, numClasses: 10, shape: [28, 28, 1], seed: 4 });
    const evaluator = createCoalitionEvaluator({
      spec: user,
      m0: userM0,
      updates: [userM0, userM0],
      data: test,
    });
    const coalitionMode = evaluator.mode;
    evaluator.dispose();
    const result: LayersModelBench = {
      backend: info.name,
      kernels: info.kernels,
      samples,
      repeats,
      builtin: { spec: builtin.name, samplesPerSecond: b, median: median(b) },
      layers: { spec: user.name, samplesPerSecond: u, median: median(u) },
      ratio: median(u) / median(b),
      pairedRatio: median(u.map((v, i) => v / b[i]!)),
      coalitionMode,
    };
    const f = (v: number) => v.toLocaleString('en-US', { maximumFractionDigits: 0 });
    console.log(
      `${samples} samples per run, Adam lr 1e-3 wd 1e-3, batch 64, ${repeats} interleaved repeats\n`,
    );
    console.log('| model | samples/s (median) | min | max | vs built-in |');
    console.log('|---|---:|---:|---:|---:|');
    for (const [label, row] of [
      [`built-in \`${builtin.name}\``, result.builtin],
      [`Layers model.json (\`${user.name}\`)`, result.layers],
    ] as const)
      console.log(
        `| ${label} | ${f(row.median)} | ${f(Math.min(...row.samplesPerSecond))} | ${f(Math.max(...row.samplesPerSecond))} | ${(row.median / result.builtin.median).toFixed(2)}× |`,
      );
    console.log(
      `\nratio ${result.ratio.toFixed(2)}× (median of paired ratios ${result.pairedRatio.toFixed(2)}×; target ≥ 0.8×) — ${result.ratio >= 0.8 ? 'met' : 'NOT met'}; coalition evaluation of the loaded model: ${coalitionMode}; kernels: ${info.kernels}`,
    );
    if (argv.includes('--json')) console.log(JSON.stringify(result));
    return result;
  } finally {
    rmSync(dirname(path), { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
