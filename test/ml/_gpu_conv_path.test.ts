/**
 * Which path cnn003 and LeNet-5 train on with webgpu (src/ml/_gpu_train.ts, `gpuConvPath`): the
 * fused conv step on a hardware adapter, the generic path (tfjs's ops, the fused loss and
 * optimizer) on a software one, `FEDSCORE_GPU_CONV` overriding. The counts say which path ran:
 * the fused step takes 2S + 1 dispatches per step for S stages (9 for cnn003: two convolutions, two dense layers),
 * the generic one several per layer. The fused step itself is tested against the CPU path in
 * test/ml/_gpu_conv.slow.test.ts. The webgpu cases are skipped, with the reason printed, only when
 * no adapter can be created; with CI=true a missing adapter fails instead.
 */
import { describe, expect, it } from 'vitest';
import { stepCost } from '../../bench/_gpu_counts.js';
import { gpuConvPath } from '../../src/ml/_gpu_train.js';
import { loadWebGpu, onSoftwareAdapter } from '../../src/ml/_webgpu.js';
import { createModel } from '../../src/ml/model-registry.js';
import { initParams } from '../../src/ml/models.js';
import { trainLocal } from '../../src/ml/train.js';
import { gaussianMixture } from './_synthetic.js';
import { webgpuSuite } from './_webgpu_suite.js';

describe('FEDSCORE_GPU_CONV', () => {
  it('names the path, and a wrong value is refused with the variable named', () => {
    expect(gpuConvPath({ FEDSCORE_GPU_CONV: 'fused' })).toBe('fused');
    expect(gpuConvPath({ FEDSCORE_GPU_CONV: 'generic' })).toBe('generic');
    expect(() => gpuConvPath({ FEDSCORE_GPU_CONV: 'Fused' })).toThrow(
      /^FEDSCORE_GPU_CONV: expected one of fused, generic, got Fused$/,
    );
  });
});

const gpu = await loadWebGpu();
const inCi = process.env.CI === 'true';
if (!gpu.ok)
  console.warn(`test/ml/_gpu_conv_path.test.ts: ${inCi ? 'CI=true, failing' : 'skipped'}: ${gpu.why}`);

describe.runIf(gpu.ok || inCi)('the conv path on this adapter', () => {
  const spec = createModel('cnn003', { inputShape: [8, 8, 1], numClasses: 3, hidden: 8, pool: false });
  const data = gaussianMixture(16, [8, 8, 1], 3, 4);
  const perStep = async () =>
    (
      await stepCost(
        (steps) => trainLocal(spec, initParams(spec, 1), data, { seed: 2, steps, batchSize: 4 }),
        2,
        3,
      )
    ).perStep.dispatches;

  webgpuSuite('FEDSCORE_GPU_CONV');

  it('defaults to the fused step on a hardware adapter and to the generic path on a software one', async () => {
    expect(gpu.ok && onSoftwareAdapter()).toBe(gpu.ok && gpu.adapter.software);
    expect(gpuConvPath({})).toBe(onSoftwareAdapter() ? 'generic' : 'fused');
    const byDefault = await perStep();
    process.env.FEDSCORE_GPU_CONV = 'generic';
    const generic = await perStep();
    expect(generic).toBeGreaterThan(9);
    // The fused step is not run here on a software adapter (its own test is in test:slow).
    expect(byDefault).toBe(onSoftwareAdapter() ? generic : 9);
  });
});
