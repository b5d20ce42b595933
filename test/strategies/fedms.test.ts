import { describe, expect, it } from 'vitest';
import { divergenceThreshold, type FedMsState, fedMs } from '../../src/strategies/fedms.js';
import {
  additiveClassGame,
  additiveOver,
  aggregateContext,
  fullFor,
  hoeffding,
  makeSetup,
  selectContext,
} from './_fixtures.js';

// 4 silos, 2 classes; class-wise accuracy is additive: v^c(S) = base^c + Σ_{i∈S} a_i^c, so the
// class-wise Shapley value of silo i is a_i exactly. Silo 2 is the Maverick of class 1, silo 3 an adversary.
const a = [
  [0.1, 0],
  [0.1, 0.05],
  [0.05, 0.3],
  [-0.2, -0.1],
];
const examples = [10, 20, 30, 40];
const setup = makeSetup(4, { classes: 2, rounds: 2, examples });
const fullWith = (selected: number[], base: number[]) =>
  fullFor(selected, additiveOver(selected, [0, 0, 0, 0]), additiveClassGame(selected, base, a));
const softmax = (x: number[]) => {
  const e = x.map((v) => Math.exp(v - Math.max(...x)));
  const z = e.reduce((s, v) => s + v);
  return e.map((v) => v / z);
};

