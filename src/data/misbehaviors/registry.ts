/**
 * The misbehaviours a simulated silo can be given (the configuration's `attacks[].kind`): each
 * kind in its own file of this folder (./definition.ts), listed once here. The configuration
 * schema, its checks and its documentation read this list; the run applies the entries.
 */
import type { MisbehaviorDefinition } from './definition.js';
import { freeRider } from './free-rider.js';
import { labelFlip } from './label-flip.js';
import { labelShuffle } from './label-shuffle.js';
import { randomData } from './random-data.js';
import { randomUpdateAttack } from './random-update.js';
import { scale } from './scale.js';

export const BUILTIN_MISBEHAVIORS: readonly MisbehaviorDefinition[] = [
  labelFlip,
  labelShuffle,
  randomData,
  randomUpdateAttack,
  freeRider,
  scale,
];

/** The kinds, in registry order. */
export const MISBEHAVIOR_NAMES: readonly string[] = BUILTIN_MISBEHAVIORS.map((m) => m.name);

/** The entry of `kind`. Throws RangeError naming the kinds when there is none. */
export function misbehaviorKind(kind: string): MisbehaviorDefinition {
  const found = BUILTIN_MISBEHAVIORS.find((m) => m.name === kind);
  if (!found)
    throw new RangeError(`kind: unknown misbehaviour '${kind}' (one of ${MISBEHAVIOR_NAMES.join(', ')})`);
  return found;
}
