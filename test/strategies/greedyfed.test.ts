import { describe, expect, it } from 'vitest';
import { greedyFed, topK } from '../../src/strategies/greedyfed.js';
import { additiveClassGame, additiveOver, fullFor, makeSetup, run } from './_fixtures.js';

const w = [0.05, 0.3, -0.1, 0.2, 0.12, 0.25, 0.01];
const setup = makeSetup(7, { seed: 11 });
const full = (selected: number[]) =>
  fullFor(
    selected,
    additiveOver(selected, w),
    additiveClassGame(
      selected,
      [0],
      w.map(() => [0]),
    ),
  );

describe('GreedyFed (baseline of papers/000 §5.1)', () => {
  it('explores every silo in ⌈N/k⌉ round-robin rounds, then picks the top-k by accumulated GTG value', async () => {
    const s = greedyFed({ clientsPerRound: 3, alpha: 0.7, epsilonB: 0, epsilonI: 0 });
    const { selections, state } = await run(s, setup, 6, 2, full);
    // Rounds 1–3 visit all 7 silos (9 slots: the last block wraps to the start of the order).
    const explored = selections.slice(0, 3).flat();
    expect(new Set(explored).size).toBe(7);
    expect(selections.slice(0, 3).every((sel) => sel.length === 3)).toBe(true);
    const order = state.order;
    expect(selections[0]).toEqual([order[0]!, order[1]!, order[2]!].sort((a, b) => a - b));
    expect(selections[2]).toEqual([order[6]!, order[0]!, order[1]!].sort((a, b) => a - b));
    // Accumulated values follow u ← α·u + (1 − α)·φ with φ = w (GTG is exact on an additive game without truncation).
    const u = new Array(7).fill(0);
    for (const sel of selections) for (const i of sel) u[i] = 0.7 * u[i] + 0.3 * w[i]!;
    u.forEach((x, i) => {
      expect(state.value[i]).toBeCloseTo(x, 12);
    });
    // Rounds 4–6 are greedy: the top 3 of the values accumulated before each round.
    const before = new Array(7).fill(0);
    selections.forEach((sel, r) => {
      if (r >= 3) expect(sel).toEqual(topK(before, 3));
      for (const i of sel) before[i] = 0.7 * before[i] + 0.3 * w[i]!;
    });
    // The greedy phase never picks the negative or the weakest silos.
    for (const sel of selections.slice(3)) expect(sel).not.toContain(2);
  });

  it("with accumulation 'mean' the greedy set is the top-k of the true values", async () => {
    const s = greedyFed({ clientsPerRound: 3, accumulation: 'mean', epsilonB: 0, epsilonI: 0 });
    const { selections, state } = await run(s, setup, 5, 3, full);
    w.forEach((x, i) => {
      expect(state.value[i]).toBeCloseTo(x, 12);
    });
    expect(selections[3]).toEqual([1, 3, 5]);
    expect(selections[4]).toEqual([1, 3, 5]);
  });

  it('fixes the exploration order by the seed and aggregates by example counts', async () => {
    const s = greedyFed({ clientsPerRound: 3 });
    expect(s.init(setup).order).toEqual(s.init(setup).order);
    expect(s.init(setup).order).not.toEqual(s.init({ ...setup, seed: 12 }).order);
    const { weights } = await run(s, setup, 1, 1, full);
    expect(Array.from(weights[0]!)).toEqual([100, 100, 100]);
    expect(topK([1, 3, 3, 2], 2)).toEqual([1, 2]);
  });
});
