/**
 * The fused native training step (internal; native/train.c), used by train.ts while fedscore's
 * OpenBLAS kernels are active on the wasm backend.
 *
 * Through tfjs a minibatch step is about 20 kernel dispatches plus the gradient tape, an upload
 * of θ to the wasm heap and a copy of the gradient back out — each a pass over every parameter.
 * The addon's `trainStep` does the forward pass, the loss, the backward pass and (optionally)
 * the Adam step in one call, reading θ and writing the gradient in train.ts's own vectors, on two
 * threads in the main thread and one in a pool worker, with the same bits (native/train.c). The
 * gradients are those of the tfjs path up to float rounding (test/ml/_native_train.test.ts).
 */
import { activeAddon } from './_blas_kernels.js';
import type { LayerSpec, ModelSpec } from './model-registry.js';

/** The addon's two functions (native/train.c documents them). */
interface TrainerAddon {
  createTrainer(
    layers: Float64Array,
    inputShape: readonly number[],
    classes: number,
    paramCount: number,
    batch: number,
  ): object;
  trainStep(
    trainer: object,
    theta: Float32Array,
    grad: Float32Array,
    x: Float32Array,
    labels: Int32Array,
    b: number,
    m?: Float32Array,
    v?: Float32Array,
    adam?: Float64Array,
  ): number;
  trainerProfile(trainer: object): Float64Array;
}

/** A model's trainer for batches of at most `batch` examples. */
export interface NativeTrainer {
  /**
   * ∇θ of the mean loss over x[0 .. b) (b × features) with int32 labels, into `grad`; returns
   * the loss (float32). With `adam` ([weightDecay, beta1, beta2, stepSize, sqrtBc2, epsilon])
   * it also takes the Adam step on θ, m and v (train.ts's update, the same bits).
   */
  step(
    theta: Float32Array,
    grad: Float32Array,
    x: Float32Array,
    labels: Int32Array,
    b: number,
    adam?: { m: Float32Array; v: Float32Array; hyper: Float64Array },
  ): number;
  /**
   * Milliseconds spent since the last call (then reset), per layer: forward, bias + ReLU, their
   * gradient, input gradient, parameter gradient, Adam; the loss last. For benchmarks.
   */
  profile(): Float64Array;
}

let enabled = true;

/** Turns the fused step off (tests and benchmarks compare it with the tfjs path); returns the old value. */
export function useFusedTraining(on: boolean): boolean {
  const was = enabled;
  enabled = on;
  return was;
}

const KIND: Record<LayerSpec['kind'], number> = { dense: 1, conv: 2, pool: 3, flatten: 5 };

/** 6 numbers per layer: kind, relu, units/out channels, kernel, padding, pooling window. */
function describe(spec: ModelSpec): Float64Array {
  const out = new Float64Array(6 * spec.layers.length);
  spec.layers.forEach((l, i) => {
    const row =
      l.kind === 'dense'
        ? [KIND.dense, l.relu ? 1 : 0, l.units, 0, 0, 0]
        : l.kind === 'conv'
          ? [KIND.conv, l.relu ? 1 : 0, l.outChannels, l.kernel, l.pad, 0]
          : l.kind === 'pool'
            ? [l.op === 'max' ? 3 : 4, 0, 0, 0, 0, l.size]
            : [KIND.flatten, 0, 0, 0, 0, 0];
    out.set(row, 6 * i);
  });
  return out;
}

/**
 * A fused trainer for `spec`, or undefined when the native kernels are not active on wasm, the
 * fused step is switched off, or the addon does not take this model (then train.ts uses tfjs).
 */
export function nativeTrainer(spec: ModelSpec, batch: number): NativeTrainer | undefined {
  const addon = enabled ? (activeAddon() as Partial<TrainerAddon> | undefined) : undefined;
  if (!addon?.createTrainer || !addon.trainStep) return undefined;
  let handle: object;
  try {
    handle = addon.createTrainer(describe(spec), spec.inputShape, spec.numClasses, spec.paramCount, batch);
  } catch {
    return undefined;
  }
  const trainStep = addon.trainStep;
  const trainerProfile = addon.trainerProfile!;
  return {
    profile: () => trainerProfile(handle),
    step: (theta, grad, x, labels, b, adam) =>
      adam
        ? trainStep(handle, theta, grad, x, labels, b, adam.m, adam.v, adam.hyper)
        : trainStep(handle, theta, grad, x, labels, b),
  };
}
