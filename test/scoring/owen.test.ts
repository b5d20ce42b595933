/**
 * Tests of scoring/owen.ts (Owen sampling with η-truncation, papers/004 Alg. 1, Eq. 6–11).
 *
 * Oracle: the estimator's expectation is the quadrature target T_j = (1/Q) Σ_q e_j(q), with
 * e_j(q) = Σ_{S ∌ j} q^{|S|}(1 − q)^{n−1−|S|}(v(S ∪ j) − v(S)) computed exactly from the table
 * (papers/004 Eq. 7), and T_j → φ_j as Q grows (Eq. 10). Tolerance: φ̂_j = Σ_q Σ_masks h/(Q·k_q)
 * is a sum of independent terms each in an interval of width R_j/(Q·k_q), R_j = the range of
 * j's marginals; Hoeffding gives |φ̂_j − T_j| ≤ (R_j/Q)·√(ln(2/δ')/2 · Σ_q 1/k_q), δ' = 1e-6/n.
 * Against closed-form Shapley values the tolerance adds the exact quadrature error |T_j − φ_j|.
 */
import { describe, expect, it } from 'vitest';
import { coalitionTable, gameFromTable } from '../../scoring/game.js';
import {
  AIRPORT_COSTS,
  AIRPORT_GROUPS,
  additiveGame,
  airportGame,
  gloveGame,
  type KnownGame,
  paper003Example2,
  symmetricVotingGame,
  unanimityGame,
} from '../../scoring/games.js';
import { budgetParity, type OwenEstimate, owenShapley } from '../../scoring/owen.js';
import { createRng } from '../../scoring/seeded-rng.js';
import { exactShapley } from '../../scoring/shapley.js';
import { counting, DELTA, marginalRanges, quadratureTarget, syntheticTable } from './_oracles.js';

function hoeffdingOwen(range: number, est: OwenEstimate, delta: number): number {
  const Q = est.levels.length;
  const inv = est.levelSamples.reduce((a, k) => a + 1 / k, 0);
  return (range / Q) * Math.sqrt((Math.log(2 / delta) / 2) * inv);
}

async function check(
  n: number,
  table: Float64Array,
  shapley: Float64Array,
  levels: number,
  budget: number,
  seed: number,
) {
  const est = await owenShapley(gameFromTable(n, table), {
    budget,
    rng: createRng(seed),
    levels,
    maxSamples: 4000,
  });
  const target = quadratureTarget(n, table, est.levels);
  const { lo, hi } = marginalRanges(n, table);
  for (let j = 0; j < n; j++) {
    const tol = hoeffdingOwen(hi[j]! - lo[j]!, est, DELTA / n) + 1e-12;
    expect(Math.abs(est.values[j]! - target[j]!)).toBeLessThanOrEqual(tol);
    const quad = Math.abs(target[j]! - shapley[j]!);
    expect(Math.abs(est.values[j]! - shapley[j]!)).toBeLessThanOrEqual(tol + quad);
  }
  return { est, target };
}

