/**
 * Every strategy through the real round engine (secure aggregation, private scoring, harness) on
 * small synthetic data: FedTSV's zero weights once crashed the harness's coalition game.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataShapeOf } from '../../src/fl/consortium-data.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { createTfLearner } from '../../src/fl/learner/tf-learner.js';
import { parseConfig } from '../../src/records/config.js';
import { runExperiment } from '../../src/sim/experiment.js';
import { STRATEGY_NAMES } from '../../src/strategies/registry.js';

const base = {
  silos: 4,
  rounds: 2,
  data: { dataset: 'synthetic', trainSize: 400, testSize: 100, synthetic: { features: 16, classes: 4 } },
  model: { kind: 'mlp', hidden: [8] },
  comparison: { trueShapley: false, estimators: { mrsv: {}, tsv: {} } },
};

let learner: Learner;
beforeAll(async () => {
  learner = await createTfLearner({
    ...dataShapeOf(parseConfig(base)),
    model: { kind: 'mlp', hidden: [8] },
    training: {},
  });
});
afterAll(async () => learner.close());

describe('strategies in the round engine', () => {
  it.each(STRATEGY_NAMES)('%s runs end to end and records its selection and weights', async (name) => {
    const partial = ['fedemd', 'fedowen', 'fedms', 's-fedavg', 'greedyfed'].includes(name);
    const cfg = parseConfig({ ...base, name, strategy: { name, ...(partial ? { fraction: 0.5 } : {}) } });
    const r = await runExperiment(cfg, { learner, seeds: [3], fedscoreVersion: 'test' });
    const rounds = r.runs[0]!.rounds;
    expect(rounds).toHaveLength(2);
    for (const rd of rounds) {
      expect(rd.selected.length).toBeGreaterThanOrEqual(2);
      for (const s of rd.selected) expect(rd.aggregationWeights[s]).toBeGreaterThanOrEqual(0);
      expect(Number.isFinite(rd.testAccuracy)).toBe(true);
    }
    const full = ['fedowen', 'fedtsv', 'fedms', 's-fedavg', 'greedyfed'].includes(name);
    expect(r.visibility.serverReadIndividualUpdates).toBe(full);
    // The strategy's own valuation cost is recorded for full-visibility strategies only: distinct
    // coalitions of the round's k silos (scalar and per-class games), at most 2 · 2^k.
    for (const rd of rounds) {
      const spent = rd.evaluations.strategy;
      if (!full) expect(spent).toBeUndefined();
      else if (name === 'fedtsv')
        expect(spent).toBe(0); // geometric utility, no model evaluations
      else {
        expect(spent).toBeGreaterThan(0);
        expect(spent).toBeLessThanOrEqual(2 * 2 ** rd.selected.length);
      }
    }
  });
});
