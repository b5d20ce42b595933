/**
 * fedscore's native OpenBLAS kernels (native/*.c, src/ml/_blas_kernels.ts).
 * CI installs libopenblas-dev before `npm ci`, so there the addon must be built and in use;
 * elsewhere these tests run when it is. Products and gradients against the cpu backend are in
 * _wasm_kernels.test.ts (run once per kernel set); here: the addon's own checks, convolutions
 * large enough to be split into im2col chunks, the Adam step's bits, and determinism.
 */

import { availableParallelism } from 'node:os';
import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  addBiasAct,
  loadBlasKernels,
  nativeAdamStep,
  nativeAffineRelu,
  nativeReduceLogits,
  softmaxCrossEntropy,
  useBlasKernels,
} from '../../src/ml/_blas_kernels.js';
import { accumulate } from '../../src/ml/_reduce.js';
import { describeBackend, initBackend } from '../../src/ml/backend.js';
import { cnn003, initParams } from '../../src/ml/models.js';
import { adamStepJs, trainLocal } from '../../src/ml/train.js';
import { gaussianMixture, maxAbs, maxAbsDiff, randomVector } from './_synthetic.js';

const load = loadBlasKernels();

describe('native kernels: presence', () => {
  it.runIf(process.env.CI)('are built and chosen in CI', async () => {
    expect(load.ok, load.ok ? '' : load.why).toBe(true);
    const info = await initBackend({ backend: 'wasm' });
    expect(info.kernels).toMatch(/^OpenBLAS \d+\.\d+\.\d+ \(\d+ threads?\)$/);
    expect(describeBackend(info)).toContain(info.kernels);
  });

  it('FEDSCORE_NATIVE_KERNELS=0 turns them off and a bad FEDSCORE_BLAS_THREADS is named', () => {
    expect(loadBlasKernels({ FEDSCORE_NATIVE_KERNELS: '0' })).toEqual({
      ok: false,
      why: 'disabled by FEDSCORE_NATIVE_KERNELS=0',
    });
    for (const bad of ['0', 'two', '1.5', '999'])
      expect(() => loadBlasKernels({ FEDSCORE_BLAS_THREADS: bad })).toThrow(
        /FEDSCORE_BLAS_THREADS: expected/,
      );
  });
});

