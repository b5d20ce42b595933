/**
 * The round engine drives any registered strategy through its interface alone: a strategy a user
 * module registers runs through `runSeed`, and what it declares (full visibility, the validation
 * reference update) is what it gets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coalitionOf } from '../../scoring/coalition.js';
import { dataShapeOf } from '../../src/fl/consortium-data.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { createTfLearner } from '../../src/fl/learner/tf-learner.js';
import { type ExperimentConfig, parseConfig } from '../../src/records/config.js';
import { runSeed } from '../../src/sim/round-loop.js';
import { registerStrategy } from '../../src/strategies/registry.js';
import type { AggregateContext, RoundOutcome, Strategy } from '../../src/strategies/strategy.js';

/** What the user strategies saw. */
const seen: { name: string; round: number; reference: number | undefined; updates: number | undefined }[] =
  [];
const observed: RoundOutcome[] = [];

/** Silos 0 and 1 every round, weights 1 and `boost`; counts the rounds it observed. */
function pair(name: string, o: { full: boolean; reference: boolean; boost: number }): Strategy<number> {
  return {
    name,
    requiresFullVisibility: o.full,
    needsReferenceUpdate: o.reference,
    init: () => 0,
    select: () => [0, 1],
    async aggregationWeights(state, ctx: AggregateContext) {
      seen.push({
        name,
        round: ctx.round,
        reference: ctx.full?.referenceUpdate?.length,
        updates: ctx.full?.updates.length,
      });
      if (ctx.full) await ctx.full.game.values([[0], [1], [0, 1]].map((m) => coalitionOf(2, m)));
      return { weights: Float64Array.of(1, o.boost), state };
    },
    observe(state, outcome) {
      observed.push(outcome);
      return state + 1;
    },
  };
}

registerStrategy({
  name: 'test-pair-full',
  create: (p) =>
    pair('test-pair-full', { full: true, reference: true, boost: p.number('boost', 1, { min: 0 }) }),
  description: 'test: silos 0 and 1, full visibility and Δ_val',
});
registerStrategy({
  name: 'test-pair-private',
  create: (p) => pair('test-pair-private', { full: false, reference: false, boost: p.number('boost', 1) }),
  description: 'test: silos 0 and 1, private',
});

const base = {
  silos: 3,
  rounds: 2,
  data: { dataset: 'synthetic', trainSize: 300, testSize: 100, synthetic: { features: 16, classes: 4 } },
  model: { kind: 'mlp' as const, hidden: [8] },
  comparison: { estimators: { mrsv: {} }, trueShapley: false },
  // The pair strategies select 2 silos, a round every networked silo refuses (issue 32 W1); the
  // engine simulates it with the floor of issue 27 (s = 0.9: f_2 = 1/9), so weights [1, 3] stand.
  secureAggregation: { maxWeightShare: 0.9 },
};
const config = (strategy: Record<string, unknown>): ExperimentConfig =>
  parseConfig({ ...base, name: String(strategy.name), strategy });

let learner: Learner;
beforeAll(async () => {
  learner = await createTfLearner({ ...dataShapeOf(config({ name: 'x' })), model: base.model, training: {} });
});
afterAll(async () => learner.close());

describe('runSeed with a user-registered strategy', () => {
  it('selects, weighs and observes through the strategy interface; a full one gets Δ_val', async () => {
    seen.length = 0;
    observed.length = 0;
    const run = await runSeed(config({ name: 'test-pair-full', boost: 3 }), 2, { learner });
    expect(run.rounds.map((rd) => rd.selected)).toEqual([
      [0, 1],
      [0, 1],
    ]);
    for (const rd of run.rounds) {
      expect(rd.aggregationWeights).toEqual([1, 3, null]);
      expect(rd.evaluations.strategy).toBe(3); // the three coalitions it asked for (no per-class ones)
      expect(rd.scores.fp).toHaveLength(3);
      expect(rd.scores.mrsv![2]).toBeNull();
    }
    expect(seen).toEqual([
      { name: 'test-pair-full', round: 1, reference: learner.parameterCount, updates: 2 },
      { name: 'test-pair-full', round: 2, reference: learner.parameterCount, updates: 2 },
    ]);
    expect(observed.map((o) => o.round)).toEqual([1, 2]);
    expect(observed[0]!.scores).toBe(run.rounds[0]!.scores);
  });

  it("Δ_val takes K steps: the mean local steps of the round's silos (papers/002 Alg. 2), or training.validationSteps", async () => {
    const jobs: { steps?: number; n: number }[] = [];
    const recording: Learner = {
      ...learner,
      initialParameters: (s) => learner.initialParameters(s),
      evaluate: (p, d) => learner.evaluate(p, d),
      coalitionGames: (c) => learner.coalitionGames(c),
      close: () => learner.close(),
      trainMany: (p, js) => {
        for (const j of js) jobs.push({ ...(j.steps !== undefined ? { steps: j.steps } : {}), n: j.data.n });
        return learner.trainMany(p, js);
      },
    };
    const training = { batchSize: 16, epochs: 2 };
    const run = await runSeed(parseConfig({ ...base, training, strategy: { name: 'test-pair-full' } }), 2, {
      learner: recording,
    });
    const [n0, n1] = run.consortium.examples;
    const k = Math.round((2 * Math.ceil(n0! / 16) + 2 * Math.ceil(n1! / 16)) / 2); // silos 0 and 1
    const reference = jobs.filter((j) => j.steps !== undefined);
    expect(reference).toHaveLength(2); // one Δ_val per round
    for (const j of reference) expect(j.steps).toBe(k);
    expect(jobs.filter((j) => j.steps === undefined)).toHaveLength(4); // the silos train by epochs
    jobs.length = 0;
    await runSeed(
      parseConfig({
        ...base,
        training: { ...training, validationSteps: 3 },
        strategy: { name: 'test-pair-full' },
      }),
      2,
      { learner: recording },
    );
    expect(jobs.filter((j) => j.steps !== undefined).map((j) => j.steps)).toEqual([3, 3]);
  });

  it('a private strategy gets neither updates nor Δ_val, and its evaluations are not recorded', async () => {
    seen.length = 0;
    const run = await runSeed(config({ name: 'test-pair-private' }), 2, { learner });
    expect(seen.map((s) => [s.reference, s.updates])).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
    for (const rd of run.rounds) {
      expect(rd.aggregationWeights).toEqual([1, 1, null]);
      expect(rd.evaluations.strategy).toBeUndefined();
    }
  });

  it('rejects a parameter the user strategy does not read, naming it', async () => {
    await expect(runSeed(config({ name: 'test-pair-private', gamma: 1 }), 2, { learner })).rejects.toThrow(
      /^strategy\.gamma: unknown parameter of 'test-pair-private'/,
    );
  });
});
