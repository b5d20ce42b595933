import { describe, expect, it } from 'vitest';
import { fedOwen, ucbScores } from '../../src/strategies/fedowen.js';
import { emptyHistory, type History, recordRound } from '../../src/strategies/strategy.js';
import {
  additiveClassGame,
  additiveOver,
  aggregateContext,
  fullFor,
  hoeffding,
  makeSetup,
  selectContext,
} from './_fixtures.js';

const setup = makeSetup(6);
const historyWith = (participation: number[]): History => {
  let h = emptyHistory(participation.length);
  const max = Math.max(...participation);
  for (let r = 0; r < max; r++)
    h = recordRound(h, {
      round: r + 1,
      selected: participation.flatMap((p, i) => (p > r ? [i] : [])),
      scores: {},
    });
  return h;
};

describe('FedOwen selection (papers/004 §3.4, Alg. 2)', () => {
  it('computes the shifted UCB scores of Alg. 2 lines 4–13 by hand', () => {
    const o = { confidence: 0.1, floor: 0, lowGainScale: 0.1 };
    const s = ucbScores([0.2, -0.1, 0.05], [1, 0, 3], 2, o);
    const raw = [
      0.2 + 0.1 * Math.sqrt(Math.log(3) / 2),
      0.1 * 0.1 * Math.sqrt(Math.log(3) / 1), // φ < τ: g = 0, bonus × 0.1
      0.05 + 0.1 * Math.sqrt(Math.log(3) / 4),
    ];
    const min = Math.min(...raw);
    raw.forEach((x, i) => {
      expect(s[i]).toBeCloseTo(x - min, 14);
    });
    expect(() => ucbScores([1, 2], [0], 1, o)).toThrow(RangeError);
  });

  it('exploits the highest UCB score with ε = 0 (top-k): the bonus can beat a higher φ', () => {
    const s = fedOwen({ epsilon: 0, exploit: 'top-k', clientsPerRound: 1, confidence: 0.1 });
    const two = makeSetup(2);
    const state = { phi: Float64Array.from([0.1, 0.09]) };
    // σ = [50, 0] at t = 100: s_0 = 0.1 + 0.1·√(ln 101/51) ≈ 0.130, s_1 = 0.09 + 0.1·√(ln 101) ≈ 0.305.
    expect(s.select(state, selectContext(two, 100, 1, historyWith([50, 0])))).toEqual([1]);
    // Equal selections: φ decides.
    expect(s.select(state, selectContext(two, 100, 1, historyWith([5, 5])))).toEqual([0]);
  });

  it('explores with rate ε: P(selection ≠ exploited top-k) = ε·(1 − 1/C(n,k)) (Hoeffding, δ = 1e-9)', () => {
    const epsilon = 0.3;
    const s = fedOwen({ epsilon, exploit: 'top-k', clientsPerRound: 2 });
    const state = { phi: Float64Array.from([0.5, 0.1, 0.4, 0.0, 0.2, 0.3]) };
    const top = s.select({ phi: state.phi }, { ...selectContext(setup, 3, 0), rng: { next: () => 0.99 } });
    expect(top).toEqual([0, 2]);
    const trials = 20000;
    let differ = 0;
    for (let t = 0; t < trials; t++) {
      const sel = s.select(state, selectContext(setup, 3, t));
      expect(sel).toHaveLength(2);
      if (sel.join() !== top.join()) differ++;
    }
    expect(Math.abs(differ / trials - epsilon * (1 - 1 / 15))).toBeLessThan(hoeffding(trials, 1e-9));
  });

  it("exploits by sampling ∝ the shifted scores with exploit 'sample' (Alg. 2 lines 14–15)", () => {
    const s = fedOwen({ epsilon: 0, clientsPerRound: 1 });
    const state = { phi: Float64Array.from([0.5, 0.1, 0.4, 0.0, 0.2, 0.3]) };
    const history = historyWith([1, 2, 0, 3, 1, 0]);
    const scores = ucbScores(state.phi, history.participation, 5, {
      confidence: 0.1,
      floor: 0,
      lowGainScale: 0.1,
    });
    const total = scores.reduce((a, b) => a + b);
    const trials = 20000;
    const counts = new Array(6).fill(0);
    for (let t = 0; t < trials; t++)
      for (const i of s.select(state, selectContext(setup, 5, t, history))) counts[i]++;
    const bound = hoeffding(trials, 1e-9);
    counts.forEach((c, i) => {
      expect(Math.abs(c / trials - scores[i]! / total)).toBeLessThan(bound);
    });
    expect(counts[scores.indexOf(0)]).toBe(0); // the minimum is shifted to probability 0
  });

  it('is determined by the seed', () => {
    const s = fedOwen({ clientsPerRound: 2, epsilon: 0.5 });
    const state = { phi: Float64Array.from([0.5, 0.1, 0.4, 0.0, 0.2, 0.3]) };
    const draw = (seed: number) =>
      Array.from({ length: 30 }, (_, r) => s.select(state, selectContext(setup, 2, seed + r)));
    expect(draw(1)).toEqual(draw(1));
    expect(draw(1)).not.toEqual(draw(500));
  });
});

describe('FedOwen aggregation (papers/004 §3.5, Eq. 14)', () => {
  const w = [0.3, -0.2, 0.5, 0.1, 0.0, 0.25];
  const selected = [0, 1, 2, 4];
  const full = fullFor(
    selected,
    additiveOver(selected, w),
    additiveClassGame(
      selected,
      [0, 0],
      w.map(() => [0, 0]),
    ),
  );

  it('softmax-weights the Owen values of the participants; weights sum to 1 and order by value', async () => {
    const s = fedOwen();
    const agg = await s.aggregationWeights(s.init(setup), aggregateContext(setup, 1, selected, 9, { full }));
    // Additive game: every twin pair's increment is w_j, so Owen sampling returns w exactly.
    selected.forEach((i, b) => {
      expect(agg.values![b]).toBeCloseTo(w[i]!, 12);
    });
    const z = selected.reduce((acc, i) => acc + Math.exp(w[i]!), 0);
    selected.forEach((i, b) => {
      expect(agg.weights[b]).toBeCloseTo(Math.exp(w[i]!) / z, 12);
    });
    expect(agg.weights.reduce((a, b) => a + b)).toBeCloseTo(1, 14);
    const order = (x: ArrayLike<number>) => Array.from(x, (_, b) => b).sort((a, b) => x[b]! - x[a]!);
    expect(order(agg.weights)).toEqual(order(selected.map((i) => w[i]!)));
    // φ updated for participants only.
    expect(Array.from(agg.state.phi).map((x) => +x.toFixed(12))).toEqual([0.3, -0.2, 0.5, 0, 0, 0]);
  });

  it('needs full visibility', async () => {
    const s = fedOwen();
    expect(s.requiresFullVisibility).toBe(true);
    await expect(
      s.aggregationWeights(s.init(setup), aggregateContext(setup, 1, selected, 9)),
    ).rejects.toThrow(/^ctx\.full: 'fedowen' needs full visibility/);
  });
});