describe.runIf(load.ok)('native kernels', () => {
  const addon = load.ok ? load.addon : undefined!;

  beforeAll(async () => {
    await initBackend({ backend: 'wasm' });
    useBlasKernels(true);
  });

  it('reject arrays too short for the dimensions, non-float arrays and bad sizes, naming the argument', () => {
    const a = new Float32Array(4);
    expect(() => addon.gemm(1, 0, 0, 3, 3, 3, a, 0, a, 0, a, 0)).toThrow(
      /^a: expected at least 9 elements, got 4$/,
    );
    expect(() =>
      addon.gemm(1, 0, 0, 2, 2, 2, new Float64Array(4) as unknown as Float32Array, 0, a, 0, a, 0),
    ).toThrow(/^a: expected a Float32Array$/);
    expect(() => addon.gemm(1, 2, 0, 2, 2, 2, a, 0, a, 0, a, 0)).toThrow(/transA, transB: expected 0 or 1/);
    expect(() => addon.gemm(1, 0, 0, -1, 2, 2, a, 0, a, 0, a, 0)).toThrow(
      /^m: expected a non-negative integer$/,
    );
    const x = new Float32Array(16);
    expect(() => addon.conv2dForward(1, 4, 4, 1, 3, 3, 1, 0, 0, 9, 9, x, x, x)).toThrow(
      /outH, outW: larger than the padded input allows/,
    );
    expect(() => addon.conv2dForward(1, 4, 4, 1, 3, 3, 1, 0, 0, 2, 2, x, new Float32Array(8), x)).toThrow(
      /^filter: expected at least 9 elements, got 8$/,
    );
    expect(() => addon.setThreads(0)).toThrow(/threads: expected an integer in \[1, 256\]/);
  });

  it('a convolution split into several im2col chunks matches the cpu backend, gradients included', async () => {
    // 62·62·(3·3·32) ≈ 1.1M column floats per image: 8 images per 8M-float chunk, so 9 images
    // take two chunks (and the filter gradient accumulates across them).
    const shape: [number, number, number, number] = [9, 64, 64, 32];
    const x = randomVector(
      shape.reduce((p, d) => p * d, 1),
      1,
      1,
    );
    const w = randomVector(3 * 3 * 32 * 4, 2, 0.2);
    const run = async (backend: 'wasm' | 'cpu') => {
      await initBackend({ backend });
      return tf.tidy(() => {
        const f = (a: tf.Tensor, b: tf.Tensor) =>
          tf.sum(tf.square(tf.conv2d(a as tf.Tensor4D, b as tf.Tensor4D, 1, 'same')));
        const y = tf.conv2d(tf.tensor4d(x, shape), tf.tensor4d(w, [3, 3, 32, 4]), 1, 'same');
        const g = tf.grads(f)([tf.tensor4d(x, shape), tf.tensor4d(w, [3, 3, 32, 4])]);
        return [y, ...g].map((t) => t.dataSync() as Float32Array);
      });
    };
    const native = await run('wasm');
    const cpu = await run('cpu');
    await initBackend({ backend: 'wasm' });
    for (let k = 0; k < 3; k++)
      expect(maxAbsDiff(native[k]!, cpu[k]!) / maxAbs(cpu[k]!), `tensor ${k}`).toBeLessThan(1e-4);
  }, 60_000);

  it("the Adam step gives the same float32 bits as train.ts's JavaScript loop (adamStepJs)", () => {
    const step = nativeAdamStep()!;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 50 }),
        fc.double({ min: 0, max: 0.1, noNaN: true }),
        fc.double({ min: 0.5, max: 0.99, noNaN: true }),
        fc.double({ min: 0.9, max: 0.9999, noNaN: true }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (count, t, wd, beta1, beta2, seed) => {
          const theta = randomVector(count, seed, 1);
          const grad = randomVector(count, seed + 1, 0.1);
          const m = randomVector(count, seed + 2, 0.01);
          const v = Float32Array.from(randomVector(count, seed + 3, 0.01), Math.abs);
          const mine = [theta, m, v].map((a) => Float32Array.from(a));
          const stepSize = 1e-3 / (1 - beta1 ** t);
          const sqrtBc2 = Math.sqrt(1 - beta2 ** t);
          step(mine[0]!, grad, mine[1]!, mine[2]!, count, wd, beta1, beta2, stepSize, sqrtBc2, 1e-8);
          adamStepJs(theta, grad, m, v, count, wd, beta1, beta2, stepSize, sqrtBc2, 1e-8);
          expect(mine[0]).toEqual(theta);
          expect(mine[1]).toEqual(m);
          expect(mine[2]).toEqual(v);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('training is deterministic, and close to training on the wasm kernels', async () => {
    const spec = cnn003({ inputShape: [12, 12, 1], hidden: 16 });
    const data = gaussianMixture(96, spec.inputShape, 10, 4);
    const m0 = initParams(spec, 2);
    const opts = { seed: 5, epochs: 2, batchSize: 32, weightDecay: 1e-3 };
    const a = await trainLocal(spec, m0, data, opts);
    const b = await trainLocal(spec, m0, data, opts);
    expect(b.delta).toEqual(a.delta);
    useBlasKernels(false);
    try {
      const c = await trainLocal(spec, m0, data, opts);
      // Same steps, sums in another order: Adam normalizes each coordinate, so compare the
      // updates in relative L2 and the losses closely.
      let num = 0;
      let den = 0;
      for (let i = 0; i < a.delta.length; i++) {
        num += (a.delta[i]! - c.delta[i]!) ** 2;
        den += c.delta[i]! ** 2;
      }
      expect(Math.sqrt(num / den)).toBeLessThan(1e-2);
      for (let e = 0; e < 2; e++) expect(a.epochLosses[e]).toBeCloseTo(c.epochLosses[e]!, 4);
    } finally {
      useBlasKernels(true);
    }
  });

  it("affineRelu gives the bits of tfjs's mul, add and relu kernels, and leaks no tensor", () => {
    for (const [count, scale, relu] of [
      [1, 0.5, true],
      [4000, 1 / 3, true],
      [777, 2.5e-4, false],
    ] as const) {
      const p0 = randomVector(count, count, 1);
      const u = randomVector(count, count + 1, 10);
      const before = tf.memory().numTensors;
      const [mine, theirs] = tf.tidy(() => {
        const a = tf.tensor1d(p0);
        const b = tf.tensor1d(u);
        const native = nativeAffineRelu(a, b, scale, relu)!;
        let ref = tf.add(a, tf.mul(b, scale));
        if (relu) ref = tf.relu(ref);
        return [native.dataSync() as Float32Array, ref.dataSync() as Float32Array];
      });
      expect(tf.memory().numTensors).toBe(before);
      expect(mine).toEqual(theirs);
    }
  });

  it('reduceLogits counts the same confusion matrix as the JavaScript loop, the same loss to 1e-12, and names a bad label', () => {
    const reduce = nativeReduceLogits()!;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 2, max: 12 }),
        fc.nat(),
        (rows, C, seed) => {
          // Rounded logits make ties common: both loops must send a tie to the lower class.
          const z = Float32Array.from(randomVector(rows * C, seed, 4), (v) => Math.round(v));
          const labels = Int32Array.from({ length: rows + 3 }, (_, k) => (k * 7 + seed) % C);
          const mine = new Int32Array(C * C);
          const loss = reduce(rows, C, z, labels, 3, mine);
          const ref = new Int32Array(C * C);
          useBlasKernels(false);
          try {
            const refLoss = tf.tidy(() => accumulate(tf.tensor2d(z, [rows, C]), labels, 3, ref, C));
            expect(mine).toEqual(ref);
            expect(Math.abs(loss - refLoss)).toBeLessThanOrEqual(1e-12 * Math.abs(refLoss) + 1e-12);
          } finally {
            useBlasKernels(true);
          }
        },
      ),
      { numRuns: 40 },
    );
    expect(() => reduce(2, 3, new Float32Array(6), Int32Array.from([0, 5]), 0, new Int32Array(9))).toThrow(
      /^labels\[1\]: expected a class in \[0, 3\), got 5$/,
    );
  });

  it('pooling gradients (average and max, ties to the first cell) match the cpu backend', async () => {
    // Rounded inputs: ties inside max-pool windows are common.
    const x = Float32Array.from(randomVector(3 * 9 * 9 * 4, 7, 3), (v) => Math.round(v));
    const dy = randomVector(3 * 4 * 4 * 4, 8, 1);
    const run = async (backend: 'wasm' | 'cpu') => {
      await initBackend({ backend });
      return tf.tidy(() =>
        (['avg', 'max'] as const).flatMap((op) =>
          [
            [2, 2],
            [3, 2],
          ].map(([f, s]) => {
            const pool = (t: tf.Tensor) =>
              op === 'avg'
                ? tf.avgPool(t as tf.Tensor4D, f!, s!, 'valid')
                : tf.maxPool(t as tf.Tensor4D, f!, s!, 'valid');
            const shape = pool(tf.tensor4d(x, [3, 9, 9, 4])).shape;
            const g = tf.grad((t: tf.Tensor) =>
              tf.sum(tf.mul(pool(t), tf.tensor(dy.subarray(0, tf.util.sizeFromShape(shape)), shape))),
            );
            return g(tf.tensor4d(x, [3, 9, 9, 4])).dataSync() as Float32Array;
          }),
        ),
      );
    };
    const native = await run('wasm');
    const cpu = await run('cpu');
    await initBackend({ backend: 'wasm' });
    for (let k = 0; k < native.length; k++)
      expect(maxAbsDiff(native[k]!, cpu[k]!), `case ${k}`).toBeLessThan(1e-6);
    expect(() =>
      addon.poolGrad(
        0,
        1,
        4,
        4,
        1,
        3,
        2,
        2,
        2,
        new Float32Array(4),
        new Float32Array(16),
        new Float32Array(16),
      ),
    ).toThrow(/outH, outW: windows reach outside the input/);
  });

  it("the native softmax cross-entropy and its gradient match tfjs's ops (one-hot and soft targets), leaking nothing", () => {
    for (const [rows, cols, soft] of [
      [64, 10, false],
      [7, 3, true],
      [1, 1, false],
    ] as const) {
      const z = randomVector(rows * cols, rows + cols, 5);
      const y = new Float32Array(rows * cols);
      for (let r = 0; r < rows; r++)
        if (soft) for (let c = 0; c < cols; c++) y[r * cols + c] = (r + c + 1) / (cols * 4);
        else y[r * cols + ((r * 3) % cols)] = 1;
      const run = () =>
        tf.tidy(() => {
          const labels = tf.tensor2d(y, [rows, cols]);
          const { value, grad } = tf.valueAndGrad((l: tf.Tensor) =>
            tf.mul(softmaxCrossEntropy(l as tf.Tensor2D, labels), 3),
          )(tf.tensor2d(z, [rows, cols]));
          return [value.dataSync()[0]!, grad.dataSync() as Float32Array] as const;
        });
      const before = tf.memory().numTensors;
      const [v, g] = run();
      expect(tf.memory().numTensors).toBe(before);
      useBlasKernels(false);
      const [rv, rg] = run();
      useBlasKernels(true);
      expect(Math.abs(v - rv)).toBeLessThan(1e-5 * Math.max(1, Math.abs(rv)));
      expect(maxAbsDiff(g, rg)).toBeLessThan(1e-6 * Math.max(1, maxAbs(rg)));
    }
  });

  it('the native bias + relu epilogue and its gradients match tfjs add and relu, leaking nothing', () => {
    for (const [shape, relu] of [
      [[5, 7], true],
      [[2, 4, 4, 3], true],
      [[6, 10], false],
    ] as const) {
      const count = shape.reduce((p, d) => p * d, 1);
      const cols = shape.at(-1)!;
      // Rounded values put exact zeros under the relu: its gradient there is 0 on both sides.
      const z = Float32Array.from(randomVector(count, count, 3), (v) => Math.round(v * 2) / 2);
      const b = Float32Array.from(randomVector(cols, cols, 1), (v) => Math.round(v * 2) / 2);
      const dy = randomVector(count, count + 5, 1);
      const run = () =>
        tf.tidy(() => {
          const f = (zz: tf.Tensor, bb: tf.Tensor) =>
            tf.sum(tf.mul(addBiasAct(zz, bb, relu), tf.tensor(dy, [...shape])));
          const y = addBiasAct(tf.tensor(z, [...shape]), tf.tensor1d(b), relu).dataSync() as Float32Array;
          const [gz, gb] = tf.grads(f)([tf.tensor(z, [...shape]), tf.tensor1d(b)]);
          return [y, gz!.dataSync() as Float32Array, gb!.dataSync() as Float32Array];
        });
      const before = tf.memory().numTensors;
      const native = run();
      expect(tf.memory().numTensors).toBe(before);
      useBlasKernels(false);
      const ref = run();
      useBlasKernels(true);
      expect(native[0]).toEqual(ref[0]);
      expect(native[1]).toEqual(ref[1]);
      expect(maxAbsDiff(native[2]!, ref[2]!)).toBeLessThan(1e-5);
    }
  });
});

