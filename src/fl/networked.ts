/**
 * An experiment configuration run over the network (`fedscore serve --config` and
 * `fedscore client --config`): the same data, model, training, weights, quantization and
 * coalition models as the in-process round engine (engine.ts), split between the processes.
 *
 * Each silo derives its own partition from the configuration and seed (a stand-in for its local
 * data; synthetic and Fashion-MNIST partitions are deterministic in the seed), the server derives
 * the common test set for its evaluator. Whatever the engine computes in one process is computed
 * here with the same functions and the same floating-point operations in the same order, so a
 * networked run and an engine run with the same configuration and seed give identical scores:
 *
 * - local training: `learner.trainMany(M0, [{ data, seed: deriveSeed(seed, r, i) }])`;
 * - the silo's input: x_i = (ŵ_iΔ_i, ŵ_i), ŵ_i = w_i / max_j w_j with the weight floor applied
 *   (weight-floor.ts, the engine's weigh step), quantized with the consortium's
 *   clip, weight range 1, minimum weight min_j ŵ_j and n silos — the engine's `secureAggregate`
 *   encoding (secure-round.ts, which this module must not import: it is simulation-only);
 *   Σ x_i mod 2^32 is the same integer vector whatever the masks, so both sides decode the same sum;
 * - M = M0 + Σŵ_iΔ_i / Σŵ_i (protocol/weighted.ts, the service's finishAggregation);
 * - the silo's coalitions from (Σŵ_jΔ_j · max w, Σŵ_j · max w) and its raw (Δ_i, w_i), as the
 *   engine passes them to `siloCoalitionModels`.
 *
 * Strategies: FedAvg over all silos by default; a configured strategy runs networked when it fits
 * secure aggregation (../strategies/networked-plan.ts): every silo and the server compute each round's
 * selection, and every silo its own weight, from public information (the seed and the published
 * scores), with the engine's random streams, so the selection and weights are the engine's.
 */
import { defaultCorruptTolerated, roundThreshold } from '../../protocol/config.js';
import { encodeWeightedInput } from '../../protocol/weighted.js';
import { checkEmptyCoalition, type EmptyCoalition } from '../../scoring/empty-coalition.js';
import { type Convention, DEFAULT_CONVENTION } from '../consortium/convention.js';
import {
  NEG_LOSS_BOUND_PER_LN_CLASS,
  PRIVATE_METHODS,
  siloCoalitionModels,
  type UtilityDeclaration,
} from '../consortium/private-scoring.js';
import { capWeights, floorWeights, type WeightBounds, weightBoundsOf } from '../consortium/weight-floor.js';
import { datasetDigest } from '../data/digest.js';
import { deriveSeed, SEED_STREAMS } from '../data/seed.js';
import { DEFAULT_MODEL } from '../ml/model-registry.js';
import { fedAvgWeight } from '../strategies/fedavg.js';
import {
  networkedStrategy,
  type PublishedRound,
  planRound,
  planScale,
  type RoundPlan,
} from '../strategies/networked-plan.js';
import { DEFAULT_STRATEGY, networkedSupport, type StrategyConfig } from '../strategies/registry.js';
import type { Strategy, StrategySetup } from '../strategies/strategy.js';
import { buildConsortium, type Consortium, dataShapeOf } from './consortium-data.js';
import { createLearner } from './learner/create-learner.js';
import { type Learner, type UtilityName, utilityValue } from './learner/learner.js';
import type { RunConfig } from './run-config.js';
import { strategySetupOf } from './strategy-setup.js';
import { consortiumTrainer } from './trainer.js';

