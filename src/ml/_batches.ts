/**
 * Internal to src/ml: the minibatch schedule both training paths walk (train.ts on the CPU/wasm,
 * _gpu_train.ts on WebGPU), so they take the same steps on the same batches: each pass visits the
 * examples in a fresh permutation drawn from `rng` (Fisher–Yates), in batches of `batchSize` (the
 * last one may be short), and stops once `maxSteps` steps have been taken.
 */
import type { Rng } from '../../scoring/seeded-rng.js';

export interface BatchSchedule {
  readonly passes: number;
  readonly batchSize: number;
  readonly maxSteps: number | undefined;
  readonly rng: Rng;
  /** Called after each pass with its mean training loss. */
  readonly onEpoch?: ((epoch: number, meanLoss: number) => void) | undefined;
}

/** What a training path does with the schedule. */
export interface BatchSteps {
  /** One optimizer step on examples order[start … start + b) (`step`: 1, 2, … over all passes). */
  step(order: Int32Array, start: number, b: number, step: number): void;
  /** The pass's loss summed over its examples (b × each batch's mean loss); resets the sum. */
  passLoss(): number | Promise<number>;
}

/** One event of the schedule: a step, or the end of a pass (after its last step). */
export type ScheduleEvent =
  | {
      readonly kind: 'step';
      readonly order: Int32Array;
      readonly start: number;
      readonly b: number;
      readonly step: number;
    }
  | { readonly kind: 'pass'; readonly epoch: number; readonly seen: number };

/**
 * The schedule over `n` examples as events, in order: each pass's steps, then the pass's end.
 * `order` is one array, rewritten at each pass (read it before advancing past the pass). The
 * one place the permutations are drawn: `runBatches` and the batched silos of _gpu_mlp_silos.ts
 * walk it.
 */
export function* batchSchedule(n: number, s: BatchSchedule): Generator<ScheduleEvent, void, undefined> {
  const order = new Int32Array(n);
  let taken = 0;
  for (let epoch = 0; epoch < s.passes; epoch++) {
    for (let i = 0; i < n; i++) order[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(s.rng.next() * (i + 1));
      const t = order[i]!;
      order[i] = order[j]!;
      order[j] = t;
    }
    let seen = 0;
    for (let start = 0; start < n; start += s.batchSize) {
      if (s.maxSteps !== undefined && taken === s.maxSteps) break;
      const b = Math.min(s.batchSize, n - start);
      seen += b;
      taken++;
      yield { kind: 'step', order, start, b, step: taken };
    }
    yield { kind: 'pass', epoch, seen };
  }
}

/**
 * Runs the schedule over `n` examples. Yields to the event loop after each pass.
 * @returns each pass's mean loss, the steps taken and the examples processed.
 */
export async function runBatches(
  n: number,
  s: BatchSchedule,
  steps: BatchSteps,
): Promise<{ epochLosses: Float64Array; steps: number; samples: number }> {
  const epochLosses = new Float64Array(s.passes);
  let taken = 0;
  let samples = 0;
  for (const e of batchSchedule(n, s)) {
    if (e.kind === 'step') {
      taken = e.step;
      steps.step(e.order, e.start, e.b, e.step);
      continue;
    }
    epochLosses[e.epoch] = (await steps.passLoss()) / Math.max(1, e.seen);
    samples += e.seen;
    s.onEpoch?.(e.epoch, epochLosses[e.epoch]!);
    await Promise.resolve();
  }
  return { epochLosses, steps: taken, samples };
}
