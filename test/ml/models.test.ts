import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/ml/backend.js';
import {
  cnn003,
  createModel,
  decodeParams,
  encodeParams,
  forward,
  initParams,
  lenet5,
  loadParams,
  type ModelSpec,
  mlp,
  paramLayout,
  paramTensors,
  saveParams,
} from '../../src/ml/models.js';
import { maxAbs, maxAbsDiff, randomVector, sameBits } from './_synthetic.js';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

function logits(spec: ModelSpec, params: Float32Array, x: Float32Array, n: number): Float32Array {
  return tf.tidy(() => {
    const ws = paramTensors(spec, params);
    return forward(spec, ws, tf.tensor2d(x, [n, x.length / n])).dataSync() as Float32Array;
  });
}

describe('architectures', () => {
  it('have the textbook parameter counts', () => {
    expect(mlp().paramCount).toBe(784 * 200 + 200 + 200 * 10 + 10);
    expect(mlp({ hidden: [128] }).name).toBe('mlp-784-128-10');
    expect(mlp({ inputShape: [32, 32, 3], hidden: [64, 32] }).paramCount).toBe(
      3072 * 64 + 64 + 64 * 32 + 32 + 32 * 10 + 10,
    );
    // papers/003: Conv(1,16,3) → Conv(16,32,3) → Linear(24·24·32, 128) → Linear(128, 10).
    expect(cnn003().paramCount).toBe(16 * 9 + 16 + 32 * 16 * 9 + 32 + 18432 * 128 + 128 + 128 * 10 + 10);
    expect(cnn003({ inputShape: [32, 32, 3] }).layers[3]).toMatchObject({ inputs: 28 * 28 * 32 });
    expect(cnn003({ pool: true }).layers).toHaveLength(7);
    // LeNet-5 has 61,706 parameters on 10 classes, for both input sizes.
    expect(lenet5().paramCount).toBe(61706);
    expect(lenet5({ inputShape: [32, 32, 3] }).paramCount).toBe(61706 + 2 * 150);
    expect(createModel('cnn003', { hidden: 64 }).name).toBe('cnn003-28x28x1-10');
  });

  it('reject bad options, naming the field', () => {
    expect(() => mlp({ hidden: [0] })).toThrow(/^hidden\[0\]: /);
    expect(() => mlp({ numClasses: 1.5 })).toThrow(/^numClasses: /);
    expect(() => cnn003({ inputShape: [4, 4, 1] })).toThrow(RangeError);
    expect(() => lenet5({ inputShape: [30, 30, 1] })).toThrow(/^inputShape: /);
    expect(() => createModel('resnet' as never)).toThrow(/^kind: /);
  });

  it('lay out their tensors contiguously over the whole vector', () => {
    for (const spec of [mlp(), cnn003({ pool: true }), lenet5({ inputShape: [32, 32, 3] })]) {
      const layout = paramLayout(spec);
      let offset = 0;
      for (const e of layout) {
        expect(e.offset).toBe(offset);
        expect(e.size).toBe(e.shape.reduce((p, d) => p * d, 1));
        offset += e.size;
      }
      expect(offset).toBe(spec.paramCount);
    }
  });
});

describe('initParams', () => {
  it('is deterministic in the seed and PyTorch-bounded (±1/√fan_in)', () => {
    const spec = lenet5();
    const a = initParams(spec, 7);
    expect(sameBits(initParams(spec, 7), a)).toBe(true);
    expect(maxAbsDiff(initParams(spec, 8), a)).toBeGreaterThan(0);
    for (const e of paramLayout(spec)) {
      const part = a.subarray(e.offset, e.offset + e.size);
      expect(maxAbs(part)).toBeLessThanOrEqual(1 / Math.sqrt(e.fanIn));
      expect(maxAbs(part)).toBeGreaterThan(0.5 / Math.sqrt(e.fanIn));
    }
    expect(() => initParams(spec, Number.NaN)).toThrow(/^seed: /);
  });
});

