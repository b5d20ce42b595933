/**
 * The webgpu backend against the wasm (CPU) backend on small shapes (docs/performance.md,
 * "GPU: WebGPU"). In CI the adapter is Mesa's lavapipe (software Vulkan, installed by .ci/run),
 * so the shapes are tiny: lavapipe is a correctness backend, not a fast one.
 *
 * Skipped, with the reason printed, only when no WebGPU adapter can be created; with CI=true a
 * missing adapter fails instead.
 *
 * Tolerances, and why:
 *  - training (Δ after a few Adam steps): 2e-5 absolute. Both paths take the same steps on the
 *    same batches; they differ in float32 rounding of the products and sums (another order on
 *    the GPU) and in the optimizer, float64 on the CPU path and float32 on the device. Each Adam
 *    step moves a weight by at most ≈ lr = 1e-3, so the bound is 2% of one step; the epoch loss
 *    agrees to 1e-5 relative.
 *  - evaluation: accuracies from arg-max counts are equal unless a test row sits on a near-tie
 *    between two classes (none in these seeded sets: checked exactly); the mean loss agrees to
 *    1e-5 relative (float32 logits summed in another order, the CPU reduction in float64, the
 *    GPU's in float32).
 *  - coalition tables: accuracy exactly; negLoss 1e-5 relative, for the reason above (on the GPU
 *    M_S's later layers are combined in float32, in float64 on the CPU path). Shapley values
 *    are linear in the table, so their bound follows: Σ|weights| = 1 per player.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskToCoalition } from '../../scoring/coalition.js';
import { createRng } from '../../scoring/seeded-rng.js';
import { exactShapley } from '../../scoring/shapley.js';
import { isSoftwareAdapter, loadWebGpu } from '../../src/ml/_webgpu.js';
import { type BackendName, currentBackend, initBackend } from '../../src/ml/backend.js';
import { createCoalitionEvaluator } from '../../src/ml/coalition.js';
import { evaluate, evaluateAsync } from '../../src/ml/evaluate.js';
import { createModel, fixedInitialParameters } from '../../src/ml/model-registry.js';
import { initParams, type ModelSpec } from '../../src/ml/models.js';
import { type TrainOptions, trainLocal } from '../../src/ml/train.js';
import { saveModel, tinyCnn, tinyMlp } from './_layers.js';
import { gaussianMixture, maxAbs, maxAbsDiff, randomVector } from './_synthetic.js';

const gpu = await loadWebGpu();
const inCi = process.env.CI === 'true';
if (!gpu.ok) console.warn(`test/ml/webgpu.test.ts: ${inCi ? 'CI=true, failing' : 'skipped'}: ${gpu.why}`);
const run = gpu.ok || inCi;

/** Runs `f` on `backend`, then returns to webgpu. */
async function on<T>(backend: BackendName, f: () => Promise<T> | T): Promise<T> {
  await initBackend({ backend });
  try {
    return await f();
  } finally {
    await initBackend({ backend: 'webgpu' });
  }
}

describe.runIf(run)('webgpu backend', () => {
  it('has an adapter (required in CI, where .ci/run installs Mesa lavapipe)', () => {
    expect(gpu.ok ? '' : gpu.why).toBe('');
  });

  it('is chosen automatically only on a hardware adapter', async () => {
    // The first initBackend of this file: the automatic choice.
    const auto = await initBackend({ env: {} });
    if (gpu.ok && gpu.adapter.software) {
      expect(auto.name).not.toBe('webgpu');
      expect(auto.skipped[0]).toEqual({
        name: 'webgpu',
        why: expect.stringMatching(/^(software adapter |no GPU device node)/),
      });
    } else if (gpu.ok) expect(auto.name).toBe('webgpu');
    const info = await initBackend({ backend: 'webgpu' });
    expect(info.name).toBe('webgpu');
    expect(info.adapter).toBeDefined();
    expect(typeof info.adapter!.vendor).toBe('string');
    expect(typeof info.adapter!.architecture).toBe('string');
    expect(info.adapter!.software).toBe(gpu.ok && gpu.adapter.software);
  });

  it('classifies software adapters by their strings or the fallback flag', () => {
    const llvm = { vendor: 'mesa', architecture: '', description: 'llvmpipe: Mesa 25.0.7 (LLVM 15.0.6)' };
    expect(isSoftwareAdapter(llvm)).toBe(true);
    expect(isSoftwareAdapter({ vendor: 'google', description: 'SwiftShader Device (Subzero)' })).toBe(true);
    expect(isSoftwareAdapter({ vendor: 'nvidia', architecture: 'hopper', isFallbackAdapter: true })).toBe(
      true,
    );
    expect(
      isSoftwareAdapter({ vendor: 'nvidia', architecture: 'hopper', description: 'NVIDIA H100 80GB HBM3' }),
    ).toBe(false);
  });
});

