import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDataset, classCounts } from '../../src/data/dataset.js';
import {
  bundledFashionMnistDir,
  FASHION_MNIST_CLASSES,
  loadFashionMnist,
  locateFashionMnist,
  stratifiedSplit,
} from '../../src/data/fashion-mnist.js';
import { sameBytes } from './_equal.js';
import { imagesAndLabels, tempDir, write } from './_files.js';

/** A directory with small generated Fashion-MNIST-named files (train: 30, test: 20). */
function fakeDir(withTrain: boolean, gzip = true): string {
  const dir = tempDir('fedscore-fmnist-');
  const ext = gzip ? '.gz' : '';
  const test = imagesAndLabels(20, 28, 28);
  write(dir, `t10k-images-idx3-ubyte${ext}`, test.images, gzip);
  write(dir, `t10k-labels-idx1-ubyte${ext}`, test.labels, gzip);
  if (withTrain) {
    const train = imagesAndLabels(30, 28, 28);
    write(dir, `train-images-idx3-ubyte${ext}`, train.images, gzip);
    write(dir, `train-labels-idx1-ubyte${ext}`, train.labels, gzip);
  }
  return dir;
}

describe('bundled Fashion-MNIST test split (real data, always in the repository)', () => {
  const bundled = bundledFashionMnistDir();

  it('matches the checksums recorded next to it', () => {
    const sums = readFileSync(join(bundled, 'SHA256SUMS'), 'utf8').trim().split('\n');
    expect(sums).toHaveLength(2);
    for (const line of sums) {
      const [hash, name] = line.split(/\s+/) as [string, string];
      const actual = createHash('sha256')
        .update(readFileSync(join(bundled, name)))
        .digest('hex');
      expect(actual, name).toBe(hash);
    }
  });

  it('loads 10,000 images of 28×28, 1,000 per class (upstream README), split by seed', () => {
    const fm = loadFashionMnist({ source: 'bundled', split: { testFraction: 0.2, seed: 7 } });
    expect(fm.source).toBe('bundled');
    expect(fm.dir).toBe(bundled);
    expect(fm.splitFromTest).toBe(true);
    expect(fm.train.n).toBe(8000);
    expect(fm.test.n).toBe(2000);
    expect(fm.note).toContain('cut from the 10k test split');
    expect(fm.note).toContain('seed 7');
    expect(fm.train.source).toBe(`bundled:${bundled}`);
    for (const ds of [fm.train, fm.test]) {
      checkDataset(ds, true);
      expect(ds.shape).toEqual([28, 28, 1]);
      expect(ds.numClasses).toBe(FASHION_MNIST_CLASSES.length);
    }
    // Stratified: 200 of each class's 1,000 in test, 800 in train.
    expect(Array.from(classCounts(fm.test.y, 10))).toEqual(new Array(10).fill(200));
    expect(Array.from(classCounts(fm.train.y, 10))).toEqual(new Array(10).fill(800));
    // Real images: mean pixel of Fashion-MNIST is about 0.286 (upstream statistic 72.94/255).
    let sum = 0;
    for (const v of fm.test.x) sum += v;
    expect(sum / fm.test.x.length).toBeGreaterThan(0.25);
    expect(sum / fm.test.x.length).toBeLessThan(0.32);
  });

  it('is the t10k split: the first test image is an ankle boot (label 9)', () => {
    const all = loadFashionMnist({ source: 'bundled', split: { testFraction: 1, seed: 0 } });
    expect(all.train.n).toBe(0);
    expect(all.test.n).toBe(10000);
    expect(all.test.y[0]).toBe(9);
    expect(FASHION_MNIST_CLASSES[9]).toBe('Ankle boot');
  });

  it('splits deterministically by seed; other seeds give other splits; limits take a prefix', () => {
    const a = loadFashionMnist({ source: 'bundled', split: { seed: 1 }, testLimit: 500, trainLimit: 300 });
    const b = loadFashionMnist({ source: 'bundled', split: { seed: 1 }, testLimit: 500, trainLimit: 300 });
    const c = loadFashionMnist({ source: 'bundled', split: { seed: 2 }, testLimit: 500, trainLimit: 300 });
    expect(a.test.n).toBe(500);
    expect(a.train.n).toBe(300);
    expect(Array.from(a.test.y)).toEqual(Array.from(b.test.y));
    expect(sameBytes(a.test.x, b.test.x)).toBe(true);
    expect(sameBytes(a.test.x, c.test.x)).toBe(false);
  });

  it("refuses a test-only source when whenNoTrain is 'error'", () => {
    expect(() => loadFashionMnist({ source: 'bundled', whenNoTrain: 'error' })).toThrow(
      `${bundled}: holds only the Fashion-MNIST test split`,
    );
  });
});

