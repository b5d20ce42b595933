/**
 * FedMS (papers/000 Alg. 2, Maverick-Shapley client selection with coreset aggregation). Overrides
 * both methods of FedAvg:
 *
 *   select:       P_i = exp(κ·Ŝ_i)/Σ_j exp(κ·Ŝ_j) over all silos, K^t ~ P      (Alg. 2 lines 6–7, Eq. 12)
 *   aggregation:  φ, β, K̂^t ← Maverick-Shapley on the round's per-class game     (line 11; Alg. 1 / 3)
 *                 S_i^c ← α·S_i^c + (1 − α)·φ_i^c for participants                (line 13, Eq. 8)
 *                 Ŝ_i = Σ_c β^c·S_i^c for every silo                              (line 15, Eq. 9)
 *                 aggregate only the coreset K̂^t, weights n_i                    (§4.2; line 16's n_i)
 *
 * The valuation is scoring/maverick.ts (`maverickShapleyRound` with GTG, i.e. MS-GTG, Alg. 1, the
 * paper's choice for FedMS in §5; or exact per-round class-wise Shapley, MS-MR, Alg. 3), then
 * `accumulateClassShapley` (Eq. 8) and `maverickScores` (Eq. 9).
 *
 * Coreset divergence rule (§5.1, "Hyperparameter Settings"): d̂^t is the class-wise accuracy
 * difference between K̂^t and the previous coreset K̂^{t−1}; when d̂^t < 0 and |d̂^t| > ε_d the coreset
 * is discarded, K̂^t = ∅, and nothing is aggregated (all weights 0: the global model stays). ε_d
 * decays exponentially from 3.0 to 0.1 over the run.
 *
 * Choices where the paper is open (also at their lines):
 * - The unit of Ŝ in Eq. 12 (`scoreUnit`, κ above). Eq. 12 is the one softmax of FedMS without a
 *   temperature, so it depends on the unit in which the class-wise accuracies of Eq. 7 are written
 *   (Eq. 10 has T, the thresholds ε_b, ε_i, ε_d are tuned numbers). With Eq. 7's fractions, β sums
 *   to 1 (Eq. 10) and every φ_i^c and S_i^c lies in [−1, 1] (Eq. 8 is a convex combination), so
 *   |Ŝ_i| ≤ 1 and P_i/P_j ≤ e² for any two silos: selection stays close to uniform whatever the
 *   scores say, and papers/000 Table 2's rates (Mavericks 54 %, adversaries 0–1 % out of 58 silos,
 *   6 per round) are out of reach. With accuracies in percent (κ = 100, the default) a silo 0.05
 *   ahead in Ŝ is e⁵ ≈ 148 times as likely as another; docs/reproductions.md ("FedMS's selection")
 *   has the runs. `scoreUnit: 'fraction'` is fedscore's reading before issue 25.
 * - "sample clients ∼ P" (line 7): k = roundSize silos without replacement (`weightedSample`).
 * - Footnote 1 ("In the first round, the server queries model updates from all clients and
 *   initializes contribution scores"): round 1 selects every silo (`firstRoundAll`, default true) and
 *   its class-wise Shapley values go through Eq. 8 like any round's, from S = 0.
 * - d̂^t = Σ_c (v̂^{t,c} − v̂^{t−1,c}) (the sum over classes, the scale ε_d = 3.0 suggests), against the
 *   last coreset that was kept; the first coreset is never discarded.
 * - ε_d(t) = ε_start·(ε_end/ε_start)^{(t−1)/(R−1)} for rounds t = 1..R.
 * - When the between-round truncation of Alg. 1 line 7 skips the estimator (φ = 0), the coreset still
 *   comes from v(∅) and v(N) (scoring/maverick.ts), i.e. it is the grand coalition.
 * - GTG budget: the paper stops GTG by Eq. 11 only; we also cap the round's run at `budget`
 *   evaluations (default 1000; with `sampler: 'perClass'`, each class's run, over a shared memo).
 * - MS-GTG samples jointly by default (Alg. 1 as written, scoring/ms-gtg.ts); `sampler: 'perClass'`
 *   runs GTG once per class on the same seed, as FedMS did before.
 */

