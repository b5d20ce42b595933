/**
 * src/strategies/networked-plan.ts: which strategies run networked (the registry entries' `networked`)
 * and the refusals' messages; the server's selection (no example counts, no weights) is the silos'
 * and the engine's; and the protocol refuses a sender outside the round's participants.
 */
import { describe, expect, it } from 'vitest';
import { createRng } from '../../scoring/seeded-rng.js';
import { deriveSeed } from '../../src/data/seed.js';
import { networkedRun } from '../../src/fl/networked.js';
import { networkedStrategy, planRound, publicSetup } from '../../src/strategies/networked-plan.js';
import { createStrategy, STRATEGY_NAMES } from '../../src/strategies/registry.js';
import { emptyHistory } from '../../src/strategies/strategy.js';

const REFUSED: Record<string, RegExp> = {
  fedemd: /label histogram/,
  fedowen: /Owen values .* individual update/,
  fedtsv: /Trajectory Shapley .* individual update/,
  fedms: /Maverick-Shapley .* individual update/,
  's-fedavg': /exact Shapley .* individual update/,
  greedyfed: /GTG-Shapley .* individual update/,
};

describe('networkedStrategy', () => {
  it('runs FedAvg, score-weighted and score-selection; refuses the others saying why', () => {
    for (const name of STRATEGY_NAMES) {
      const why = REFUSED[name];
      if (why === undefined) expect(networkedStrategy({ name }).name).toBe(name);
      else {
        expect(() => networkedStrategy({ name })).toThrow(RangeError);
        expect(() => networkedStrategy({ name })).toThrow(
          new RegExp(`^strategy\\.name: '${name}' cannot run networked: it.*${why.source}`),
        );
      }
    }
  });

  it('refuses a score a networked run does not publish', () => {
    expect(() => networkedStrategy({ name: 'score-weighted', score: 'mrsv' })).toThrow(
      'strategy.score: a networked run publishes only the private scores (loo, ioi, fp, ee, eeMedian), got "mrsv"',
    );
  });

  it('a networked configuration with a refused strategy fails before any data is built', () => {
    expect(() =>
      networkedRun(
        {
          silos: 4,
          rounds: 1,
          strategy: { name: 'fedms' },
          data: { dataset: 'synthetic', synthetic: { features: 4, classes: 3, examples: 100 } },
        },
        1,
      ),
    ).toThrow(/^strategy\.name: 'fedms' cannot run networked: it values silos by Maverick-Shapley/);
  });
});

describe('planRound', () => {
  it("the server's selection (public setup, no weights) is the engine's select step", async () => {
    const strategy = createStrategy({ name: 'fedavg', clientsPerRound: 3 });
    const published: { round: number; selected: number[]; survivors: number[]; scores: null }[] = [];
    for (let round = 1; round <= 5; round++) {
      const setup = publicSetup(6, 5, 42);
      const server = await planRound({ strategy, setup, seed: 42, round, published, weights: false });
      // round/select.ts with an empty history (FedAvg's selection ignores the history).
      const engine = strategy.select(null, {
        round,
        setup,
        history: emptyHistory(6),
        rng: createRng(deriveSeed(42, round, 0x5e1)),
      });
      expect(server.selected).toEqual(engine);
      expect(server.selected).toHaveLength(3);
      expect(server.weights).toBeUndefined();
      published.push({ round, selected: server.selected as number[], survivors: [], scores: null });
    }
  });

  it('selection by cumulative private scores takes unscored silos first, then the best', async () => {
    const strategy = createStrategy({ name: 'score-selection', clientsPerRound: 2, score: 'fp' });
    const setup = publicSetup(4, 3, 1);
    const r1 = await planRound({ strategy, setup, seed: 1, round: 1, published: [], weights: false });
    expect(r1.selected).toEqual([0, 1]);
    const published = [
      { round: 1, selected: [0, 1], survivors: [0, 1], scores: { fp: [0.1, 0.3, null, null] } },
    ];
    const r2 = await planRound({ strategy, setup, seed: 1, round: 2, published, weights: false });
    expect(r2.selected).toEqual([2, 3]);
    const more = [
      ...published,
      { round: 2, selected: [2, 3], survivors: [2, 3], scores: { fp: [null, null, 0.2, 0.05] } },
    ];
    const r3 = await planRound({ strategy, setup, seed: 1, round: 3, published: more, weights: false });
    expect(r3.selected).toEqual([1, 2]);
  });

  it('refuses a published history with a gap', async () => {
    const strategy = createStrategy({ name: 'fedavg' });
    await expect(
      planRound({
        strategy,
        setup: publicSetup(3, 3, 1),
        seed: 1,
        round: 3,
        published: [{ round: 2, selected: null, survivors: null, scores: null }],
        weights: false,
      }),
    ).rejects.toThrow(/published: expected rounds 1 … 2/);
  });
});
