/**
 * Update-side misbehaviours in a run (papers/000 §5 (iii) and its free riders, papers/002 §5,
 * papers/003 §5.4): a wrapper of local training that applies them (as in Flower, client-side
 * extras wrap a plain `train` function). The kinds and their maths are the misbehaviour
 * registry's (src/data/misbehaviors/); data-side kinds change a silo's dataset when the consortium
 * is built (./consortium-data.ts) and need no wrapper.
 */
import type { Misbehavior } from '../data/misbehaviors/definition.js';
import { misbehaviorKind } from '../data/misbehaviors/registry.js';
import type { TrainFn } from './trainer.js';

/**
 * `train`, followed by each silo's update-side misbehaviour: silo s sends
 * `applyUpdateMisbehavior(Δ_s, attacks[s])` instead of its honest Δ_s (a new array; the honest one
 * is not modified). Silos without an entry send their honest update; with no attack at all `train`
 * is returned as it is.
 */
export function withUpdateAttacks(train: TrainFn, attacks: readonly (Misbehavior | undefined)[]): TrainFn {
  if (!attacks.some((a) => a !== undefined)) return train;
  return async (base, round, silos) => {
    const honest = await train(base, round, silos);
    return honest.map((u, b) => {
      const attack = attacks[silos[b]!];
      return attack ? applyUpdateMisbehavior(u, attack) : u;
    });
  };
}

/**
 * The update a silo sends after an update-side misbehaviour (a new array; `honest` is not
 * modified). Throws RangeError for an unknown or a data-side kind.
 */
export function applyUpdateMisbehavior(honest: Float32Array, m: Misbehavior): Float32Array {
  const kind = misbehaviorKind(m.kind);
  if (kind.side !== 'update') throw new RangeError(`m: ${m.kind} changes data, not the update`);
  return kind.apply(honest, m);
}
