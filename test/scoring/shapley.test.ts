import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maskToCoalition } from '../../scoring/coalition.js';
import { coalitionTable, gameFromTable, memoize } from '../../scoring/game.js';
import {
  additiveGame,
  gloveGame,
  type KnownGame,
  paper003Example2,
  symmetricVotingGame,
  unanimityGame,
} from '../../scoring/games.js';
import {
  exactBanzhaf,
  exactBanzhafOfGame,
  exactShapley,
  exactShapleyOfGame,
  shapleyWeights,
} from '../../scoring/shapley.js';

/** Shapley by definition over all n! orderings (an independent oracle for small n). */
function shapleyByPermutations(n: number, table: Float64Array): Float64Array {
  const phi = new Float64Array(n);
  let count = 0;
  const perm = Array.from({ length: n }, (_, i) => i);
  const visit = (k: number) => {
    if (k === n) {
      let mask = 0;
      for (const p of perm) {
        phi[p]! += table[mask | (1 << p)]! - table[mask]!;
        mask |= 1 << p;
      }
      count++;
      return;
    }
    for (let i = k; i < n; i++) {
      [perm[k], perm[i]] = [perm[i]!, perm[k]!];
      visit(k + 1);
      [perm[k], perm[i]] = [perm[i]!, perm[k]!];
    }
  };
  visit(0);
  return phi.map((x) => x / count);
}

const small: KnownGame[] = [
  additiveGame([0.5, -1, 2, 0, 3]),
  unanimityGame(6, [1, 3, 4]),
  symmetricVotingGame(7),
  symmetricVotingGame(8),
  gloveGame(3),
  paper003Example2(),
];

describe('exact Shapley and Banzhaf on closed-form games', () => {
  it.each(small.map((g) => [g.name, g] as const))('%s', async (_name, known) => {
    const memo = memoize(known.game);
    const { values, evaluations } = await exactShapleyOfGame(memo);
    expect(evaluations).toBe(2 ** known.game.n);
    expect(memo.evaluations).toBe(2 ** known.game.n);
    for (let i = 0; i < known.game.n; i++) expect(values[i]).toBeCloseTo(known.shapley[i]!, 12);
    if (known.banzhaf) {
      const b = await exactBanzhafOfGame(known.game);
      for (let i = 0; i < known.game.n; i++) expect(b.values[i]).toBeCloseTo(known.banzhaf[i]!, 12);
    }
    for (const i of known.nullPlayers) expect(Math.abs(values[i]!)).toBeLessThan(1e-12);
  });
});

const tableArb = fc
  .integer({ min: 1, max: 6 })
  .chain((n) =>
    fc
      .array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 2 ** n, maxLength: 2 ** n })
      .map((t) => ({ n, table: Float64Array.from(t) })),
  );

describe('axioms and an independent oracle', () => {
  it('matches the n!-ordering definition', () => {
    fc.assert(
      fc.property(tableArb, ({ n, table }) => {
        const a = exactShapley(n, table);
        const b = shapleyByPermutations(n, table);
        for (let i = 0; i < n; i++) expect(a[i]).toBeCloseTo(b[i]!, 10);
      }),
      { numRuns: 60 },
    );
  });

  it('efficiency: Σφ = v(N) − v(∅)', () => {
    fc.assert(
      fc.property(tableArb, ({ n, table }) => {
        const s = exactShapley(n, table).reduce((x, y) => x + y, 0);
        expect(s).toBeCloseTo(table[2 ** n - 1]! - table[0]!, 10);
      }),
    );
  });

  it('weights: Σ_s C(n−1, s) w(s) = 1 up to n = 30', () => {
    for (const n of [1, 2, 5, 10, 20, 30]) {
      const w = shapleyWeights(n);
      let total = 0;
      let binom = 1;
      for (let s = 0; s < n; s++) {
        total += binom * w[s]!;
        binom = (binom * (n - 1 - s)) / (s + 1);
      }
      expect(total).toBeCloseTo(1, 12);
    }
  });

  it('Banzhaf of a table game equals the average marginal over all coalitions', async () => {
    const n = 4;
    const table = Float64Array.from({ length: 16 }, (_, m) => Math.sin(m * 1.7) + (m & 1));
    const b = exactBanzhaf(n, table);
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let m = 0; m < 16; m++) if ((m & (1 << i)) === 0) s += table[m | (1 << i)]! - table[m]!;
      expect(b[i]).toBeCloseTo(s / 8, 14);
    }
    // coalitionTable returns the same table back from a table game
    const again = await coalitionTable(gameFromTable(n, table), { batchSize: 3 });
    expect(Array.from(again)).toEqual(Array.from(table));
    expect((await gameFromTable(n, table).values([maskToCoalition(n, 5)]))[0]).toBe(table[5]);
  });
});

describe('bad input', () => {
  it('throws RangeError naming the argument', () => {
    expect(() => exactShapley(3, new Float64Array(7))).toThrow(/^table: expected 2\^3 = 8 values/);
    expect(() => exactBanzhaf(0, new Float64Array(1))).toThrow(/^n: /);
    expect(() => exactShapley(31, new Float64Array(1))).toThrow(/^n: /);
  });
});
