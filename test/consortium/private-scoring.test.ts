/**
 * The silo-side coalition models must be the harness's coalition models: M0 + U_i = M_{i} and
 * M − U_i = M_{N∖i} under both conventions, for unequal (and zero) weights.
 */
import { describe, expect, it } from 'vitest';
import { siloCoalitionModels } from '../../src/consortium/private-scoring.js';
import { coalitionParams } from '../../src/ml/coalition.js';
import { mlp } from '../../src/ml/models.js';

const spec = mlp({ inputShape: [2, 2, 1], hidden: [3], numClasses: 2 });
const d = spec.paramCount;
const m0 = Float32Array.from({ length: d }, (_, k) => Math.sin(k));
const updates = [0, 1, 2].map((i) => Float32Array.from({ length: d }, (_, k) => Math.cos(k * (i + 1)) / 10));
const data = { x: new Float32Array(4), y: [0], n: 1, shape: [2, 2, 1] as const, numClasses: 2 };

function check(convention: 'fedavg' | 'additive', weights: number[]) {
  const total = weights.reduce((a, b) => a + b, 0);
  const weightedSum = new Float64Array(d);
  updates.forEach((u, i) => {
    for (let k = 0; k < d; k++) weightedSum[k]! += weights[i]! * u[k]!;
  });
  const setup = { spec, m0, updates, weights, convention, data };
  for (let i = 0; i < 3; i++) {
    const { singleton, complement } = siloCoalitionModels(
      m0,
      weightedSum,
      total,
      { update: updates[i]!, weight: weights[i]! },
      convention,
    );
    const others = [0, 1, 2].filter((j) => j !== i);
    const single = coalitionParams(setup, [i]);
    const rest = coalitionParams(setup, others);
    for (let k = 0; k < d; k++) {
      expect(singleton[k]).toBeCloseTo(single[k]!, 6);
      expect(complement[k]).toBeCloseTo(rest[k]!, 6);
    }
  }
}

describe('siloCoalitionModels agrees with the coalition evaluator', () => {
  it('FedAvg coalitions, unequal weights', () => check('fedavg', [1, 2, 5]));
  it('additive coalitions, unequal and zero weights', () => {
    check('additive', [1, 2, 5]);
    check('additive', [0, 2, 5]);
  });
});
