/**
 * `data.split: 'paper003-code'` through the configuration check and the run's setup
 * (src/data/split-registry.ts, src/data/paper003-split.ts).
 */
import { describe, expect, it } from 'vitest';
import { classCounts } from '../../src/data/dataset.js';
import { buildConsortium } from '../../src/fl/consortium-data.js';
import { ConfigError, parseConfig } from '../../src/records/config.js';

const data = {
  dataset: 'synthetic',
  split: 'paper003-code',
  trainSize: 2000,
  testSize: 384,
  synthetic: { features: 8, classes: 10, examples: 3000 },
} as const;

const config = (over: Record<string, unknown> = {}) =>
  parseConfig({ silos: 6, rounds: 1, data, partition: { kind: 'dirichlet', alpha: 0.1 }, ...over });

const issues = (value: Record<string, unknown>) => {
  try {
    config(value);
  } catch (e) {
    if (e instanceof ConfigError) return e.issues;
    throw e;
  }
  return [];
};

/** Each row of a data set as a string, to find the same example in two data sets. */
const rows = (ds: { x: Float32Array; n: number }) => {
  const f = ds.x.length / ds.n;
  return Array.from({ length: ds.n }, (_, i) => Array.from(ds.x.subarray(i * f, (i + 1) * f)).join(','));
};

describe("data.split 'paper003-code'", () => {
  it('is refused with partition kinds the authors’ code lacks, a long-tailed pool, and a test set above ⌈trainSize/4⌉', () => {
    expect(issues({ partition: { kind: 'mavericks' } })).toEqual([
      {
        path: 'partition.kind',
        message:
          "data.split 'paper003-code' takes kind 'dirichlet' or 'iid' (the authors' partition_data), got 'mavericks'",
      },
    ]);
    expect(issues({ data: { ...data, longTail: { imbalance: 0.1 } } }).map((i) => i.path)).toEqual([
      'data.longTail',
    ]);
    expect(issues({ data: { ...data, testSize: 501 } })).toEqual([
      {
        path: 'data.testSize',
        message:
          "with data.split 'paper003-code' at most ⌈trainSize/4⌉ = 500 (the 20 % test part of the authors' split)",
      },
    ]);
    expect(issues({ data: { ...data, split: 'halves' } }).map((i) => i.path)).toEqual(['data.split']);
    expect(issues({ data: { ...data, testSize: 500 } })).toEqual([]);
  });

  it('builds silos of Dirichlet-driven sizes with near-IID labels, deterministic by seed', () => {
    const cfg = config();
    const a = buildConsortium(cfg, 4);
    expect(buildConsortium(cfg, 4)).toEqual(a);
    expect(buildConsortium(cfg, 5).silos.map((s) => s.n)).not.toEqual(a.silos.map((s) => s.n));
    const sizes = a.silos.map((s) => s.n);
    // Every silo trains on int(0.8·n_i) of its share of the 2,000: together about 1,600.
    const total = sizes.reduce((x, y) => x + y, 0);
    expect(total).toBeLessThanOrEqual(1600);
    expect(total).toBeGreaterThanOrEqual(1600 - 6);
    // Dirichlet(0.1) sizes are far from equal ...
    expect(Math.max(...sizes) / Math.min(...sizes)).toBeGreaterThan(2);
    // ... while each large silo's labels are close to uniform (Dirichlet(0.1) on its own labels gives one or two classes).
    for (const s of a.silos.filter((x) => x.n >= 200)) {
      const counts = Array.from(classCounts(s.y, 10));
      expect(Math.max(...counts) / s.n).toBeLessThan(0.25);
      expect(counts.every((c) => c > 0)).toBe(true);
    }
    expect(a.test.n).toBe(384);
  });

  it('draws the common test set from the same data: most of its images are in a silo’s training set', () => {
    const c = buildConsortium(config(), 2);
    const trained = new Set(c.silos.flatMap(rows));
    const shared = rows(c.test).filter((r) => trained.has(r)).length / c.test.n;
    // In expectation 64 % (80 % in the first split, 80 % of that kept for training); 384 images: sd ≈ 0.025.
    expect(shared).toBeGreaterThan(0.5);
    expect(shared).toBeLessThan(0.78);
    // The default split keeps them apart.
    const balanced = buildConsortium(config({ data: { ...data, split: 'balanced' } }), 2);
    const apart = new Set(balanced.silos.flatMap(rows));
    expect(rows(balanced.test).filter((r) => apart.has(r))).toEqual([]);
  });
});
