/**
 * The defaults of the consortium contract: what the service applies to a consortium created without
 * a field, and what a silo assumes when it compares the served consortium with its pinned file.
 * Declared once so that the two sides cannot drift (src/server/service/consortia.ts,
 * src/consortium/consortium-file.ts, src/client/silo.ts).
 */
import type { UtilityDeclaration } from './private-scoring.js';

export { DEFAULT_EMPTY_COALITION } from '../../scoring/empty-coalition.js';
export {
  DEFAULT_MAX_WEIGHT_SHARE,
  DEFAULT_MIN_EFFECTIVE_SILOS,
  DEFAULT_WEIGHT_FLOOR,
} from './weight-floor.js';

/** The utility of a consortium created without one: accuracy, in [0, 1]. */
export const DEFAULT_UTILITY: UtilityDeclaration = Object.freeze({ name: 'accuracy' });

/**
 * The strategy of a consortium or configuration that names none: FedAvg over every silo (the
 * strategy registry's `DEFAULT_STRATEGY`, src/strategies/registry.ts, is this name).
 */
export const DEFAULT_STRATEGY_NAME = 'fedavg';

/** The public selection seed of a consortium that gives a strategy but no seed (the experiment's default seed). */
export const DEFAULT_SELECTION_SEED = 1;

/** The smallest weight (encoding.minWeight) of a consortium created without one. */
export const DEFAULT_MIN_WEIGHT = 0;

/**
 * Size of the common test set of a configuration without `data.testSize`. A silo reads it to draw
 * the same test set as the simulation, so it lives here rather than in the configuration schema
 * (which the silo does not load).
 */
export const DEFAULT_TEST_SIZE = 2000;

/** Local epochs per round of a configuration that sets none (`training.epochs`). */
export const DEFAULT_EPOCHS = 1;

/** Minibatch size of a configuration that sets none (`training.batchSize`). */
export const DEFAULT_BATCH_SIZE = 64;
