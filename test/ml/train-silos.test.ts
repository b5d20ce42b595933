/**
 * `trainSilos` (src/ml/train-silos.ts): the engine's round of silos from one model. Its results
 * are each job's `trainLocal` bits on every backend: on wasm (one after another), on webgpu with
 * the silos batched in groups (`FEDSCORE_GPU_SILOS`), and on webgpu for a path the batched MLP
 * step does not take (`FEDSCORE_GPU_TRAIN=tfjs`: one after another). The webgpu cases are
 * skipped, with the reason printed, when no adapter can be created (failing with CI=true).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_GPU_SILOS, gpuSilosPerCall } from '../../src/ml/_gpu_mlp_silos.js';
import { loadWebGpu } from '../../src/ml/_webgpu.js';
import { type BackendName, initBackend } from '../../src/ml/backend.js';
import { createModel } from '../../src/ml/model-registry.js';
import { initParams } from '../../src/ml/models.js';
import { trainLocal } from '../../src/ml/train.js';
import { type SiloJob, trainSilos } from '../../src/ml/train-silos.js';
import { gaussianMixture, sameBits } from './_synthetic.js';

const gpu = await loadWebGpu();
const inCi = process.env.CI === 'true';
if (!gpu.ok)
  console.warn(
    `test/ml/train-silos.test.ts: ${inCi ? 'CI=true, failing' : 'skipped'}: webgpu cases: ${gpu.why}`,
  );

const shape = [6, 6, 1] as const;
// test/ml/_gpu_mlp.test.ts's model and options: the same pipelines (each takes seconds to compile on lavapipe).
const spec = createModel('mlp', { hidden: [16], inputShape: shape, numClasses: 5 });
const m0 = initParams(spec, 2);
// Five silos of unequal sizes (batch 32: 1 to 4 steps per pass, short last batches).
const jobs: SiloJob[] = [100, 41, 64, 9, 70].map((n, k) => ({
  data: gaussianMixture(n, shape, 5, 40 + k),
  options: { seed: k, epochs: 2, batchSize: 32, learningRate: 0.01, weightDecay: 1e-3 },
}));

async function expectAlone(backend: BackendName) {
  await initBackend({ backend });
  const together = await trainSilos(spec, m0, jobs);
  expect(together).toHaveLength(jobs.length);
  for (const [k, j] of jobs.entries()) {
    const alone = await trainLocal(spec, m0, j.data, j.options);
    expect(sameBits(together[k]!.delta, alone.delta)).toBe(true);
    expect(Array.from(together[k]!.epochLosses)).toEqual(Array.from(alone.epochLosses));
    expect(together[k]!.steps).toBe(alone.steps);
  }
}

afterEach(async () => {
  delete process.env.FEDSCORE_GPU_SILOS;
  delete process.env.FEDSCORE_GPU_TRAIN;
  await initBackend({ backend: 'wasm' });
});

describe('trainSilos', () => {
  it('FEDSCORE_GPU_SILOS: a positive integer, default 8; anything else names it', () => {
    expect(gpuSilosPerCall({})).toBe(DEFAULT_GPU_SILOS);
    expect(gpuSilosPerCall({ FEDSCORE_GPU_SILOS: '3' })).toBe(3);
    for (const bad of ['0', '-2', '1.5', 'many', '2x'])
      expect(() => gpuSilosPerCall({ FEDSCORE_GPU_SILOS: bad })).toThrow(
        new RangeError(`FEDSCORE_GPU_SILOS: expected a positive integer, got ${bad}`),
      );
  });

  it('on wasm: each job as trainLocal trains it', async () => {
    await expectAlone('wasm');
  });

  it('names the job whose options are bad', async () => {
    await initBackend({ backend: 'wasm' });
    const bad = [jobs[0]!, { data: jobs[1]!.data, options: { seed: Number.NaN } }];
    await expect(trainSilos(spec, m0, bad)).rejects.toThrow(
      new RangeError('jobs[1].seed: expected a finite number, got NaN'),
    );
  });

  it.runIf(gpu.ok || inCi)(
    'on webgpu, batched in groups of 2 and of 8, and on the tfjs path: the same bits',
    async () => {
      process.env.FEDSCORE_GPU_SILOS = '2';
      await expectAlone('webgpu');
      delete process.env.FEDSCORE_GPU_SILOS;
      await expectAlone('webgpu');
      process.env.FEDSCORE_GPU_TRAIN = 'tfjs';
      await expectAlone('webgpu');
    },
  );

  it.runIf(gpu.ok || inCi)('on webgpu, a bad job is named', async () => {
    await initBackend({ backend: 'webgpu' });
    const bad = [jobs[0]!, { data: jobs[1]!.data, options: { seed: 1, batchSize: 0 } }];
    await expect(trainSilos(spec, m0, bad)).rejects.toThrow(
      new RangeError('jobs[1].batchSize: expected an integer ≥ 1, got 0'),
    );
  });
});
