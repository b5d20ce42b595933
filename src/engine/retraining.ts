/**
 * The retraining game and its true Shapley value (papers/003 §3.1): every coalition S runs its own
 * FedAvg from the same initial model for all rounds, and v(S) is the final test utility. 2^n runs.
 *
 * Each coalition run is the engine's round without selection or scoring: the same `train` (local
 * training with the same seeds, wrapped by the configured update attacks, ./trainer.ts), the same
 * aggregation (./aggregator.ts, plaintext: the reference reads every update, as the harness does)
 * and the same FedAvg weights (n_i, or 1 with `strategy.weights: 'equal'`). So v(N) is the final
 * utility of the engine's plaintext FedAvg run over every silo.
 */
import { tableUnder } from '../../scoring/empty-coalition.js';
import { exactShapley } from '../../scoring/shapley.js';
import { deriveSeed, SEED_STREAMS } from '../data/seed.js';
import { type Learner, utilityValue } from '../learner/learner.js';
import type { ExperimentConfig } from '../records/config.js';
import { fedAvgWeight } from '../strategies/fedavg.js';
import { applyAverage, plaintextAggregator } from './aggregator.js';
import { buildConsortium } from './setup.js';
import { consortiumTrainer } from './trainer.js';

/** Largest consortium whose retraining game is computed (2^16 coalition runs). */
export const MAX_RETRAINING_SILOS = 16;

/**
 * v(S) for every coalition S (bit i of the index = silo i), v(∅) being the initial model's utility.
 * @throws RangeError naming `comparison.trueShapley` for more than 16 silos.
 */
export async function retrainingGame(
  cfg: ExperimentConfig,
  seed: number,
  learner: Learner,
  onProgress?: (done: number, total: number) => void,
): Promise<Float64Array> {
  const n = cfg.silos;
  if (n > MAX_RETRAINING_SILOS)
    throw new RangeError(
      `comparison.trueShapley: 2^${n} retraining runs are out of reach; use at most ${MAX_RETRAINING_SILOS} silos`,
    );
  const consortium = buildConsortium(cfg, seed);
  const utility = cfg.scoring?.utility ?? 'accuracy';
  const train = consortiumTrainer(learner, consortium, seed);
  const aggregator = plaintextAggregator();
  const mode =
    (cfg.strategy as { weights?: unknown } | undefined)?.weights === 'equal' ? 'equal' : 'examples';
  const weightOf = (s: number) => fedAvgWeight(consortium.silos[s]!.n, mode);
  const init = learner.initialParameters(deriveSeed(seed, SEED_STREAMS.run.initialModel));
  const total = 2 ** n;
  const table = new Float64Array(total);
  table[0] = utilityValue(await learner.evaluate(init, consortium.test), utility);
  for (let mask = 1; mask < total; mask++) {
    const members = [...Array(n).keys()].filter((i) => (mask >>> i) & 1);
    const weights = members.map(weightOf);
    let params = init;
    for (let r = 1; r <= cfg.rounds; r++) {
      const updates = await train(params, r, members);
      const sum = await aggregator.aggregate({
        round: r,
        selected: members,
        updates,
        weights,
        dim: params.length,
      });
      params = applyAverage(params, sum.average);
    }
    table[mask] = utilityValue(await learner.evaluate(params, consortium.test), utility);
    onProgress?.(mask, total - 1);
  }
  return table;
}

/**
 * The true Shapley value of the retraining game (exact, from all 2^n coalition values), with v(∅)
 * as `scoring.emptyCoalition` says (the authors' `retrainin_game` returns 0 for the empty
 * coalition, as their per-round game does).
 * @throws RangeError naming `comparison.trueShapley` for more than 16 silos.
 */
export async function retrainingShapley(
  cfg: ExperimentConfig,
  seed: number,
  learner: Learner,
  onProgress?: (done: number, total: number) => void,
): Promise<Float64Array> {
  const table = await retrainingGame(cfg, seed, learner, onProgress);
  return exactShapley(cfg.silos, tableUnder(table, cfg.scoring?.emptyCoalition));
}
