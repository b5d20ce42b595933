/**
 * The `Learner` of the round engine on TensorFlow.js (src/ml): backend choice, model, local
 * training, evaluation and the combined coalition evaluator.
 */
import { availableParallelism } from 'node:os';
import type { Dataset } from '../../data/dataset.js';
import { type BackendName, initBackend, parseBackendName } from '../../ml/backend.js';
import { classwiseGame, coalitionGame, createCoalitionEvaluator } from '../../ml/coalition.js';
import { type Evaluation, evaluateAsync } from '../../ml/evaluate.js';
import {
  createModel,
  DEFAULT_MODEL,
  fixedInitialParameters,
  type ModelChoice,
} from '../../ml/model-registry.js';
import { initParams, type ModelSpec } from '../../ml/models.js';
import { createTrainPool, type TrainPool } from '../../ml/parallel.js';
import { trainSilos } from '../../ml/train-silos.js';
import type { CoalitionSpec, Learner, Utilities } from './learner.js';

export interface TfLearnerOptions {
  /**
   * A registered model kind and its options (`{ kind: 'mlp', hidden: [200] }`); default
   * `DEFAULT_MODEL`. The options are checked against the model's schema.
   */
  model?: ModelChoice | undefined;
  training: {
    optimizer?: 'adam' | 'sgd';
    learningRate?: number;
    weightDecay?: number;
    epochs?: number;
    batchSize?: number;
  };
  /** Input shape and classes of the data (default Fashion-MNIST: 28×28×1, 10 classes). */
  inputShape?: readonly [number, number, number];
  numClasses?: number;
  /** Forces a backend (`webgpu`, `tensorflow`, `wasm`, `cpu`); default FEDSCORE_BACKEND, then automatic. */
  backend?: string;
  /** Receives the one-line backend description. */
  log?: (line: string) => void;
  /**
   * Worker threads for local training (default: the machine's cores). The wasm backend is
   * single-threaded, so silos train in parallel on workers; 1 trains in the main thread.
   */
  workers?: number;
}

/** Paper 003's local training: Adam, learning rate 1e-3, weight decay 1e-3, one epoch, batch 64. */
export const DEFAULT_TRAINING = {
  optimizer: 'adam',
  learningRate: 1e-3,
  weightDecay: 1e-3,
  epochs: 1,
  batchSize: 64,
} as const;

/**
 * Creates the TensorFlow.js learner. Throws RangeError naming `--backend` on an unknown backend,
 * `kind` on an unknown model kind, or the bad model option.
 */
export async function createTfLearner(o: TfLearnerOptions): Promise<Learner> {
  const forced: BackendName | undefined =
    o.backend !== undefined ? parseBackendName(o.backend, '--backend') : undefined;
  const info = await initBackend({
    ...(forced ? { backend: forced } : {}),
    ...(o.log ? { log: o.log } : {}),
  });
  const { kind, ...modelOptions } = o.model ?? DEFAULT_MODEL;
  const spec: ModelSpec = createModel(kind, {
    ...modelOptions,
    inputShape: o.inputShape ?? [28, 28, 1],
    numClasses: o.numClasses ?? 10,
  });
  // A model read from files (kind 'tfjs-layers') starts from their weights, not from the seed.
  const fixed = fixedInitialParameters(kind, modelOptions, spec);
  const training = { ...DEFAULT_TRAINING, ...o.training };
  const workers = o.workers ?? availableParallelism();
  if (!Number.isInteger(workers) || workers < 1)
    throw new RangeError(`workers: expected a positive integer, got ${workers}`);
  let pool: TrainPool | undefined;
  const toUtilities = (e: Evaluation): Utilities => ({
    accuracy: e.accuracy,
    loss: e.loss,
    perClass: e.perClassAccuracy,
  });
  return {
    backend: info.name,
    kernels: info.kernels,
    ...(info.adapter ? { adapter: info.adapter } : {}),
    tfjsVersion: info.tfjsVersion,
    parameterCount: spec.paramCount,
    spec,
    initialParameters: (seed) => (fixed ? Float32Array.from(fixed) : initParams(spec, seed)),
    async trainMany(params, jobs) {
      // On the GPU the silos train in this thread: one device, one queue.
      if (workers > 1 && jobs.length > 1 && info.name !== 'webgpu') {
        pool ??= createTrainPool({ workers, backend: info.name });
        const results = await pool.train(
          jobs.map((j) => ({
            spec,
            m0: params,
            data: j.data,
            options: { ...training, seed: j.seed, ...(j.steps !== undefined ? { steps: j.steps } : {}) },
          })),
        );
        return results.map((r) => r.delta);
      }
      // One after another, or on webgpu several silos in the same dispatches (train-silos.ts:
      // the same bits as one after another).
      const results = await trainSilos(
        spec,
        params,
        jobs.map((job) => ({
          data: job.data,
          options: { ...training, seed: job.seed, ...(job.steps !== undefined ? { steps: job.steps } : {}) },
        })),
      );
      return results.map((r) => r.delta);
    },
    async evaluate(params: Float32Array, data: Dataset) {
      return toUtilities(await evaluateAsync(spec, params, data));
    },
    coalitionGames(c: CoalitionSpec) {
      const evaluator = createCoalitionEvaluator({
        spec,
        m0: c.base,
        updates: c.updates,
        weights: c.weights,
        convention: c.convention,
        data: c.test,
      });
      return {
        game: coalitionGame(evaluator, c.utility),
        perClass: classwiseGame(evaluator),
        dispose: () => evaluator.dispose(),
      };
    },
    async close() {
      await pool?.close();
      pool = undefined;
    },
  } as Learner & { spec: ModelSpec };
}
