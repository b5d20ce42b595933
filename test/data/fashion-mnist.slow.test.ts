/**
 * The full Fashion-MNIST from Debian's dataset-fashion-mnist (apt-get install
 * dataset-fashion-mnist). Slow (decodes 60k images); excluded from the default run. Fails,
 * rather than skips, when the package is missing: run it where it is installed.
 */
import { describe, expect, it } from 'vitest';
import { checkDataset, classCounts } from '../../src/data/dataset.js';
import { DEBIAN_FASHION_MNIST_DIR, loadFashionMnist } from '../../src/data/fashion-mnist.js';
import { partitionDirichlet, partitionProblem } from '../../src/data/partition.js';
import { balancedTestSplit } from '../../src/data/test-set.js';
import { sameBytes } from './_equal.js';

describe('Fashion-MNIST from Debian (full 60k/10k)', () => {
  it('loads 60,000 + 10,000 images, 6,000 + 1,000 per class; its t10k equals the bundled copy', () => {
    const deb = loadFashionMnist({ source: 'debian', env: {} });
    expect(deb.source).toBe('debian');
    expect(deb.dir).toBe(DEBIAN_FASHION_MNIST_DIR);
    expect(deb.splitFromTest).toBe(false);
    expect([deb.train.n, deb.test.n]).toEqual([60_000, 10_000]);
    checkDataset(deb.train, true);
    expect(Array.from(classCounts(deb.train.y, 10))).toEqual(new Array(10).fill(6000));
    expect(Array.from(classCounts(deb.test.y, 10))).toEqual(new Array(10).fill(1000));
    const bundled = loadFashionMnist({ source: 'bundled', split: { testFraction: 1 } });
    expect(sameBytes(bundled.test.x, deb.test.x)).toBe(true);
    expect(sameBytes(bundled.test.y, deb.test.y)).toBe(true);
  });

  it('the experiment pipeline on real labels: balanced test set, Dirichlet(0.5) over 10 silos', () => {
    const { train } = loadFashionMnist({ source: 'debian', env: {} });
    const { test, rest } = balancedTestSplit(train.y, { numClasses: 10, perClass: 200, seed: 1 });
    const p = partitionDirichlet(train.y, {
      numSilos: 10,
      numClasses: 10,
      alpha: 0.5,
      seed: 1,
      indices: rest,
      minSize: 100,
    });
    expect(partitionProblem(p, train.n, rest)).toBeNull();
    expect(test.length).toBe(2000);
  });
});
