import { describe, expect, it } from 'vitest';
import { fedTsv } from '../../src/strategies/fedtsv.js';
import type { FullVisibility } from '../../src/strategies/strategy.js';
import { additiveClassGame, additiveOver, aggregateContext, makeSetup, selectContext } from './_fixtures.js';

/** Independent oracle: TSV utility (papers/002 Eq. 9, 11, σ = max(‖r‖², ε)) and Shapley by all permutations. */
function tsvOracle(updates: number[][], r: number[]): number[] {
  const n = updates.length;
  const norm2 = (x: number[]) => x.reduce((s, v) => s + v * v, 0);
  const sigma = Math.max(norm2(r), 1e-12);
  const v = (S: number[]) => {
    const mean = r.map((_, d) =>
      S.length === 0 ? 0 : S.reduce((s, i) => s + updates[i]![d]!, 0) / S.length,
    );
    return 1 / (1 + norm2(mean.map((m, d) => m - r[d]!)) / sigma);
  };
  const phi = new Array(n).fill(0);
  const perms: number[][] = [];
  const permute = (prefix: number[]) => {
    if (prefix.length === n) perms.push(prefix);
    for (let i = 0; i < n; i++) if (!prefix.includes(i)) permute([...prefix, i]);
  };
  permute([]);
  for (const p of perms)
    for (let j = 0; j < n; j++) phi[p[j]!] += (v(p.slice(0, j + 1)) - v(p.slice(0, j))) / perms.length;
  return phi;
}

const setup = makeSetup(5);
const fullOf = (selected: number[], updates: number[][], reference: number[]): FullVisibility => ({
  updates: updates.map((u) => Float32Array.from(u)),
  game: additiveOver(selected, [0, 0, 0, 0, 0]),
  perClass: additiveClassGame(
    selected,
    [0, 0],
    [
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
    ],
  ),
  referenceUpdate: Float32Array.from(reference),
});

describe('FedTSV (papers/002 Alg. 2)', () => {
  const r = [1, 0, 0];
  const round1 = [
    [1, 0, 0],
    [0.75, 0.25, 0],
    [-1, 0, 0], // against the reference: negative TSV
    [0.5, 0.5, 0],
  ];
  const round2 = [
    [0.5, 0, 0.5],
    [-0.5, 0.5, 0],
  ];

  it('weights participants by max(0, cumulative TSV), normalized (Eq. 12–13, lines 20–29)', async () => {
    const s = fedTsv();
    const state0 = s.init(setup);
    const a1 = await s.aggregationWeights(
      state0,
      aggregateContext(setup, 1, [0, 1, 2, 3], 1, { full: fullOf([0, 1, 2, 3], round1, r) }),
    );
    const phi1 = tsvOracle(round1, r);
    expect(phi1[2]).toBeLessThan(0);
    const pos1 = phi1.map((x) => Math.max(0, x));
    const z1 = pos1.reduce((a, b) => a + b);
    pos1.forEach((x, b) => {
      expect(a1.weights[b]).toBeCloseTo(x / z1, 12);
    });
    expect(a1.weights[2]).toBe(0);

    // Round 2, silos 1 and 2 only: φ^2 = φ^1 + φ(v^1) for them, unchanged for 0, 3.
    const a2 = await s.aggregationWeights(
      a1.state,
      aggregateContext(setup, 2, [1, 2], 2, { full: fullOf([1, 2], round2, r) }),
    );
    const phi2 = tsvOracle(round2, r);
    const cum = [phi1[0]!, phi1[1]! + phi2[0]!, phi1[2]! + phi2[1]!, phi1[3]!, 0];
    cum.forEach((x, i) => {
      expect(a2.state.cumulative[i]).toBeCloseTo(x, 12);
    });
    const pos2 = [Math.max(0, cum[1]!), Math.max(0, cum[2]!)];
    const z2 = pos2[0]! + pos2[1]!;
    expect(z2).toBeGreaterThan(0);
    pos2.forEach((x, b) => {
      expect(a2.weights[b]).toBeCloseTo(x / z2, 12);
    });
  });

  it('falls back to uniform weights when every participant has α = 0', async () => {
    const s = fedTsv();
    const agg = await s.aggregationWeights(
      s.init(setup),
      aggregateContext(setup, 1, [3, 4], 1, {
        full: fullOf(
          [3, 4],
          [
            [-1, 0, 0],
            [-2, 0, 0],
          ],
          r,
        ),
      }),
    );
    expect(Array.from(agg.weights)).toEqual([0.5, 0.5]);
  });

  it('selects at random (Alg. 2 line 3), determined by the seed; needs updates and Δ_val', async () => {
    const s = fedTsv({ clientsPerRound: 2 });
    const draw = (seed: number) =>
      Array.from({ length: 20 }, (_, t) => s.select(s.init(setup), selectContext(setup, 1, seed + t)));
    expect(draw(3)).toEqual(draw(3));
    expect(draw(3)).not.toEqual(draw(300));
    expect(draw(3).every((sel) => sel.length === 2)).toBe(true);
    const full = fullOf(
      [0, 1],
      [
        [1, 0, 0],
        [0, 1, 0],
      ],
      r,
    );
    const { referenceUpdate: _, ...noRef } = full;
    await expect(
      s.aggregationWeights(s.init(setup), aggregateContext(setup, 1, [0, 1], 1, { full: noRef })),
    ).rejects.toThrow(/^ctx\.full\.referenceUpdate/);
    await expect(s.aggregationWeights(s.init(setup), aggregateContext(setup, 1, [0, 1], 1))).rejects.toThrow(
      TypeError,
    );
  });
});