import Type from 'typebox';
import { gtgShapley } from '../../scoring/gtg.js';
import {
  accumulateClassShapley,
  type ClassEstimator,
  type JointClassEstimator,
  maverickScores,
  maverickShapleyRound,
  PAPER000_DEFAULTS,
} from '../../scoring/maverick.js';
import { msGtg } from '../../scoring/ms-gtg.js';
import { exactShapleyOfGame } from '../../scoring/shapley.js';
import { roundSize, seedFrom, softmax, weightedSample } from './_sampling.js';
import { type ParamsOf, parameters, roundSizeParameters } from './_schema.js';
import { fedAvgVariant } from './fedavg.js';
import type { BuiltInStrategyEntry, Strategy } from './strategy.js';

/** The units `scoreUnit` names, the default first. */
export const SCORE_UNITS = ['percent', 'fraction'] as const;

/** The unit of the class-wise accuracies in Eq. 12 (see the module comment). */
export type ScoreUnit = (typeof SCORE_UNITS)[number];

/** κ of P = softmax(κ·Ŝ) per unit: Ŝ is computed from accuracies in [0, 1], so percent is ×100. */
export const SCORE_UNIT_SCALE: Readonly<Record<ScoreUnit, number>> = Object.freeze({
  percent: 100,
  fraction: 1,
});

/**
 * FedMS's selection probabilities P_i = exp(κ·Ŝ_i) / Σ_j exp(κ·Ŝ_j) (papers/000 Eq. 12, Alg. 2 line
 * 6) with κ = SCORE_UNIT_SCALE[unit].
 * @throws RangeError when unit is not one of SCORE_UNITS or a score is not finite.
 */
export function selectionProbabilities(scores: ArrayLike<number>, unit: ScoreUnit): Float64Array {
  if (typeof unit !== 'string' || !Object.hasOwn(SCORE_UNIT_SCALE, unit))
    throw new RangeError(`scoreUnit: expected one of ${SCORE_UNITS.join(', ')}, got ${String(unit)}`);
  const kappa = SCORE_UNIT_SCALE[unit];
  const scaled = new Float64Array(scores.length);
  for (let i = 0; i < scores.length; i++) {
    if (!Number.isFinite(scores[i])) throw new RangeError(`scores: entry ${i} is not finite (${scores[i]})`);
    scaled[i] = kappa * scores[i]!;
  }
  return softmax(scaled); // Eq. 12
}

/**
 * The parameters; defaults: papers/000 §5.1 (10 % of the silos, T = 0.01, α = 0.6, ε_b = ε_i = 0.001,
 * ε_d 3.0 → 0.1) and the choices above.
 */