describe('FedMS (papers/000 Alg. 2)', () => {
  const T = 0.5;
  const alpha = 0.6;

  it('round 1: every silo (footnote 1), coreset aggregation, Eq. 8–10 state by hand (MS-MR)', async () => {
    const s = fedMs({ estimator: 'exact', temperature: T, alpha, clientsPerRound: 1 });
    const state = s.init(setup);
    expect(s.select(state, selectContext(setup, 1, 1))).toEqual([0, 1, 2, 3]);
    const agg = await s.aggregationWeights(
      state,
      aggregateContext(setup, 1, [0, 1, 2, 3], 1, { full: fullWith([0, 1, 2, 3], [0.5, 0.2]) }),
    );
    // Coreset = argmax_Q Σ_c v^c(Q) = silos with Σ_c a_i^c > 0 = {0, 1, 2}; only they are aggregated, by n_i.
    expect(agg.state.coreset).toEqual([0, 1, 2]);
    expect(Array.from(agg.weights)).toEqual([10, 20, 30, 0]);
    // v̂ = base + Σ_{0,1,2} a = [0.75, 0.55]; β = softmax((1 − v̂)/T) (Eq. 10).
    const beta = softmax([0.25 / T, 0.45 / T]);
    // S = α·0 + (1 − α)·φ with φ = a (Eq. 8); Ŝ = Σ_c β^c S^c (Eq. 9).
    a.forEach((ai, i) => {
      for (const [c, x] of ai.entries())
        expect(agg.state.accumulated[i * 2 + c]).toBeCloseTo((1 - alpha) * x, 12);
    });
    a.forEach((ai, i) => {
      expect(agg.state.scores[i]).toBeCloseTo((1 - alpha) * (beta[0]! * ai[0]! + beta[1]! * ai[1]!), 12);
    });
    // Shapley rewards of the round (Eq. 13).
    a.forEach((ai, i) => {
      expect(agg.values![i]).toBeCloseTo(beta[0]! * ai[0]! + beta[1]! * ai[1]!, 12);
    });
    expect(agg.state.lastCoresetTotal).toBeCloseTo(1.3, 12);
  });

  it('MS-GTG (default estimator; joint and per-class sampling) recovers the class-wise values of an additive game when ε_i = 0', async () => {
    // With ε_i > 0 GTG truncates a walk once |v_N − v_{j−1}| < ε_i; here class 0's marginals of
    // silos 0, 1, 3 cancel (0.1 + 0.1 − 0.2), so a walk starting with silo 2 would be truncated (GTG's bias).
    for (const sampler of ['joint', 'perClass'] as const) {
      const s = fedMs({ temperature: T, alpha, epsilonI: 0, sampler });
      const agg = await s.aggregationWeights(
        s.init(setup),
        aggregateContext(setup, 1, [0, 1, 2, 3], 4, { full: fullWith([0, 1, 2, 3], [0.5, 0.2]) }),
      );
      a.forEach((ai, i) => {
        for (const [c, x] of ai.entries())
          expect(agg.state.accumulated[i * 2 + c]).toBeCloseTo((1 - alpha) * x, 12);
      });
    }
  });

  it('updates S only for participants (Eq. 8) and discards a diverging coreset (§5.1)', async () => {
    const s = fedMs({ estimator: 'exact', temperature: T, alpha });
    const r1 = await s.aggregationWeights(
      s.init(setup),
      aggregateContext(setup, 1, [0, 1, 2, 3], 1, { full: fullWith([0, 1, 2, 3], [0.5, 0.2]) }),
    );
    // Round 2 of 2: ε_d = 0.1. Coreset {1, 2} over base [0.3, 0.1]: Σ_c v̂ = 0.4 + 0.5 = 0.9 < 1.3 − 0.1.
    expect(divergenceThreshold(2, 2, 3, 0.1)).toBeCloseTo(0.1, 14);
    const ctx = aggregateContext(setup, 2, [1, 2, 3], 2, { full: fullWith([1, 2, 3], [0.3, 0.1]) });
    const r2 = await s.aggregationWeights(r1.state, ctx);
    expect(Array.from(r2.weights)).toEqual([0, 0, 0]); // K̂^t = ∅: nothing aggregated
    expect(r2.state.coreset).toEqual([]);
    expect(r2.state.lastCoresetTotal).toBe(r1.state.lastCoresetTotal);
    expect(r2.state.accumulated[0]).toBe(r1.state.accumulated[0]); // silo 0 did not take part
    expect(r2.state.accumulated[1]).toBe(r1.state.accumulated[1]);
    // S_1 ← α·S_1 + (1 − α)·φ_1 for a participant.
    expect(r2.state.accumulated[2]).toBeCloseTo(alpha * (1 - alpha) * 0.1 + (1 - alpha) * 0.1, 12);
    // Without the divergence rule the coreset {1, 2} is aggregated.
    const keep = fedMs({ estimator: 'exact', temperature: T, alpha, discardDivergent: false });
    expect(Array.from((await keep.aggregationWeights(r1.state, ctx)).weights)).toEqual([20, 30, 0]);
    // A smaller drop than ε_d keeps the coreset: base [0.5, 0.2] gives 1.2 vs 1.3 at ε_d(2 of 2) = 0.1 → 0.1 is not > 0.1.
    const close = aggregateContext(setup, 2, [1, 2, 3], 2, { full: fullWith([1, 2, 3], [0.5, 0.25]) });
    expect(Array.from((await s.aggregationWeights(r1.state, close)).weights)).toEqual([20, 30, 0]);
  });

  it('after round 1 samples k silos without replacement by P = softmax(Ŝ) (Eq. 12; Hoeffding, δ = 1e-9)', () => {
    const s = fedMs({ clientsPerRound: 1 });
    const state: FedMsState = {
      accumulated: new Float64Array(8),
      scores: Float64Array.from([2, 0, 1, -1]),
      beta: Float64Array.from([0.5, 0.5]),
      lastCoresetTotal: null,
      coreset: [],
    };
    const p = softmax([2, 0, 1, -1]);
    const trials = 20000;
    const counts = [0, 0, 0, 0];
    for (let t = 0; t < trials; t++)
      for (const i of s.select(state, selectContext(setup, 2, t))) counts[i]!++;
    const bound = hoeffding(trials, 1e-9);
    counts.forEach((c, i) => {
      expect(Math.abs(c / trials - p[i]!)).toBeLessThan(bound);
    });
    const two = fedMs({ clientsPerRound: 2 });
    const draw = (seed: number) =>
      Array.from({ length: 20 }, (_, t) => two.select(state, selectContext(setup, 2, seed + t)));
    expect(draw(1)).toEqual(draw(1));
    expect(draw(1)).not.toEqual(draw(99));
    expect(draw(1).every((sel) => sel.length === 2 && sel[0] !== sel[1])).toBe(true);
  });

  it('decays ε_d exponentially from 3.0 to 0.1 and needs the per-class game', async () => {
    expect(divergenceThreshold(1, 10, 3, 0.1)).toBe(3);
    expect(divergenceThreshold(10, 10, 3, 0.1)).toBeCloseTo(0.1, 14);
    expect(divergenceThreshold(4, 7, 3, 0.1)).toBeCloseTo(Math.sqrt(0.3), 14);
    const s = fedMs();
    await expect(s.aggregationWeights(s.init(setup), aggregateContext(setup, 1, [0, 1], 1))).rejects.toThrow(
      TypeError,
    );
    const wrongDims = fullFor(
      [0, 1],
      additiveOver([0, 1], [0, 0, 0, 0]),
      additiveClassGame(
        [0, 1],
        [0, 0, 0],
        a.map((x) => [...x, 0]),
      ),
    );
    await expect(
      s.aggregationWeights(s.init(setup), aggregateContext(setup, 1, [0, 1], 1, { full: wrongDims })),
    ).rejects.toThrow(/^ctx\.full\.perClass: expected 2 classes/);
  });
});
