import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { accumulateClassShapley, classDifficulty, maverickScores } from '../../scoring/maverick.js';
import {
  divergenceThreshold,
  type FedMsState,
  fedMs,
  SCORE_UNIT_SCALE,
  selectionProbabilities,
} from '../../src/strategies/fedms.js';
import { createStrategy } from '../../src/strategies/registry.js';
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
    const s = fedMs({ clientsPerRound: 1, scoreUnit: 'fraction' });
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
    const two = fedMs({ clientsPerRound: 2, scoreUnit: 'fraction' });
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

  it('Eq. 12 by hand in both units: Ŝ = [0.02, 0, −0.01, 0] is near uniform as fractions, not in percent', () => {
    const scores = [0.02, 0, -0.01, 0];
    // fraction: exp(Ŝ)/Σ exp(Ŝ), Σ = e^0.02 + 1 + e^−0.01 + 1 = 4.010251
    const fraction = [0.2543984, 0.2493609, 0.2468798, 0.2493609];
    // percent: exp(100·Ŝ)/Σ, Σ = e² + 1 + e^−1 + 1 = 9.756935
    const percent = [0.7573132, 0.1024912, 0.0377044, 0.1024912];
    const pf = selectionProbabilities(scores, 'fraction');
    const pp = selectionProbabilities(scores, 'percent');
    for (const [i, p] of fraction.entries()) expect(pf[i]).toBeCloseTo(p, 6);
    for (const [i, p] of percent.entries()) expect(pp[i]).toBeCloseTo(p, 6);
    expect(SCORE_UNIT_SCALE).toEqual({ percent: 100, fraction: 1 });
    expect(() => selectionProbabilities(scores, 'permille' as never)).toThrow(/^scoreUnit: expected one of/);
    expect(() => createStrategy({ name: 'fedms', scoreUnit: 'permille' })).toThrow(/^strategy\.scoreUnit: /);
    expect(() => selectionProbabilities([0, Number.NaN], 'percent')).toThrow(
      /^scores: entry 1 is not finite/,
    );
    // select() draws from these probabilities (Hoeffding, δ = 1e-9).
    const state: FedMsState = { ...fedMs().init(setup), scores: Float64Array.from(scores) };
    const trials = 20000;
    for (const [unit, p] of [
      ['fraction', fraction],
      ['percent', percent],
    ] as const) {
      const s = fedMs({ clientsPerRound: 1, scoreUnit: unit });
      const counts = [0, 0, 0, 0];
      for (let t = 0; t < trials; t++)
        for (const i of s.select(state, selectContext(setup, 2, t))) counts[i]!++;
      for (const [i, c] of counts.entries())
        expect(Math.abs(c / trials - p[i]!)).toBeLessThan(hoeffding(trials, 1e-9));
    }
    // The default is percent.
    expect(fedMs().select(state, selectContext(setup, 2, 5))).toEqual(
      fedMs({ scoreUnit: 'percent' }).select(state, selectContext(setup, 2, 5)),
    );
  });

  it('as fractions, Eq. 8–10 keep |Ŝ| ≤ 1, so Eq. 12 never favours a silo more than e² over another (property)', () => {
    // φ_i^c ∈ [−1, 1] (marginals of accuracies in [0, 1]); S is a convex combination of φ's and 0
    // (Eq. 8); β sums to 1 (Eq. 10); so |Ŝ_i| = |Σ_c β^c S_i^c| ≤ 1 (Eq. 9) and P_i/P_j ≤ e².
    const phiArb = fc.double({ min: -1, max: 1, noNaN: true });
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 6 }),
        fc.integer({ min: 2, max: 4 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0.001, max: 1, noNaN: true }),
        fc.array(
          fc.tuple(
            fc.array(phiArb, { minLength: 24, maxLength: 24 }),
            fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 }),
          ),
          { minLength: 1, maxLength: 6 },
        ),
        (n, C, alpha, T, rounds) => {
          let S: Float64Array = new Float64Array(n * C);
          let scores: Float64Array = new Float64Array(n);
          rounds.forEach(([phi, acc], r) => {
            const participants = Array.from({ length: n }, (_, i) => i).filter(
              (i) => (i + r) % 2 === 0 || n < 3,
            );
            S = accumulateClassShapley(S, C, participants, phi.slice(0, participants.length * C), alpha);
            scores = maverickScores(S, classDifficulty(acc.slice(0, C), T));
          });
          for (const x of scores) expect(Math.abs(x)).toBeLessThanOrEqual(1 + 1e-12);
          const p = selectionProbabilities(scores, 'fraction');
          expect(Math.max(...p) / Math.min(...p)).toBeLessThanOrEqual(Math.exp(2) * (1 + 1e-9));
        },
      ),
    );
  });

  it('as fractions the Table 2 setting cannot select Mavericks 54 % of the time; in percent it does', () => {
    // 58 silos, 6 per round (papers/000 Table 2); the 2 Mavericks at the largest Ŝ possible as
    // fractions (1), the 56 others at 0. Drawing one silo at a time ∝ the remaining weights, a
    // Maverick's chance per draw is at most e/(56 + 2e − 5e) (the other 5 draws took the largest
    // weights), so its participation is at most 6·e/(56 − 3e) = 0.3409, far from 54 %.
    const big = makeSetup(58, { classes: 2 });
    const scores = new Float64Array(58);
    scores[56] = 1;
    scores[57] = 1;
    const state: FedMsState = { ...fedMs().init(big), scores };
    const bound = (6 * Math.E) / (56 - 3 * Math.E);
    expect(bound).toBeCloseTo(0.3409, 4);
    const trials = 4000;
    const rate = (unit: 'fraction' | 'percent') => {
      const s = fedMs({ fraction: 6 / 58, scoreUnit: unit, firstRoundAll: false });
      let hits = 0;
      for (let t = 0; t < trials; t++) {
        const sel = s.select(state, selectContext(big, 2, t));
        expect(sel).toHaveLength(6);
        if (sel.includes(56)) hits++;
      }
      return hits / trials;
    };
    const h = hoeffding(trials, 1e-9);
    expect(rate('fraction')).toBeLessThan(bound + h);
    expect(rate('fraction')).toBeLessThan(0.54);
    expect(rate('percent')).toBeGreaterThan(1 - 1e-6 - h); // e^100 against 56: always selected
  });

  it('Ŝ of a silo that did not take part follows the round’s β (Eq. 9 for every i ∈ K, S_i kept by Eq. 8)', async () => {
    const s = fedMs({ estimator: 'exact', temperature: T, alpha, discardDivergent: false });
    const r1 = await s.aggregationWeights(
      s.init(setup),
      aggregateContext(setup, 1, [0, 1, 2, 3], 1, { full: fullWith([0, 1, 2, 3], [0.5, 0.2]) }),
    );
    // Round 1: S_0 = 0.4·[0.1, 0]; β = softmax([0.25, 0.45]/0.5) = [0.401312, 0.598688]; Ŝ_0 = 0.016052.
    expect(r1.state.scores[0]).toBeCloseTo(0.0160525, 6);
    // Round 2 without silo 0: coreset {1, 2} over base [0.3, 0.1] has v̂ = [0.45, 0.45], so β = [½, ½]
    // and Ŝ_0 = ½·0.04 = 0.02 although S_0 did not change.
    const r2 = await s.aggregationWeights(
      r1.state,
      aggregateContext(setup, 2, [1, 2, 3], 2, { full: fullWith([1, 2, 3], [0.3, 0.1]) }),
    );
    expect(Array.from(r2.state.beta)).toEqual([0.5, 0.5]);
    expect(r2.state.accumulated.slice(0, 2)).toEqual(r1.state.accumulated.slice(0, 2));
    expect(r2.state.scores[0]).toBeCloseTo(0.02, 12);
  });

  it('a coreset of zero updates alone (free riders) is the unchanged model with all the weight', async () => {
    // Silo 0 is a free rider (Δ = 0: v^c({0} ∪ Q) = v^c(Q)); every coalition with an update lowers
    // Σ_c v^c. The coreset excludes ∅ (scoring/maverick.ts) but {0} has the value of ∅, so it wins:
    // the round aggregates the free rider's zero update with weight n_0 and nothing else — the
    // global model stays, and the free rider's weight is the whole round's (outcomes' share = k).
    const free = [
      [0, 0],
      [-0.1, 0.05],
      [0.05, -0.2],
      [-0.2, -0.1],
    ];
    const s = fedMs({ estimator: 'exact', temperature: T, alpha });
    const agg = await s.aggregationWeights(
      s.init(setup),
      aggregateContext(setup, 1, [0, 1, 2, 3], 1, {
        full: fullFor(
          [0, 1, 2, 3],
          additiveOver([0, 1, 2, 3], [0, 0, 0, 0]),
          additiveClassGame([0, 1, 2, 3], [0.5, 0.2], free),
        ),
      }),
    );
    expect(agg.state.coreset).toEqual([0]);
    expect(Array.from(agg.weights)).toEqual([10, 0, 0, 0]);
  });
});
