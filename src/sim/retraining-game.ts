/**
 * The retraining game and its true Shapley value (papers/003 §3.1): every coalition S runs its own
 * FedAvg from the same initial model for all rounds, and v(S) is the final test utility. 2^n runs.
 *
 * Each coalition run is the engine's round without selection or scoring: the same `train` (local
 * training with the same seeds, wrapped by the configured update attacks, ../fl/trainer.ts), the same
 * aggregation (./aggregator.ts, plaintext: the reference reads every update, as the harness does)
 * and the same FedAvg weights (n_i, or 1 with `strategy.weights: 'equal'`). So v(N) is the final
 * utility of the engine's plaintext FedAvg run over every silo.
 */
import { tableUnder } from '../../scoring/empty-coalition.js';
import { exactShapley } from '../../scoring/shapley.js';
import { deriveSeed, SEED_STREAMS } from '../data/seed.js';
import { buildConsortium } from '../fl/consortium-data.js';
import { type Learner, utilityValue } from '../fl/learner/learner.js';
import { consortiumTrainer } from '../fl/trainer.js';
import type { ExperimentConfig } from '../records/config.js';
import { fedAvgWeight } from '../strategies/fedavg.js';
import { applyAverage, plaintextAggregator } from './aggregator.js';

/** Largest consortium whose retraining game is computed (2^16 coalition runs). */
export const MAX_RETRAINING_SILOS = 16;

/** A contiguous range of coalitions, [from, to), by index (bit i = silo i). */
export interface CoalitionRange {
  readonly from: number;
  readonly to: number;
}

/**
 * v(S) for the coalitions of `range` (default all 2^n; bit i of the index = silo i), v(∅) being
 * the initial model's utility. Each value depends on the configuration, the seed and S alone (every
 * coalition retrains from M0 with the silos' per-round seeds), so any split of the range into
 * pieces computed anywhere gives the same values as one call (src/sim/reference-chunks.ts).
 * @throws RangeError naming `comparison.trueShapley` for more than 16 silos, `range` for a range
 * outside [0, 2^n).
 */
export async function retrainingValues(
  cfg: ExperimentConfig,
  seed: number,
  learner: Learner,
  range?: CoalitionRange,
  onProgress?: (done: number, total: number) => void,
): Promise<Float64Array> {
  const n = cfg.silos;
  if (n > MAX_RETRAINING_SILOS)
    throw new RangeError(
      `comparison.trueShapley: 2^${n} retraining runs are out of reach; use at most ${MAX_RETRAINING_SILOS} silos`,
    );
  const total = 2 ** n;
  const { from, to } = range ?? { from: 0, to: total };
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 0 || to > total || from > to)
    throw new RangeError(`range: expected 0 ≤ from ≤ to ≤ 2^${n} = ${total}, got [${from}, ${to})`);
  const consortium = buildConsortium(cfg, seed);
  const utility = cfg.scoring?.utility ?? 'accuracy';
  const train = consortiumTrainer(learner, consortium, seed);
  const aggregator = plaintextAggregator();
  const mode =
    (cfg.strategy as { weights?: unknown } | undefined)?.weights === 'equal' ? 'equal' : 'examples';
  const weightOf = (s: number) => fedAvgWeight(consortium.silos[s]!.n, mode);
  const init = learner.initialParameters(deriveSeed(seed, SEED_STREAMS.run.initialModel));
  const values = new Float64Array(to - from);
  for (let mask = from; mask < to; mask++) {
    if (mask === 0) {
      values[0] = utilityValue(await learner.evaluate(init, consortium.test), utility);
      continue;
    }
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
    values[mask - from] = utilityValue(await learner.evaluate(params, consortium.test), utility);
    onProgress?.(mask - from + (from === 0 ? 0 : 1), to - from - (from === 0 ? 1 : 0));
  }
  return values;
}

/**
 * v(S) for every coalition S (bit i of the index = silo i), v(∅) being the initial model's utility.
 * @throws RangeError naming `comparison.trueShapley` for more than 16 silos.
 */
export function retrainingGame(
  cfg: ExperimentConfig,
  seed: number,
  learner: Learner,
  onProgress?: (done: number, total: number) => void,
): Promise<Float64Array> {
  return retrainingValues(cfg, seed, learner, undefined, onProgress);
}

/** The true Shapley value from the retraining game's table, v(∅) as `scoring.emptyCoalition` says. */
export function retrainingShapleyOf(cfg: ExperimentConfig, table: Float64Array): Float64Array {
  return exactShapley(cfg.silos, tableUnder(table, cfg.scoring?.emptyCoalition));
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
  return retrainingShapleyOf(cfg, await retrainingGame(cfg, seed, learner, onProgress));
}
