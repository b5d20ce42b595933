/**
 * The references step of the round pipeline (../round-loop.ts): the comparison harness (../comparison-harness.ts,
 * full visibility) on the coalition game of the round's survivors, and before it the server's
 * validation reference update Δ_val (papers/002 Eq. 10) when the strategy or an estimator needs it.
 */
import { gameUnder } from '../../../scoring/empty-coalition.js';
import { deriveSeed, SEED_STREAMS } from '../../data/seed.js';
import { localSteps } from '../../fl/trainer.js';
import type { Strategy } from '../../strategies/strategy.js';
import {
  type EstimatorConfig,
  type HarnessState,
  harnessRound,
  needsReferenceUpdate,
} from '../comparison-harness.js';
import type { Run } from './setup.js';

/** Whether a run trains Δ_val each round: its strategy asks for it, or an estimator does. */
export function referenceUpdateNeeded(strategy: Strategy, estimators: EstimatorConfig): boolean {
  return strategy.needsReferenceUpdate === true || needsReferenceUpdate(estimators);
}

/**
 * K, the steps of round `round`'s Δ_val: `training.validationSteps`, else the mean local steps of the
 * round's selected silos, epochs·⌈n_i/batchSize⌉, rounded (at least 1). papers/002 Eq. 10 trains
 * θ_0 "after the same number of SGD steps" K as the clients; Alg. 2 gives every client and the
 * server one K (lines 7 and 15); with unequal silos the clients' steps differ, and their mean is
 * that one K.
 */
export function referenceSteps(run: Run, selected: readonly number[]): number {
  const configured = run.cfg.training?.validationSteps;
  if (configured !== undefined) return configured;
  if (selected.length === 0) return 1;
  const total = selected.reduce((s, i) => s + localSteps(run.examples[i]!, run.cfg.training), 0);
  return Math.max(1, Math.round(total / selected.length));
}

/**
 * Δ_val of round `round`: the server takes K = `referenceSteps(run, selected)` optimizer steps on
 * minibatches of its validation set from `base` (papers/002 Alg. 2 lines 14–18), with the seed
 * `deriveSeed(seed, round, 0x7e5)`; undefined when the run does not need it.
 */
export async function trainReferenceUpdate(
  run: Run,
  base: Float32Array,
  round: number,
  selected: readonly number[],
): Promise<Float32Array | undefined> {
  if (!run.referenceUpdate) return undefined;
  const [update] = await run.learner.trainMany(base, [
    {
      data: run.consortium.validation,
      seed: deriveSeed(run.seed, round, SEED_STREAMS.round.references),
      steps: referenceSteps(run, selected),
    },
  ]);
  return update;
}

/** What the references step reads of the round. */
export interface ReferencesInput {
  round: number;
  /** The round's starting model M0. */
  base: Float32Array;
  selected: readonly number[];
  updates: readonly Float32Array[];
  weights: readonly number[];
  /** Silos whose updates are in the aggregate. */
  survivors: readonly number[];
  /** Σ w_iΔ_i / Σ w_i over the survivors. */
  average: Float64Array;
  referenceUpdate: Float32Array | undefined;
}

/** The harness's results for one round (empty when fewer than two silos survived). */
export interface References {
  harness: HarnessState;
  /** Per method, one value per silo (null for silos not in the round or a non-finite value). */
  scores: Record<string, (number | null)[]>;
  /** Accumulated values of the cumulative-by-construction methods after this round. */
  cumulative: Record<string, Float64Array>;
  evaluations: Record<string, number>;
  timingsMs: Record<string, number>;
}

const finiteOrNull = (x: Float64Array) => Array.from(x, (v) => (Number.isFinite(v) ? v : null));

/**
 * Runs the configured estimators on the coalition game of the round's survivors (with their
 * aggregation weights). A round with fewer than two survivors has no game: nothing is scored.
 */
export async function referencesStep(
  run: Run,
  harness: HarnessState,
  input: ReferencesInput,
): Promise<References> {
  run.progress(input.round, 'harness');
  const out: References = { harness, scores: {}, cumulative: {}, evaluations: {}, timingsMs: {} };
  const { survivors, selected } = input;
  if (survivors.length < 2) return out;
  const localUpdates = survivors.map((s) => input.updates[selected.indexOf(s)]!);
  const localWeights = survivors.map((s) => input.weights[selected.indexOf(s)]!);
  // A zero aggregation weight (a strategy may give one, strategy.ts) leaves M_S undefined for
  // coalitions of such silos alone; the harness game gives them a vanishing weight instead.
  const maxW = Math.max(...localWeights);
  const games = run.learner.coalitionGames({
    base: input.base,
    updates: localUpdates,
    weights: localWeights.map((w) => (maxW > 0 ? Math.max(w, 1e-9 * maxW) : 1)),
    convention: run.convention,
    test: run.test,
    utility: run.utility,
  });
  const h = await harnessRound(
    harness,
    {
      round: input.round,
      seed: run.seed,
      numSilos: run.cfg.silos,
      numClasses: run.consortium.numClasses,
      participants: [...survivors],
      // v(∅) as `scoring.emptyCoalition` says, for every estimator of the scalar game (the
      // class-wise game and TSV's utility keep their papers' v(∅)).
      game: gameUnder(games.game, run.emptyCoalition),
      perClass: games.perClass,
      updates: localUpdates,
      aggregate: input.average,
      ...(input.referenceUpdate ? { referenceUpdate: input.referenceUpdate } : {}),
    },
    run.estimators,
  );
  games.dispose();
  for (const [m, v] of Object.entries(h.output.scores)) out.scores[m] = finiteOrNull(v);
  return {
    harness: h.state,
    scores: out.scores,
    cumulative: { ...h.output.cumulative },
    evaluations: { ...h.output.evaluations },
    timingsMs: { ...h.output.timingsMs },
  };
}
