import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classCounts, type Labels, range } from '../../src/data/dataset.js';
import {
  applyToFirstSplit,
  localTrainSize,
  paper003DataSize,
  paper003Splits,
  secondSplitLabels,
} from '../../src/data/paper003-split.js';
import { partitionDirichlet } from '../../src/data/partition.js';
import { createRandom } from '../../src/data/seeded-draws.js';

const CLASSES = 10;

/** A shuffled pool of n labels, every class equally often (± 1). */
function labelsOf(n: number, seed: number): Int32Array {
  return createRandom(seed).shuffle(Int32Array.from({ length: n }, (_, i) => i % CLASSES));
}

/** Total-variation distance between the label distribution of `idx` and the uniform one. */
function tvFromUniform(labels: Labels, idx: Int32Array): number {
  const counts = classCounts(labels, CLASSES, idx);
  let tv = 0;
  for (const c of counts) tv += Math.abs(c / idx.length - 1 / CLASSES);
  return tv / 2;
}

/** The whole pipeline: splits, Dirichlet on A2's labels at positions 0 … T−1, applied to A1. */
function run(
  labels: Int32Array,
  trainSize: number,
  testSize: number,
  silos: number,
  alpha: number,
  seed: number,
) {
  const splits = paper003Splits(labels, { trainSize, testSize, seed });
  const labels2 = secondSplitLabels(labels, splits);
  const positions = partitionDirichlet(labels2, {
    numSilos: silos,
    seed: seed + 1,
    alpha,
    numClasses: CLASSES,
    indices: range(trainSize),
  });
  return { splits, labels2, positions, silos: applyToFirstSplit(positions, splits, seed) };
}

const isIncreasing = (a: Int32Array) => a.every((v, i) => i === 0 || a[i - 1]! < v);
const setOf = (a: ArrayLike<number>) => new Set(Array.from(a));

