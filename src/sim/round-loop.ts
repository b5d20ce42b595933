/**
 * The round engine: one seed of a consortium experiment (docs/architecture.md, "One round, private
 * mode", and "Full-visibility mode"), as a pipeline of named steps driven by one loop:
 *
 *   setup       round/setup.ts       strategy, data, identities, `train`, aggregator, initial state
 *   select      round/select.ts      the strategy picks the round's silos (public information only)
 *   train       round/train.ts       the silos train; `run.train` carries whatever wraps training
 *                                    (update-side attacks, src/fl/update-attacks.ts), the engine does not know
 *   reference   round/references.ts  the server's Δ_val, when the strategy or an estimator asks
 *   weigh       round/weigh.ts       the strategy's aggregation weights (full visibility if it asks)
 *   aggregate   round/aggregate.ts   secure or plaintext sum (aggregator.ts), the next global model
 *   score       round/score.ts       signed reports of the survivors → LOO, IOI, FP, EE, EE-median
 *   references  round/references.ts  the Shapley-family references on the survivors' coalition game
 *   record      round/record.ts      the round's record, the history, the strategy's `observe`
 *
 * Random streams are fixed per step and round (`deriveSeed(seed, round, …)`), so a run replays
 * exactly and a networked run gives the same scores (networked.ts).
 */

import type { Consortium } from '../fl/consortium-data.js';
import type { Learner } from '../fl/learner/learner.js';
import type { ExperimentConfig } from '../records/config.js';
import type { RoundRecord } from '../records/results.js';
import type { HarnessTable } from './comparison-harness.js';
import { aggregateStep } from './round/aggregate.js';
import { recordStep } from './round/record.js';
import { referencesStep, trainReferenceUpdate } from './round/references.js';
import { privateScoringStep } from './round/score.js';
import { selectStep } from './round/select.js';
import { createRun, type ProgressEvent } from './round/setup.js';
import { trainStep } from './round/train.js';
import { weighStep } from './round/weigh.js';

export { type ProgressEvent, strategyOf } from './round/setup.js';

/** What one seed's run produces before it is summarized into a `RunRecord`. */
export interface SeedRun {
  seed: number;
  consortium: Pick<Consortium, 'roles' | 'source' | 'numClasses'> & {
    examples: number[];
    testExamples: number;
  };
  rounds: RoundRecord[];
  /** Every round's exact table, with its round (for MR-SV/TMR folding and roundSv). */
  harnessTables: HarnessTable[];
  /** Accumulated values of the cumulative-by-construction methods after each round. */
  cumulativeByRound: Record<string, Float64Array>[];
  finalParameters: Float32Array;
  finalAccuracy: number;
  finalLoss: number;
}

export interface EngineOptions {
  learner: Learner;
  onProgress?: (e: ProgressEvent) => void;
  /** The silos' data and the test set instead of the configuration's partition (setup.ts). */
  data?: Consortium;
}

/** Runs one seed of an experiment. */
export async function runSeed(cfg: ExperimentConfig, seed: number, o: EngineOptions): Promise<SeedRun> {
  const setup = createRun(cfg, seed, o);
  const { run } = setup;
  let { state } = setup;
  const rounds: RoundRecord[] = [];
  const cumulativeByRound: Record<string, Float64Array>[] = [];
  for (let r = 1; r <= cfg.rounds; r++) {
    const base = state.params;
    const selected = selectStep(run, state, r);
    const trained = await trainStep(run, base, r, selected);
    const { updates } = trained;
    const referenceUpdate = await trainReferenceUpdate(run, base, r, selected);
    const weighed = await weighStep(run, state, r, selected, updates, referenceUpdate);
    const { weights } = weighed;
    const aggregated = await aggregateStep(run, base, r, selected, updates, weights);
    const { sum, next } = aggregated;
    const scored = await privateScoringStep(run, { round: r, base, next, selected, updates, weights, sum });
    const references = await referencesStep(run, state.harness, {
      round: r,
      base,
      selected,
      updates,
      weights,
      survivors: sum.survivors,
      average: sum.average,
      referenceUpdate,
    });
    const recorded = recordStep(run, state, {
      round: r,
      selected,
      dropped: sum.dropped,
      weights,
      strategyState: weighed.strategy,
      ...(weighed.evaluations !== undefined ? { strategyEvaluations: weighed.evaluations } : {}),
      next,
      private: scored,
      references,
      timingsMs: { training: trained.ms, secureAggregation: aggregated.ms },
    });
    rounds.push(recorded.record);
    cumulativeByRound.push(references.cumulative);
    state = recorded.state;
  }
  const final = await run.learner.evaluate(state.params, run.test);
  return {
    seed,
    consortium: {
      roles: run.consortium.roles,
      source: run.consortium.source,
      numClasses: run.consortium.numClasses,
      examples: run.examples,
      testExamples: run.test.n,
    },
    rounds,
    harnessTables: state.harness.tables,
    cumulativeByRound,
    finalParameters: state.params,
    finalAccuracy: final.accuracy,
    finalLoss: final.loss,
  };
}
