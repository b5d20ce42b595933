/**
 * The strategy interface the round engine drives (docs/architecture.md, "Selection and aggregation strategies": a strategy is a pair of
 * methods — configure a round / aggregate it — driven by one run loop; a variant overrides one
 * method and cites its paper in its file header).
 *
 * Per round r the engine calls, in this order:
 *
 *   1. `select(state, ctx)`              → the silos taking part (public information only);
 *   2. local training (and, when `needsReferenceUpdate`, the server's validation reference update),
 *      then `aggregationWeights(state, ctx)` → one relative weight per selected silo and the next
 *      state (valuations that need the round's updates happen here);
 *   3. secure aggregation with those weights, private scoring, the harness;
 *   4. `history = recordRound(history, outcome)` and `state = observe(state, outcome)`.
 *
 * Everything is a pure function of its arguments: state objects are never mutated, randomness comes
 * in as `ctx.rng` (the engine derives a fresh generator per call from the seed and the round), so a
 * run replays exactly.
 *
 * Private mode: only strategies with `requiresFullVisibility === false` may run; their
 * `aggregationWeights` reads nothing but public history (each silo scales its own update before
 * secure aggregation). Full-visibility strategies get `ctx.full`: the round's updates, the coalition
 * game over the selected silos, its per-class version and, for strategies that set
 * `needsReferenceUpdate`, the validation reference update.
 *
 * The engine never asks which strategy runs: what a strategy needs beyond the round's selection it
 * declares through these flags. New strategies are registered, with their names, in ./registry.ts.
 *
 * Weights are relative: the engine normalizes them over the surviving silos. A weight may be 0
 * (FedTSV's max(0, φ), FedMS outside the coreset, score-weighted aggregation for the lowest score).
 * All weights 0 means "aggregate nothing": the global model stays as it is (FedMS when the coreset
 * is discarded); the engine must handle that case instead of dividing by 0.
 */

import type { TObject } from 'typebox';
import type { Game, VectorGame } from '../../scoring/game.js';
import type { Rng } from '../../scoring/seeded-rng.js';

/** Public metadata of one silo. */
export interface SiloInfo {
  /** Training examples (FedAvg's n_i). */
  readonly examples: number;
  /** Training examples per class, length `numClasses` (FedEMD's D^i). */
  readonly labelHistogram: ArrayLike<number>;
}

/** What a strategy knows before the first round. */
export interface StrategySetup {
  readonly numSilos: number;
  readonly numClasses: number;
  /** Total rounds R (FedMS's ε_d schedule). */
  readonly rounds: number;
  /** The run's seed (for state a strategy fixes once, e.g. GreedyFed's exploration order). */
  readonly seed: number;
  /** One entry per silo. */
  readonly silos: readonly SiloInfo[];
  /**
   * Label histogram of the global/test distribution. FedEMD's D_g (papers/001 Alg. 1 line 4) is the
   * sum of the silos' histograms, which is what FedEMD uses; this is kept for strategies and
   * reports that want the test distribution instead.
   */
  readonly globalLabelHistogram?: ArrayLike<number>;
}

/** What the engine records about a finished round (a structural subset of `RoundRecord`). */
export interface RoundOutcome {
  /** 1-based round index. */
  readonly round: number;
  /** Global ids of the selected silos. */
  readonly selected: readonly number[];
  /** Selected silos that dropped out of secure aggregation (default none). */
  readonly dropped?: readonly number[];
  /** Scores of the round by scheme name (`fp`, `ee`, …), indexed by global silo id; null = not scored. */
  readonly scores: Readonly<Record<string, readonly (number | null)[]>>;
}

/** Public history of a run: what every strategy may read, in private mode too. */
export interface History {
  /** Finished rounds, oldest first. */
  readonly rounds: readonly RoundOutcome[];
  /** Per silo: how many rounds it was selected in (σ_i of papers/004 Alg. 2). */
  readonly participation: readonly number[];
}

/** Context of `select`. */
export interface SelectContext {
  /** 1-based index of the round being planned. */
  readonly round: number;
  readonly setup: StrategySetup;
  readonly history: History;
  /** Fresh seeded generator for this call. */
  readonly rng: Rng;
}

/** What only a full-visibility run can hand to `aggregationWeights`. */
export interface FullVisibility {
  /** Δ_k of each selected silo, in `ctx.selected` order (the engine keeps ownership; read only). */
  readonly updates: readonly Float32Array[];
  /**
   * Coalitions of the selected silos (round-local player k = ctx.selected[k]) → test utility of the
   * coalition model; v(∅) is the current global model. Memoized by the engine.
   */
  readonly game: Game;
  /** Per-class accuracies of the same coalition models (papers/000 Eq. 7), dims = numClasses. */
  readonly perClass: VectorGame;
  /** Validation reference update Δ_val (papers/002 Eq. 10), when the strategy `needsReferenceUpdate`. */
  readonly referenceUpdate?: Float32Array;
}

/** Context of `aggregationWeights`. */
export interface AggregateContext {
  readonly round: number;
  readonly setup: StrategySetup;
  readonly history: History;
  /** Global ids of the selected silos (what `select` returned). */
  readonly selected: readonly number[];
  /** Fresh seeded generator for this call (sampled estimators). */
  readonly rng: Rng;
  /** Present only in full-visibility mode. */
  readonly full?: FullVisibility;
}

/** The outcome of `aggregationWeights`. */
export interface Aggregation<S> {
  /** One relative weight ≥ 0 per selected silo, in `ctx.selected` order. */
  readonly weights: Float64Array;
  readonly state: S;
  /** Per-selected-silo values the strategy computed this round (for reports), if any. */
  readonly values?: Float64Array;
}