describe('owenShapley: against the quadrature target and closed forms (Hoeffding, δ = 1e-6)', () => {
  it.each<[string, KnownGame]>([
    ['glove(3+3)', gloveGame(3)],
    ['voting(9)', symmetricVotingGame(9)],
    ['unanimity(8; 1,3,5)', unanimityGame(8, [1, 3, 5])],
    ['paper003 Example 2', paper003Example2()],
  ])('%s, Q = 8', async (_name, known) => {
    const n = known.game.n;
    const { est } = await check(
      n,
      await coalitionTable(known.game),
      known.shapley,
      8,
      Math.max(2 ** n, 2 + 8 * (n + 1)),
      3,
    );
    for (const i of known.nullPlayers) expect(est.values[i]).toBe(0); // both twins always agree
  });

  it('the midpoint quadrature error shrinks as O(1/Q²) (unanimity, |T| = 4)', async () => {
    const known = unanimityGame(6, [0, 1, 2, 3]);
    const table = await coalitionTable(known.game);
    const err = (Q: number, grid: 'midpoint' | 'right') => {
      const levels = Float64Array.from({ length: Q }, (_, i) =>
        grid === 'midpoint' ? (i + 0.5) / Q : (i + 1) / Q,
      );
      return Math.abs(quadratureTarget(6, table, levels)[0]! - 0.25);
    };
    expect(err(16, 'midpoint')).toBeLessThan(err(8, 'midpoint') / 3.5);
    expect(err(16, 'right')).toBeGreaterThan(err(8, 'right') / 2.5); // the paper's grid is O(1/Q)
  });

  it('a random non-additive 12-player game, Q = 6', async () => {
    const table = syntheticTable(12, 31);
    await check(12, table, exactShapley(12, table), 6, 6000, 4);
  });

  it("the paper's grid q = i/Q is used when asked", async () => {
    const table = syntheticTable(7, 2);
    const est = await owenShapley(gameFromTable(7, table), {
      budget: 128,
      rng: createRng(1),
      levels: 4,
      grid: 'right',
    });
    expect([...est.levels]).toEqual([0.25, 0.5, 0.75, 1]);
  });

  it('additive game: every twin pair gives w_j, so the estimate is exact', async () => {
    const k = additiveGame([3, -1, 0, 2.5]);
    const est = await owenShapley(k.game, { budget: 100, rng: createRng(2) });
    for (let j = 0; j < 4; j++) expect(est.values[j]).toBeCloseTo(k.shapley[j]!, 12);
  });

  it('airport (100 players): group means against Owen’s closed-form e_j(q) (Hoeffding)', async () => {
    // e(q) for a player of cost c: M = max cost among the others in S, P(M ≤ c_m) = (1 − q)^{H_m},
    // H_m = other players with cost > c_m, c_0 = 0; e(q) = Σ_m P(M = c_m)(c − c_m).
    const costs = [0, ...AIRPORT_COSTS];
    const Q = 4;
    const budget = budgetParity(100, 200);
    const est = await owenShapley(airportGame().game, { budget, rng: createRng(6), levels: Q });
    let start = 0;
    AIRPORT_GROUPS.forEach((g, j) => {
      const c = costs[j + 1]!;
      const e = (q: number) => {
        const cdf = (m: number) => {
          let h = -1; // i itself
          for (let l = 0; l < AIRPORT_GROUPS.length; l++)
            if (costs[l + 1]! > costs[m]!) h += AIRPORT_GROUPS[l]!;
          return (1 - q) ** h;
        };
        let s = 0;
        for (let m = 0; m <= j; m++) s += (cdf(m) - (m > 0 ? cdf(m - 1) : 0)) * (c - costs[m]!);
        return s;
      };
      const target = [...est.levels].reduce((a, q) => a + e(q), 0) / Q;
      let mean = 0;
      for (let i = start; i < start + g; i++) mean += est.values[i]! / g;
      start += g;
      // Each player's marginal lies in [0, c]; the group mean too (a mean of such variables).
      const tol = hoeffdingOwen(c, est, DELTA / AIRPORT_GROUPS.length);
      expect(Math.abs(mean - target)).toBeLessThanOrEqual(tol);
    });
    expect(est.evaluations).toBeLessThanOrEqual(budget);
  });
});