describe.runIf(load.ok)('native kernels: every core, the same bits', () => {
  const addon = load.ok ? load.addon : undefined!;

  it('the default is every core this process may run on, unless FEDSCORE_BLAS_THREADS says', () => {
    const asked = process.env.FEDSCORE_BLAS_THREADS;
    expect(addon.info().threads).toBe(asked ? Number(asked) : availableParallelism());
    expect(load.ok && load.description).toMatch(/^OpenBLAS \d+\.\d+\.\d+ \(\d+ threads?\)$/);
  });

  it('large products (by rows, by columns, transposed) give the same bits on 1, 2, 3 and 4 threads, and the right values', () => {
    // m×n×k ≥ 2^25 multiply-adds: cut into fixed blocks (native/products.c) that the threads take
    // from a queue. Each product is checked against a float64 reference too, so that a block
    // written to the wrong place cannot pass as "the same bits on every thread count".
    const shapes: [number, number, number, number, number, number][] = [
      [0, 0, 700, 150, 400, 2], // by rows: a long side, blocks of ≥ 256 rows
      [0, 1, 48, 1500, 500, 4], // by columns, B transposed
      [1, 0, 300, 40, 3000, 4], // A transposed (a filter gradient's shape); a short side, blocks of ≥ 64
    ];
    for (const [ta, tb, m, n, k, blocks] of shapes) {
      expect(addon.productBlocks(m, n, k), `${m}×${n}×${k}`).toBe(blocks);
      const a = randomVector(m * k, m + n, 1);
      const b = randomVector(k * n, k, 1);
      const runs = [1, 2, 3, 4].map((t) => {
        addon.setLocalThreads(t);
        const c = new Float32Array(m * n);
        addon.gemm(1, ta, tb, m, n, k, a, 0, b, 0, c, 0);
        return c;
      });
      addon.setLocalThreads(0);
      for (const c of runs.slice(1))
        expect(Buffer.from(c.buffer).equals(Buffer.from(runs[0]!.buffer))).toBe(true);
      const at = (i: number, p: number) => (ta ? a[p * m + i]! : a[i * k + p]!);
      const bt = (p: number, j: number) => (tb ? b[j * k + p]! : b[p * n + j]!);
      let worst = 0;
      for (let i = 0; i < m; i += 7)
        for (let j = 0; j < n; j += 5) {
          let s = 0;
          for (let p = 0; p < k; p++) s += at(i, p) * bt(p, j);
          worst = Math.max(worst, Math.abs(runs[0]![i * n + j]! - s));
        }
      // Rows m−1 and columns n−1 (the last block's edge) too.
      for (const [i, j] of [
        [m - 1, n - 1],
        [m - 1, 0],
        [0, n - 1],
      ] as const) {
        let s = 0;
        for (let p = 0; p < k; p++) s += at(i, p) * bt(p, j);
        worst = Math.max(worst, Math.abs(runs[0]![i * n + j]! - s));
      }
      expect(worst, `${ta}${tb} ${m}×${n}×${k}`).toBeLessThan(1e-3);
    }
  });

  it('a product is cut into a power of two of blocks, of ≥ 256 rows on a long side, whatever the thread count', () => {
    // native/products.c: each block packs the other operand again, so blocks stay long; a power
    // of two splits evenly over 2, 4, 8 … threads. The count depends on the shape alone.
    const cases: [number, number, number, number][] = [
      [64, 784, 200, 1], // the MLP's training product: under 2^25 multiply-adds, whole
      [2000, 200, 784, 4], // a 2000-image MLP evaluation: 2000 / 256 → 7 → 4 blocks of 500 rows
      [2000, 128, 18432, 4], // cnn003's dense layer on 2000 images
      [64, 128, 18432, 2], // cnn003's training product: a short side, blocks of 64 columns
      [64, 18432, 128, 16], // its input gradient: 2^23 multiply-adds a block at least
      [18816, 32, 144, 8], // a convolution's im2col product
      [1 << 20, 64, 64, 64], // at most 64
    ];
    for (const [m, n, k, blocks] of cases) {
      for (const t of [1, 3, 0]) {
        addon.setLocalThreads(t);
        expect(addon.productBlocks(m, n, k), `${m}×${n}×${k}, threads ${t}`).toBe(blocks);
      }
      expect(addon.productBlocks(n, m, k), `${n}×${m}×${k} (by columns)`).toBe(blocks);
    }
    expect(() => addon.productBlocks(-1, 2, 3)).toThrow(/m: /);
  });

  it('a large convolution and its gradients give the same bits on 1, 2 and 4 threads', () => {
    // 24 images of 30×30×16, 3×3 → 32: 24·28·28·144·32 ≈ 87M multiply-adds per product.
    const [N, H, W, C, K, O] = [24, 30, 30, 16, 3, 32];
    const x = randomVector(N * H * W * C, 1, 1);
    const f = randomVector(K * K * C * O, 2, 0.3);
    const dy = randomVector(N * (H - 2) * (W - 2) * O, 3, 1);
    const go = (t: number) => {
      addon.setLocalThreads(t);
      const y = new Float32Array(dy.length);
      const dw = new Float32Array(f.length);
      const dx = new Float32Array(x.length);
      addon.conv2dForward(N, H, W, C, K, K, O, 0, 0, H - 2, W - 2, x, f, y);
      addon.conv2dFilterGrad(N, H, W, C, K, K, O, 0, 0, H - 2, W - 2, x, dy, dw);
      addon.conv2dInputGrad(N, H, W, C, K, K, O, 0, 0, H - 2, W - 2, dy, f, dx);
      addon.setLocalThreads(0);
      return [y, dw, dx].map((v) => Buffer.from(v.buffer));
    };
    const one = go(1);
    for (const t of [2, 4])
      for (const [i, v] of go(t).entries()) expect(v.equals(one[i]!), `threads ${t}, output ${i}`).toBe(true);
  });
});
