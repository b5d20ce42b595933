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
 * - the silo's input: x_i = (ŵ_iΔ_i, ŵ_i), ŵ_i = w_i / max_j w_j, quantized with the consortium's
 *   clip, weight range 1, minimum weight min_j ŵ_j and n silos — the engine's `secureAggregate`
 *   encoding (secure-round.ts, which this module must not import: it is simulation-only);
 *   Σ x_i mod 2^32 is the same integer vector whatever the masks, so both sides decode the same sum;
 * - M = M0 + Σŵ_iΔ_i / Σŵ_i (protocol/weighted.ts, the service's finishAggregation);
 * - the silo's coalitions from (Σŵ_jΔ_j · max w, Σŵ_j · max w) and its raw (Δ_i, w_i), as the
 *   engine passes them to `siloCoalitionModels`.
 *
 * Networked runs support FedAvg over all silos (the default strategy): selection and weights
 * are then public and fixed, so no silo needs another's update or score to take part.
 */
import { defaultCorruptTolerated, roundThreshold } from '../../protocol/config.js';
import { encodeWeightedInput } from '../../protocol/weighted.js';
import { checkEmptyCoalition, type EmptyCoalition } from '../../scoring/empty-coalition.js';
import { datasetDigest } from '../data/digest.js';
import { type Convention, DEFAULT_CONVENTION } from '../ml/convention.js';
import { DEFAULT_MODEL } from '../ml/model-registry.js';
import type { ExperimentConfig } from './config.js';
import { type Learner, type UtilityName, utilityValue } from './learner.js';
import {
  NEG_LOSS_BOUND_PER_LN_CLASS,
  PRIVATE_METHODS,
  siloCoalitionModels,
  type UtilityDeclaration,
} from './private-scoring.js';
import { buildConsortium, type Consortium, dataShapeOf, deriveSeed } from './setup.js';
import { fedAvgWeight } from './strategies/fedavg.js';
import { DEFAULT_STRATEGY } from './strategies/registry.js';
import { createTfLearner } from './tf-learner.js';
import { consortiumTrainer } from './trainer.js';

/** What every process of a networked run derives from the configuration and seed. */
export interface NetworkedRun {
  readonly config: ExperimentConfig;
  readonly seed: number;
  /** The consortium's data (every silo's partition, the test set). */
  readonly data: Consortium;
  /** FedAvg weight w_i of each silo (its example count, or 1 with `strategy.weights: 'equal'`). */
  readonly weights: readonly number[];
  /** max_j w_j: weights are divided by it before quantization (engine: secure-round.ts). */
  readonly weightScale: number;
  /** Secure-aggregation threshold t (the engine's rule for all n silos, protocol/config.ts). */
  readonly threshold: number;
  /** n_C: corrupted silos tolerated (`secureAggregation.corruptSilos`, default ⌈n/3⌉ − 1). */
  readonly corruptSilos: number;
  /** `secureAggregation.weakThreshold`: this process's own opt-in to a threshold below the bound. */
  readonly weakThreshold: boolean;
  /** The smallest normalized weight min_i w_i / max_j w_j: the consortium's `encoding.minWeight`. */
  readonly minWeight: number;
  /** Clipping bound of each coordinate of ŵΔ. */
  readonly clip: number;
  readonly convention: Convention;
  /** What v(∅) is when the consortium scores (`scoring.emptyCoalition`; the consortium's setting). */
  readonly emptyCoalition: EmptyCoalition;
  readonly utility: UtilityName;
  /** Hex SHA-256 of the common test set (src/data/digest.ts). */
  readonly testSetDigest: string;
}

/**
 * Derives a networked run from a validated configuration (and `given` data instead of the
 * configuration's partition: local-run.ts).
 *
 * @throws RangeError naming the field when the configuration cannot run over the network
 *   (`strategy.name` other than fedavg, `strategy.fraction` < 1, `strategy.clientsPerRound` < silos,
 *   `secureAggregation.enabled` false) or its data cannot be built.
 */
export function networkedRun(config: ExperimentConfig, seed: number, given?: Consortium): NetworkedRun {
  if (!Number.isInteger(seed) || seed < 0) throw new RangeError(`seed: expected an integer ≥ 0, got ${seed}`);
  const strategy = (config.strategy ?? DEFAULT_STRATEGY) as {
    name: string;
    fraction?: unknown;
    clientsPerRound?: unknown;
    weights?: unknown;
  };
  if (strategy.name !== DEFAULT_STRATEGY.name)
    throw new RangeError(
      `strategy.name: networked runs support '${DEFAULT_STRATEGY.name}' over all silos only, got '${strategy.name}'`,
    );
  if (strategy.fraction !== undefined && strategy.fraction !== 1)
    throw new RangeError('strategy.fraction: networked runs take every silo every round (fraction 1)');
  if (
    strategy.clientsPerRound !== undefined &&
    !(typeof strategy.clientsPerRound === 'number' && strategy.clientsPerRound >= config.silos)
  )
    throw new RangeError('strategy.clientsPerRound: networked runs take every silo every round');
  if (strategy.weights !== undefined && strategy.weights !== 'examples' && strategy.weights !== 'equal')
    throw new RangeError(`strategy.weights: expected 'examples' or 'equal', got ${String(strategy.weights)}`);
  if (config.secureAggregation?.enabled === false)
    throw new RangeError('secureAggregation.enabled: networked runs always use secure aggregation');
  // A silo with its own data (local-run.ts) passes them; otherwise the configuration's partition.
  const data = given ?? buildConsortium(config, seed);
  const weights = data.silos.map((s) =>
    fedAvgWeight(s.n, strategy.weights === 'equal' ? 'equal' : 'examples'),
  );
  const k = config.silos;
  const sa = config.secureAggregation;
  const corruptSilos = sa?.corruptSilos ?? defaultCorruptTolerated(k);
  const weakThreshold = sa?.weakThreshold === true;
  const weightScale = Math.max(...weights) || 1;
  return {
    config,
    seed,
    data,
    weights,
    weightScale,
    threshold: roundThreshold(k, { threshold: sa?.threshold, corruptSilos, weakThreshold }),
    corruptSilos,
    weakThreshold,
    minWeight: Math.min(...weights.map((w) => w / weightScale)),
    clip: config.secureAggregation?.clip ?? 1,
    convention: config.aggregation?.convention ?? DEFAULT_CONVENTION,
    emptyCoalition: checkEmptyCoalition(config.scoring?.emptyCoalition, 'scoring.emptyCoalition'),
    utility: config.scoring?.utility ?? 'accuracy',
    testSetDigest: datasetDigest(data.test),
  };
}

/** The learner of a networked run (the engine's TensorFlow.js learner, training in the main thread). */
export function networkedLearner(
  config: ExperimentConfig,
  o: { backend?: string; log?: (line: string) => void } = {},
): Promise<Learner> {
  return createTfLearner({
    ...dataShapeOf(config),
    model: config.model ?? DEFAULT_MODEL,
    training: config.training ?? {},
    workers: 1,
    ...(o.backend !== undefined ? { backend: o.backend } : {}),
    ...(o.log ? { log: o.log } : {}),
  });
}

/** The initial model M0 of the run (engine: `learner.initialParameters(deriveSeed(seed, 0x1417))`). */
export function initialModel(run: NetworkedRun, learner: Learner): Float32Array {
  return learner.initialParameters(deriveSeed(run.seed, 0x1417));
}

/** Silo `silo`'s update Δ_i in round `round` from `base` (with its configured update attack, if any). */
export async function localUpdate(
  run: NetworkedRun,
  learner: Learner,
  silo: number,
  round: number,
  base: Float32Array,
): Promise<Float32Array> {
  if (run.data.silos[silo] === undefined)
    throw new RangeError(`silo: expected 0..${run.data.silos.length - 1}, got ${silo}`);
  // The engine's training (trainer.ts): the same seed deriveSeed(seed, round, silo), the same attacks.
  const [update] = await consortiumTrainer(learner, run.data, run.seed)(base, round, [silo]);
  return update!;
}

/** The quantized input x_i = (ŵ_iΔ_i, ŵ_i) for `encoding` (the consortium's clip, weight range and n). */
export function siloInput(
  run: NetworkedRun,
  silo: number,
  update: Float32Array,
  encoding: { clip: number; weightRange: number; n: number; minWeight?: number },
): Uint32Array {
  return encodeWeightedInput(update, run.weights[silo]! / run.weightScale, {
    valueRange: encoding.clip,
    weightRange: encoding.weightRange,
    n: encoding.n,
    ...(encoding.minWeight !== undefined ? { minWeight: encoding.minWeight } : {}),
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
): Promise<{ singleton: number; complement: number }> {
  const scale = run.weightScale;
  // The engine's SecureSum: weightedSum and totalWeight scaled back by max w (secure-round.ts).
  const models = siloCoalitionModels(
    base,
    published.weightedSum.map((x) => x * scale),
    published.totalWeight * scale,
    { update, weight: run.weights[silo]! },
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

/**
 * The body of `POST /v1/consortia` for this run: the participants' public keys (hex, silo id =
 * index), the engine's threshold and n_C (and the weak-threshold opt-in when configured), the
 * model size, the test set's digest, every private scheme, the engine's quantization (clip,
 * weight range 1: silos send normalized weights; the smallest normalized weight as minWeight),
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
    encoding: { clip: run.clip, weightRange: 1, minWeight: run.minWeight },
    convention: run.convention,
    emptyCoalition: run.emptyCoalition,
    utility: networkedUtility(run),
    ...(deadlines ? { deadlines } : {}),
  };
}
