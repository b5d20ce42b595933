import { describe, expect, it } from 'vitest';
import { has } from '../../scoring/coalition.js';
import { gameFromFunction } from '../../scoring/game.js';
import { sFedAvg } from '../../src/strategies/s-fedavg.js';
import {
  additiveClassGame,
  aggregateContext,
  fullFor,
  hoeffding,
  makeSetup,
  selectContext,
} from './_fixtures.js';

const setup = makeSetup(4, { examples: [10, 20, 30, 40] });

describe('S-FedAvg (baseline of papers/000 §5.1)', () => {
  it('values participants by exact per-round Shapley (MR) and decays relevance by α', async () => {
    const s = sFedAvg({ alpha: 0.7 });
    // Unanimity game on round-local players 0 and 1 (silos 1 and 3): φ = [1/2, 0, 1/2].
    const selected = [1, 2, 3];
    const game = gameFromFunction(3, (c) => (has(c, 0) && has(c, 2) ? 1 : 0));
    const full = fullFor(selected, game, additiveClassGame(selected, [0], [[0], [0], [0], [0]]));
    const state = { relevance: Float64Array.from([0.2, 0.4, 0.6, 0.8]) };
    const agg = await s.aggregationWeights(state, aggregateContext(setup, 1, selected, 1, { full }));
    expect(Array.from(agg.values!)).toEqual([0.5, 0, 0.5]);
    const expected = [0.2, 0.7 * 0.4 + 0.3 * 0.5, 0.7 * 0.6, 0.7 * 0.8 + 0.3 * 0.5];
    expected.forEach((x, i) => {
      expect(agg.state.relevance[i]).toBeCloseTo(x, 14);
    });
    expect(Array.from(agg.weights)).toEqual([20, 30, 40]); // FedAvg aggregation
    expect(Array.from(state.relevance)).toEqual([0.2, 0.4, 0.6, 0.8]); // pure
  });

  it('selects by P = softmax(relevance) without replacement (Hoeffding, δ = 1e-9); seeded', () => {
    const s = sFedAvg({ clientsPerRound: 1 });
    const state = { relevance: Float64Array.from([1.5, 0, -1, 0.5]) };
    const e = [1.5, 0, -1, 0.5].map(Math.exp);
    const z = e.reduce((a, b) => a + b);
    const trials = 20000;
    const counts = [0, 0, 0, 0];
    for (let t = 0; t < trials; t++)
      for (const i of s.select(state, selectContext(setup, 3, t))) counts[i]!++;
    counts.forEach((c, i) => {
      expect(Math.abs(c / trials - e[i]! / z)).toBeLessThan(hoeffding(trials, 1e-9));
    });
    const two = sFedAvg({ clientsPerRound: 2 });
    const draw = (seed: number) =>
      Array.from({ length: 20 }, (_, t) => two.select(state, selectContext(setup, 3, seed + t)));
    expect(draw(5)).toEqual(draw(5));
    expect(draw(5)).not.toEqual(draw(55));
  });

  it('needs full visibility and at most 20 participants', async () => {
    const s = sFedAvg();
    await expect(s.aggregationWeights(s.init(setup), aggregateContext(setup, 1, [0, 1], 1))).rejects.toThrow(
      TypeError,
    );
    const big = makeSetup(21);
    const sel = Array.from({ length: 21 }, (_, i) => i);
    const full = fullFor(
      sel,
      gameFromFunction(21, () => 0),
      additiveClassGame(
        sel,
        [0],
        sel.map(() => [0]),
      ),
    );
    await expect(
      s.aggregationWeights(s.init(big), aggregateContext(big, 1, sel, 1, { full })),
    ).rejects.toThrow(/at most 20 participants/);
  });
});
