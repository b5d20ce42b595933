/**
 * What train.ts hands the GPU training paths and what they return (internal to src/ml: the types
 * _gpu_train.ts, _gpu_mlp.ts and _gpu_train_tfjs.ts share, in a file of their own so that the
 * paths do not import one another).
 */
import type { Rng } from '../../scoring/seeded-rng.js';
import type { OptimizerRule } from './_gpu_optimizer.js';

/** train.ts's resolved options (checked there). */
export interface GpuTrainPlan extends OptimizerRule {
  readonly passes: number;
  readonly maxSteps: number | undefined;
  readonly batchSize: number;
  readonly rng: Rng;
  readonly onEpoch?: ((epoch: number, meanLoss: number) => void) | undefined;
}

/** What trainLocal returns. */
export interface GpuTrainResult {
  delta: Float32Array;
  epochLosses: Float64Array;
  steps: number;
  samples: number;
}
