import { describe, expect, it } from 'vitest';
import {
  coalitionKey,
  coalitionOf,
  emptyCoalition,
  grandCoalition,
  has,
  maskToCoalition,
  members,
  popcount,
  size,
  withoutPlayer,
  withPlayer,
} from '../../scoring/coalition.js';
import {
  coalitionTable,
  coordinateGame,
  type Game,
  gameFromFunction,
  memoize,
  memoizeVector,
  type VectorGame,
} from '../../scoring/game.js';
import { createRng, randomPermutation } from '../../scoring/seeded-rng.js';

describe('coalitions', () => {
  it('bitsets past 32 players', () => {
    const c = coalitionOf(100, [0, 31, 32, 63, 99]);
    expect(c.length).toBe(4);
    expect(members(c)).toEqual([0, 31, 32, 63, 99]);
    expect(size(c)).toBe(5);
    expect(has(c, 99) && !has(c, 98)).toBe(true);
    expect(members(withPlayer(c, 50))).toEqual([0, 31, 32, 50, 63, 99]);
    expect(members(withoutPlayer(c, 31))).toEqual([0, 32, 63, 99]);
    expect(members(c)).toEqual([0, 31, 32, 63, 99]); // not mutated
    expect(size(grandCoalition(70))).toBe(70);
    expect(coalitionKey(c)).toBe(coalitionKey(coalitionOf(100, [99, 63, 32, 31, 0])));
    expect(coalitionKey(c)).not.toBe(coalitionKey(emptyCoalition(100)));
    expect(members(maskToCoalition(5, 0b10110))).toEqual([1, 2, 4]);
    expect(popcount(0xffffffff)).toBe(32);
  });

  it('rejects players outside [0, n)', () => {
    expect(() => coalitionOf(4, [4])).toThrow(/^members: 4 is not a player/);
  });
});

describe('memoized games', () => {
  it('evaluates each distinct coalition once and counts it', async () => {
    let calls = 0;
    const inner = gameFromFunction(3, (c) => {
      calls++;
      return size(c);
    });
    const g = memoize(inner);
    const a = coalitionOf(3, [0, 1]);
    const v = await g.values([a, a, coalitionOf(3, [2]), coalitionOf(3, [1, 0])]);
    expect(Array.from(v)).toEqual([2, 2, 1, 2]);
    expect(calls).toBe(2);
    expect(g.evaluations).toBe(2);
    expect(g.requests).toBe(4);
    await g.values([a]);
    expect(g.evaluations).toBe(2);
    expect(memoize(g)).toBe(g); // no double wrapping
  });

  it('vector games share evaluations across coordinates', async () => {
    let calls = 0;
    const vg: VectorGame = {
      n: 2,
      dims: 3,
      async values(cs) {
        calls += cs.length;
        const out = new Float64Array(cs.length * 3);
        cs.forEach((c, b) => {
          for (let d = 0; d < 3; d++) out[b * 3 + d] = size(c) * (d + 1);
        });
        return out;
      },
    };
    const memo = memoizeVector(vg);
    const t0 = await coalitionTable(coordinateGame(memo, 0));
    const t2 = await coalitionTable(coordinateGame(memo, 2));
    expect(Array.from(t0)).toEqual([0, 1, 1, 2]);
    expect(Array.from(t2)).toEqual([0, 3, 3, 6]);
    expect(calls).toBe(4);
    expect(memo.evaluations).toBe(4);
    expect(() => coordinateGame(memo, 3)).toThrow(/^d: /);
  });

  it('takes the whole table from Game.table when offered, through memoize, memoizeVector and coordinateGame', async () => {
    let batches = 0;
    let tables = 0;
    const n = 3;
    const value = (m: number) => m * 10 + 1;
    const inner: Game = {
      n,
      async values(cs) {
        batches++;
        return Float64Array.from(cs, (c) => value(c[0]!));
      },
      async table() {
        tables++;
        return Float64Array.from({ length: 2 ** n }, (_, m) => value(m));
      },
    };
    const g = memoize(inner);
    await g.values([coalitionOf(3, [0]), emptyCoalition(3)]);
    expect(g.evaluations).toBe(2);
    const seen: number[] = [];
    const t = await coalitionTable(g, { onProgress: (done) => seen.push(done) });
    expect(Array.from(t)).toEqual([1, 11, 21, 31, 41, 51, 61, 71]);
    expect(seen).toEqual([8]);
    // Distinct coalitions counted once; all 2^n requested; later batches answered from the table.
    expect([g.evaluations, g.requests, tables, batches]).toEqual([8, 10, 1, 1]);
    t[0] = -1; // the caller's copy
    expect(Array.from(await g.values([grandCoalition(3), emptyCoalition(3)]))).toEqual([71, 1]);
    expect(Array.from(await coalitionTable(g))).toEqual([1, 11, 21, 31, 41, 51, 61, 71]);
    expect([tables, batches, g.evaluations]).toEqual([1, 1, 8]);
    await expect(g.values([coalitionOf(4, [3])])).rejects.toThrow(/^coalitions\[0\]: player 3 is outside/);

    const vg: VectorGame = {
      n: 2,
      dims: 2,
      values: async (cs) => Float64Array.from(cs.flatMap((c) => [c[0]!, -c[0]!])),
      table: async () => {
        tables++;
        return Float64Array.from([0, -0, 1, -1, 2, -2, 3, -3]);
      },
    };
    const memo = memoizeVector(vg);
    expect(Array.from(await coalitionTable(coordinateGame(memo, 1)))).toEqual([-0, -1, -2, -3]);
    expect(Array.from(await coalitionTable(coordinateGame(memo, 0)))).toEqual([0, 1, 2, 3]);
    expect([tables, memo.evaluations]).toEqual([2, 4]);
    expect(Array.from(await memo.values([coalitionOf(2, [1])]))).toEqual([2, -2]);
    const bad: Game = { n: 2, values: inner.values, table: async () => new Float64Array(3) };
    await expect(coalitionTable(bad)).rejects.toThrow(/^table: game returned 3 numbers/);
  });

  it('reports progress per batch', async () => {
    const seen: number[] = [];
    await coalitionTable(
      gameFromFunction(4, () => 0),
      { batchSize: 5, onProgress: (done) => seen.push(done) },
    );
    expect(seen).toEqual([5, 10, 15, 16]);
  });
});

describe('seeded randomness', () => {
  it('same seed → same stream, other seed → other stream; uniform in [0, 1)', () => {
    const a = createRng(7);
    const b = createRng(7);
    const c = createRng(8);
    const xs = Array.from({ length: 1000 }, () => a.next());
    expect(xs).toEqual(Array.from({ length: 1000 }, () => b.next()));
    expect(xs).not.toEqual(Array.from({ length: 1000 }, () => c.next()));
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    // mean of 1000 U(0,1): sd = 1/√12000 ≈ 0.0091; 6 sd bound
    expect(Math.abs(xs.reduce((s, x) => s + x, 0) / 1000 - 0.5)).toBeLessThan(6 * 0.0092);
  });

  it('permutations are permutations', () => {
    const p = randomPermutation(createRng(1), 50);
    expect(Array.from(p).sort((x, y) => x - y)).toEqual([...Array(50).keys()]);
    expect(() => createRng(Number.NaN)).toThrow(/^seed: /);
  });
});
