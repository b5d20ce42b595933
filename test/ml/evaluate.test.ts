import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/ml/backend.js';
import { evaluate, perClassAccuracy } from '../../src/ml/evaluate.js';
import { initParams, mlp, paramLayout } from '../../src/ml/models.js';
import { gaussianMixture } from './_synthetic.js';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

describe('evaluate', () => {
  it('matches closed-form utilities of a model that predicts from its output bias only', () => {
    // All weights zero, output bias b: every example gets logits b, so the prediction is
    // argmax b = class 2, accuracy = share of class 2, loss = logsumexp(b) − b[y].
    const spec = mlp({ inputShape: [2, 2, 1], hidden: [3], numClasses: 4 });
    const params = new Float32Array(spec.paramCount);
    const out = paramLayout(spec).at(-1)!;
    const b = [0.5, -1, 2, 0];
    params.set(b, out.offset);
    const y = Int32Array.from([2, 2, 0, 1, 2, 1, 0, 2]);
    const data = { x: new Float32Array(8 * 4).fill(0.3), y, n: 8, shape: [2, 2, 1] as const, numClasses: 4 };
    const lse = Math.log(b.reduce((s, v) => s + Math.exp(v), 0));
    const loss = Array.from(y).reduce((s, c) => s + lse - b[c]!, 0) / 8;
    const e = evaluate(spec, params, data, { batchSize: 3 });
    expect(e.n).toBe(8);
    expect(e.accuracy).toBe(4 / 8);
    expect(e.loss).toBeCloseTo(loss, 5);
    expect(e.negLoss).toBe(-e.loss);
    expect(Array.from(e.confusion)).toEqual([0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 0, 0]);
    expect(Array.from(e.perClassAccuracy)).toEqual([0, 0, 1, Number.NaN]);
  });

  it('does not depend on the batch size', () => {
    const spec = mlp({ inputShape: [4, 4, 1], hidden: [8] });
    const data = gaussianMixture(250, [4, 4, 1], 10, 3);
    const p = initParams(spec, 2);
    const a = evaluate(spec, p, data, { batchSize: 1000 });
    const b = evaluate(spec, p, data, { batchSize: 7 });
    expect(b.accuracy).toBe(a.accuracy);
    expect(b.confusion).toEqual(a.confusion);
    expect(Math.abs(b.loss - a.loss) / a.loss).toBeLessThan(1e-6);
  });

  it('perClassAccuracy reads the diagonal over row sums and checks its input', () => {
    expect(Array.from(perClassAccuracy(Int32Array.from([3, 1, 0, 0]), 2))).toEqual([0.75, Number.NaN]);
    expect(() => perClassAccuracy(new Int32Array(3), 2)).toThrow(/^confusion: /);
  });

  it('rejects bad arguments, naming the field', () => {
    const spec = mlp({ inputShape: [4, 4, 1], hidden: [8] });
    const data = gaussianMixture(10, [4, 4, 1], 10, 3);
    expect(() => evaluate(spec, new Float32Array(2), data)).toThrow(/^params: /);
    expect(() => evaluate(spec, initParams(spec, 1), data, { batchSize: 0 })).toThrow(/^batchSize: /);
    expect(() => evaluate(spec, initParams(spec, 1), { ...data, y: new Int32Array(3) })).toThrow(
      /^data\.y: /,
    );
  });
});
