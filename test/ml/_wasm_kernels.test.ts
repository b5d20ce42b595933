/**
 * The wasm backend with fedscore's kernels against tfjs's reference cpu backend: forward
 * passes, CNN gradients and transposed products must agree. Runs twice: with the wasm kernels
 * (src/ml/_wasm_kernels.ts) and with the native OpenBLAS kernels that replace them when the
 * addon is built (src/ml/_blas_kernels.ts; CI builds it, test/ml/_blas_kernels.test.ts checks).
 * Tolerance: float32 sums of up to ~10⁴ terms in a different order, so 1e-4 of the largest
 * magnitude (about 10³ float32 epsilons).
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBlasKernels, useBlasKernels } from '../../src/ml/_blas_kernels.js';
import { type BackendName, initBackend } from '../../src/ml/backend.js';
import {
  cnn003,
  forward,
  initParams,
  lenet5,
  type ModelSpec,
  mlp,
  paramTensors,
} from '../../src/ml/models.js';
import { gaussianMixture, maxAbs, maxAbsDiff, randomVector } from './_synthetic.js';

async function onBoth<T extends Float32Array[]>(fn: () => T): Promise<{ wasm: T; cpu: T }> {
  const run = async (name: BackendName) => {
    await initBackend({ backend: name });
    return tf.tidy(fn);
  };
  return { wasm: await run('wasm'), cpu: await run('cpu') };
}

function expectClose(a: Float32Array[], b: Float32Array[], rel = 1e-4) {
  expect(a.length).toBe(b.length);
  for (let k = 0; k < a.length; k++) {
    const scale = Math.max(maxAbs(b[k]!), 1e-6);
    expect(maxAbsDiff(a[k]!, b[k]!) / scale, `tensor ${k}`).toBeLessThan(rel);
  }
}

const SPECS: ModelSpec[] = [
  mlp({ hidden: [32] }),
  cnn003({ inputShape: [12, 12, 1], hidden: 16 }),
  cnn003({ inputShape: [12, 12, 3], hidden: 16, pool: true }),
  lenet5(),
  lenet5({ inputShape: [32, 32, 3] }),
];

function lossAndGrads(
  spec: ModelSpec,
  params: Float32Array,
  x: Float32Array,
  y: ArrayLike<number>,
  n: number,
) {
  const ws = paramTensors(spec, params);
  const xb = tf.tensor2d(x, [n, x.length / n]);
  const yb = tf.oneHot(tf.tensor1d(Int32Array.from(y), 'int32'), spec.numClasses);
  const { value, grads } = tf.valueAndGrads((...w: tf.Tensor[]) =>
    tf.neg(tf.mean(tf.sum(tf.mul(yb, tf.logSoftmax(forward(spec, w, xb))), 1))),
  )(ws);
  return [value.dataSync() as Float32Array, ...grads.map((g) => g.dataSync() as Float32Array)];
}

for (const native of [false, true])
  describe.runIf(!native || loadBlasKernels().ok)(
    `wasm (${native ? 'OpenBLAS' : 'wasm'} kernels) and cpu agree`,
    () => {
      beforeAll(async () => {
        await initBackend({ backend: 'wasm' });
        expect(useBlasKernels(native)).toBe(native);
      });

      for (const spec of SPECS)
        it(`forward pass and all gradients of ${spec.name}`, async () => {
          const n = spec.kind === 'mlp' ? 16 : 4;
          const data = gaussianMixture(n, spec.inputShape, spec.numClasses, 5);
          const params = initParams(spec, 3);
          const { wasm, cpu } = await onBoth(() => lossAndGrads(spec, params, data.x, data.y, n));
          expect(wasm.length).toBe(
            1 + 2 * spec.layers.filter((l) => l.kind === 'dense' || l.kind === 'conv').length,
          );
          expectClose(wasm, cpu);
          const logits = await onBoth(() => {
            const ws = paramTensors(spec, params);
            return [
              forward(spec, ws, tf.tensor2d(data.x, [n, data.x.length / n])).dataSync() as Float32Array,
            ];
          });
          expectClose(logits.wasm, logits.cpu);
        });

      it('conv2d gradients with same and numeric padding (the kernels pad themselves)', async () => {
        const x = randomVector(2 * 7 * 7 * 3, 1, 1);
        const w = randomVector(3 * 3 * 3 * 4, 2, 1);
        for (const pad of ['same', 1, 0, 'valid'] as const) {
          const { wasm, cpu } = await onBoth(() => {
            const xt = tf.tensor4d(x, [2, 7, 7, 3]);
            const wt = tf.tensor4d(w, [3, 3, 3, 4]);
            const g = tf.grads((a: tf.Tensor, b: tf.Tensor) =>
              tf.sum(tf.square(tf.conv2d(a as tf.Tensor4D, b as tf.Tensor4D, 1, pad))),
            )([xt, wt]);
            return g.map((t) => t.dataSync() as Float32Array);
          });
          expectClose(wasm, cpu);
        }
      });

      it('matMul with transposed operands, both ways of computing them', async () => {
        const cases: [number[], number[], boolean, boolean][] = [
          [[500, 3], [500, 4], true, false], // transposes a
          [[3, 4], [500, 4], false, true], // computes (b·aᵀ)ᵀ: b is the big one
          [[500, 3], [4, 500], true, true],
          [[5, 6], [7, 6], false, true],
          [[2, 6, 5], [2, 6, 4], true, false], // batched
          [[2, 5, 6], [2, 4, 6], false, true],
        ];
        for (const [sa, sb, ta, tb] of cases) {
          const a = randomVector(
            sa.reduce((p, d) => p * d, 1),
            3,
            1,
          );
          const b = randomVector(
            sb.reduce((p, d) => p * d, 1),
            4,
            1,
          );
          const { wasm, cpu } = await onBoth(() => [
            tf.matMul(tf.tensor(a, sa), tf.tensor(b, sb), ta, tb).dataSync() as Float32Array,
          ]);
          expectClose(wasm, cpu, 1e-5);
        }
      });

      it('the wasm gradient kernels free their temporaries', async () => {
        await initBackend({ backend: 'wasm' });
        const spec = cnn003({ inputShape: [10, 10, 1], hidden: 8 });
        const data = gaussianMixture(4, spec.inputShape, 10, 1);
        const params = initParams(spec, 1);
        tf.tidy(() => lossAndGrads(spec, params, data.x, data.y, 4));
        const before = tf.memory();
        tf.tidy(() => lossAndGrads(spec, params, data.x, data.y, 4));
        const after = tf.memory();
        expect(after.numTensors).toBe(before.numTensors);
        expect(after.numBytes).toBe(before.numBytes);
        expect((after as { numDataBuffers?: number }).numDataBuffers).toBe(
          (before as { numDataBuffers?: number }).numDataBuffers,
        );
      });
    },
  );

it("the wasm backend carries fedscore's kernels (tfjs-backend-wasm 4.22 has no filter gradient), native ones on top when built", async () => {
  await initBackend({ backend: 'wasm' });
  const kernels = () =>
    ['Conv2DBackpropFilter', 'BatchMatMul', 'Conv2DBackpropInput'].map(
      (k) => tf.getKernel(k, 'wasm')!.kernelFunc,
    );
  const hasNative = useBlasKernels(true);
  expect(hasNative).toBe(loadBlasKernels().ok);
  const onTop = kernels();
  useBlasKernels(false);
  expect(kernels().map((f) => f.name)).toEqual(['filterGradient', 'matMul', 'inputGradient']);
  expect(useBlasKernels(true)).toBe(hasNative);
  expect(kernels()).toEqual(onTop);
  if (hasNative) expect(onTop.map((f) => f.name)).not.toContain('matMul');
});