/** What every process of a networked run derives from the configuration and seed. */
export interface NetworkedRun {
  readonly config: RunConfig;
  readonly seed: number;
  /** The consortium's data (every silo's partition, the test set). */
  readonly data: Consortium;
  /** The configured strategy (FedAvg over every silo without one), checked to run networked. */
  readonly strategy: Strategy;
  /** What the strategy knows before the first round (the engine's, round/run.ts). */
  readonly setup: StrategySetup;
  /**
   * FedAvg weight w_i of each silo (its example count, or 1 with `strategy.weights: 'equal'`),
   * capped as a round of all silos caps them (weight-floor.ts `capWeights`) when every silo's is known.
   */
  readonly weights: readonly number[];
  /** max_j w_j: weights are divided by it before quantization (engine: secure-round.ts). */
  readonly weightScale: number;
  /** Secure-aggregation threshold t (the engine's rule for all n silos, protocol/config.ts). */
  readonly threshold: number;
  /** n_C: corrupted silos tolerated (`secureAggregation.corruptSilos`, default ⌈n/3⌉ − 1). */
  readonly corruptSilos: number;
  /** `secureAggregation.weakThreshold`: this process's own opt-in to a threshold below the bound. */
  readonly weakThreshold: boolean;
  /**
   * The smallest normalized weight a silo may send: max(f, min_i w_i / max_j w_j) with FedAvg
   * weights, f with score weights (f = `weightBounds.weightFloor`): the consortium's `encoding.minWeight`.
   */
  readonly minWeight: number;
  /** The weight floor, largest share and effective number (`secureAggregation.weightFloor` / `maxWeightShare` / `minEffectiveSilos`). */
  readonly weightBounds: WeightBounds;
  /** Clipping bound of each coordinate of ŵΔ. */
  readonly clip: number;
  readonly convention: Convention;
  /** What v(∅) is when the consortium scores (`scoring.emptyCoalition`; the consortium's setting). */
  readonly emptyCoalition: EmptyCoalition;
  /** Whether flagged reports are quarantined (`scoring.quarantine`; the consortium's setting). */
  readonly quarantine: boolean;
  readonly utility: UtilityName;
  /** Hex SHA-256 of the common test set (src/data/digest.ts). */
  readonly testSetDigest: string;
}

/**
 * Derives a networked run from a validated configuration (and `given` data instead of the
 * configuration's partition: local-run.ts).
 *
 * @throws RangeError naming the field when the configuration cannot run over the network
 *   (`strategy.name` of a strategy that needs individual updates, with the reason; `strategy.score`
 *   not a private score; `secureAggregation.enabled` false) or its data cannot be built.
 */
export function networkedRun(config: RunConfig, seed: number, given?: Consortium): NetworkedRun {
  if (!Number.isInteger(seed) || seed < 0) throw new RangeError(`seed: expected an integer ≥ 0, got ${seed}`);
  // What fits secure aggregation runs networked; the rest is refused with the reason
  // (../strategies/networked-plan.ts, the registry entries' `networked`).
  const configured = config.strategy as StrategyConfig | undefined;
  const strategyOf = networkedStrategy(configured);
  const strategy = (configured ?? DEFAULT_STRATEGY) as { name: string; weights?: unknown };
  if (config.secureAggregation?.enabled === false)
    throw new RangeError('secureAggregation.enabled: networked runs always use secure aggregation');
  // A silo with its own data (local-run.ts) passes them; otherwise the configuration's partition.
  const data = given ?? buildConsortium(config, seed);
  const k = config.silos;
  const sa = config.secureAggregation;
  const weightBounds = weightBoundsOf(sa);
  const raw = data.silos.map((s) => fedAvgWeight(s.n, strategy.weights === 'equal' ? 'equal' : 'examples'));
  // Every silo's weight known (the configuration's partition): the public cap of a round of all
  // silos (weight-floor.ts `capWeights`, the engine's weigh step), so the scale max_j w_j is the
  // capped one. A silo on its own data knows only its own (sparse `raw`): its scale and cap come
  // from the pinned file (local-run.ts), and weightOf clips its weight at that scale.
  const known = raw.filter((w) => w !== undefined).length === k;
  const weights = known ? capWeights(raw, weightBounds) : raw;
  const corruptSilos = sa?.corruptSilos ?? defaultCorruptTolerated(k);
  const weakThreshold = sa?.weakThreshold === true;
  const weightScale = Math.max(...weights) || 1;
  const scoreWeights = networkedSupport(strategy.name) === 'score-weights';
  return {
    config,
    seed,
    data,
    strategy: strategyOf,
    setup: strategySetupOf(config, seed, data),
    weights,
    weightScale,
    threshold: roundThreshold(k, { threshold: sa?.threshold, corruptSilos, weakThreshold }),
    corruptSilos,
    weakThreshold,
    // Score weights may be 0 before the floor (the lowest normalized score, papers/003 §5): the
    // floor is then their lower bound; FedAvg weights are floored too (weight-floor.ts).
    minWeight: minWeightOf(weights, weightScale, weightBounds, scoreWeights),
    weightBounds,
    clip: config.secureAggregation?.clip ?? 1,
    convention: config.aggregation?.convention ?? DEFAULT_CONVENTION,
    emptyCoalition: checkEmptyCoalition(config.scoring?.emptyCoalition, 'scoring.emptyCoalition'),
    quarantine: config.scoring?.quarantine ?? true,
    utility: config.scoring?.utility ?? 'accuracy',
    testSetDigest: datasetDigest(data.test),
  };
}

