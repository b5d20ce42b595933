/**
 * The fused optimizer (src/ml/_gpu_optimizer.ts) against train.ts's update rules on random data,
 * on the webgpu backend (Mesa's lavapipe in CI; skipped with the reason printed when no adapter
 * can be created, failing instead with CI=true, as test/ml/webgpu.test.ts).
 *
 * Tolerances: the device computes in float32, `adamStepJs` in float64 with θ rounded once per
 * step. After three steps θ agrees to 2e-7 absolute (θ ∈ ±1: about two float32 ulps; one Adam
 * step moves θ by ≈ lr = 1e-3, so the bound is 0.02 % of a step) and m, v to 1e-6 of their
 * largest magnitude (a few float32 ulps).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fusedOptimizerStep, type OptimizerRule, stateLayout } from '../../src/ml/_gpu_optimizer.js';
import { loadWebGpu } from '../../src/ml/_webgpu.js';
import { runWgsl, settledWgslErrors } from '../../src/ml/_wgsl_program.js';
import { initBackend } from '../../src/ml/backend.js';
import * as tf from '../../src/ml/tf.js';
import { adamStepJs } from '../../src/ml/train.js';
import { randomVector } from './_synthetic.js';

const gpu = await loadWebGpu();
const inCi = process.env.CI === 'true';
if (!gpu.ok)
  console.warn(`test/ml/_gpu_optimizer.test.ts: ${inCi ? 'CI=true, failing' : 'skipped'}: ${gpu.why}`);

/** Eight parameter tensors of odd sizes: two dispatches (6 + 2 gradients). */
const SIZES = [37, 5, 130, 1, 64, 9, 250, 3];
const ranges = SIZES.map((size, k) => ({ size, offset: SIZES.slice(0, k).reduce((a, b) => a + b, 0) }));
const P = SIZES.reduce((a, b) => a + b, 0);

/** The CPU reference: train.ts's rules, float64 arithmetic, float32 storage. */
function reference(rule: OptimizerRule, theta: Float32Array, grads: Float32Array[]) {
  const th = Float32Array.from(theta);
  const m = new Float32Array(P);
  const v = new Float32Array(P);
  for (const [s, g] of grads.entries()) {
    const step = s + 1;
    if (rule.optimizer === 'adam') {
      const stepSize = rule.lr / (1 - rule.beta1 ** step);
      const sqrtBc2 = Math.sqrt(1 - rule.beta2 ** step);
      adamStepJs(th, g, m, v, P, rule.wd, rule.beta1, rule.beta2, stepSize, sqrtBc2, rule.eps);
    } else
      for (let i = 0; i < P; i++) {
        let d = g[i]! + rule.wd * th[i]!;
        if (rule.momentum > 0) {
          d = step === 1 ? d : rule.momentum * m[i]! + d;
          m[i] = d;
        }
        th[i] = th[i]! - rule.lr * d;
      }
  }
  return { th, m, v };
}

async function onDevice(rule: OptimizerRule, theta: Float32Array, grads: Float32Array[], losses: number[]) {
  const s = stateLayout(P, rule, 2);
  const init = new Float32Array(s.size);
  init.set(theta);
  const state = tf.tensor1d(init);
  try {
    for (const [k, g] of grads.entries()) {
      const gs = ranges.map((r) => tf.tensor1d(g.subarray(r.offset, r.offset + r.size)));
      const loss = tf.scalar(losses[k]!);
      fusedOptimizerStep(state, s, rule, ranges, gs, loss, { step: k + 1, b: 8, pass: k % 2 });
      tf.dispose([...gs, loss]);
    }
    await settledWgslErrors();
    const read = async (at: number, n: number) => {
      const t = tf.slice(state, [at], [n]);
      try {
        return (await t.data()) as Float32Array;
      } finally {
        t.dispose();
      }
    };
    return {
      th: await read(0, P),
      m: s.m >= 0 ? await read(s.m, P) : undefined,
      v: s.v >= 0 ? await read(s.v, P) : undefined,
      loss: await read(s.loss, 2),
    };
  } finally {
    state.dispose();
  }
}

