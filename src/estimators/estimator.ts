/**
 * What a reference estimator of the comparison harness is: the unit the estimator registry
 * (./registry.ts) holds. Each built-in lives in its own file next to this one.
 *
 * The pieces stay apart as in pyDVL / shapiq (STYLE.md): the game comes from the harness (one
 * fresh memo per estimator), the sampler and stopping rule are the scoring/ estimator's own, the
 * budget is explicit (`budget` in the configuration, else `defaultBudget(k)`), and the random
 * source is passed in: the harness derives it from the run's seed, the round and the estimator's
 * own `stream`, so no two estimators ever draw the same numbers.
 */
import type { Static, TObject } from 'typebox';
import type { MemoGame, VectorGame } from '../../scoring/game.js';
import type { RoundTable } from '../../scoring/multi-round.js';
import type { Rng } from '../../scoring/seeded-rng.js';

/** Default evaluation budget of the sampled estimators for k participants. */
export function defaultBudget(k: number): number {
  return Math.max(2 + 2 * (k + 1), 32 * k);
}

/** One round's inputs, as the harness hands them to an estimator's `run`. */
export interface EstimatorRoundInput<C, S> {
  /** This estimator's configuration (`{}` when it runs only because another estimator needs it). */
  config: C;
  round: number;
  numSilos: number;
  numClasses: number;
  /** Global ids of the round's players, in game order. */
  participants: readonly number[];
  /** v(S) over the participants, memoized for this estimator alone: its `evaluations` are its own. */
  game: MemoGame;
  /** Per-class accuracy of each coalition (not memoized). */
  perClass: VectorGame;
  updates: readonly Float32Array[];
  aggregate: ArrayLike<number>;
  /** The server's validation reference update; present when the definition `needs` it. */
  referenceUpdate?: Float32Array;
  /** Evaluation budget: `config.budget` when the schema has one and it is set, else `defaultBudget(k)`. */
  budget: number;
  /** This round's seed of the estimator's own stream (`deriveSeed(seed, round, ...stream)`). */
  seed: number;
  /** `createRng(seed)`. */
  rng: Rng;
  /** What it carried over from its previous round; in its first, `initialState()` (or undefined). */
  state: S;
}

/** What an estimator's `run` returns for one round. */
export interface EstimatorRoundResult<S> {
  /** One value per participant, in participant order. */
  values: ArrayLike<number>;
  /** Distinct coalition evaluations it spent, when it evaluates a game. */
  evaluations?: number;
  /** Accumulated per-silo scores after this round (estimators cumulative by construction). */
  cumulative?: Float64Array;
  /** State to hand to its next round. */
  state?: S;
  /** The round's exact coalition table, kept by the harness for the post-run folds. */
  table?: RoundTable;
}

/** What a post-run fold gets: the estimator's configuration and every round's exact table. */
export interface EstimatorFoldInput<C> {
  config: C;
  /** Number of silos (the length of the folded vector). */
  n: number;
  tables: readonly RoundTable[];
}

/**
 * A reference estimator. `name` is its key under `comparison.estimators`, its method name in
 * `results.json`, and appears nowhere else in the source (test/arch/registries.test.ts).
 */
export interface EstimatorDefinition<N extends string = string, T extends TObject = TObject, S = unknown> {
  readonly name: N;
  /** One line: what it is and where it comes from. */
  readonly title: string;
  /** Its configuration (TypeBox object); a `budget` property makes it a budgeted estimator. */
  readonly schema: T;
  /**
   * Its random stream: the parts after (seed, round) of `deriveSeed`. Unique in the registry, and
   * never changed once released: changing it changes every result of the estimator.
   */
  readonly stream: readonly number[];
  /**
   * How `comparison.at = r` compares it: 'round' — its round-r scores as they are; 'cumulative' —
   * its scores accumulated up to round r (or folded, see `fold`).
   */
  readonly compare: 'round' | 'cumulative';
  /**
   * Which panel family the report's charts put it in (panels of a family share their units):
   * Shapley values and estimates, cosines, or 'other' (default) — read by src/report/report.ts.
   */
  readonly family?: EstimatorFamily;
  /** Runs when the configuration names no estimators (built-ins only). */
  readonly byDefault?: boolean;
  /** May be `comparison.reference` (the first such is the default reference). */
  readonly reference?: boolean;
  /** What it needs beyond the coalition game. */
  readonly needs?: {
    /** The validation reference update (papers/002 Eq. 10), trained by the engine each round. */
    readonly referenceUpdate?: boolean;
    /** Estimators whose per-round runs it builds on; they run (with `{}`) even when not configured. */
    readonly estimators?: readonly EstimatorDefinition[];
  };
  /** The state its first round starts from (estimators that carry something between rounds). */
  initialState?(setup: { numSilos: number; numClasses: number }): S;
  /** One round (absent for estimators that only fold what others computed). */
  run?(input: EstimatorRoundInput<Static<T>, S>): Promise<EstimatorRoundResult<S>>;
  /** After the run: replaces its cumulative (and compared) vector by a fold of the rounds' tables. */
  fold?(input: EstimatorFoldInput<Static<T>>): Promise<Float64Array>;
}

/** The report's panel families an estimator may declare (report.ts adds 'share' and 'marginal' for the private scores). */
export type EstimatorFamily = 'shapley' | 'cosine' | 'other';

/** Identity with inference: `defineEstimator({ name: 'x', … })` keeps the literal name and schema types. */
export function defineEstimator<const N extends string, T extends TObject, S = unknown>(
  definition: EstimatorDefinition<N, T, S>,
): EstimatorDefinition<N, T, S> {
  return definition;
}