export const FEDMS_PARAMETERS = parameters({
  ...roundSizeParameters(0.1),
  temperature: Type.Number({
    exclusiveMinimum: 0,
    default: PAPER000_DEFAULTS.temperature,
    description: 'T, temperature of the class difficulties β (papers/000 Eq. 10; §5.1: 0.01).',
  }),
  alpha: Type.Number({
    minimum: 0,
    maximum: 1,
    default: PAPER000_DEFAULTS.alpha,
    description:
      'α, decay of the class-wise scores S ← α·S + (1 − α)·φ (papers/000 Eq. 8; §5.1: 0.6 for Dir(1) and Dir(0.1), 0.8 for Dir(10)).',
  }),
  epsilonB: Type.Number({
    minimum: 0,
    default: PAPER000_DEFAULTS.epsilon,
    description: 'ε_b, between-round truncation of Maverick-Shapley (papers/000 Alg. 1; §5.1: 0.001).',
  }),
  epsilonI: Type.Number({
    minimum: 0,
    default: PAPER000_DEFAULTS.epsilon,
    description: 'ε_i, within-round truncation of GTG (papers/000 Alg. 1; §5.1: 0.001).',
  }),
  scoreUnit: Type.Enum(SCORE_UNITS, {
    default: 'percent',
    description:
      "Unit of the class-wise accuracies as the selection softmax reads Ŝ (papers/000 Eq. 12): 'percent' gives P = softmax(100·Ŝ), the scale at which papers/000 Table 2's selection rates are reachable; 'fraction' gives P = softmax(Ŝ) with Eq. 7's accuracies in [0, 1], under which no silo is more than e² times as likely as another (fedscore before issue 25).",
  }),
  estimator: Type.Enum(['gtg', 'exact'] as const, {
    default: 'gtg',
    description:
      "Class-wise valuation: GTG-Shapley (MS-GTG, papers/000 Alg. 1, the paper's choice for FedMS) or exact Shapley (MS-MR, Alg. 3; at most 20 participants).",
  }),
  sampler: Type.Enum(['joint', 'perClass'] as const, {
    default: 'joint',
    description:
      "MS-GTG's sampling: 'joint' is papers/000 Alg. 1 as written (one guided permutation stream for all classes, truncation on the class vector, Eq. 11 on the β-weighted φ; scoring/ms-gtg.ts), 'perClass' runs GTG once per class on the same seed.",
  }),
  budget: Type.Integer({
    minimum: 2,
    default: 1000,
    description:
      "GTG's evaluation cap per round ('joint') or per class run ('perClass') (ours; the paper stops GTG by Eq. 11 only).",
  }),
  firstRoundAll: Type.Boolean({
    default: true,
    description: 'Round 1 selects every silo (papers/000 footnote 1).',
  }),
  discardDivergent: Type.Boolean({
    default: true,
    description:
      "Aggregate nothing when the coreset's class-wise accuracy fell by more than ε_d since the last coreset kept (§5.1).",
  }),
  epsilonDStart: Type.Number({
    exclusiveMinimum: 0,
    default: 3,
    description: 'ε_d of the first round; it decays exponentially to epsilonDEnd over the run (§5.1: 3.0).',
  }),
  epsilonDEnd: Type.Number({
    exclusiveMinimum: 0,
    default: 0.1,
    description: 'ε_d of the last round (§5.1: 0.1; 0.2 for MNIST Dir(0.1)).',
  }),
});

/** Parameters of `fedMs` (FEDMS_PARAMETERS'). */
export type FedMsParams = ParamsOf<typeof FEDMS_PARAMETERS>;

/** FedMS's state (all arrays fresh per state; never mutated). */
export interface FedMsState {
  /** S, silos × classes player-major (Eq. 8); zeros at first. */
  readonly accumulated: Float64Array;
  /** Ŝ of every silo (Eq. 9); zeros before the first round (uniform P). */
  readonly scores: Float64Array;
  /** β of the last round (Eq. 10, from its coreset's accuracies); uniform before the first. */
  readonly beta: Float64Array;
  /** Σ_c v̂^c of the last coreset kept, or null before the first. */
  readonly lastCoresetTotal: number | null;
  /** The coreset of the last round, global silo ids ([] when discarded). */
  readonly coreset: readonly number[];
}

/** ε_d of round t (1-based) of R: exponential decay from start to end (§5.1). */
export function divergenceThreshold(round: number, rounds: number, start: number, end: number): number {
  if (rounds <= 1) return start;
  return start * (end / start) ** ((round - 1) / (rounds - 1));
}

