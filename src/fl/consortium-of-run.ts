/**
 * A networked run's consortium file (consortium-file.ts): what `fedscore consortium create`
 * writes from the experiment configuration and the silos' public keys, the service's
 * `POST /v1/consortia` body made from it, and the silo's checks of its local model and data
 * against it.
 *
 * The model's digests: for a user-supplied Layers model (the registry's `LAYERS_MODEL`) the topology digest of
 * layers-model.ts; for a built-in, the SHA-256 of `fedscore/model-topology/v1` + LF + the
 * canonical JSON of its kind, options, input shape and classes. The initial-weights digest is
 * `paramsDigest` of M0 (`initialModel`) for both.
 */
import { createHash } from 'node:crypto';
import { minimumThreshold } from '../../protocol/config.js';
import {
  CONSORTIUM_FILE_FORMAT,
  CONSORTIUM_FILE_VERSION,
  type ConsortiumFile,
  ConsortiumFileError,
} from '../consortium/consortium-file.js';
import type { ConsortiumInput } from '../consortium/schemas.js';
import { capWeights } from '../consortium/weight-floor.js';
import { layersModelDigests, paramsDigest } from '../ml/layers-model.js';
import { DEFAULT_MODEL, LAYERS_MODEL } from '../ml/model-registry.js';
import { canonicalJson } from '../schema/canonical-json.js';
import { DEFAULT_STRATEGY, networkedSupport } from '../strategies/registry.js';
import { dataShapeOf } from './consortium-data.js';
import type { Learner } from './learner/learner.js';
import { consortiumInput, initialModel, minWeightOf, type NetworkedRun } from './networked.js';
import type { RunConfig } from './run-config.js';

/** The model's topology digest (module comment). */
export function modelTopologyDigest(config: RunConfig): string {
  const { kind, ...options } = config.model ?? DEFAULT_MODEL;
  if (kind === LAYERS_MODEL.kind) return layersModelDigests((options as { path: string }).path).topology;
  const shape = dataShapeOf(config);
  return createHash('sha256')
    .update(`fedscore/model-topology/v1\n${canonicalJson({ kind, options, ...shape })}`)
    .digest('hex');
}

/** Options of {@link consortiumFileOf}. */
export interface ConsortiumFileOptions {
  /**
   * The silos' example counts, when the silos bring their own data (`fedscore client --data`):
   * the weights' public scale is then their maximum and the minimum weight min/max, instead of
   * the configuration's partition's.
   */
  readonly examples?: readonly number[];
}

/** The consortium file of `run` for consortium `id` and the silos' public keys (hex, silo id = index). */
export function consortiumFileOf(
  run: NetworkedRun,
  id: string,
  publicKeys: readonly string[],
  learner: Learner,
  o: ConsortiumFileOptions = {},
): ConsortiumFile {
  const body = consortiumInput(run, id, publicKeys, learner.parameterCount);
  const cfg = run.config;
  const { name: strategyName, ...parameters } = (cfg.strategy ?? DEFAULT_STRATEGY) as {
    name: string;
  } & Record<string, unknown>;
  const equal = parameters.weights === 'equal';
  const scoreWeights = networkedSupport(strategyName) === 'score-weights';
  let scale = run.weightScale;
  let minWeight = run.minWeight;
  if (o.examples !== undefined) {
    if (o.examples.length !== publicKeys.length || !o.examples.every((x) => Number.isInteger(x) && x > 0))
      throw new RangeError(
        `examples: expected ${publicKeys.length} positive integers (one per silo), got ${JSON.stringify(o.examples)}`,
      );
    // The public cap of a round of all silos (weight-floor.ts `capWeights`): the scale is the
    // capped largest weight, and every silo clamps its own count to the capped range (networked.ts `weightOf`).
    const capped = capWeights(
      o.examples.map((x) => (equal ? 1 : x)),
      run.weightBounds,
    );
    scale = Math.max(...capped);
    // Score weights are bounded by the floor alone; FedAvg weights by the floor and min/max. A
    // silo on its own data lifts its count to minWeight·scale (networked.ts `weightOf`): the
    // capped weights' smallest, so that it sends what the cap gives it.
    minWeight = minWeightOf(capped, scale, run.weightBounds, scoreWeights);
  }
  const shape = dataShapeOf(cfg);
  return {
    format: CONSORTIUM_FILE_FORMAT,
    version: CONSORTIUM_FILE_VERSION,
    id,
    participants: publicKeys.map((k) => ({ publicKey: k.toLowerCase() })),
    threshold: body.threshold,
    corruptSilos: body.corruptSilos,
    // What the service serves: t below the bound (the opt-in alone, with t at the bound, is not weak).
    weakThreshold: body.threshold < minimumThreshold(publicKeys.length, body.corruptSilos),
    parameters: learner.parameterCount,
    data: { inputShape: [...shape.inputShape] as [number, number, number], numClasses: shape.numClasses },
    model: {
      kind: body.model.name,
      topologyDigest: learner.topologyDigest ?? modelTopologyDigest(cfg),
      initialWeightsDigest: paramsDigest(initialModel(run, learner)),
    },
    testSetDigest: body.testSetDigest,
    schemes: [...body.schemes],
    convention: body.convention,
    emptyCoalition: body.emptyCoalition,
    utility: { ...body.utility },
    encoding: {
      clip: body.encoding.clip,
      weightRange: body.encoding.weightRange,
      minWeight,
      weightFloor: run.weightBounds.weightFloor,
      maxWeightShare: run.weightBounds.maxWeightShare,
      minEffectiveSilos: run.weightBounds.minEffectiveSilos,
    },
    weights: { kind: equal ? 'equal' : 'examples', scale },
    strategy: { name: strategyName, parameters },
    seed: run.seed,
    rounds: cfg.rounds,
  };
}