describe.runIf(run)('webgpu agrees with the CPU path', () => {
  const shape = [6, 6, 1] as const;
  const data = gaussianMixture(96, shape, 4, 7);
  const test = gaussianMixture(64, shape, 4, 8);
  const options: TrainOptions = { seed: 3, epochs: 2, batchSize: 32, weightDecay: 1e-3 };

  beforeAll(async () => {
    await initBackend({ backend: 'webgpu' });
  });
  afterAll(async () => {
    await initBackend({ backend: 'wasm' });
  });

  async function compareTraining(spec: ModelSpec, m0: Float32Array, d = data, o = options) {
    expect(currentBackend()?.name).toBe('webgpu');
    const onGpu = await trainLocal(spec, m0, d, o);
    const onCpu = await on('wasm', () => trainLocal(spec, m0, d, o));
    expect(onGpu.steps).toBe(onCpu.steps);
    expect(onGpu.samples).toBe(onCpu.samples);
    expect(maxAbsDiff(onGpu.delta, onCpu.delta)).toBeLessThan(2e-5);
    for (const [e, loss] of onCpu.epochLosses.entries())
      expect(Math.abs(onGpu.epochLosses[e]! - loss) / loss).toBeLessThan(1e-5);
    // and the training moved the model (a test that cannot pass on an untouched Δ)
    expect(maxAbs(onGpu.delta)).toBeGreaterThan(1e-4);
    return { onGpu, onCpu };
  }

  it('trains the built-in MLP with Adam', async () => {
    const spec = createModel('mlp', { hidden: [16], inputShape: shape, numClasses: 4 });
    await compareTraining(spec, initParams(spec, 1));
  });

  it('trains the MLP with SGD and momentum, and with exactly `steps` steps', async () => {
    const spec = createModel('mlp', { hidden: [12], inputShape: shape, numClasses: 4 });
    const r = await compareTraining(spec, initParams(spec, 2), data, {
      seed: 5,
      steps: 4,
      batchSize: 40,
      optimizer: 'sgd',
      learningRate: 0.05,
      momentum: 0.9,
    });
    expect(r.onGpu.steps).toBe(4);
  });

  it('trains a built-in CNN (LeNet-5, two small batches; cnn003 is left to scripts/gpu-check.sh)', async () => {
    // cnn003's 2.4M parameters take seconds per step on lavapipe; LeNet-5 has the same layer kinds.
    const images = gaussianMixture(8, [28, 28, 1], 10, 9);
    const spec = createModel('lenet5', { inputShape: [28, 28, 1], numClasses: 10 });
    await compareTraining(spec, initParams(spec, 4), images, { seed: 1, steps: 2, batchSize: 4 });
  });

  it('trains a user Layers model (model.json)', async () => {
    const path = await saveModel(tinyMlp(3));
    const spec = createModel('tfjs-layers', { path, inputShape: shape, numClasses: 3 });
    const d = gaussianMixture(64, shape, 3, 11);
    await compareTraining(spec, fixedInitialParameters('tfjs-layers', { path }, spec)!, d);
  });

  it('evaluates the private-score models v(M0 + U_i) and v(M − U_i) as the CPU path does', async () => {
    const spec = createModel('mlp', { hidden: [16], inputShape: shape, numClasses: 4 });
    const m0 = initParams(spec, 6);
    const u = randomVector(spec.paramCount, 12, 0.05);
    const full = randomVector(spec.paramCount, 13, 0.05);
    const models = [m0.map((w, k) => w + u[k]!), m0.map((w, k) => w + full[k]! - u[k]!)];
    for (const p of models) {
      const g = await evaluateAsync(spec, p, test, { batchSize: 25 });
      const c = await on('wasm', () => evaluate(spec, p, test, { batchSize: 25 }));
      expect(g.n).toBe(c.n);
      expect(Array.from(g.confusion)).toEqual(Array.from(c.confusion));
      expect(g.accuracy).toBe(c.accuracy);
      expect(Math.abs(g.loss - c.loss) / c.loss).toBeLessThan(1e-5);
    }
  });

  it('builds the exact Shapley tables of 5 silos in batched dispatches, as the CPU path does', async () => {
    const spec = createModel('mlp', { hidden: [16], inputShape: shape, numClasses: 4 });
    const m0 = initParams(spec, 8);
    const updates = Array.from({ length: 5 }, (_, i) => randomVector(spec.paramCount, 20 + i, 0.08));
    const setup = { spec, m0, updates, weights: [3, 1, 2, 5, 4], data: test };
    const tables = async () => {
      const ev = createCoalitionEvaluator(setup);
      try {
        return {
          mode: ev.mode,
          accuracy: await ev.table('accuracy'),
          negLoss: await ev.table('negLoss'),
          perClass: await ev.table('perClassAccuracy'),
        };
      } finally {
        ev.dispose();
      }
    };
    const g = await tables();
    const c = await on('wasm', tables);
    expect(g.mode).toBe('combined');
    expect(Array.from(g.accuracy)).toEqual(Array.from(c.accuracy));
    expect(Array.from(g.perClass)).toEqual(Array.from(c.perClass));
    for (const [m, v] of c.negLoss.entries())
      expect(Math.abs(g.negLoss[m]! - v) / Math.abs(v)).toBeLessThan(1e-5);
    expect(maxAbsDiff(exactShapley(5, g.accuracy), exactShapley(5, c.accuracy))).toBe(0);
    expect(maxAbsDiff(exactShapley(5, g.negLoss), exactShapley(5, c.negLoss))).toBeLessThan(1e-5 * 2);
    // The table is not constant: the scores separate the silos.
    expect(new Set(g.accuracy).size).toBeGreaterThan(1);
  });

  it('runs a chunk of more invocations than one dispatch dimension holds (the fused shader, as at n = 20 on a GPU)', async () => {
    // 4,096 coalitions × 1,100 rows = 4.5M invocations of 64 per workgroup: over WebGPU's 65,535
    // workgroups per dimension, so tfjs spreads the dispatch over two dimensions.
    const spec = createModel('mlp', { hidden: [3], inputShape: [2, 2, 1], numClasses: 3 });
    const rows = gaussianMixture(1100, [2, 2, 1], 3, 5);
    const n = 12;
    const setup = {
      spec,
      m0: initParams(spec, 1),
      updates: Array.from({ length: n }, (_, i) => randomVector(spec.paramCount, 50 + i, 0.3)),
      data: rows,
    };
    expect((2 ** n * rows.n) / 64).toBeGreaterThan(65_535);
    const tables = async () => {
      const ev = createCoalitionEvaluator(setup, { gpuKernel: 'fused' });
      try {
        return { accuracy: await ev.table('accuracy'), negLoss: await ev.table('negLoss'), gpu: ev.gpu };
      } finally {
        ev.dispose();
      }
    };
    const g = await tables();
    const c = await on('wasm', tables);
    expect(g.gpu).toBe(true);
    expect(Array.from(g.accuracy)).toEqual(Array.from(c.accuracy));
    for (const [m, v] of c.negLoss.entries())
      expect(Math.abs(g.negLoss[m]! - v) / Math.abs(v)).toBeLessThan(1e-5);
    expect(new Set(c.accuracy).size).toBeGreaterThan(50);
  });

  it('evaluates sampled coalitions (several per dispatch) of an MLP and a conv model as the CPU path does', async () => {
    const spec = createModel('mlp', { hidden: [10, 8], inputShape: shape, numClasses: 4 });
    const cnnPath = await saveModel(tinyCnn(2));
    const cnn = createModel('tfjs-layers', { path: cnnPath, inputShape: [8, 8, 2], numClasses: 3 });
    const images = gaussianMixture(16, [8, 8, 2], 3, 14);
    const rng = createRng(4);
    const n = 6;
    const batch = Array.from({ length: 8 }, () => maskToCoalition(n, Math.floor(rng.next() * 2 ** n)));
    for (const [s, d] of [
      [spec, test],
      [cnn, images],
    ] as const) {
      const m0 = initParams(s, 9);
      const updates = Array.from({ length: n }, (_, i) => randomVector(s.paramCount, 40 + i, 0.05));
      const values = async () => {
        const ev = createCoalitionEvaluator({ spec: s, m0, updates, data: d });
        try {
          return await ev.values(batch);
        } finally {
          ev.dispose();
        }
      };
      const g = await values();
      const c = await on('wasm', values);
      expect(Array.from(g.accuracy)).toEqual(Array.from(c.accuracy));
      for (const [b, v] of c.negLoss.entries())
        expect(Math.abs(g.negLoss[b]! - v) / Math.abs(v)).toBeLessThan(1e-5);
    }
  });
});