describe('the documented flat layout is what forward() computes', () => {
  it('MLP: W[i·out + j] connects input i to unit j, then the bias', () => {
    const spec = mlp({ inputShape: [2, 3, 1], hidden: [4], numClasses: 3 });
    const p = randomVector(spec.paramCount, 1, 1);
    const x = randomVector(2 * 6, 2, 1);
    const got = logits(spec, p, x, 2);
    const want: number[] = [];
    for (let r = 0; r < 2; r++) {
      const h = [0, 0, 0, 0].map((_, j) => {
        let z = p[24 + j]!;
        for (let i = 0; i < 6; i++) z += x[r * 6 + i]! * p[i * 4 + j]!;
        return Math.max(0, z);
      });
      for (let j = 0; j < 3; j++) {
        let z = p[28 + 12 + j]!;
        for (let i = 0; i < 4; i++) z += h[i]! * p[28 + i * 3 + j]!;
        want.push(z);
      }
    }
    expect(maxAbsDiff(got, want)).toBeLessThan(1e-5);
  });

  it('CNN: conv weights [kh,kw,in,out], NHWC maps flattened h → w → c', () => {
    // cnn003 on a 5×5×2 input: conv 3×3 → 3×3×16, conv 3×3 → 1×1×32, dense 32→4, dense 4→2.
    const spec = cnn003({ inputShape: [5, 5, 2], hidden: 4, numClasses: 2 });
    const p = randomVector(spec.paramCount, 3, 0.5);
    const x = randomVector(50, 4, 1);
    const L = paramLayout(spec);
    const at = (k: number, i: number) => p[L[k]!.offset + i]!;
    const conv = (inp: number[][][], k: number, cin: number, cout: number) => {
      const oh = inp.length - 2;
      return Array.from({ length: oh }, (_, r) =>
        Array.from({ length: oh }, (_, c) =>
          Array.from({ length: cout }, (_, o) => {
            let z = at(k + 1, o);
            for (let a = 0; a < 3; a++)
              for (let b = 0; b < 3; b++)
                for (let i = 0; i < cin; i++)
                  z += inp[r + a]![c + b]![i]! * at(k, ((a * 3 + b) * cin + i) * cout + o);
            return Math.max(0, z);
          }),
        ),
      );
    };
    const img = Array.from({ length: 5 }, (_, r) =>
      Array.from({ length: 5 }, (_, c) => [x[(r * 5 + c) * 2]!, x[(r * 5 + c) * 2 + 1]!]),
    );
    const flat = conv(conv(img, 0, 2, 16), 2, 16, 32).flat(2);
    const h = Array.from({ length: 4 }, (_, j) => {
      let z = at(5, j);
      for (let i = 0; i < 32; i++) z += flat[i]! * at(4, i * 4 + j);
      return Math.max(0, z);
    });
    const want = [0, 1].map((j) => {
      let z = at(7, j);
      for (let i = 0; i < 4; i++) z += h[i]! * at(6, i * 2 + j);
      return z;
    });
    expect(maxAbsDiff(logits(spec, p, x, 1), want)).toBeLessThan(1e-4);
  });
});

describe('save and load', () => {
  it('round-trips the vector bit for bit, through bytes and through a file', async () => {
    const spec = cnn003({ inputShape: [8, 8, 3] });
    const p = initParams(spec, 11);
    p[0] = -0;
    p[1] = 3.4028234663852886e38;
    expect(sameBits(decodeParams(spec, encodeParams(spec, p)), p)).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'fedscore-ml-'));
    const file = join(dir, 'm.bin');
    await saveParams(file, spec, p);
    const back = await loadParams(file, spec);
    expect(sameBits(back, p)).toBe(true);
    // Wrong model, truncated file, foreign file: errors name the file and the problem.
    await expect(loadParams(file, cnn003({ inputShape: [8, 8, 1] }))).rejects.toThrow(
      new RegExp(`^${file}: holds parameters of cnn003-8x8x3-10`),
    );
    writeFileSync(file, readFileSync(file).subarray(0, 200));
    await expect(loadParams(file, spec)).rejects.toThrow(/expected \d+ float32 values, found 33/);
    writeFileSync(file, 'hello');
    await expect(loadParams(file, spec)).rejects.toThrow(/not a fedscore parameter file/);
    expect(() => encodeParams(spec, new Float32Array(3))).toThrow(
      /^params: cnn003-8x8x3-10 has \d+ parameters, got 3/,
    );
  });
});
