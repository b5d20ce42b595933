/**
 * The comparison harness (full visibility): per round, on the same coalition game the private
 * scores come from, the Shapley-family references of scoring/ — per-round exact Shapley (summed
 * over rounds: MR-SV), TMR, GTG, Monte Carlo, Owen, Data Banzhaf (MSR), COS, Maverick-Shapley and
 * Trajectory Shapley. It reads individual updates; the private path never does.
 *
 * Each estimator gets its own memo over the game, so its evaluation count is its own (a shared
 * memo would let later estimators ride on earlier ones' evaluations). The learner's coalition
 * evaluator still caches utilities underneath, so wall times of later estimators understate the
 * cost of their evaluations; compare evaluation counts, not times, across estimators.
 */
import { msrBanzhaf } from '../../scoring/banzhaf-msr.js';
import { cosineScores } from '../../scoring/cosine.js';
import { coalitionTable, type Game, memoize, memoizeVector, type VectorGame } from '../../scoring/game.js';
import { gtgShapley } from '../../scoring/gtg.js';
import { accumulateClassShapley, maverickScores, maverickShapleyRound } from '../../scoring/maverick.js';
import { monteCarloShapley } from '../../scoring/monte-carlo.js';
import type { RoundTable } from '../../scoring/multi-round.js';
import { owenShapley } from '../../scoring/owen.js';
import { createRng } from '../../scoring/random.js';
import { exactShapley } from '../../scoring/shapley.js';
import { accumulateTrajectory, trajectoryShapley, updateGeometry } from '../../scoring/trajectory.js';
import type { ExperimentConfig } from './config.js';
import { deriveSeed } from './setup.js';

export type EstimatorConfig = NonNullable<NonNullable<ExperimentConfig['comparison']>['estimators']>;

/** Estimators that run when the configuration names none. */
export const DEFAULT_ESTIMATORS: EstimatorConfig = { mrsv: {}, cos: {} };

/** Largest round for which the exact per-round Shapley value (MR-SV, TMR) is computed. */
export const MAX_EXACT_PLAYERS = 20;

/** Default evaluation budget of the sampled estimators for k participants. */
export function defaultBudget(k: number): number {
  return Math.max(2 + 2 * (k + 1), 32 * k);
}

/** Whether the configured estimators need the validation reference update Δ_val (Trajectory Shapley). */
export function needsReferenceUpdate(estimators: EstimatorConfig): boolean {
  return Boolean(estimators.tsv);
}

/** What the harness carries from round to round. */
export interface HarnessState {
  /** Every round's exact coalition table over its participants (MR-SV and TMR are folded at the end). */
  tables: RoundTable[];
  /** Maverick accumulator S (silos × classes) and the latest class difficulties. */
  maverick?: { accumulated: Float64Array; beta: Float64Array };
  /** Cumulative Trajectory Shapley values. */
  tsv?: Float64Array;
}

export function initialHarnessState(): HarnessState {
  return { tables: [] };
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

/** Runs the configured estimators on one round. Returns the new state and the round's scores. */
export async function harnessRound(
  state: HarnessState,
  input: HarnessRound,
  estimators: EstimatorConfig,
): Promise<{ state: HarnessState; output: HarnessOutput }> {
  const { participants, numSilos: n } = input;
  // A fresh view per estimator: memoize() returns an already-memoized game unchanged, and a shared
  // memo would let each estimator spend the evaluations of the ones before it for free.
  const freshGame = (): Game => ({ n: input.game.n, values: (cs) => input.game.values(cs) });
  const k = participants.length;
  const out: HarnessOutput = { scores: {}, cumulative: {}, evaluations: {}, timingsMs: {} };
  const next: HarnessState = { ...state };
  const timed = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const r = await f();
    out.timingsMs[name] = performance.now() - t0;
    return r;
  };
  const rngFor = (name: string) =>
    createRng(deriveSeed(input.seed, input.round, name.length, name.charCodeAt(0)));

  if (estimators.mrsv || estimators.tmr) {
    if (k > MAX_EXACT_PLAYERS)
      throw new RangeError(
        `comparison.estimators.mrsv: exact per-round Shapley needs at most ${MAX_EXACT_PLAYERS} participants per round, round ${input.round} has ${k}`,
      );
    const memo = memoize(freshGame());
    const table = await timed('mrsv', () => coalitionTable(memo));
    out.evaluations.mrsv = memo.evaluations;
    next.tables = [...state.tables, { players: participants, table }];
    out.scores.mrsv = spread(n, participants, exactShapley(k, table));
  }
  const budgetOf = (cfg: { budget?: number } | undefined) => cfg?.budget ?? defaultBudget(k);
  const sampled: [string, (g: Game) => Promise<{ values: Float64Array; evaluations: number }>][] = [];
  if (estimators.gtg)
    sampled.push(['gtg', (g) => gtgShapley(g, { budget: budgetOf(estimators.gtg), rng: rngFor('gtg') })]);
  if (estimators.mc)
    sampled.push(['mc', (g) => monteCarloShapley(g, { budget: budgetOf(estimators.mc), rng: rngFor('mc') })]);
  if (estimators.owen)
    sampled.push(['owen', (g) => owenShapley(g, { budget: budgetOf(estimators.owen), rng: rngFor('owen') })]);
  if (estimators.banzhaf)
    sampled.push([
      'banzhaf',
      (g) => msrBanzhaf(g, { budget: budgetOf(estimators.banzhaf), rng: rngFor('banzhaf') }),
    ]);
  for (const [name, run] of sampled) {
    const memo = memoize(freshGame());
    const est = await timed(name, () => run(memo));
    out.evaluations[name] = memo.evaluations;
    out.scores[name] = spread(n, participants, est.values);
  }
  if (estimators.cos) {
    const cos = await timed('cos', async () => cosineScores(input.updates, input.aggregate));
    out.scores.cos = spread(n, participants, cos);
  }
  if (estimators.maverick) {
    const cfg = estimators.maverick;
    const vg = memoizeVector(input.perClass);
    const budget = budgetOf(undefined);
    const round = await timed('maverick', () =>
      maverickShapleyRound(vg, (g, ctx) => gtgShapley(g, { budget, rng: ctx.rng }), {
        temperature: cfg.temperature ?? 0.01,
        seed: deriveSeed(input.seed, input.round, 7),
      }),
    );
    out.evaluations.maverick = round.evaluations;
    const previous = state.maverick?.accumulated ?? new Float64Array(n * input.numClasses);
    const accumulated = accumulateClassShapley(
      previous,
      input.numClasses,
      participants,
      round.phi,
      cfg.alpha ?? 0.7,
    );
    next.maverick = { accumulated, beta: round.beta };
    out.scores.maverick = spread(n, participants, round.rewards);
    out.cumulative.maverick = maverickScores(accumulated, round.beta);
  }
  if (estimators.tsv) {
    if (!input.referenceUpdate)
      throw new RangeError('referenceUpdate: Trajectory Shapley needs the validation reference update');
    const est = await timed('tsv', async () =>
      trajectoryShapley(updateGeometry(input.updates, input.referenceUpdate!), {
        budget: estimators.tsv?.budget ?? defaultBudget(k),
        rng: rngFor('tsv'),
      }),
    );
    out.evaluations.tsv = est.evaluations;
    next.tsv = accumulateTrajectory(state.tsv ?? new Float64Array(n), participants, est.values);
    out.scores.tsv = spread(n, participants, est.values);
    out.cumulative.tsv = next.tsv;
  }
  return { state: next, output: out };
}
