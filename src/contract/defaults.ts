/**
 * The defaults of the consortium contract: what the service applies to a consortium created without
 * a field, and what a silo assumes when it compares the served consortium with its pinned file.
 * Declared once so that the two sides cannot drift (src/server/service/consortia.ts,
 * src/contract/consortium-file.ts, src/client/silo.ts).
 */
import type { UtilityDeclaration } from './private-scoring.js';

export { DEFAULT_EMPTY_COALITION } from '../../scoring/empty-coalition.js';
export { DEFAULT_MAX_WEIGHT_SHARE, DEFAULT_WEIGHT_FLOOR } from './weight-floor.js';

/** The utility of a consortium created without one: accuracy, in [0, 1]. */
export const DEFAULT_UTILITY: UtilityDeclaration = Object.freeze({ name: 'accuracy' });

/** The public selection seed of a consortium that gives a strategy but no seed (the experiment's default seed). */
export const DEFAULT_SELECTION_SEED = 1;

/** The smallest weight (encoding.minWeight) of a consortium created without one. */
export const DEFAULT_MIN_WEIGHT = 0;
