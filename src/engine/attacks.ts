/**
 * Update-side misbehaviour as a wrapper of local training (as in Flower, client-side
 * extras wrap a plain `train` function). The descriptors and the maths are src/data/misbehavior.ts
 * (papers/000 §5, papers/002 §5, papers/003 §5.4); data-side attacks change a silo's dataset when the
 * consortium is built (./setup.ts) and need no wrapper.
 */
import { applyUpdateMisbehavior, type UpdateMisbehavior } from '../data/misbehavior.js';
import type { TrainFn } from './trainer.js';

/**
 * `train`, followed by each silo's update-side misbehaviour: silo s sends
 * `applyUpdateMisbehavior(Δ_s, attacks[s])` instead of its honest Δ_s (a new array; the honest one
 * is not modified). Silos without an entry send their honest update; with no attack at all `train`
 * is returned as it is.
 */
export function withUpdateAttacks(
  train: TrainFn,
  attacks: readonly (UpdateMisbehavior | undefined)[],
): TrainFn {
  if (!attacks.some((a) => a !== undefined)) return train;
  return async (base, round, silos) => {
    const honest = await train(base, round, silos);
    return honest.map((u, b) => {
      const attack = attacks[silos[b]!];
      return attack ? applyUpdateMisbehavior(u, attack) : u;
    });
  };
}