type Deadlines = Record<'advertise' | 'share' | 'mask' | 'consistency' | 'unmask' | 'reporting', number>;

/**
 * The body of `POST /v1/consortia` that registers `file` with the service, with its strategy, seed
 * and — unless `schedule: false` (the operator opens rounds by hand) — its rounds as the service's
 * schedule: what a pinned silo compares (consortium-file.ts, `compareWithServed`).
 */
export function consortiumBodyOf(
  file: ConsortiumFile,
  deadlines?: Deadlines,
  o: { readonly schedule?: boolean } = {},
): ConsortiumInput {
  return {
    id: file.id,
    participants: file.participants.map((p) => ({ publicKey: p.publicKey })),
    threshold: file.threshold,
    corruptSilos: file.corruptSilos,
    ...(file.weakThreshold ? { allowWeakThreshold: true } : {}),
    model: { name: file.model.kind, parameters: file.parameters },
    testSetDigest: file.testSetDigest,
    schemes: [...file.schemes],
    encoding: { ...file.encoding },
    convention: file.convention,
    emptyCoalition: file.emptyCoalition,
    utility: { ...file.utility },
    ...(deadlines ? { deadlines } : {}),
    strategy: { name: file.strategy.name, parameters: { ...file.strategy.parameters } },
    seed: file.seed,
    ...(o.schedule === false ? {} : { rounds: file.rounds }),
  };
}

/**
 * Checks the silo's own model, data and test set against the pinned file before it takes part:
 * the data shape, d, the model's topology and initial weights, the local test set's digest,
 * its weight within [minWeight, 1]·scale.
 * @throws ConsortiumFileError naming the field.
 */
export function checkLocalAgainstFile(
  file: ConsortiumFile,
  run: NetworkedRun,
  learner: Learner,
  silo: number,
): void {
  const fail = (field: string, detail: string): never => {
    throw new ConsortiumFileError(`consortium file ${field}: ${detail}`);
  };
  const shape = dataShapeOf(run.config);
  if (canonicalJson(shape.inputShape) !== canonicalJson(file.data.inputShape))
    fail(
      'data.inputShape',
      `the file says ${file.data.inputShape.join('×')}, the local configuration ${shape.inputShape.join('×')}`,
    );
  if (shape.numClasses !== file.data.numClasses)
    fail(
      'data.numClasses',
      `the file says ${file.data.numClasses}, the local configuration ${shape.numClasses}`,
    );
  if (learner.parameterCount !== file.parameters)
    fail(
      'parameters',
      `the file's model has ${file.parameters} parameters, the local one ${learner.parameterCount}`,
    );
  const topology = learner.topologyDigest ?? modelTopologyDigest(run.config);
  if (topology !== file.model.topologyDigest)
    fail(
      'model.topologyDigest',
      `the local model's topology digest is ${topology}, the file's ${file.model.topologyDigest}`,
    );
  const weights = paramsDigest(initialModel(run, learner));
  if (weights !== file.model.initialWeightsDigest)
    fail(
      'model.initialWeightsDigest',
      `the local initial model's digest is ${weights}, the file's ${file.model.initialWeightsDigest}`,
    );
  if (run.testSetDigest !== file.testSetDigest)
    fail(
      'testSetDigest',
      `the local test set's digest is ${run.testSetDigest}, the file's ${file.testSetDigest}`,
    );
  if (file.participants[silo] === undefined)
    fail('participants', `the file has ${file.participants.length} participants; there is no silo ${silo}`);
}