/** The class-wise estimator of the round (papers/000 Alg. 1 or Alg. 3) that the parameters choose. */
function classEstimator(o: FedMsParams): ClassEstimator | JointClassEstimator {
  if (o.estimator === 'exact') return (game) => exactShapleyOfGame(game);
  return o.sampler === 'joint'
    ? msGtg({ budget: o.budget, withinRoundTolerance: o.epsilonI })
    : (game, { rng }) => gtgShapley(game, { budget: o.budget, rng, withinRoundTolerance: o.epsilonI });
}

const FEDMS = fedAvgVariant<typeof FEDMS_PARAMETERS, FedMsState>({
  name: 'fedms',
  description: 'FedMS: Maverick-Shapley selection (papers/000 Alg. 2)',
  parameters: FEDMS_PARAMETERS,
  networked: {
    refused:
      'it values silos by Maverick-Shapley on the coalition game over the selected silos, which needs each silo’s individual update',
  },
  requiresFullVisibility: true,
  init: (setup) => ({
    accumulated: new Float64Array(setup.numSilos * setup.numClasses),
    scores: new Float64Array(setup.numSilos),
    beta: new Float64Array(setup.numClasses).fill(1 / setup.numClasses),
    lastCoresetTotal: null,
    coreset: [],
  }),
  select(state, ctx, o) {
    const n = ctx.setup.numSilos;
    if (o.firstRoundAll && ctx.round === 1) return Array.from({ length: n }, (_, i) => i); // footnote 1
    return weightedSample(ctx.rng, selectionProbabilities(state.scores, o.scoreUnit), roundSize(n, o)); // lines 6–7, Eq. 12
  },
  async aggregate(state, ctx, o) {
    const C = ctx.setup.numClasses;
    if (ctx.full.perClass.dims !== C)
      throw new RangeError(`ctx.full.perClass: expected ${C} classes, got ${ctx.full.perClass.dims}`);
    if (o.estimator === 'exact' && ctx.selected.length > 20)
      throw new RangeError(
        `strategy.estimator: 'exact' values at most 20 participants, got ${ctx.selected.length}`,
      );
    // line 11: φ, β, K̂^t
    const mr = await maverickShapleyRound(ctx.full.perClass, classEstimator(o), {
      temperature: o.temperature,
      seed: seedFrom(ctx.rng),
      betweenRoundEpsilon: o.epsilonB,
    });
    const accumulated = accumulateClassShapley(state.accumulated, C, ctx.selected, mr.phi, o.alpha); // line 13
    const scores = maverickScores(accumulated, mr.beta); // line 15
    let coreTotal = 0;
    for (let c = 0; c < C; c++) coreTotal += mr.coresetAccuracy[c]!;
    // §5.1: discard a coreset whose class-wise accuracy fell by more than ε_d.
    const d = state.lastCoresetTotal === null ? 0 : coreTotal - state.lastCoresetTotal;
    const epsD = divergenceThreshold(ctx.round, ctx.setup.rounds, o.epsilonDStart, o.epsilonDEnd);
    const discard = o.discardDivergent && d < 0 && Math.abs(d) > epsD;
    const inCore = new Set(discard ? [] : mr.coreset);
    const weights = Float64Array.from(ctx.selected, (s, k) =>
      inCore.has(k) ? ctx.setup.silos[s]!.examples : 0,
    );
    return {
      weights,
      state: {
        accumulated,
        scores,
        beta: mr.beta,
        lastCoresetTotal: discard ? state.lastCoresetTotal : coreTotal,
        coreset: discard ? [] : mr.coreset.map((k) => ctx.selected[k]!),
      },
      values: mr.rewards.slice(), // Eq. 13
    };
  },
});

/**
 * FedMS: Maverick-Shapley selection and coreset aggregation. Needs full visibility (per-class game).
 * @throws RangeError naming the parameter for a bad value.
 */
export const fedMs: (params?: Partial<FedMsParams>) => Strategy<FedMsState> = FEDMS.create;

/** The registry entry (./registry.ts): `fedMs` from a JSON config. */
export const fedMsEntry: BuiltInStrategyEntry = FEDMS.entry;