describe('owenShapley: truncation, axioms, seeds, budget', () => {
  it('η-truncation on a saturating game: exact increments skipped, evaluations re-spent on more masks', async () => {
    const n = 10;
    const table = Float64Array.from({ length: 2 ** n }, (_, m) => {
      let s = 0;
      for (let i = 0; i < n; i++) if ((m >>> i) & 1) s += (i + 1) / 20;
      return Math.min(1, s);
    });
    const game = gameFromTable(n, table);
    const plain = await owenShapley(game, { budget: 400, rng: createRng(5), levels: 2 });
    const cut = await owenShapley(game, { budget: 400, rng: createRng(5), levels: 2, eta: 1e-9 });
    expect(cut.samples).toBeGreaterThan(plain.samples); // savings recycled into fresh masks
    expect(cut.evaluations).toBeLessThanOrEqual(400);
    const target = quadratureTarget(n, table, cut.levels);
    const { lo, hi } = marginalRanges(n, table);
    for (let j = 0; j < n; j++)
      expect(Math.abs(cut.values[j]! - target[j]!)).toBeLessThanOrEqual(
        hoeffdingOwen(hi[j]! - lo[j]!, cut, DELTA / n),
      );
  });

  it('efficiency holds approximately: |Σφ̂ − (v(N) − v(∅))| within the Hoeffding sum plus quadrature error', async () => {
    const n = 10;
    const table = syntheticTable(n, 8);
    const est = await owenShapley(gameFromTable(n, table), { budget: 3000, rng: createRng(2), levels: 8 });
    const target = quadratureTarget(n, table, est.levels);
    const { lo, hi } = marginalRanges(n, table);
    let tol = 0;
    for (let j = 0; j < n; j++) tol += hoeffdingOwen(hi[j]! - lo[j]!, est, DELTA / n);
    const quad = Math.abs(target.reduce((a, b) => a + b, 0) - (table[2 ** n - 1]! - table[0]!));
    const sum = est.values.reduce((a, b) => a + b, 0);
    expect(Math.abs(sum - (table[2 ** n - 1]! - table[0]!))).toBeLessThanOrEqual(tol + quad);
  });

  it('symmetry: glove players agree within twice the bound', async () => {
    const table = await coalitionTable(gloveGame(4).game);
    const est = await owenShapley(gameFromTable(8, table), { budget: 256, rng: createRng(4), levels: 4 });
    const tol = 2 * hoeffdingOwen(1, est, DELTA / 8);
    for (let j = 1; j < 8; j++) expect(Math.abs(est.values[j]! - est.values[0]!)).toBeLessThanOrEqual(tol);
  });

  it('same seed → same output; other seed → other output', async () => {
    const g = gameFromTable(9, syntheticTable(9, 3));
    const a = await owenShapley(g, { budget: 300, rng: createRng(1) });
    expect((await owenShapley(g, { budget: 300, rng: createRng(1) })).values).toEqual(a.values);
    expect((await owenShapley(g, { budget: 300, rng: createRng(2) })).values).not.toEqual(a.values);
  });

  it('budget parity: a counting game sees at most N×M coalitions, and nearly all are used', async () => {
    for (const [m, eta] of [
      [4, 0],
      [13, 0],
      [13, 0.05],
    ] as const) {
      const g = counting(gameFromTable(10, syntheticTable(10, 9)));
      const budget = budgetParity(10, m);
      const est = await owenShapley(g, { budget, rng: createRng(m), levels: 2, eta });
      expect(g.calls).toBeLessThanOrEqual(budget);
      expect(est.evaluations).toBe(g.calls);
      // Each level stops only when a mask (≤ n + 1 = 11 new coalitions) no longer fits its share.
      expect(g.calls).toBeGreaterThan(budget - 2 * 11);
    }
  });

  it('input checks name the parameter', async () => {
    const g = gloveGame(2).game;
    await expect(owenShapley(g, { budget: 5, rng: createRng(1) })).rejects.toThrow(/^budget/);
    await expect(owenShapley(g, { budget: 50, rng: createRng(1), levels: 0 })).rejects.toThrow(/^levels/);
    await expect(owenShapley(g, { budget: 50, rng: createRng(1), eta: -1 })).rejects.toThrow(/^eta/);
    await expect(owenShapley(g, { budget: 50, rng: createRng(1), grid: 'left' as never })).rejects.toThrow(
      /^grid/,
    );
    expect(() => budgetParity(0, 4)).toThrow(/^n/);
  });
});
