/** Test helper: combined against naive accuracies, up to near-ties (src/ml/near-ties.ts). */
import { expect } from 'vitest';
import { members } from '../../scoring/coalition.js';
import type { CoalitionSetup } from '../../src/ml/coalition.js';
import { nearTies } from '../../src/ml/near-ties.js';

/**
 * Combined and naive accuracies (overall and per class) of the coalitions `masks`, in order, are
 * equal except on near-ties (src/ml/near-ties.ts): the two round differently (P₀ + s·U_S against
 * X·W_S), and which way an example whose logits are within rounding of each other goes depends
 * on the products' order, i.e. on the processor's sgemm kernel (issue 26: one example of 2,000
 * flipped on an AVX2 machine). Where they differ, each class's change in correct examples is at
 * most its near-ties; and the bound is not vacuous (under a tenth of the examples for the grand
 * coalition, unless `exactTies`: a model built with tied classes). Returns the coalitions that
 * differed.
 */
export function expectNaiveAccuracies(
  setup: CoalitionSetup,
  masks: readonly number[],
  combined: { accuracy: ArrayLike<number>; perClassAccuracy: ArrayLike<number> },
  naive: { accuracy: ArrayLike<number>; perClassAccuracy: ArrayLike<number> },
  exactTies = false,
): number {
  const N = setup.data.n;
  const C = setup.spec.numClasses;
  const n = setup.updates.length;
  const ofClass = new Int32Array(C);
  for (let r = 0; r < N; r++) ofClass[Number(setup.data.y[r])]!++;
  let differed = 0;
  masks.forEach((m, b) => {
    const moved = Math.round(Math.abs(combined.accuracy[b]! - naive.accuracy[b]!) * N);
    const movedClass = Array.from(ofClass, (k, c) =>
      Math.round(Math.abs(combined.perClassAccuracy[b * C + c]! - naive.perClassAccuracy[b * C + c]!) * k),
    );
    if (moved === 0 && movedClass.every((x) => x === 0)) return;
    differed++;
    const ties = nearTies(setup, members(Uint32Array.of(m)));
    expect(moved, `coalition ${m}`).toBeLessThanOrEqual(ties.total);
    for (const [c, x] of movedClass.entries())
      expect(x, `coalition ${m}, class ${c}`).toBeLessThanOrEqual(ties.perClass[c]!);
  });
  const grand = Array.from({ length: n }, (_, i) => i);
  if (!exactTies) expect(nearTies(setup, grand).total).toBeLessThan(N / 10);
  return differed;
}
