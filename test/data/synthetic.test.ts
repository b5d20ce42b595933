import { describe, expect, it } from 'vitest';
import { checkDataset, classCounts, type Dataset, featureCount } from '../../src/data/dataset.js';
import { gaussianMixture } from '../../src/data/synthetic.js';
import { sameBytes } from './_equal.js';

/** Accuracy on `test` of the nearest-class-mean classifier fitted on `train`. */
function nearestMeanAccuracy(train: Dataset, test: Dataset): number {
  const f = featureCount(train);
  const k = train.numClasses;
  const means = new Float64Array(k * f);
  const cnt = classCounts(train.y, k);
  for (let i = 0; i < train.n; i++)
    for (let j = 0; j < f; j++) means[train.y[i]! * f + j]! += train.x[i * f + j]! / cnt[train.y[i]!]!;
  let correct = 0;
  for (let i = 0; i < test.n; i++) {
    let best = -1;
    let bestD = Number.POSITIVE_INFINITY;
    for (let c = 0; c < k; c++) {
      let d = 0;
      for (let j = 0; j < f; j++) d += (test.x[i * f + j]! - means[c * f + j]!) ** 2;
      if (d < bestD) {
        bestD = d;
        best = c;
      }
    }
    if (best === test.y[i]) correct++;
  }
  return correct / test.n;
}

describe('gaussianMixture', () => {
  it('is seeded, balanced, image-shaped on request and within [0, 1]', () => {
    const a = gaussianMixture({ n: 1003, numClasses: 10, shape: [8, 8, 3], seed: 5 });
    const b = gaussianMixture({ n: 1003, numClasses: 10, shape: [8, 8, 3], seed: 5 });
    const c = gaussianMixture({ n: 1003, numClasses: 10, shape: [8, 8, 3], seed: 6 });
    checkDataset(a, true);
    expect(a.shape).toEqual([8, 8, 3]);
    expect(a.x.length).toBe(1003 * 192);
    expect(sameBytes(a.x, b.x)).toBe(true);
    expect(sameBytes(a.y, b.y)).toBe(true);
    expect(sameBytes(a.x, c.x)).toBe(false);
    const counts = Array.from(classCounts(a.y, 10));
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    expect(counts.reduce((s, v) => s + v, 0)).toBe(1003);
  });

  it('follows classWeights exactly up to rounding', () => {
    const d = gaussianMixture({ n: 100, numClasses: 3, features: 4, classWeights: [1, 0, 3], seed: 1 });
    expect(Array.from(classCounts(d.y, 3))).toEqual([25, 0, 75]);
    expect(featureCount(d)).toBe(4);
  });

  it('shares class means across seeds with the same meansSeed, so a nearest-mean classifier transfers', () => {
    const opts = { numClasses: 5, features: 50, noise: 0.3, separation: 0.6, meansSeed: 9 } as const;
    const train = gaussianMixture({ ...opts, n: 500, seed: 1 });
    const test = gaussianMixture({ ...opts, n: 500, seed: 2 });
    // Mean separation √(50·0.6²/6) ≈ 1.7 vs noise 0.3 per feature: near-perfect; chance is 20%.
    expect(nearestMeanAccuracy(train, test)).toBeGreaterThan(0.95);
    // With separation 0 all classes share one mean, labels carry no signal: accuracy is
    // Binomial(500, 0.2)/500, and 0.3 is 5.6 standard errors above chance.
    const flatTrain = gaussianMixture({ ...opts, separation: 0, n: 500, seed: 1 });
    const flatTest = gaussianMixture({ ...opts, separation: 0, n: 500, seed: 2 });
    expect(nearestMeanAccuracy(flatTrain, flatTest)).toBeLessThan(0.3);
  });

  it('rejects bad options naming them', () => {
    expect(() => gaussianMixture({ n: -1, seed: 1 })).toThrow(/^n: /);
    expect(() => gaussianMixture({ n: 5, numClasses: 0, seed: 1 })).toThrow(/^numClasses: /);
    expect(() => gaussianMixture({ n: 5, noise: -1, seed: 1 })).toThrow(/^noise: /);
    expect(() => gaussianMixture({ n: 5, separation: -0.1, seed: 1 })).toThrow(/^separation: /);
    expect(() => gaussianMixture({ n: 5, numClasses: 2, classWeights: [1], seed: 1 })).toThrow(
      /^classWeights: /,
    );
    expect(() => gaussianMixture({ n: 5, numClasses: 2, classWeights: [0, 0], seed: 1 })).toThrow(
      /^classWeights: /,
    );
    expect(() => gaussianMixture({ n: 5, shape: [2, 0, 1], seed: 1 })).toThrow(/^shape\[1\]: /);
    expect(() => gaussianMixture({ n: 5, seed: Number.POSITIVE_INFINITY })).toThrow(/^seed: /);
  });
});
