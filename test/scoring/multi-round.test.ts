/**
 * Tests of scoring/multi-round.ts (MR, TMR). Exact methods: the oracles are closed-form
 * per-round values (paper 003 Example 2, unanimity, glove), tolerance 1e-12 (floating point).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coalitionTable, gameFromTable } from '../../scoring/game.js';
import { gloveGame, paper003Example2, unanimityGame } from '../../scoring/games.js';
import { multiRoundShapley, type Round, truncatedMultiRoundShapley } from '../../scoring/multi-round.js';
import { counting } from './_oracles.js';

const ex2 = Float64Array.from([0, 0, 1, 1, 2, 2, 3, 3]); // paper 003 Example 2, Shapley (0, 1, 2)
const tiny = Float64Array.from([0.5, 0.5, 0.5, 0.505]); // gain 0.005 over 2 players

describe('multiRoundShapley (MR)', () => {
  it('sums exact per-round values; non-participants get 0 in that round', async () => {
    const unan = await coalitionTable(unanimityGame(2, [0, 1]).game); // Shapley (½, ½)
    const rounds: Round[] = [
      { players: [4, 1, 2], table: ex2 }, // global 4 ↔ A (null), 1 ↔ B, 2 ↔ C
      { players: [0, 2], table: unan },
    ];
    const est = await multiRoundShapley(rounds, { n: 5 });
    expect([...est.rounds[0]!]).toEqual([0, 1, 2, 0, 0]);
    expect([...est.rounds[1]!]).toEqual([0.5, 0, 0.5, 0, 0]);
    expect([...est.values]).toEqual([0.5, 1, 2.5, 0, 0]);
    expect(est.evaluations).toBe(0); // tables cost no evaluations
    expect(est.truncated).toEqual([false, false]);
  });

  it('a round given as a game equals the same round given as a table, and costs 2^k evaluations', async () => {
    const glove = gloveGame(2);
    const g = counting(glove.game);
    const fromGame = await multiRoundShapley([{ players: [3, 2, 1, 0], game: g }], { n: 4 });
    const fromTable = await multiRoundShapley(
      [{ players: [3, 2, 1, 0], table: await coalitionTable(glove.game) }],
      {
        n: 4,
      },
    );
    expect(fromGame.values).toEqual(fromTable.values);
    for (const v of fromGame.values) expect(v).toBeCloseTo(0.5, 12);
    expect(fromGame.evaluations).toBe(16);
    expect(g.calls).toBe(16);
  });

  it('efficiency per round and in total (fast-check on random tables and participant sets)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 5 }).chain((players) =>
            fc
              .array(fc.double({ min: -5, max: 5, noNaN: true }), {
                minLength: 2 ** players.length,
                maxLength: 2 ** players.length,
              })
              .map((vals) => ({ players, table: Float64Array.from(vals) })),
          ),
          { minLength: 1, maxLength: 4 },
        ),
        async (rounds) => {
          const est = await multiRoundShapley(rounds, { n: 8 });
          let total = 0;
          rounds.forEach((r, t) => {
            const gain = r.table[r.table.length - 1]! - r.table[0]!;
            total += gain;
            expect(est.rounds[t]!.reduce((a, b) => a + b, 0)).toBeCloseTo(gain, 9);
            for (let i = 0; i < 8; i++) if (!r.players.includes(i)) expect(est.rounds[t]![i]).toBe(0);
          });
          expect(est.values.reduce((a, b) => a + b, 0)).toBeCloseTo(total, 9);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('input checks name the parameter', async () => {
    expect(() => multiRoundShapley([{ players: [0, 5], table: tiny }], { n: 3 })).toThrow(/^rounds/);
    expect(() => multiRoundShapley([{ players: [0, 0], table: tiny }], { n: 3 })).toThrow(/twice/);
    expect(() => multiRoundShapley([{ players: [0, 1], table: ex2 }], { n: 3 })).toThrow(/^rounds/);
    expect(() => multiRoundShapley([], { n: 0 })).toThrow(/^n/);
    expect(() => multiRoundShapley([{ players: [0], game: gameFromTable(2, tiny) }], { n: 3 })).toThrow(
      TypeError,
    );
  });
});

describe('truncatedMultiRoundShapley (TMR)', () => {
  it('a round whose gain is ≤ ε_b contributes zero and costs 2 evaluations', async () => {
    const g = counting(gameFromTable(2, tiny));
    const rounds: Round[] = [
      { players: [0, 1, 2], table: ex2 },
      { players: [1, 2], game: g },
    ];
    const est = await truncatedMultiRoundShapley(rounds, { n: 3, threshold: 0.01 });
    expect(est.truncated).toEqual([false, true]);
    expect([...est.rounds[1]!]).toEqual([0, 0, 0]);
    expect([...est.values]).toEqual([0, 1, 2]);
    expect(g.calls).toBe(2);
    expect(est.evaluations).toBe(2);
    // The same round above the threshold is valued.
    const kept = await truncatedMultiRoundShapley(rounds, { n: 3, threshold: 0.001 });
    expect(kept.truncated).toEqual([false, false]);
    expect(kept.values[1]).toBeCloseTo(1.0025, 12);
  });

  it('decay λ weighs round t of T by λ^{T−1−t}', async () => {
    const rounds: Round[] = [
      { players: [0, 1, 2], table: ex2 },
      { players: [0, 1, 2], table: ex2 },
      { players: [0, 1, 2], table: ex2 },
    ];
    const est = await truncatedMultiRoundShapley(rounds, { n: 3, threshold: 0, decay: 0.5 });
    const w = 0.25 + 0.5 + 1;
    expect([...est.values]).toEqual([0, w, 2 * w]);
  });

  it('input checks name the parameter', async () => {
    const rounds: Round[] = [{ players: [0, 1, 2], table: ex2 }];
    expect(() => truncatedMultiRoundShapley(rounds, { n: 3, threshold: -1 })).toThrow(/^threshold/);
    expect(() => truncatedMultiRoundShapley(rounds, { n: 3, threshold: 0, decay: 0 })).toThrow(/^decay/);
    expect(() => truncatedMultiRoundShapley(rounds, { n: 3, threshold: 0, decay: 1.5 })).toThrow(/^decay/);
  });

  it('paper 003 Example 2 reproduced: the null player A gets 0 in every round', async () => {
    const known = paper003Example2();
    const rounds: Round[] = [
      { players: [0, 1, 2], game: known.game },
      { players: [0, 1, 2], game: known.game },
    ];
    const est = await truncatedMultiRoundShapley(rounds, { n: 3, threshold: 0 });
    expect([...est.values]).toEqual([0, 2, 4]);
  });
});