/**
 * The smallest normalized weight any silo sends, the consortium's `encoding.minWeight`: f for
 * score weights (any weight may be lifted to the floor), max(f, min_i w_i / scale) otherwise.
 */
export function minWeightOf(
  weights: readonly number[],
  scale: number,
  bounds: WeightBounds,
  scoreWeights: boolean,
): number {
  if (scoreWeights) return bounds.weightFloor;
  return Math.max(bounds.weightFloor, Math.min(...weights.map((w) => w / scale)));
}

/**
 * The learner of a networked run: the engine's TensorFlow.js learner, training in the main thread,
 * or the silo's trainer process for an `external` model (src/fl/learner/create-learner.ts).
 */
export function networkedLearner(
  config: RunConfig,
  o: { backend?: string; log?: (line: string) => void; cwd?: string } = {},
): Promise<Learner> {
  return createLearner({
    ...dataShapeOf(config),
    model: config.model ?? DEFAULT_MODEL,
    training: config.training ?? {},
    workers: 1,
    ...(o.backend !== undefined ? { backend: o.backend } : {}),
    ...(o.log ? { log: o.log } : {}),
    ...(o.cwd !== undefined ? { cwd: o.cwd } : {}),
  });
}

/** The initial model M0 of the run (engine: `learner.initialParameters(deriveSeed(seed, 0x1417))`). */
export function initialModel(run: NetworkedRun, learner: Learner): Float32Array {
  return learner.initialParameters(deriveSeed(run.seed, SEED_STREAMS.run.initialModel));
}

/**
 * Silo `silo`'s update Δ_i in round `round` from `base` (with its configured update attack, if any).
 * `trainingSeed`: the minibatch order's (and any training noise's) seed; by default the engine's
 * `deriveSeed(seed, round, silo)`, which anyone who knows the public seed can replay — a networked
 * silo passes fresh randomness instead (src/client/silo.ts, issue 32 R1).
 */
export async function localUpdate(
  run: NetworkedRun,
  learner: Learner,
  silo: number,
  round: number,
  base: Float32Array,
  trainingSeed?: number,
): Promise<Float32Array> {
  if (run.data.silos[silo] === undefined)
    throw new RangeError(`silo: expected 0..${run.data.silos.length - 1}, got ${silo}`);
  if (
    trainingSeed !== undefined &&
    !(Number.isInteger(trainingSeed) && trainingSeed >= 0 && trainingSeed < 2 ** 31)
  )
    throw new RangeError(`trainingSeed: expected an integer in [0, 2^31), got ${trainingSeed}`);
  // The engine's training (trainer.ts): the same seed deriveSeed(seed, round, silo) unless given,
  // the same attacks.
  const seedOf = trainingSeed === undefined ? undefined : () => trainingSeed;
  const [update] = await consortiumTrainer(learner, run.data, run.seed, seedOf)(base, round, [silo]);
  return update!;
}

