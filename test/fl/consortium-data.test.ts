import { describe, expect, it } from 'vitest';
import { partitionDirichlet } from '../../src/data/partition.js';
import { buildConsortium } from '../../src/fl/consortium-data.js';
import { parseConfig } from '../../src/records/config.js';
import { cifar10Dir, tempDir } from '../data/_files.js';

const synthetic = {
  dataset: 'synthetic',
  trainSize: 2000,
  testSize: 200,
  synthetic: { features: 8, classes: 10, examples: 3000 },
} as const;

const histogram = (y: ArrayLike<number>, k = 10) => {
  const h = new Array<number>(k).fill(0);
  for (const c of Array.from(y)) h[c]!++;
  return h;
};

describe('buildConsortium: roles and the mixed partition', () => {
  it('marks the last silos of a Maverick partition as Mavericks; attacks override roles', () => {
    const cfg = parseConfig({
      silos: 8,
      rounds: 1,
      data: synthetic,
      partition: { kind: 'mavericks', mavericks: 2, mode: 'exclusive', alpha: 1 },
      attacks: [{ silo: 0, kind: 'free-rider' }],
    });
    const c = buildConsortium(cfg, 3);
    expect(c.roles).toEqual([
      'free-rider',
      'honest',
      'honest',
      'honest',
      'honest',
      'honest',
      'maverick',
      'maverick',
    ]);
    // Each Maverick alone owns a class no other silo holds.
    for (const m of [6, 7]) {
      const own = histogram(c.silos[m]!.y);
      const rare = own.findIndex((x) => x > 0);
      for (const [i, s] of c.silos.entries()) if (i !== m) expect(histogram(s.y)[rare]).toBe(0);
    }
  });

  it("kind 'mixed': IID silos first, the last nonIid silos split by Dirichlet(alpha)", () => {
    const cfg = parseConfig({
      silos: 10,
      rounds: 1,
      data: synthetic,
      partition: { kind: 'mixed', nonIid: 3, alpha: 0.05 },
      attacks: [{ silo: 1, kind: 'label-shuffle' }],
    });
    const c = buildConsortium(cfg, 5);
    expect(c.roles).toEqual([
      'honest',
      'label-shuffle',
      'honest',
      'honest',
      'honest',
      'honest',
      'honest',
      'non-iid',
      'non-iid',
      'non-iid',
    ]);
    const sizes = c.silos.map((s) => s.n);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2000);
    // IID silos: equal shares (±1) and every class present.
    for (let i = 0; i < 7; i++) {
      expect(Math.abs(sizes[i]! - 200)).toBeLessThanOrEqual(1);
      expect(histogram(c.silos[i]!.y).every((x) => x > 0)).toBe(true);
    }
    // The non-IID group holds its proportional share (3/10 of the pool, less Dirichlet rounding)
    // and is skewed: total variation from the uniform label distribution above 0.4 (IID: below 0.2).
    expect(sizes[7]! + sizes[8]! + sizes[9]!).toBeGreaterThanOrEqual(590);
    const tv = (i: number) =>
      histogram(c.silos[i]!.y).reduce((s, x) => s + Math.abs(x / sizes[i]! - 0.1), 0) / 2;
    for (let i = 0; i < 7; i++) expect(tv(i)).toBeLessThan(0.2);
    for (let i = 7; i < 10; i++) {
      expect(sizes[i]).toBeGreaterThan(0);
      expect(tv(i)).toBeGreaterThan(0.4);
    }
  });

  it("kind 'mixed' is deterministic in the seed", () => {
    const cfg = parseConfig({
      silos: 6,
      rounds: 1,
      data: synthetic,
      partition: { kind: 'mixed', nonIid: 2, alpha: 0.1 },
    });
    const a = buildConsortium(cfg, 9).silos.map((s) => Array.from(s.y));
    const b = buildConsortium(cfg, 9).silos.map((s) => Array.from(s.y));
    const c = buildConsortium(cfg, 10).silos.map((s) => Array.from(s.y));
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it('a Dirichlet split that would leave a silo empty is redrawn', () => {
    // At 20 silos, Dirichlet(0.1) and 400 examples about half of the first draws leave a silo empty.
    const labels = Int32Array.from({ length: 400 }, (_, i) => i % 10);
    const raw = [1, 2, 3, 4, 5, 6, 7, 8].map((seed) =>
      partitionDirichlet(labels, { numSilos: 20, seed, alpha: 0.1, numClasses: 10 }).silos.some(
        (x) => x.length === 0,
      ),
    );
    expect(raw).toContain(true);
    const cfg = parseConfig({
      silos: 20,
      rounds: 1,
      data: { ...synthetic, trainSize: 400 },
      partition: { kind: 'dirichlet', alpha: 0.1 },
    });
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8])
      expect(buildConsortium(cfg, seed).silos.every((s) => s.n > 0)).toBe(true);
    // The same for the common classes of a Maverick partition (papers/000: Mavericks + Dir(0.1)).
    const mav = parseConfig({
      silos: 20,
      rounds: 1,
      data: { ...synthetic, trainSize: 400 },
      partition: { kind: 'mavericks', mavericks: 2, alpha: 0.1 },
    });
    for (const seed of [1, 2, 3, 4]) {
      const c = buildConsortium(mav, seed);
      expect(c.silos.every((s) => s.n > 0)).toBe(true);
      expect(c.roles.filter((r) => r === 'maverick')).toHaveLength(2);
    }
  });
});

