/**
 * The long-tailed transform (papers/004 §4 and App. A, after Cao et al. 2019 and Shang et al.
 * 2022): class of rank r keeps n_r = ⌊n_max · IF^(r/(C−1))⌋ examples, IF the imbalance factor
 * (n_min/n_max, e.g. 0.01 or 0.05), n_max the largest class count in the pool. Applied to the
 * training pool before a Dirichlet split.
 */
import { checkIndices, checkInt, checkLabels, checkNumber, checkSeed } from './check.js';
import { indicesByClass, type Labels, range } from './dataset.js';
import { createRandom } from './seeded-draws.js';

/** Options for {@link longTailed}. */
export interface LongTailedOptions {
  numClasses: number;
  /** Imbalance factor IF = n_min/n_max, in (0, 1]; 1 keeps the pool unchanged. */
  imbalance: number;
  seed: number;
  /** Which class gets which rank: 'index' (class 0 is the head, as in papers/004 Fig. 5) or a seeded 'random' order. */
  order?: 'index' | 'random';
  /** The pool to thin (default all indices). */
  indices?: Int32Array;
}

/**
 * Thins the pool to a long-tailed class profile (see the module comment). Which examples of a
 * class are kept is chosen by `seed`. A class with fewer examples than its target keeps all.
 * Returns the kept indices (increasing), the per-class counts and the class order (head first).
 * Throws RangeError naming the option on bad options.
 */
export function longTailed(
  labels: Labels,
  options: LongTailedOptions,
): { indices: Int32Array; counts: Int32Array; order: Int32Array } {
  const numClasses = checkInt('numClasses', options.numClasses, 1);
  const imbalance = checkNumber('imbalance', options.imbalance, 0, 1, { min: true });
  const rng = createRandom(checkSeed('seed', options.seed));
  const orderKind = options.order ?? 'index';
  if (orderKind !== 'index' && orderKind !== 'random')
    throw new RangeError(`order: expected 'index' or 'random', got ${String(orderKind)}`);
  checkLabels('labels', labels, numClasses);
  const pool =
    options.indices === undefined
      ? range(labels.length)
      : checkIndices('indices', options.indices, labels.length, true);
  const byClass = indicesByClass(labels, numClasses, pool);
  const order = orderKind === 'random' ? rng.permutation(numClasses) : range(numClasses);
  let nMax = 0;
  for (const idx of byClass) nMax = Math.max(nMax, idx.length);
  const counts = new Int32Array(numClasses);
  const kept: Int32Array[] = [];
  order.forEach((c, r) => {
    const idx = byClass[c]!;
    const target = numClasses === 1 ? nMax : Math.floor(nMax * imbalance ** (r / (numClasses - 1)));
    const k = Math.min(idx.length, target);
    rng.shuffle(idx);
    kept.push(idx.subarray(0, k));
    counts[c] = k;
  });
  const total = kept.reduce((s, a) => s + a.length, 0);
  const out = new Int32Array(total);
  let o = 0;
  for (const a of kept) {
    out.set(a, o);
    o += a.length;
  }
  return { indices: out.sort(), counts, order };
}