/**
 * The quantized input x_i = (ŵ_iΔ_i, ŵ_i) for `encoding` (the consortium's clip, weight range and n).
 * With a round's `plan` (a configured strategy, ../strategies/networked-plan.ts) the weight is the plan's,
 * ŵ_i = w_i / max over the selected, quantized for the k selected silos — the engine's encoding.
 */
export function siloInput(
  run: NetworkedRun,
  silo: number,
  update: Float32Array,
  encoding: { clip: number; weightRange: number; n: number; minWeight?: number },
  plan?: RoundPlan,
): Uint32Array {
  const { weight, scale } = weightOf(run, silo, plan);
  return encodeWeightedInput(update, weight / scale, {
    valueRange: encoding.clip,
    weightRange: encoding.weightRange,
    n: plan ? plan.selected.length : encoding.n,
    ...(encoding.minWeight !== undefined ? { minWeight: encoding.minWeight } : {}),
  });
}

/**
 * Silo `silo`'s relative weight w_i and the scale max_j w_j of the round (its plan's, if any).
 * Without a plan every silo takes part with its FedAvg weight, floored as the engine floors a
 * round of all n silos (weight-floor.ts) from the public scale alone.
 */
export function weightOf(
  run: NetworkedRun,
  silo: number,
  plan?: RoundPlan,
): { weight: number; scale: number } {
  if (!plan) {
    // The cap of a round of all silos (weight-floor.ts `capWeights`): every weight known, they are
    // capped already; a silo on its own data (local-run.ts) clamps its count to the pinned file's
    // [minWeight·scale, scale] — the capped weights' smallest and largest, so it sends the same.
    const known = run.weights.filter((w) => w !== undefined).length === run.config.silos;
    const bounds = known
      ? run.weightBounds
      : { ...run.weightBounds, weightFloor: Math.max(run.weightBounds.weightFloor, run.minWeight) };
    const [weight] = floorWeights([Math.min(run.weights[silo]!, run.weightScale)], bounds, {
      scale: run.weightScale,
      k: run.weights.length,
    });
    return { weight: weight!, scale: run.weightScale };
  }
  const k = plan.selected.indexOf(silo);
  if (k < 0 || plan.weights === undefined)
    throw new RangeError(
      `plan: silo ${silo} is not selected for round ${plan.round}, or the plan has no weights`,
    );
  return { weight: plan.weights[k]!, scale: planScale(plan) };
}

/**
 * The plan of round `round` for a silo — selection and weights, from the published rounds before
 * it — or undefined when the configuration names no strategy (every silo, FedAvg weights).
 */
export async function siloPlan(
  run: NetworkedRun,
  round: number,
  published: readonly PublishedRound[],
): Promise<RoundPlan | undefined> {
  if (run.config.strategy === undefined) return undefined;
  return planRound({
    strategy: run.strategy,
    setup: run.setup,
    seed: run.seed,
    round,
    published,
    weights: true,
    bounds: run.weightBounds,
  });
}

/**
 * Silo `silo`'s two private utilities v(M0 + U_i) and v(M − U_i) on the test set, from the
 * published Σŵ_jΔ_j and Σŵ_j (the normalized weights the silos sent).
 */
export async function siloUtilities(
  run: NetworkedRun,
  learner: Learner,
  silo: number,
  base: Float32Array,
  update: Float32Array,
  published: { weightedSum: Float64Array; totalWeight: number },
  plan?: RoundPlan,
): Promise<{ singleton: number; complement: number }> {
  const { weight, scale } = weightOf(run, silo, plan);
  // The engine's SecureSum: weightedSum and totalWeight scaled back by max w (secure-round.ts).
  const models = siloCoalitionModels(
    base,
    published.weightedSum.map((x) => x * scale),
    published.totalWeight * scale,
    { update, weight },
    run.convention,
  );
  const single = await learner.evaluate(models.singleton, run.data.test);
  const complement = await learner.evaluate(models.complement, run.data.test);
  return { singleton: utilityValue(single, run.utility), complement: utilityValue(complement, run.utility) };
}