/** A selection and aggregation strategy (see the module comment for the call order). */
export interface Strategy<S = unknown> {
  /** The name it is registered under (./registry.ts). */
  readonly name: string;
  /** True when `aggregationWeights` needs `ctx.full` (not possible under secure aggregation alone). */
  readonly requiresFullVisibility: boolean;
  /**
   * True when `aggregationWeights` reads `ctx.full.referenceUpdate`: the engine then trains the
   * server's validation reference update Δ_val every round (papers/002 Eq. 10). Default false.
   */
  readonly needsReferenceUpdate?: boolean;
  /** The initial state. */
  init(setup: StrategySetup): S;
  /** The silos of round ctx.round: distinct ids in [0, numSilos), increasing. */
  select(state: S, ctx: SelectContext): number[];
  /** Relative weights of the selected silos, and the next state. */
  aggregationWeights(state: S, ctx: AggregateContext): Promise<Aggregation<S>>;
  /** Folds a finished round into the state (most strategies read `ctx.history` instead). */
  observe(state: S, outcome: RoundOutcome): S;
}

/** Bounds of a numeric strategy parameter; `open` bounds exclude the end point. */
export interface NumberSpec {
  min?: number;
  max?: number;
  minOpen?: boolean;
  maxOpen?: boolean;
  integer?: boolean;
}

/**
 * A strategy's JSON parameters as its factory reads them (./registry.ts). Each reader marks its key
 * as known and checks the value; errors name the field (`strategy.epsilon: expected a number in
 * [0, 1], got 2`): TypeError for a wrong type, RangeError for a value out of range. After the
 * factory returns, a key nobody read throws RangeError (`unknown parameter of '…'`).
 */
export interface StrategyParams {
  /** A finite number within the spec, or `fallback` when absent. */
  number(key: string, fallback: number, spec?: NumberSpec): number;
  /** A finite number within the spec, or undefined when absent. */
  optionalNumber(key: string, spec?: NumberSpec): number | undefined;
  /** One of `values`, or `fallback` when absent. */
  oneOf<T extends string>(key: string, fallback: T, values: readonly T[]): T;
  /** A non-empty string, or `fallback` when absent. */
  string(key: string, fallback: string): string;
  /** A boolean, or `fallback` when absent. */
  boolean(key: string, fallback: boolean): boolean;
}

/** What a strategy registers (./registry.ts): its name, its parameters and how to build it. */
export interface StrategyEntry {
  /**
   * The name configurations use (`strategy.name`). Written here and nowhere else: the strategies
   * it builds, and everything else, take it from the entry (test/arch/registries.test.ts).
   */
  readonly name: string;
  /** One line for listings: what it does and its source. */
  readonly description: string;
  /**
   * TypeBox object schema of its parameters (the keys next to `name`), with the bounds, `default`
   * and `description` of each: docs/config.md is generated from it. When present, the configuration
   * is checked against it before `create` runs, `create` may read only the keys it declares (another
   * read throws Error), and an absent key reads as its declared default (./params.ts). Every
   * built-in has one (./fedavg.ts, `fedAvgVariant`); a user strategy without one is neither
   * documented nor checked.
   */
  readonly parameters?: TObject;
  /**
   * Whether it runs over the network, under secure aggregation alone (src/strategies/networked-plan.ts).
   * It may when its `select` reads only public information (numSilos, the seed through `ctx.rng`,
   * the published history, and no state that `aggregationWeights` changes: the server, which knows
   * no example counts, replays only `init`, `select` and `observe`) and its `aggregationWeights`
   * only what every silo knows (the setup's example counts, the published scores), so that each
   * silo applies its own weight before masking and the server learns only Σ w_iΔ_i and Σ w_i
   * (papers/003 §5.4). Then `'fixed-weights'` when a silo's weight is its FedAvg weight (the
   * consortium's smallest weight then bounds Σ w from below), `'score-weights'` when the weights
   * follow the published scores (and may be 0); else why not. Absent: refused.
   */
  readonly networked?: NetworkedSupport;
  /**
   * Builds the strategy from its parameters. Read every parameter through `params` (a key nobody
   * read is rejected as unknown afterwards); the strategy's `name` must be the entry's.
   */
  create(params: StrategyParams): Strategy<unknown>;
}

/** Whether a strategy runs networked, and how (StrategyEntry.networked). */
export type NetworkedSupport = 'fixed-weights' | 'score-weights' | { readonly refused: string };

/** A built-in strategy's entry: its parameters are always documented. */
export type BuiltInStrategyEntry = StrategyEntry & { readonly parameters: TObject };

/**
 * The history before the first round.
 * @throws RangeError when numSilos is not a positive integer.
 */
export function emptyHistory(numSilos: number): History {
  if (!Number.isInteger(numSilos) || numSilos < 1)
    throw new RangeError(`numSilos: expected a positive integer, got ${numSilos}`);
  return { rounds: [], participation: new Array<number>(numSilos).fill(0) };
}

/**
 * The history with one more finished round (pure; the old history is untouched). Participation
 * counts selections, dropped silos included (they were selected; papers/004's σ_i counts selections).
 * @throws RangeError when a selected id is out of range or repeated.
 */
export function recordRound(history: History, outcome: RoundOutcome): History {
  if (typeof outcome !== 'object' || outcome === null) throw new TypeError('outcome: expected an object');
  const n = history.participation.length;
  const participation = history.participation.slice();
  const seen = new Set<number>();
  for (const s of outcome.selected) {
    if (!Number.isInteger(s) || s < 0 || s >= n)
      throw new RangeError(`outcome.selected: ${s} is not a silo in [0, ${n})`);
    if (seen.has(s)) throw new RangeError(`outcome.selected: silo ${s} appears twice`);
    seen.add(s);
    participation[s]! += 1;
  }
  return { rounds: [...history.rounds, outcome], participation };
}
