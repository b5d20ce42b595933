/**
 * src/ml/near-ties.ts: the examples on which two float32 evaluations of a coalition model may
 * disagree (used to check combined against naive evaluation on any processor).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/ml/backend.js';
import { createCoalitionEvaluator } from '../../src/ml/coalition.js';
import { cnn003, initParams, mlp, paramLayout } from '../../src/ml/models.js';
import { nearTies } from '../../src/ml/near-ties.js';
import { gaussianMixture, randomVector } from './_synthetic.js';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

const spec = mlp({ inputShape: [6, 6, 1], hidden: [12], numClasses: 4 });
const setup = () => ({
  spec,
  m0: initParams(spec, 1),
  updates: Array.from({ length: 3 }, (_, i) => randomVector(spec.paramCount, 10 + i, 0.15)),
  data: gaussianMixture(200, spec.inputShape, spec.numClasses, 4),
  weights: [1, 2, 3],
});

describe('nearTies', () => {
  it('counts the examples of two classes whose logits are one ulp apart, and few others', () => {
    const s = setup();
    const out = paramLayout(spec).slice(2);
    const [w, b] = [out[0]!, out[1]!];
    // Class 1's output weights and bias: class 0's plus one ulp, in M0 and every update.
    for (const p of [s.m0, ...s.updates]) {
      for (let k = 0; k < 12; k++) p[w.offset + k * 4 + 1] = p[w.offset + k * 4]! * (1 + 2 ** -23);
      p[b.offset + 1] = p[b.offset]!;
    }
    const ties = nearTies(s, [0, 2]);
    const ofClass = [0, 1, 2, 3].map((c) => s.data.y.filter((y) => y === c).length);
    // Every example labelled 0 or 1 is a near-tie between those two classes.
    expect([ties.perClass[0], ties.perClass[1]]).toEqual([ofClass[0], ofClass[1]]);
    expect(ties.perClass[2]! + ties.perClass[3]!).toBeLessThan((ofClass[2]! + ofClass[3]!) / 10);
    expect(ties.total).toBe(Array.from(ties.perClass).reduce((x, y) => x + y, 0));
  });

  it('covers every accuracy difference between combined and naive evaluation of random models', async () => {
    const s = setup();
    const combined = await createCoalitionEvaluator(s).table('perClassAccuracy');
    const naive = createCoalitionEvaluator(s, { mode: 'naive' });
    const ofClass = [0, 1, 2, 3].map((c) => s.data.y.filter((y) => y === c).length);
    for (let m = 0; m < 8; m++) {
      const ms = [0, 1, 2].filter((i) => (m >> i) & 1);
      const v = (await naive.values([Uint32Array.of(m)])).perClassAccuracy;
      const ties = nearTies(s, ms);
      for (let c = 0; c < 4; c++)
        expect(Math.round(Math.abs(combined[m * 4 + c]! - v[c]!) * ofClass[c]!)).toBeLessThanOrEqual(
          ties.perClass[c]!,
        );
      expect(ties.total).toBeLessThan(s.data.n / 10);
    }
  });

  it('rejects a model that is not an MLP, naming the spec', () => {
    const cnn = cnn003();
    const s = { ...setup(), spec: cnn, m0: initParams(cnn, 1), updates: [initParams(cnn, 2)] };
    expect(() => nearTies(s, [0])).toThrow(/^spec: near-ties need an MLP/);
  });
});
