import { describe, expect, it } from 'vitest';
import { fedEmd, fedEmdInit, fedEmdProbabilities, labelEmd } from '../../src/strategies/fedemd.js';
import { emptyHistory, recordRound } from '../../src/strategies/strategy.js';
import {
  aggregateContext,
  hoeffding,
  inclusionProbabilities,
  makeSetup,
  selectContext,
} from './_fixtures.js';

// 5 silos, 3 classes: four balanced over classes 0, 1; silo 4 a Maverick owning class 2.
const histograms = [
  [50, 50, 0],
  [50, 50, 0],
  [60, 40, 0],
  [40, 60, 0],
  [10, 10, 80],
];
const setup = makeSetup(5, { classes: 3, histograms, seed: 3, examples: [100, 100, 100, 100, 100] });

describe('FedEMD (papers/001 Alg. 1)', () => {
  it('measures label distance as Σ_c |p_c − q_c| of normalized histograms (Eq. 11)', () => {
    expect(labelEmd([1, 1, 0], [0, 0, 5])).toBeCloseTo(2, 12);
    expect(labelEmd([2, 2], [10, 10])).toBe(0);
    expect(labelEmd([3, 1], [1, 3])).toBeCloseTo(1, 12);
    expect(() => labelEmd([1, 2], [1])).toThrow(RangeError);
    expect(() => labelEmd([1, -2], [1, 1])).toThrow(/class 1/);
  });

  it('computes Proba^t = softmax(α·ẽmd_g − (t−1)·β·ẽmd_c) by hand (lines 4–7, 18–23)', () => {
    const state = fedEmdInit(setup);
    // c1 must be a class two silos hold: 0 or 1. P^i(c1) = .5, .5, .6|.4, .4|.6, .1 → mean 0.42 either way.
    expect([0, 1]).toContain(state.referenceClass);
    expect(state.normalizer).toBeCloseTo(0.42, 12);
    // D_g = [210, 210, 80] / 500 = [.42, .42, .16].
    const g = [0.42, 0.42, 0.16];
    const emd = (h: number[]) => {
      const t = h.reduce((a, b) => a + b);
      return h.reduce((s, x, c) => s + Math.abs(x / t - g[c]!), 0);
    };
    histograms.forEach((h, i) => {
      expect(state.globalDistance[i]).toBeCloseTo(emd(h) / 0.42, 12);
    });
    const alpha = 0.15;
    const beta = 0.0015;
    const softmax = (x: number[]) => {
      const e = x.map(Math.exp);
      const s = e.reduce((a, b) => a + b);
      return e.map((v) => v / s);
    };
    const p1 = fedEmdProbabilities(state, setup, emptyHistory(5), 1, { alpha, beta });
    softmax(histograms.map((_, i) => alpha * state.globalDistance[i]!)).forEach((p, i) => {
      expect(p1[i]).toBeCloseTo(p, 12);
    });
    // After rounds 1 and 2 selected {0, 4} and {1, 4}: D_c = [120, 120, 160]; round 3 uses t = 2.
    let h = recordRound(emptyHistory(5), { round: 1, selected: [0, 4], scores: {} });
    h = recordRound(h, { round: 2, selected: [1, 4], scores: {} });
    const cur = [120 / 400, 120 / 400, 160 / 400];
    const emdC = (x: number[]) => {
      const t = x.reduce((a, b) => a + b);
      return x.reduce((s, v, c) => s + Math.abs(v / t - cur[c]!), 0) / 0.42;
    };
    const p3 = fedEmdProbabilities(state, setup, h, 3, { alpha, beta });
    softmax(histograms.map((x, i) => alpha * state.globalDistance[i]! - 2 * beta * emdC(x))).forEach(
      (p, i) => {
        expect(p3[i]).toBeCloseTo(p, 12);
      },
    );
    // The Maverick is the most likely silo in round 1.
    expect(Math.max(...p1)).toBe(p1[4]);
  });

  it('with k = 1 selects silo i with frequency Proba_i (Hoeffding, δ = 1e-9 per silo)', () => {
    const s = fedEmd({ clientsPerRound: 1, alpha: 1 });
    const state = s.init(setup);
    const p = fedEmdProbabilities(state, setup, emptyHistory(5), 1, { alpha: 1, beta: 0.0015 });
    const trials = 20000;
    const counts = new Array(5).fill(0);
    for (let t = 0; t < trials; t++) for (const i of s.select(state, selectContext(setup, 1, t))) counts[i]++;
    const bound = hoeffding(trials, 1e-9);
    counts.forEach((c, i) => {
      expect(Math.abs(c / trials - p[i]!)).toBeLessThan(bound);
    });
    // The weights matter: the Maverick's frequency is far from uniform 1/5.
    expect(counts[4] / trials - 0.2).toBeGreaterThan(3 * bound);
  });

  it('with k = 2 samples without replacement: inclusion = successive-sampling probabilities', () => {
    const s = fedEmd({ clientsPerRound: 2, alpha: 1 });
    const state = s.init(setup);
    const p = Array.from(fedEmdProbabilities(state, setup, emptyHistory(5), 1, { alpha: 1, beta: 0.0015 }));
    const incl = inclusionProbabilities(p, 2);
    const trials = 20000;
    const counts = new Array(5).fill(0);
    for (let t = 0; t < trials; t++) {
      const sel = s.select(state, selectContext(setup, 1, t));
      expect(new Set(sel).size).toBe(2);
      for (const i of sel) counts[i]++;
    }
    const bound = hoeffding(trials, 1e-9);
    counts.forEach((c, i) => {
      expect(Math.abs(c / trials - incl[i]!)).toBeLessThan(bound);
    });
    // Inclusion is not k·p_i (what independent draws with replacement would give in expectation).
    expect(Math.abs(incl[4]! - 2 * p[4]!)).toBeGreaterThan(3 * bound);
  });

  it('lowers the Maverick’s probability as it keeps being selected (the t·β term)', () => {
    const state = fedEmdInit(setup);
    let h = emptyHistory(5);
    for (let r = 1; r <= 20; r++) h = recordRound(h, { round: r, selected: [0, 1, 2, 3], scores: {} });
    const early = fedEmdProbabilities(state, setup, emptyHistory(5), 1, { alpha: 0.15, beta: 0.05 })[4]!;
    const late = fedEmdProbabilities(state, setup, h, 21, { alpha: 0.15, beta: 0.05 })[4]!;
    expect(late).toBeLessThan(early);
  });

  it('is determined by the seed, aggregates by example counts and is private-mode safe', async () => {
    const s = fedEmd({ clientsPerRound: 2 });
    const state = s.init(setup);
    const a = Array.from({ length: 30 }, (_, r) => s.select(state, selectContext(setup, 1, r)));
    const b = Array.from({ length: 30 }, (_, r) => s.select(state, selectContext(setup, 1, r)));
    const c = Array.from({ length: 30 }, (_, r) => s.select(state, selectContext(setup, 1, r + 1000)));
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect(s.requiresFullVisibility).toBe(false);
    const w = await s.aggregationWeights(
      state,
      aggregateContext(makeSetup(5, { classes: 3, histograms, examples: [1, 2, 3, 4, 5] }), 1, [1, 4], 0),
    );
    expect(Array.from(w.weights)).toEqual([2, 5]);
  });
});
