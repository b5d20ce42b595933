/**
 * Local training as the round engine and the retraining game call it: one plain `train` function,
 * `(base, round, silos) → updates`. Client-side extras wrap it (as in Flower: attacks in
 * simulations wrap a plain `train` function, ./update-attacks.ts); the engine does not know whether they
 * are on.
 */

import { DEFAULT_BATCH_SIZE, DEFAULT_EPOCHS } from '../consortium/defaults.js';
import type { Dataset } from '../data/dataset.js';
import { deriveSeed } from '../data/seed.js';
import type { Consortium } from './consortium-data.js';
import type { Learner } from './learner/learner.js';
import type { RunConfig } from './run-config.js';
import { withUpdateAttacks } from './update-attacks.js';

/**
 * Trains `silos` (global ids, in order) from `base` in round `round` (1-based) and returns the update
 * each one sends, Δ_i, in the same order. The caller keeps `base`; the updates are new arrays.
 */
export type TrainFn = (
  base: Float32Array,
  round: number,
  silos: readonly number[],
) => Promise<Float32Array[]>;

/**
 * Honest local training: silo s trains on its own data with the seed `deriveSeed(seed, round, s)`,
 * all selected silos in one `learner.trainMany` call.
 * @throws RangeError when a silo id has no data.
 */
export function localTrainer(learner: Learner, data: readonly Dataset[], seed: number): TrainFn {
  return seededTrainer(learner, data, (round, s) => deriveSeed(seed, round, s));
}

/**
 * Honest local training with the seed `seedOf(round, s)` for silo s (a networked silo's fresh
 * training randomness, src/client/silo.ts; the engine's {@link localTrainer} derives it).
 * @throws RangeError when a silo id has no data.
 */
export function seededTrainer(
  learner: Learner,
  data: readonly Dataset[],
  seedOf: (round: number, silo: number) => number,
): TrainFn {
  return async (base, round, silos) =>
    learner.trainMany(
      base,
      silos.map((s) => {
        const d = data[s];
        if (d === undefined) throw new RangeError(`silos: ${s} is not a silo in [0, ${data.length})`);
        return { data: d, seed: seedOf(round, s) };
      }),
    );
}

/** A consortium's training as configured: local training, then each silo's update-side attack. */
export function consortiumTrainer(
  learner: Learner,
  consortium: Pick<Consortium, 'silos' | 'updateAttacks'>,
  seed: number,
  /** The training seed of (round, silo), instead of `deriveSeed(seed, round, silo)`. */
  seedOf?: (round: number, silo: number) => number,
): TrainFn {
  const train = seedOf
    ? seededTrainer(learner, consortium.silos, seedOf)
    : localTrainer(learner, consortium.silos, seed);
  return withUpdateAttacks(train, consortium.updateAttacks);
}

/** Optimizer steps of one silo's local training on `examples` examples: epochs·⌈n/batchSize⌉ (src/ml/train.ts). */
export function localSteps(examples: number, training: RunConfig['training'] = {}): number {
  const epochs = training?.epochs ?? DEFAULT_EPOCHS;
  const batchSize = training?.batchSize ?? DEFAULT_BATCH_SIZE;
  return epochs * Math.ceil(examples / batchSize);
}
