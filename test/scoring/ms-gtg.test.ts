/**
 * MS-GTG's joint sampler (scoring/ms-gtg.ts, papers/000 Alg. 1). Oracles: additive vector games
 * (every walk's marginals are exact), the per-class GTG runs it must equal when nothing truncates or
 * stops early (same permutations, same running means), a game where one class settles long before
 * the other (joint truncation waits for both), the budget, and the β-weighted φ the stopping rule
 * sees.
 */
import { describe, expect, it } from 'vitest';
import { type Coalition, coalitionKey, members } from '../../scoring/coalition.js';
import type { VectorGame } from '../../scoring/game.js';
import { gtgShapley } from '../../scoring/gtg.js';
import { maverickShapleyRound } from '../../scoring/maverick.js';
import { msGtg } from '../../scoring/ms-gtg.js';
import { afterSamples, never, type StoppingRule } from '../../scoring/stopping.js';

/** A vector game from a function, counting distinct coalitions asked for. */
function vectorGame(n: number, dims: number, value: (c: Coalition) => number[]) {
  const seen = new Set<string>();
  const game: VectorGame & { distinct: () => number } = {
    n,
    dims,
    distinct: () => seen.size,
    async values(coalitions) {
      const out = new Float64Array(coalitions.length * dims);
      coalitions.forEach((c, b) => {
        seen.add(coalitionKey(c));
        out.set(value(c), b * dims);
      });
      return out;
    },
  };
  return game;
}

/** v^c(S) = 1 − exp(−Σ_{i∈S} a_i^c): saturating per class (not additive). */
const saturating = (a: number[][]) =>
  vectorGame(a.length, a[0]!.length, (c) =>
    a[0]!.map((_, d) => 1 - Math.exp(-members(c).reduce((s, i) => s + a[i]![d]!, 0))),
  );

const A = [
  [0.9, 0.1, 0.4],
  [0.2, 0.8, 0.3],
  [0.5, 0.5, 0.05],
  [0.1, 0.2, 1.2],
  [0.3, 0.0, 0.6],
];

describe('msGtg (joint MS-GTG)', () => {
  it('is exact on an additive vector game after any number of walks', async () => {
    const a = [
      [0.1, -0.2],
      [0.3, 0.05],
      [0, 0.4],
    ];
    const game = vectorGame(3, 2, (c) => [
      0.5 + members(c).reduce((s, i) => s + a[i]![0]!, 0),
      0.2 + members(c).reduce((s, i) => s + a[i]![1]!, 0),
    ]);
    const r = await maverickShapleyRound(game, msGtg({ budget: 100, stop: afterSamples(3) }), {
      temperature: 0.1,
      seed: 4,
    });
    for (let i = 0; i < 3; i++)
      for (let c = 0; c < 2; c++) expect(r.phi[i * 2 + c]).toBeCloseTo(a[i]![c]!, 12);
  });

  it('equals per-class GTG when nothing truncates and both stop after the same walks', async () => {
    for (const seed of [1, 2, 3]) {
      const k = 10; // a multiple of n = 5: both stop after exactly k walks
      const joint = await maverickShapleyRound(
        saturating(A),
        msGtg({ budget: 10_000, stop: afterSamples(k) }),
        {
          temperature: 0.05,
          seed,
        },
      );
      const perClass = await maverickShapleyRound(
        saturating(A),
        (g, ctx) => gtgShapley(g, { budget: 10_000, rng: ctx.rng, stop: afterSamples(k) }),
        { temperature: 0.05, seed },
      );
      for (let x = 0; x < joint.phi.length; x++) expect(joint.phi[x]).toBeCloseTo(perClass.phi[x]!, 12);
      expect(joint.evaluations).toBe(perClass.evaluations);
    }
  });

  it('truncates on the class vector: a walk stops only once every class is within ε_i of v_N', async () => {
    // Class 0: player 0 brings 0.95, every other player 0.0125; class 1: 0.25 per player. Class 1
    // is never within ε_i = 0.1 of v_N before the last prefix, so joint walks are never truncated.
    const value = (c: Coalition) => {
      const ms = members(c);
      return [(ms.includes(0) ? 0.95 : 0) + 0.0125 * ms.filter((i) => i !== 0).length, 0.25 * ms.length];
    };
    const stop = afterSamples(8);
    const r = await maverickShapleyRound(
      vectorGame(4, 2, value),
      msGtg({ budget: 1000, withinRoundTolerance: 0.1, stop }),
      { temperature: 0.1, seed: 9 },
    );
    for (let i = 0; i < 4; i++) {
      expect(r.phi[i * 2]).toBeCloseTo(i === 0 ? 0.95 : 0.0125, 12); // exact (additive per class)
      expect(r.phi[i * 2 + 1]).toBeCloseTo(0.25, 12);
    }
    // Per-class GTG truncates class 0's walk once player 0 has joined (the rest is within 0.0375):
    // the players after it get marginal 0 there, so their class-0 values are biased low.
    const separate = await maverickShapleyRound(
      vectorGame(4, 2, value),
      (g, ctx) => gtgShapley(g, { budget: 1000, rng: ctx.rng, withinRoundTolerance: 0.1, stop }),
      { temperature: 0.1, seed: 9 },
    );
    for (let i = 1; i < 4; i++) expect(separate.phi[i * 2]).toBeLessThan(0.0125 - 1e-9);
    // When every class settles, the later prefixes are skipped: fewer coalitions than 2^n.
    const flat = vectorGame(4, 2, (c) => (members(c).includes(0) ? [1, 1] : [0, 0]));
    const t = await maverickShapleyRound(
      flat,
      msGtg({ budget: 1000, withinRoundTolerance: 0.1, stop: afterSamples(8) }),
      { temperature: 0.1, seed: 9 },
    );
    expect(flat.distinct()).toBeLessThan(16);
    expect(t.phi[0]).toBeCloseTo(1, 12);
    expect(t.phi[1]).toBeCloseTo(1, 12);
  });

  it('never spends more than its budget, v(∅) and v(N) included', async () => {
    for (const budget of [2, 5, 9, 20]) {
      const game = saturating(A);
      const r = await maverickShapleyRound(game, msGtg({ budget, stop: never }), {
        temperature: 0.05,
        seed: 1,
      });
      expect(game.distinct()).toBeLessThanOrEqual(budget);
      expect(r.evaluations).toBe(game.distinct());
    }
    expect(() => msGtg({ budget: 1 })).toThrow(/^budget/);
    expect(() => msGtg({ budget: 10, withinRoundTolerance: -1 })).toThrow(/^withinRoundTolerance/);
  });

  it('stops on the β-weighted φ (Eq. 11), with β of the best coalition evaluated so far', async () => {
    const seenValues: Float64Array[] = [];
    const recording: StoppingRule = {
      name: 'recording',
      start: () => (s) => {
        seenValues.push(s.values.slice());
        return s.samples >= 10;
      },
    };
    const r = await maverickShapleyRound(saturating(A), msGtg({ budget: 10_000, stop: recording }), {
      temperature: 0.05,
      seed: 2,
    });
    const last = seenValues[seenValues.length - 1]!;
    for (let i = 0; i < 5; i++) {
      let w = 0;
      for (let c = 0; c < 3; c++) w += r.beta[c]! * r.phi[i * 3 + c]!;
      expect(last[i]).toBeCloseTo(w, 12); // the coreset was final after the last walk
      expect(r.rewards[i]).toBeCloseTo(w, 12);
    }
  });
});