describe('locateFashionMnist: env → debian → bundled', () => {
  const bundled = bundledFashionMnistDir();
  const nowhere = join(tempDir(), 'nothing-here');

  it('prefers FEDSCORE_DATA_DIR, directly or via a fashion-mnist/ subdirectory', () => {
    const dir = fakeDir(true);
    const deb = fakeDir(true);
    expect(locateFashionMnist({ env: { FEDSCORE_DATA_DIR: dir }, debianDir: deb })).toMatchObject({
      source: 'env',
      dir,
    });
    const parent = tempDir();
    const sub = join(parent, 'fashion-mnist');
    mkdirSync(sub);
    const t = imagesAndLabels(3, 28, 28);
    write(sub, 't10k-images-idx3-ubyte', t.images);
    write(sub, 't10k-labels-idx1-ubyte', t.labels);
    const found = locateFashionMnist({ env: { FEDSCORE_DATA_DIR: parent }, debianDir: deb });
    expect(found.source).toBe('env');
    expect(found.dir).toBe(sub);
    expect(found.train).toBeUndefined();
    expect(found.testImages).toBe(join(sub, 't10k-images-idx3-ubyte'));
  });

  it('fails loudly when FEDSCORE_DATA_DIR is set but empty, instead of falling back', () => {
    const empty = tempDir();
    expect(() => locateFashionMnist({ env: { FEDSCORE_DATA_DIR: empty } })).toThrow(
      `${empty}: FEDSCORE_DATA_DIR holds no Fashion-MNIST files`,
    );
    expect(() => locateFashionMnist({ source: 'env', env: {} })).toThrow("source: 'env' requested");
  });

  it('uses the Debian directory when there is no env dir, else the bundled copy', () => {
    const deb = fakeDir(true);
    expect(locateFashionMnist({ env: {}, debianDir: deb })).toMatchObject({ source: 'debian', dir: deb });
    expect(locateFashionMnist({ env: {}, debianDir: nowhere })).toMatchObject({
      source: 'bundled',
      dir: bundled,
    });
    expect(() => locateFashionMnist({ env: {}, source: 'debian', debianDir: nowhere })).toThrow(
      `${nowhere}: no Fashion-MNIST files`,
    );
    expect(() => locateFashionMnist({ env: {}, debianDir: nowhere, bundledDir: nowhere })).toThrow(
      "the repository's bundled copy is missing",
    );
  });

  it('loads a full (train + test) directory without splitting, plain files too', () => {
    const dir = fakeDir(true, false);
    const fm = loadFashionMnist({ env: { FEDSCORE_DATA_DIR: dir } });
    expect(fm.source).toBe('env');
    expect(fm.splitFromTest).toBe(false);
    expect(fm.train.n).toBe(30);
    expect(fm.test.n).toBe(20);
    expect(fm.note).toBe(`Fashion-MNIST from env (${dir}): 30 train, 20 test`);
    const lim = loadFashionMnist({ env: { FEDSCORE_DATA_DIR: dir }, trainLimit: 4, testLimit: 3 });
    expect([lim.train.n, lim.test.n]).toEqual([4, 3]);
  });

  it('rejects bad options with RangeError naming the option', () => {
    expect(() => loadFashionMnist({ source: 'bundled', split: { testFraction: 0 } })).toThrow(
      /^split\.testFraction: /,
    );
    expect(() => loadFashionMnist({ source: 'bundled', trainLimit: -1 })).toThrow(/^trainLimit: /);
    expect(() => locateFashionMnist({ source: 'web' as 'env' })).toThrow(/^source: /);
  });
});

describe('stratifiedSplit', () => {
  it('puts round(f·n_c) of each class in test, disjoint and covering', () => {
    const y = new Uint8Array(103);
    for (let i = 0; i < y.length; i++) y[i] = i % 3 === 0 ? 0 : i % 5 === 0 ? 1 : 2;
    const { train, test } = stratifiedSplit(y, 3, 0.3, 11);
    const counts = classCounts(y, 3);
    const tc = classCounts(y, 3, test);
    for (let c = 0; c < 3; c++) expect(tc[c]).toBe(Math.round(0.3 * counts[c]!));
    const all = [...train, ...test].sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: 103 }, (_, i) => i));
  });
});
