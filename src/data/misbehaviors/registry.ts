/**
 * The misbehaviours a simulated silo can be given (the configuration's `attacks[].kind`): each
 * kind in its own file of this folder (./definition.ts), listed once in ./builtin.ts (one line per
 * kind) and collected here, ordered by name. The configuration schema, its checks and its
 * documentation read this list; the run applies the entries.
 */
import * as BUILTIN from './builtin.js';
import type { MisbehaviorDefinition } from './definition.js';

/** Every kind, ordered by name. */
export const BUILTIN_MISBEHAVIORS: readonly MisbehaviorDefinition[] = Object.values<MisbehaviorDefinition>(
  BUILTIN,
).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

/** The kinds, in registry order. */
export const MISBEHAVIOR_NAMES: readonly string[] = BUILTIN_MISBEHAVIORS.map((m) => m.name);

/** The entry of `kind`. Throws RangeError naming the kinds when there is none. */
export function misbehaviorKind(kind: string): MisbehaviorDefinition {
  const found = BUILTIN_MISBEHAVIORS.find((m) => m.name === kind);
  if (!found)
    throw new RangeError(`kind: unknown misbehaviour '${kind}' (one of ${MISBEHAVIOR_NAMES.join(', ')})`);
  return found;
}
