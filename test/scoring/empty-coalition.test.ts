/**
 * The empty-coalition convention (scoring/empty-coalition.ts) on random coalition tables: under
 * 'zero' every exact per-round Shapley value shifts by exactly v(M0)/N, LOO is unchanged, and the
 * other private schemes move as the module comment says (EE's weights by one constant, so its
 * ranking survives while both normalizers are positive).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkEmptyCoalition,
  DEFAULT_EMPTY_COALITION,
  gameUnder,
  tableUnder,
  utilitiesUnder,
} from '../../scoring/empty-coalition.js';
import { coalitionTable, gameFromTable, memoize } from '../../scoring/game.js';
import { type PrivateUtilities, scoreScheme } from '../../scoring/private.js';
import { exactShapley } from '../../scoring/shapley.js';

/** A random game: n players, 2^n values in [0, 1] (accuracies). */
const tables = fc
  .integer({ min: 2, max: 8 })
  .chain((n) =>
    fc
      .array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 2 ** n, maxLength: 2 ** n })
      .map((v) => ({ n, table: Float64Array.from(v) })),
  );

/** The four private utilities read off a full table (v(N), v(∅), v({i}), v(N∖{i})). */
function utilitiesOf(n: number, table: Float64Array): PrivateUtilities {
  const all = 2 ** n - 1;
  return {
    full: table[all]!,
    empty: table[0]!,
    withOnly: Array.from({ length: n }, (_, i) => table[1 << i]!),
    without: Array.from({ length: n }, (_, i) => table[all ^ (1 << i)]!),
  };
}

/** Pairs (i, j) ordered differently by a and b, ignoring differences below rounding (1e-12). */
function reorderedPairs(a: ArrayLike<number>, b: ArrayLike<number>): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < a.length; i++)
    for (let j = i + 1; j < a.length; j++) {
      const da = a[i]! - a[j]!;
      const db = b[i]! - b[j]!;
      if (Math.abs(da) > 1e-12 && Math.abs(db) > 1e-12 && Math.sign(da) !== Math.sign(db)) out.push([i, j]);
    }
  return out;
}

describe("emptyCoalition 'zero' on random tables", () => {
  it('shifts every exact Shapley value by exactly v(M0)/N', () => {
    fc.assert(
      fc.property(tables, ({ n, table }) => {
        const before = exactShapley(n, table);
        const after = exactShapley(n, tableUnder(table, 'zero'));
        for (let i = 0; i < n; i++) expect(after[i]! - before[i]!).toBeCloseTo(table[0]! / n, 12);
      }),
    );
  });

  it('leaves LOO unchanged and moves IOI, α and the EE weights by v(M0), v(M0)/2, v(M0)/(2(N−1))', () => {
    fc.assert(
      fc.property(tables, ({ n, table }) => {
        const u = utilitiesOf(n, table);
        const z = utilitiesUnder(u, 'zero');
        const e = u.empty;
        expect(scoreScheme('loo', z).scores).toEqual(scoreScheme('loo', u).scores);
        const shift = { ioi: e, fp: e / 2, ee: e / (2 * (n - 1)) } as const;
        for (const [scheme, d] of Object.entries(shift) as [keyof typeof shift, number][]) {
          const a = scoreScheme(scheme, u).weights;
          const b = scoreScheme(scheme, z).weights;
          for (let i = 0; i < n; i++) expect(b[i]! - a[i]!).toBeCloseTo(d, 12);
        }
      }),
    );
  });

  it("keeps EE's ranking when both normalizers are positive (its values change with v(M0))", () => {
    fc.assert(
      fc.property(tables, ({ n, table }) => {
        const u = utilitiesOf(n, table);
        const a = scoreScheme('ee', u);
        const b = scoreScheme('ee', utilitiesUnder(u, 'zero'));
        fc.pre(a.normalizer > 1e-9 && b.normalizer > 1e-9 && u.full > 0);
        expect(reorderedPairs(a.weights, b.weights)).toEqual([]);
        expect(reorderedPairs(a.scores, b.scores)).toEqual([]);
      }),
    );
  });

  it('gameUnder answers 0 for ∅ without asking the inner game, and the table matches tableUnder', async () => {
    await fc.assert(
      fc.asyncProperty(tables, async ({ n, table }) => {
        const inner = memoize(gameFromTable(n, table));
        const got = await coalitionTable(gameUnder(inner, 'zero'));
        expect(got).toEqual(tableUnder(table, 'zero'));
        expect(inner.evaluations).toBe(2 ** n - 1);
      }),
      { numRuns: 30 },
    );
  });
});

describe("emptyCoalition 'initialModel' and the checks", () => {
  it('is the default and changes nothing', async () => {
    expect(DEFAULT_EMPTY_COALITION).toBe('initialModel');
    const table = Float64Array.from([0.3, 0.5, 0.6, 0.9]);
    const u = utilitiesOf(2, table);
    expect(utilitiesUnder(u)).toBe(u);
    expect(utilitiesUnder(u, 'initialModel')).toBe(u);
    expect(tableUnder(table)).toBe(table);
    const g = gameFromTable(2, table);
    expect(gameUnder(g, 'initialModel')).toBe(g);
    expect(tableUnder(table, 'zero')[0]).toBe(0);
    expect(table[0]).toBe(0.3); // not changed in place
  });

  it('rejects an unknown convention, naming the field', () => {
    expect(() => checkEmptyCoalition('none', 'scoring.emptyCoalition')).toThrow(
      /^scoring\.emptyCoalition: expected one of 'initialModel', 'zero', got none/,
    );
    expect(() => utilitiesUnder({ empty: 1 }, 'nil' as never)).toThrow(RangeError);
  });
});
