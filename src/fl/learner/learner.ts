/**
 * The learning runtime as the round engine sees it: initialize, train locally, evaluate, and
 * build the full-visibility coalition games. src/ml provides the TensorFlow.js implementation
 * (`createTfLearner` in ./tf-learner.ts); the engine depends only on this interface.
 */

import type { Game, VectorGame } from '../../../scoring/game.js';
import type { Convention } from '../../consortium/convention.js';
import type { Dataset } from '../../data/dataset.js';
import type { AdapterInfo } from '../../ml/adapter.js';

/** Utilities of one parameter vector on a dataset. */
export interface Utilities {
  accuracy: number;
  /** Mean cross-entropy. */
  loss: number;
  /** Accuracy of each class (NaN for a class absent from the dataset). */
  perClass: Float64Array;
}

/** Which scalar a coalition's utility is. */
export type UtilityName = 'accuracy' | 'negLoss';

/** The scalar of a `Utilities` the scores use. */
export function utilityValue(u: Utilities, name: UtilityName): number {
  return name === 'accuracy' ? u.accuracy : -u.loss;
}

/** Coalition models M_S = base + Σ_{i∈S} w_iΔ_i / Σ_{i∈S} w_i (or the additive convention). */
export interface CoalitionSpec {
  base: Float32Array;
  updates: readonly Float32Array[];
  weights: readonly number[];
  convention: Convention;
  test: Dataset;
  utility: UtilityName;
}

export interface Learner {
  /** Backend name recorded in results (`webgpu`, `tensorflow`, `wasm`, `cpu`). */
  readonly backend: string;
  /** Who runs the products and convolutions (BackendInfo.kernels), recorded in results. */
  readonly kernels?: string;
  /** On `webgpu`: the adapter the run used, recorded in results. */
  readonly adapter?: AdapterInfo;
  /** Library versions for the results' `versions` field. */
  readonly tfjsVersion: string;
  /** Length of the flat parameter vector. */
  readonly parameterCount: number;
  /**
   * A model fedscore cannot read (a trainer process, ./trainer-learner.ts): the consortium file's
   * `model.topologyDigest`, the digest of the trainer's layout. Absent: derived from the configuration.
   */
  readonly topologyDigest?: string;
  /** Deterministic initial parameters. */
  initialParameters(seed: number): Float32Array;
  /**
   * Local training of several silos from the same starting point; returns Δ_i = M_i − M0 per
   * job, in job order. May run jobs in parallel (worker threads). A job with `steps` takes exactly
   * that many optimizer steps instead of the configured epochs (the server's Δ_val, papers/002
   * Alg. 2 lines 14–18).
   */
  trainMany(
    params: Float32Array,
    jobs: readonly { data: Dataset; seed: number; steps?: number }[],
  ): Promise<Float32Array[]>;
  /** Utilities of a parameter vector on a dataset. */
  evaluate(params: Float32Array, data: Dataset): Promise<Utilities>;
  /**
   * Full-visibility games over the given updates: scalar utility and per-class accuracy.
   * Both are memoized and count evaluations.
   */
  coalitionGames(spec: CoalitionSpec): { game: Game; perClass: VectorGame; dispose(): void };
  /** Frees workers and backend memory. */
  close(): Promise<void>;
}
