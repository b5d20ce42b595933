/**
 * The comparison harness (full visibility): per round, on the same coalition game the private
 * scores come from, the Shapley-family references the estimator registry lists
 * (../estimators/registry.ts: per-round exact Shapley folded into MR-SV, TMR, GTG, Monte Carlo,
 * Owen, Data Banzhaf (MSR), COS, Maverick-Shapley, Trajectory Shapley). It reads individual
 * updates; the private path never does.
 *
 * Each estimator gets its own memo over the game, so its evaluation count is its own (a shared
 * memo would let later estimators ride on earlier ones' evaluations). The learner's coalition
 * evaluator still caches utilities underneath, so wall times of later estimators understate the
 * cost of their evaluations; compare evaluation counts, not times, across estimators.
 */
import { type Game, memoize, type VectorGame } from '../../scoring/game.js';
import type { RoundTable } from '../../scoring/multi-round.js';
import { createRng } from '../../scoring/seeded-rng.js';
import { deriveSeed } from '../data/seed.js';
import { defaultBudget } from '../estimators/estimator.js';
import { defaultEstimators, type EstimatorConfig, estimatorsToRun } from '../estimators/registry.js';

export { defaultBudget } from '../estimators/estimator.js';
export { MAX_EXACT_PLAYERS } from '../estimators/mrsv.js';
export { type EstimatorConfig, needsReferenceUpdate } from '../estimators/registry.js';

/** Estimators that run when the configuration names none (the registry's `byDefault` ones). */
export const DEFAULT_ESTIMATORS: EstimatorConfig = defaultEstimators();

/** A round's exact coalition table over its participants, with the round it belongs to. */
export interface HarnessTable extends RoundTable {
  /** The round (1-based); rounds with fewer than two survivors have no table. */
  round: number;
}

/** What the harness carries from round to round. */
export interface HarnessState {
  /**
   * Every round's exact coalition table over its participants (folded after the run: MR-SV, TMR;
   * read by the roundSv reference), with v(∅) as `scoring.emptyCoalition` says.
   */
  tables: HarnessTable[];
  /** Per estimator, what it carries to its next round (Maverick's class-wise accumulator, TSV's values). */
  carried: Record<string, unknown>;
}

export function initialHarnessState(): HarnessState {
  return { tables: [], carried: {} };
}

/** One round's full-visibility inputs. */
export interface HarnessRound {
  round: number;
  seed: number;
  numSilos: number;
  numClasses: number;
  /** Global ids of the silos whose updates are in the round's aggregate (the game's players, in order). */
  participants: number[];
  /** v(S) over the participants (not memoized; the harness memoizes per estimator). */
  game: Game;
  /** Per-class accuracy of each coalition (for Maverick-Shapley). */
  perClass: VectorGame;
  updates: readonly Float32Array[];
  aggregate: ArrayLike<number>;
  /** The server's validation reference update (FedTSV), when Trajectory Shapley runs. */
  referenceUpdate?: Float32Array;
}

/** One round's reference scores: per method, one value per silo (NaN for silos not in the round). */
export interface HarnessOutput {
  scores: Record<string, Float64Array>;
  /** Cumulative-by-construction methods (Maverick, TSV): their accumulated scores after this round. */
  cumulative: Record<string, Float64Array>;
  evaluations: Record<string, number>;
  timingsMs: Record<string, number>;
}

function spread(n: number, participants: readonly number[], local: ArrayLike<number>): Float64Array {
  const out = new Float64Array(n).fill(Number.NaN);
  participants.forEach((p, b) => {
    out[p] = local[b]!;
  });
  return out;
}

/**
 * Runs the configured estimators (and those they need) on one round, in registry order. Each gets a
 * fresh memo over the game, its budget (`budget`, else `defaultBudget(k)`) and its own random
 * stream. Returns the new state and the round's scores.
 * @throws RangeError naming an unknown estimator, or when an estimator needs the validation
 *   reference update and the round has none; whatever an estimator throws.
 */
export async function harnessRound(
  state: HarnessState,
  input: HarnessRound,
  estimators: EstimatorConfig,
): Promise<{ state: HarnessState; output: HarnessOutput }> {
  const { participants, numSilos: n } = input;
  const k = participants.length;
  const out: HarnessOutput = { scores: {}, cumulative: {}, evaluations: {}, timingsMs: {} };
  let tables = state.tables;
  const carried = { ...state.carried };
  for (const { definition: estimator, config } of estimatorsToRun(estimators)) {
    if (!estimator.run) continue; // it only folds what others computed
    const { name } = estimator;
    if (estimator.needs?.referenceUpdate && !input.referenceUpdate)
      throw new RangeError(`referenceUpdate: ${estimator.title} needs the validation reference update`);
    // A fresh view per estimator: memoize() returns an already-memoized game unchanged, and a shared
    // memo would let each estimator spend the evaluations of the ones before it for free.
    const fresh: Game = { n: input.game.n, values: (cs) => input.game.values(cs) };
    const table = input.game.table;
    if (typeof table === 'function') fresh.table = () => table.call(input.game);
    const seed = deriveSeed(input.seed, input.round, ...estimator.stream);
    const t0 = performance.now();
    const result = await estimator.run({
      config,
      round: input.round,
      numSilos: n,
      numClasses: input.numClasses,
      participants,
      game: memoize(fresh),
      perClass: input.perClass,
      updates: input.updates,
      aggregate: input.aggregate,
      ...(input.referenceUpdate ? { referenceUpdate: input.referenceUpdate } : {}),
      budget: (config as { budget?: number }).budget ?? defaultBudget(k),
      seed,
      rng: createRng(seed),
      state:
        name in carried
          ? carried[name]
          : estimator.initialState?.({ numSilos: n, numClasses: input.numClasses }),
    });
    out.timingsMs[name] = performance.now() - t0;
    if (result.evaluations !== undefined) out.evaluations[name] = result.evaluations;
    out.scores[name] = spread(n, participants, result.values);
    if (result.cumulative) out.cumulative[name] = result.cumulative;
    if (result.state !== undefined) carried[name] = result.state;
    if (result.table) tables = [...tables, { ...result.table, round: input.round }];
  }
  return { state: { tables, carried }, output: out };
}