describe('buildConsortium: data sets from the registry and the long-tailed transform', () => {
  // 5 training batches of 200 CIFAR-10 records (labels i mod 10: 100 per class) and 100 test records.
  const root = cifar10Dir(tempDir(), 200, 100);
  const env = { FEDSCORE_DATA_DIR: root };
  const cifar = { dataset: 'cifar10', testSize: 20 } as const;
  const classTotals = (silos: { y: ArrayLike<number> }[]) =>
    silos.map((s) => histogram(s.y)).reduce((a, h) => a.map((x, c) => x + h[c]!));

  it("reads data.dataset 'cifar10' from FEDSCORE_DATA_DIR, with its own test split", () => {
    const c = buildConsortium(parseConfig({ silos: 3, rounds: 1, data: cifar }), 1, { env });
    expect(c.source).toBe(`CIFAR-10 from ${root}: 1000 train, 100 test`);
    expect(c.test.n).toBe(20);
    expect(c.test.shape).toEqual([32, 32, 3]);
    // The validation set takes the first 100 training examples (10 per class); the silos share the rest.
    expect(classTotals(c.silos)).toEqual(new Array(10).fill(90));
    expect(() => buildConsortium(parseConfig({ silos: 3, rounds: 1, data: cifar }), 1, { env: {} })).toThrow(
      /^data\.dataset 'cifar10': FEDSCORE_DATA_DIR is not set/,
    );
  });

  it('data.longTail thins the training pool to ⌊n_max·IF^(r/(C−1))⌋ per class before partitioning (papers/004 §4.1, App. A)', () => {
    const cfg = (longTail: object) =>
      parseConfig({ silos: 3, rounds: 1, data: { ...cifar, longTail }, partition: { kind: 'iid' } });
    // n_max = 90 (the pool above), IF = 0.1: 90·0.1^(r/9) rounded down.
    const want = [90, 69, 53, 41, 32, 25, 19, 15, 11, 9];
    const c = buildConsortium(cfg({ imbalance: 0.1 }), 1, { env });
    expect(classTotals(c.silos)).toEqual(want);
    // The common test set stays balanced.
    expect(histogram(c.test.y)).toEqual(new Array(10).fill(2));
    // A seeded random order gives the same counts to other classes.
    const r = classTotals(buildConsortium(cfg({ imbalance: 0.1, order: 'random' }), 1, { env }).silos);
    expect([...r].sort((a, b) => b - a)).toEqual(want);
    expect(r).not.toEqual(want);
    // imbalance 1 keeps the pool.
    expect(classTotals(buildConsortium(cfg({ imbalance: 1 }), 1, { env }).silos)).toEqual(
      new Array(10).fill(90),
    );
  });

  it('a long-tailed synthetic pool: the head class keeps all it has, the tail IF of it', () => {
    const cfg = parseConfig({
      silos: 4,
      rounds: 1,
      data: { ...synthetic, longTail: { imbalance: 0.05 } },
      partition: { kind: 'dirichlet', alpha: 0.5 },
    });
    const before = classTotals(buildConsortium(parseConfig({ ...cfg, data: synthetic }), 2).silos);
    const after = classTotals(buildConsortium(cfg, 2).silos);
    const nMax = Math.max(...before);
    expect(after).toEqual(before.map((n, r) => Math.min(n, Math.floor(nMax * 0.05 ** (r / 9)))));
  });
});