/** max |a − b| relative to max |b| (m is a sum of gradients of both signs: near 0 in places). */
function maxRel(a: Float32Array, b: Float32Array): number {
  let scale = 0;
  for (let i = 0; i < b.length; i++) scale = Math.max(scale, Math.abs(b[i]!));
  return maxAbsDiff(a, b) / scale;
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

const base = { lr: 1e-3, wd: 1e-3, momentum: 0, beta1: 0.9, beta2: 0.999, eps: 1e-8 };

describe.runIf(gpu.ok || inCi)('the fused optimizer on webgpu', () => {
  beforeAll(async () => {
    await initBackend({ backend: 'webgpu' });
  });
  afterAll(async () => {
    await initBackend({ backend: 'wasm' });
  });

  const theta = randomVector(P, 1, 1);
  const grads = [2, 3, 4].map((seed) => randomVector(P, seed, 0.5));
  const losses = [2.3, 2.1, 1.9];

  it('takes Adam steps as train.ts does (bias corrections, L2 decay, 8 tensors in 2 dispatches)', async () => {
    const rule: OptimizerRule = { ...base, optimizer: 'adam' };
    const got = await onDevice(rule, theta, grads, losses);
    const want = reference(rule, theta, grads);
    expect(maxAbsDiff(got.th, want.th)).toBeLessThan(2e-7);
    expect(maxRel(got.m!, want.m)).toBeLessThan(1e-6);
    expect(maxRel(got.v!, want.v)).toBeLessThan(1e-6);
    // the steps moved θ by ≈ 3·lr (a test an untouched θ cannot pass)
    expect(maxAbsDiff(got.th, theta)).toBeGreaterThan(2e-3);
    // b × each batch's mean loss, summed into its pass's slot (steps 1 and 3 in pass 0)
    expect(got.loss[0]).toBeCloseTo(8 * (2.3 + 1.9), 4);
    expect(got.loss[1]).toBeCloseTo(8 * 2.1, 4);
  });

  it('takes SGD steps with and without momentum (b ← g at the first step, then μb + g)', async () => {
    for (const momentum of [0.9, 0]) {
      const rule: OptimizerRule = { ...base, optimizer: 'sgd', lr: 0.05, momentum };
      const got = await onDevice(rule, theta, grads, losses);
      const want = reference(rule, theta, grads);
      expect(maxAbsDiff(got.th, want.th)).toBeLessThan(2e-7);
      if (momentum > 0) expect(maxRel(got.m!, want.m)).toBeLessThan(1e-6);
      else expect(got.m).toBeUndefined();
      expect(maxAbsDiff(got.th, theta)).toBeGreaterThan(0.01);
    }
  });

  it('reports a kernel that does not compile instead of running an invalid pipeline', async () => {
    const x = tf.tensor1d([1, 2, 3]);
    const good = runWgsl(
      {
        key: 'test_valid',
        invocations: 3,
        uniforms: 'k : f32,',
        code: 'fn main(index : i32) { if (index < 3) { result[index] = uniforms.k * X[index]; } }',
      },
      { X: x },
      [{ type: 'float32', data: [2] }],
      { size: 3 },
    );
    expect(Array.from(await good.data())).toEqual([2, 4, 6]);
    await settledWgslErrors();
    // Last: an invalid pipeline spoils the command buffer it is recorded in.
    const bad = runWgsl(
      {
        key: 'test_invalid',
        invocations: 3,
        code: 'fn main(index : i32) { result[index] = X[index] + nope; }',
      },
      { X: x },
      [],
      { size: 3 },
    );
    await expect(settledWgslErrors()).rejects.toThrow(/test_invalid/);
    tf.dispose([x, bad, good]);
  });
});