describe('paper003Splits: the three random 80/20 splits of data_configuration.py', () => {
  it('draws D of T + ⌈T/4⌉ examples; A1 and A2 are T of them, the test set a subset, the held-out part D ∖ A1 (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 8, max: 400 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (trainSize, extra, seed) => {
          const m = paper003DataSize(trainSize);
          expect(Math.floor(0.8 * m)).toBe(trainSize); // torch's int(0.8 · len) of D is T
          const labels = labelsOf(m + extra, seed);
          const testSize = 1 + (seed % (m - trainSize));
          const s = paper003Splits(labels, { trainSize, testSize, seed });
          expect(s.data.length).toBe(m);
          expect(isIncreasing(s.data)).toBe(true);
          const d = setOf(s.data);
          for (const part of [s.first, s.second, s.test, s.heldOut])
            for (const i of part) expect(d.has(i)).toBe(true);
          expect(setOf(s.first).size).toBe(trainSize);
          expect(setOf(s.second).size).toBe(trainSize);
          expect(s.test.length).toBe(testSize);
          expect(isIncreasing(s.test)).toBe(true);
          const inFirst = setOf(s.first);
          expect(Array.from(s.heldOut).sort((a, b) => a - b)).toEqual(
            Array.from(s.data).filter((i) => !inFirst.has(i)),
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  it('is deterministic by seed, and another seed draws other splits', () => {
    const labels = labelsOf(2000, 3);
    const a = paper003Splits(labels, { trainSize: 1200, testSize: 300, seed: 7 });
    expect(paper003Splits(labels, { trainSize: 1200, testSize: 300, seed: 7 })).toEqual(a);
    const b = paper003Splits(labels, { trainSize: 1200, testSize: 300, seed: 8 });
    expect(b.first).not.toEqual(a.first);
    expect(b.test).not.toEqual(a.test);
  });

  it('draws the three splits independently: A1 and A2 agree at about 1/m of the positions, not all', () => {
    const labels = labelsOf(5000, 1);
    const s = paper003Splits(labels, { trainSize: 4000, testSize: 384, seed: 11 });
    const same = s.first.filter((v, k) => s.second[k] === v).length;
    expect(same).toBeLessThan(20); // expectation T/m = 0.8
  });

  it('names the option when the pool or the test split is too small', () => {
    const labels = labelsOf(1000, 1);
    expect(() => paper003Splits(labels, { trainSize: 900, testSize: 100, seed: 1 })).toThrow(
      /^trainSize: .* needs a data set of 1125/,
    );
    expect(() => paper003Splits(labels, { trainSize: 400, testSize: 101, seed: 1 })).toThrow(
      /^testSize: 101 exceeds the 100 images/,
    );
  });
});

describe("applyToFirstSplit: the partition of A2's labels applied to A1's positions", () => {
  it("gives silo i int(0.8·n_i) of A1 at its positions, n_i the Dirichlet draw's size on A2's labels (fast-check)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 12 }),
        fc.double({ min: 0.05, max: 5, noNaN: true }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (silos, alpha, seed) => {
          const labels = labelsOf(1500, seed);
          const { splits, positions, silos: p } = run(labels, 1000, 200, silos, alpha, seed);
          // The sizes are the draw's on A2's labels (the same partition, same seed, reproduces them).
          const again = partitionDirichlet(secondSplitLabels(labels, splits), {
            numSilos: silos,
            seed: seed + 1,
            alpha,
            numClasses: CLASSES,
            indices: range(1000),
          });
          expect(again.silos.map((s) => s.length)).toEqual(positions.silos.map((s) => s.length));
          expect(p.silos.map((s) => s.length)).toEqual(positions.silos.map((s) => localTrainSize(s.length)));
          const seen = new Set<number>();
          p.silos.forEach((s, i) => {
            expect(isIncreasing(s)).toBe(true);
            const allowed = setOf(Array.from(positions.silos[i]!, (k) => splits.first[k]!));
            for (const x of s) {
              expect(allowed.has(x)).toBe(true);
              expect(seen.has(x)).toBe(false);
              seen.add(x);
            }
          });
          expect(p.params).toMatchObject({ split: 'paper003-code', shared: 1000 });
        },
      ),
      { numRuns: 40 },
    );
  });

  it('leaves the labels near-IID where the same Dirichlet(0.1) draw on the silos’ own labels is skewed (fast-check over seeds)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (seed) => {
        const labels = labelsOf(10_000, seed);
        const { labels2, positions, silos } = run(labels, 8000, 384, 5, 0.1, seed);
        const big = (s: Int32Array) => s.length >= 400;
        const applied = silos.silos.filter(big);
        expect(applied.length).toBeGreaterThan(0);
        // The draw is skewed on the labels it was computed on (A2's, which its positions index).
        const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
        expect(mean(positions.silos.filter(big).map((s) => tvFromUniform(labels2, s)))).toBeGreaterThan(0.3);
        // Applied to A1 the same silos are near-IID: a multinomial sample of ≥ 320 has TV ≈ 0.06.
        for (const s of applied) expect(tvFromUniform(labels, s)).toBeLessThan(0.15);
      }),
      { numRuns: 10 },
    );
  });

  it('overlaps the test set with the training data: about 80 % in A1, 64 % in a silo’s training part', () => {
    const labels = labelsOf(12_000, 5);
    for (const seed of [1, 2, 3]) {
      const { splits, silos } = run(labels, 9000, 2000, 9, 0.5, seed);
      const a1 = setOf(splits.first);
      const trained = new Set(silos.silos.flatMap((s) => Array.from(s)));
      const inA1 = splits.test.filter((i) => a1.has(i)).length / splits.test.length;
      const inSilo = splits.test.filter((i) => trained.has(i)).length / splits.test.length;
      // The test part of the third split is a uniform 2000 of D's 11,250: hypergeometric, sd ≈ 0.009.
      expect(Math.abs(inA1 - 0.8)).toBeLessThan(0.05);
      expect(Math.abs(inSilo - 0.64)).toBeLessThan(0.05);
    }
  });
});
