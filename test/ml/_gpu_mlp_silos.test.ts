/**
 * Several silos in the same dispatches (src/ml/_gpu_mlp_silos.ts) against each silo trained
 * alone on the same path (trainLocal: the fused MLP step with K = 1), on the webgpu backend
 * (Mesa's lavapipe in CI; skipped with the reason printed when no adapter can be created,
 * failing instead with CI=true, as test/ml/_gpu_mlp.test.ts).
 *
 * Exactness: a silo's arithmetic is the same WGSL expressions in the same order whatever the
 * number of silos and its place in the stack, so Δ and every pass's loss are compared bit for bit.
 * The silos have unequal sizes (different steps per pass, pass ends at different steps, idle
 * silos in the last steps) and short last batches.
 */
import { describe, expect, it } from 'vitest';
import { stepCost } from '../../bench/_gpu_counts.js';
import { fusedMlpLayers } from '../../src/ml/_gpu_mlp.js';
import { trainMlpSilos } from '../../src/ml/_gpu_mlp_silos.js';
import { loadWebGpu } from '../../src/ml/_webgpu.js';
import { createModel } from '../../src/ml/model-registry.js';
import { type Examples, initParams } from '../../src/ml/models.js';
import { type TrainOptions, trainLocal, trainPlan } from '../../src/ml/train.js';
import { trainSilos } from '../../src/ml/train-silos.js';
import { gaussianMixture, maxAbs, maxAbsDiff, sameBits } from './_synthetic.js';
import { webgpuSuite } from './_webgpu_suite.js';

const gpu = await loadWebGpu();
const inCi = process.env.CI === 'true';
if (!gpu.ok)
  console.warn(`test/ml/_gpu_mlp_silos.test.ts: ${inCi ? 'CI=true, failing' : 'skipped'}: ${gpu.why}`);

const shape = [6, 6, 1] as const;
const spec = createModel('mlp', { hidden: [16], inputShape: shape, numClasses: 5 });
const layers = fusedMlpLayers(spec)!;
const m0 = initParams(spec, 1);
// Batches of 32: 4, 2, 2 and 3 steps per pass; last batches of 4, 5, 32 and 6 examples.
const sizes = [100, 37, 64, 70];
const silos: Examples[] = sizes.map((n, k) => gaussianMixture(n, shape, 5, 20 + k));

/** Each silo batched, and alone, with `options(k)`; every field compared exactly. */
async function batchedEqualsAlone(options: (k: number) => TrainOptions) {
  const batched = await trainMlpSilos(
    spec,
    layers,
    m0,
    silos.map((data, k) => ({ data, plan: trainPlan(spec, m0, data, options(k)) })),
  );
  for (const [k, data] of silos.entries()) {
    const alone = await trainLocal(spec, m0, data, options(k));
    const b = batched[k]!;
    expect(b.steps).toBe(alone.steps);
    expect(b.samples).toBe(alone.samples);
    expect(sameBits(b.delta, alone.delta)).toBe(true);
    expect(Array.from(b.epochLosses)).toEqual(Array.from(alone.epochLosses));
    expect(maxAbs(b.delta)).toBeGreaterThan(1e-3); // the training moved the model
  }
  // The silos' data differ, so their updates do: equality above is not that of copies.
  expect(maxAbsDiff(batched[0]!.delta, batched[1]!.delta)).toBeGreaterThan(1e-4);
  return batched;
}

describe.runIf(gpu.ok || inCi)('several silos in the same dispatches on webgpu', () => {
  webgpuSuite('FEDSCORE_GPU_SILOS');

  it('Adam with L2 decay, 2 epochs: each silo as trained alone, to the bit', async () => {
    const r = await batchedEqualsAlone((k) => ({
      seed: 3 + k,
      epochs: 2,
      batchSize: 32,
      learningRate: 0.01,
      weightDecay: 1e-3,
    }));
    expect(r.map((x) => x.steps)).toEqual([8, 4, 4, 6]);
    expect(r.map((x) => x.samples)).toEqual(sizes.map((n) => 2 * n));
  });

  it('SGD with momentum and a different `steps` per silo (passes cut short): to the bit', async () => {
    const steps = [7, 3, 5, 1];
    const r = await batchedEqualsAlone((k) => ({
      seed: 9 + k,
      steps: steps[k]!,
      batchSize: 32,
      optimizer: 'sgd',
      learningRate: 0.05,
      momentum: 0.9,
      weightDecay: 1e-3,
    }));
    expect(r.map((x) => x.steps)).toEqual(steps);
  });

  it("calls a silo's onEpoch at each of its pass ends, with the losses it returns", async () => {
    const seen: [number, number][] = [];
    const options = (k: number): TrainOptions => ({
      seed: 3 + k,
      epochs: 2,
      batchSize: 32,
      learningRate: 0.01,
      weightDecay: 1e-3,
      ...(k === 1 ? { onEpoch: (e: number, loss: number) => seen.push([e, loss]) } : {}),
    });
    const r = await trainMlpSilos(
      spec,
      layers,
      m0,
      silos.map((data, k) => ({ data, plan: trainPlan(spec, m0, data, options(k)) })),
    );
    expect(seen).toEqual(Array.from(r[1]!.epochLosses, (loss, e) => [e, loss]));
    const alone = await trainLocal(spec, m0, silos[1]!, { ...options(0), seed: 4 }); // options(1) without onEpoch
    expect(Array.from(r[1]!.epochLosses)).toEqual(Array.from(alone.epochLosses));
    expect(sameBits(r[1]!.delta, alone.delta)).toBe(true);
  });

  it('takes 4 dispatches per step for 4 silos (16 one after another), no readback', async () => {
    const four = silos.map((data) => ({ data: gaussianMixture(128, shape, 5, data.n) }));
    const train = (steps: number) =>
      trainSilos(
        spec,
        m0,
        four.map((s, k) => ({ data: s.data, options: { seed: k, steps, batchSize: 32 } })),
      );
    const batched = await stepCost(train, 1, 3);
    expect(batched.perStep).toEqual({ dispatches: 4, readbacks: 0, bytesRead: 0 });
    expect(batched.call.readbacks).toBe(1); // every silo's θ and losses in one read
    process.env.FEDSCORE_GPU_SILOS = '1';
    const separate = await stepCost(train, 1, 3);
    expect(separate.perStep).toEqual({ dispatches: 16, readbacks: 0, bytesRead: 0 });
  });
});
