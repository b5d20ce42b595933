/**
 * `comparison.reference: 'roundSv'` (src/sim/experiment.ts `roundShapley`): the exact Shapley value
 * of round `at`'s own coalition table, placed at the participants' global ids (0 for silos that
 * did not take part), under either empty-coalition convention; an error naming comparison.at when
 * the round has no table. The end-to-end check against the authors' `shapley` is in
 * paper-code.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tableUnder } from '../../scoring/empty-coalition.js';
import { exactShapley } from '../../scoring/shapley.js';
import type { HarnessTable } from '../../src/sim/comparison-harness.js';
import { roundShapley } from '../../src/sim/experiment.js';

/** n silos, 3 rounds, each with a random set of ≥ 2 participants and a random table over them. */
const runs = fc.integer({ min: 2, max: 9 }).chain((n) =>
  fc
    .array(
      fc
        .subarray(
          Array.from({ length: n }, (_, i) => i),
          { minLength: 2, maxLength: Math.min(n, 7) },
        )
        .chain((players) =>
          fc
            .array(fc.double({ min: 0, max: 1, noNaN: true }), {
              minLength: 2 ** players.length,
              maxLength: 2 ** players.length,
            })
            .map((v) => ({ players, table: Float64Array.from(v) })),
        ),
      { minLength: 3, maxLength: 3 },
    )
    .map((ts) => ({ n, tables: ts.map((t, r) => ({ ...t, round: r + 1 }) as HarnessTable) })),
);

describe('roundSv', () => {
  it("equals exactShapley of round at's table, at the participants' ids, 0 elsewhere", () => {
    fc.assert(
      fc.property(runs, fc.integer({ min: 1, max: 3 }), fc.boolean(), ({ n, tables }, at, zero) => {
        // the harness stores tables already under the run's convention
        const stored = tables.map((t) => (zero ? { ...t, table: tableUnder(t.table, 'zero') } : t));
        const got = roundShapley(stored, at, n);
        const t = stored[at - 1]!;
        const want = exactShapley(t.players.length, t.table);
        expect(got).toHaveLength(n);
        for (let i = 0; i < n; i++) {
          const b = t.players.indexOf(i);
          if (b < 0) expect(got[i]).toBe(0);
          else expect(got[i]).toBeCloseTo(want[b]!, 12);
        }
        // efficiency: the values sum to v(N) − v(∅) of that round
        const sum = got.reduce((a, b) => a + b, 0);
        expect(sum).toBeCloseTo(t.table[t.table.length - 1]! - t.table[0]!, 9);
      }),
      { numRuns: 60 },
    );
  });

  it('names comparison.at when the round has no coalition table', () => {
    const tables: HarnessTable[] = [
      { round: 1, players: [0, 1], table: Float64Array.from([0.1, 0.2, 0.3, 0.4]) },
    ];
    expect(() => roundShapley(tables, 2, 2)).toThrow(/^comparison\.at: round 2 has no coalition game/);
  });
});
