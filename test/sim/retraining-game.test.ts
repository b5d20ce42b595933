/**
 * The retraining game (papers/003 §3.1) runs the engine's round for every coalition: the grand
 * coalition's run is the engine's plaintext FedAvg run over every silo, to the last bit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataShapeOf } from '../../src/fl/consortium-data.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { createTfLearner } from '../../src/fl/learner/tf-learner.js';
import { type ExperimentConfig, parseConfig } from '../../src/records/config.js';
import { retrainingGame, retrainingShapley } from '../../src/sim/retraining-game.js';
import { runSeed } from '../../src/sim/round-loop.js';

const cfg: ExperimentConfig = parseConfig({
  name: 'retraining',
  silos: 3,
  rounds: 2,
  data: { dataset: 'synthetic', trainSize: 300, testSize: 100, synthetic: { features: 16, classes: 4 } },
  partition: { kind: 'dirichlet', alpha: 1 },
  model: { kind: 'mlp', hidden: [8] },
  attacks: [{ silo: 2, kind: 'scale', factor: -1 }],
  secureAggregation: { enabled: false },
  // A continuous utility, so that any difference in the final model would show.
  scoring: { utility: 'negLoss' },
  comparison: { estimators: {}, trueShapley: true },
});

let learner: Learner;
beforeAll(async () => {
  learner = await createTfLearner({ ...dataShapeOf(cfg), model: { kind: 'mlp', hidden: [8] }, training: {} });
});
afterAll(async () => learner.close());

describe('retrainingGame', () => {
  it("v(N) is the engine's plaintext FedAvg run over every silo (attacks included); v(∅) the initial model", async () => {
    const table = await retrainingGame(cfg, 5, learner);
    expect(table).toHaveLength(8);
    const run = await runSeed(cfg, 5, { learner });
    expect(run.rounds.map((rd) => rd.selected)).toEqual([
      [0, 1, 2],
      [0, 1, 2],
    ]);
    expect(table[7]).toBe(-run.finalLoss);
    expect(table[0]).toBe(run.rounds[0]!.utilities.empty);
  });

  it('its Shapley value is efficient: the values sum to v(N) − v(∅)', async () => {
    const calls: [number, number][] = [];
    const sv = await retrainingShapley(cfg, 5, learner, (done, total) => calls.push([done, total]));
    const table = await retrainingGame(cfg, 5, learner);
    expect(sv.reduce((a, b) => a + b, 0)).toBeCloseTo(table[7]! - table[0]!, 10);
    expect(calls.at(-1)).toEqual([7, 7]);
  });

  it('refuses more than 16 silos, naming comparison.trueShapley', async () => {
    await expect(retrainingGame({ ...cfg, silos: 17 }, 1, learner)).rejects.toThrow(
      /^comparison\.trueShapley: /,
    );
  });
});
