/**
 * The true Shapley value's table in chunks (src/sim/reference-chunks.ts): the ranges cover the
 * 2^n coalitions once, and chunks computed separately — each with a learner of its own, in any
 * order — put back together give the unsplit table and Shapley value, value for value.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataShapeOf } from '../../src/fl/consortium-data.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { createTfLearner } from '../../src/fl/learner/tf-learner.js';
import { type ExperimentConfig, parseConfig } from '../../src/records/config.js';
import { chunkRanges, combineChunks, type ReferenceChunk } from '../../src/sim/reference-chunks.js';
import {
  retrainingGame,
  retrainingShapley,
  retrainingShapleyOf,
  retrainingValues,
} from '../../src/sim/retraining-game.js';

const chunkOf = (from: number, to: number, table: ArrayLike<number>): ReferenceChunk => ({
  reference: 'trueSv',
  from,
  to,
  values: Array.from(table).slice(from, to),
});

describe('chunkRanges and combineChunks', () => {
  it('cut [0, 2^n) into min(k, 2^n) contiguous ranges of sizes ±1, and any order of them rebuilds the table (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 2000 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (n, k, seed) => {
          const ranges = chunkRanges(n, k);
          expect(ranges).toHaveLength(Math.min(k, 2 ** n));
          expect(ranges[0]!.from).toBe(0);
          expect(ranges.at(-1)!.to).toBe(2 ** n);
          ranges.forEach((r, j) => {
            if (j > 0) expect(r.from).toBe(ranges[j - 1]!.to);
          });
          const sizes = ranges.map((r) => r.to - r.from);
          expect(Math.min(...sizes)).toBeGreaterThanOrEqual(1);
          expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
          const table = Float64Array.from({ length: 2 ** n }, (_, m) => Math.sin(seed + m * 1.7));
          const chunks = ranges.map((r) => chunkOf(r.from, r.to, table));
          const shuffled = chunks.map((c, j) => ({ c, o: Math.sin(seed * 3 + j) })).sort((a, b) => a.o - b.o);
          expect(
            combineChunks(
              n,
              shuffled.map((x) => x.c),
            ),
          ).toEqual(table);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('refuses a gap, an overlap, values that do not fit their range, and bad sizes, naming them', () => {
    const t = [1, 2, 3, 4];
    expect(() => combineChunks(2, [chunkOf(0, 2, t)])).toThrow('chunks: coalition 2 is in no chunk');
    expect(() => combineChunks(2, [chunkOf(0, 3, t), chunkOf(2, 4, t)])).toThrow(
      'chunks: coalition 2 is in two chunks',
    );
    expect(() => combineChunks(2, [{ reference: 'trueSv', from: 0, to: 4, values: [1] }])).toThrow(
      /^chunk \[0, 4\): 1 values/,
    );
    expect(() => chunkRanges(3, 0)).toThrow(/^--chunks: /);
    expect(() => chunkRanges(17, 2)).toThrow(/^silos: /);
  });
});

const cfg: ExperimentConfig = parseConfig({
  name: 'chunks',
  silos: 3,
  rounds: 2,
  data: { dataset: 'synthetic', trainSize: 300, testSize: 100, synthetic: { features: 16, classes: 4 } },
  partition: { kind: 'dirichlet', alpha: 1 },
  model: { kind: 'mlp', hidden: [8] },
  secureAggregation: { enabled: false },
  // A continuous utility, so that any difference in a coalition's model would show.
  scoring: { utility: 'negLoss', emptyCoalition: 'zero' },
  comparison: { estimators: {}, trueShapley: true },
});

const learnerOf = () =>
  createTfLearner({ ...dataShapeOf(cfg), model: { kind: 'mlp', hidden: [8] }, training: {} });

describe('retrainingValues in chunks', () => {
  let whole: Learner;
  beforeAll(async () => {
    whole = await learnerOf();
  });
  afterAll(async () => whole.close());

  it('chunks computed last-first, each on a fresh learner, equal the unsplit table and Shapley value', async () => {
    const table = await retrainingGame(cfg, 9, whole);
    const sv = await retrainingShapley(cfg, 9, whole);
    const chunks: ReferenceChunk[] = [];
    for (const r of chunkRanges(cfg.silos, 3).reverse()) {
      const own = await learnerOf();
      try {
        const values = await retrainingValues(cfg, 9, own, r);
        chunks.push({ reference: 'trueSv', from: r.from, to: r.to, values: Array.from(values) });
      } finally {
        await own.close();
      }
    }
    expect(chunks.map((c) => [c.from, c.to])).toEqual([
      [5, 8],
      [2, 5],
      [0, 2],
    ]);
    const combined = combineChunks(cfg.silos, chunks);
    expect(combined).toEqual(table);
    expect(retrainingShapleyOf(cfg, combined)).toEqual(sv);
  }, 120_000);

  it('refuses a range outside [0, 2^n), naming it', async () => {
    await expect(retrainingValues(cfg, 1, whole, { from: 2, to: 9 })).rejects.toThrow(
      'range: expected 0 ≤ from ≤ to ≤ 2^3 = 8, got [2, 9)',
    );
  });
});
