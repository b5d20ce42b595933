/**
 * Agreement of each method's per-silo scores with a reference (papers/003 §5: Spearman,
 * Kendall, Pearson and normalized L2), summarized as `{ mean, std }` over seeds.
 */
import { kendallTau, normalizedL2, pearson, spearman } from '../../scoring/metrics.js';
import type { MeanStd, MethodComparison } from './results.js';

/** The references that are not estimators (their names are the estimator registry's). */
export { ROUND_SV, TRUE_SV } from '../estimators/registry.js';

/** Mean and sample standard deviation; NaN entries (undefined correlations) are left out. */
export function meanStd(xs: readonly number[]): MeanStd {
  const v = xs.filter((x) => Number.isFinite(x));
  if (v.length === 0) return { mean: Number.NaN, std: Number.NaN };
  const mean = v.reduce((s, x) => s + x, 0) / v.length;
  const variance = v.length > 1 ? v.reduce((s, x) => s + (x - mean) ** 2, 0) / (v.length - 1) : 0;
  return { mean, std: Math.sqrt(variance) };
}

/**
 * Compares every method with the reference, seed by seed, then summarizes over seeds.
 * @param perSeed one record per seed: method name → per-silo scores (the reference among them).
 * @param reference the reference method's name; it is not compared with itself.
 * @throws RangeError when a seed lacks the reference.
 */
export function compareMethods(
  perSeed: readonly Record<string, readonly number[]>[],
  reference: string,
): Record<string, MethodComparison> {
  const methods = new Set<string>();
  for (const [s, scores] of perSeed.entries()) {
    if (!scores[reference]) throw new RangeError(`reference: seed #${s} has no scores for '${reference}'`);
    for (const m of Object.keys(scores)) if (m !== reference) methods.add(m);
  }
  const out: Record<string, MethodComparison> = {};
  for (const m of methods) {
    const cols = {
      spearman: [] as number[],
      kendall: [] as number[],
      pearson: [] as number[],
      l2: [] as number[],
    };
    for (const scores of perSeed) {
      const a = scores[m];
      const ref = scores[reference]!;
      if (!a) continue;
      cols.spearman.push(spearman(a, ref));
      cols.kendall.push(kendallTau(a, ref));
      cols.pearson.push(pearson(a, ref));
      cols.l2.push(normalizedL2(a, ref));
    }
    out[m] = {
      spearman: meanStd(cols.spearman),
      kendall: meanStd(cols.kendall),
      pearson: meanStd(cols.pearson),
      l2: meanStd(cols.l2),
    };
  }
  return out;
}