/**
 * The server's evaluator v(·) on the run's test set. It refuses (throws) for a consortium whose
 * `testSetDigest` is not this test set's, so the service never scores with the wrong data.
 */
export function testSetEvaluator(
  run: NetworkedRun,
  learner: Learner,
): (consortium: { id: string; testSetDigest: string }, params: Float32Array) => Promise<number> {
  return async (consortium, params) => {
    if (consortium.testSetDigest !== run.testSetDigest)
      throw new RangeError(
        `testSetDigest: consortium ${consortium.id} uses test set ${consortium.testSetDigest}, this server's is ${run.testSetDigest}`,
      );
    return utilityValue(await learner.evaluate(params, run.data.test), run.utility);
  };
}

/**
 * The utility a networked run's consortium declares: accuracy, or negLoss bounded by
 * {@link NEG_LOSS_BOUND_PER_LN_CLASS}·ln C (C classes; ln C is the loss of a uniform guess).
 */
export function networkedUtility(run: NetworkedRun): UtilityDeclaration {
  if (run.utility === 'accuracy') return { name: 'accuracy' };
  return {
    name: 'negLoss',
    maxLoss: NEG_LOSS_BOUND_PER_LN_CLASS * Math.log(Math.max(2, run.data.numClasses)),
  };
}

/** A configured strategy `{ name, ...parameters }` as the service and the consortium file pin it. */
function strategyBody(config: unknown): { name: string; parameters: Record<string, unknown> } {
  const { name, ...parameters } = config as { name: string } & Record<string, unknown>;
  return { name, parameters };
}

/**
 * The body of `POST /v1/consortia` for this run: the participants' public keys (hex, silo id =
 * index), the engine's threshold and n_C (and the weak-threshold opt-in when configured), the
 * model size, the test set's digest, every private scheme, the engine's quantization (clip,
 * weight range 1: silos send normalized weights; the smallest normalized weight as minWeight; the
 * weight floor and largest share),
 * convention and utility ({@link networkedUtility}).
 */
export function consortiumInput(
  run: NetworkedRun,
  id: string,
  publicKeys: readonly string[],
  parameters: number,
  deadlines?: Record<'advertise' | 'share' | 'mask' | 'consistency' | 'unmask' | 'reporting', number>,
) {
  if (publicKeys.length !== run.config.silos)
    throw new RangeError(
      `publicKeys: expected ${run.config.silos} keys (one per silo), got ${publicKeys.length}`,
    );
  return {
    id,
    participants: publicKeys.map((publicKey) => ({ publicKey })),
    threshold: run.threshold,
    corruptSilos: run.corruptSilos,
    ...(run.weakThreshold ? { allowWeakThreshold: true } : {}),
    model: { name: run.config.model?.kind ?? DEFAULT_MODEL.kind, parameters },
    testSetDigest: run.testSetDigest,
    schemes: [...PRIVATE_METHODS],
    encoding: {
      clip: run.clip,
      weightRange: 1,
      minWeight: run.minWeight,
      weightFloor: run.weightBounds.weightFloor,
      maxWeightShare: run.weightBounds.maxWeightShare,
      minEffectiveSilos: run.weightBounds.minEffectiveSilos,
    },
    convention: run.convention,
    emptyCoalition: run.emptyCoalition,
    ...(run.quarantine ? {} : { quarantine: false }),
    utility: networkedUtility(run),
    ...(deadlines ? { deadlines } : {}),
    // The strategy and its public seed: the service selects each round's silos as the silos do.
    ...(run.config.strategy !== undefined
      ? { strategy: strategyBody(run.config.strategy), seed: run.seed }
      : {}),
  };
}
