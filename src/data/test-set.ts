/**
 * The consortium's common test set: the same number of examples of every class, available to
 * all silos and taken out of the training pool (papers/003 §5: "a common test set for CE that
 * contains the same number of samples per class and is available to all clients").
 */
import { checkIndices, checkInt, checkLabels, checkSeed } from './check.js';
import { indicesByClass, type Labels, range } from './dataset.js';
import { createRandom } from './seeded-draws.js';

/** Options for {@link balancedTestSplit}. */
export interface BalancedTestOptions {
  numClasses: number;
  /** Examples of each class in the test set (≥ 1). */
  perClass: number;
  seed: number;
  /** The pool to draw from (default all indices). */
  indices?: Int32Array;
}

/**
 * Draws `perClass` examples of every class (chosen by `seed`) as the test set; `rest` is the
 * remaining pool, for partitioning among silos. Both are increasing. Throws RangeError naming
 * the option when a class has fewer than `perClass` examples in the pool.
 */
export function balancedTestSplit(
  labels: Labels,
  options: BalancedTestOptions,
): { test: Int32Array; rest: Int32Array } {
  const numClasses = checkInt('numClasses', options.numClasses, 1);
  const perClass = checkInt('perClass', options.perClass, 1);
  const rng = createRandom(checkSeed('seed', options.seed));
  checkLabels('labels', labels, numClasses);
  const pool =
    options.indices === undefined
      ? range(labels.length)
      : checkIndices('indices', options.indices, labels.length, true);
  const byClass = indicesByClass(labels, numClasses, pool);
  const test = new Int32Array(numClasses * perClass);
  byClass.forEach((idx, c) => {
    if (idx.length < perClass)
      throw new RangeError(
        `perClass: class ${c} has only ${idx.length} examples in the pool, fewer than ${perClass}`,
      );
    rng.shuffle(idx);
    test.set(idx.subarray(0, perClass), c * perClass);
  });
  test.sort();
  const inTest = new Uint8Array(labels.length);
  for (const i of test) inTest[i] = 1;
  const rest = new Int32Array(pool.length - test.length);
  let o = 0;
  for (const i of pool) if (!inTest[i]) rest[o++] = i;
  rest.sort();
  return { test, rest };
}
