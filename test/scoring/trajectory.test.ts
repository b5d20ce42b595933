/**
 * Trajectory Shapley (papers/002 Eq. 9–13, Alg. 2). Oracles: the utility computed directly from the
 * updates (property test), exact Shapley on the full table, a closed-form free-rider game, the
 * axioms (efficiency, symmetry), and Hoeffding bounds for the sampled estimator.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coalitionOf, maskToCoalition } from '../../scoring/coalition.js';
import { createRng } from '../../scoring/seeded-rng.js';
import { exactShapleyOfGame } from '../../scoring/shapley.js';
import {
  accumulateTrajectory,
  trajectoryGame,
  trajectoryShapley,
  trajectoryTable,
  trajectoryUtility,
  trajectoryWeights,
  type UpdateGeometry,
  updateGeometry,
} from '../../scoring/trajectory.js';

/** Eq. 9 and 11 computed the long way: the coalition's (weighted) mean update, then the distance. */
function directUtility(
  updates: readonly Float32Array[],
  reference: Float32Array,
  memberList: readonly number[],
  weights?: readonly number[],
  epsilon = 1e-12,
): number {
  const d = reference.length;
  const mean = new Float64Array(d);
  let wSum = 0;
  for (const i of memberList) {
    const w = weights?.[i] ?? 1;
    wSum += w;
    for (let k = 0; k < d; k++) mean[k]! += w * updates[i]![k]!;
  }
  if (wSum > 0) for (let k = 0; k < d; k++) mean[k]! /= wSum;
  let dist2 = 0;
  let ref2 = 0;
  for (let k = 0; k < d; k++) {
    dist2 += (mean[k]! - reference[k]!) ** 2;
    ref2 += reference[k]! ** 2;
  }
  return 1 / (1 + dist2 / Math.max(ref2, epsilon));
}

function bits(mask: number, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) if ((mask >>> i) & 1) out.push(i);
  return out;
}

function randomUpdates(seed: number, n: number, d: number, scale = 1): Float32Array[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, () =>
    Float32Array.from({ length: d }, () => scale * (2 * rng.next() - 1)),
  );
}

const sum = (a: ArrayLike<number>) => Array.from(a).reduce((s, x) => s + x, 0);

/**
 * Hoeffding + union bound: with m i.i.d. marginals in an interval of width `width`, every one of n
 * means is within width·sqrt(ln(2n/δ)/(2m)) of its expectation with probability ≥ 1 − δ.
 */
function hoeffding(width: number, n: number, m: number, delta = 1e-6): number {
  return width * Math.sqrt(Math.log((2 * n) / delta) / (2 * m));
}

describe('updateGeometry', () => {
  it('computes the Gram matrix, the cross products and ‖r‖² by hand', () => {
    const g = updateGeometry([Float32Array.of(1, 2), Float32Array.of(3, -1)], Float32Array.of(2, 0.5));
    expect(g.n).toBe(2);
    expect(Array.from(g.gram)).toEqual([5, 1, 1, 10]);
    expect(Array.from(g.cross)).toEqual([3, 5.5]);
    expect(g.refNormSq).toBe(4.25);
  });

  it('rejects bad input with errors naming the field', () => {
    expect(() => updateGeometry([], Float32Array.of(1))).toThrow(/^updates/);
    expect(() => updateGeometry([Float32Array.of(1, 2)], Float32Array.of(1))).toThrow(RangeError);
    expect(() => updateGeometry([Float32Array.of(1, 2)], Float32Array.of(1))).toThrow(/^updates\[0\]/);
    expect(() => updateGeometry([Float32Array.of(Number.NaN)], Float32Array.of(1))).toThrow(/^updates\[0\]/);
    expect(() => updateGeometry([Float32Array.of(1)], Float32Array.of(Number.POSITIVE_INFINITY))).toThrow(
      /^reference/,
    );
    expect(() => updateGeometry([[1] as unknown as Float32Array], Float32Array.of(1))).toThrow(TypeError);
  });
});

describe('trajectoryUtility (Eq. 9, 11)', () => {
  const updatesArb = fc
    .record({ n: fc.integer({ min: 1, max: 6 }), d: fc.integer({ min: 1, max: 8 }) })
    .chain(({ n, d }) =>
      fc.record({
        updates: fc.array(
          fc.array(fc.float({ min: -4, max: 4, noNaN: true }), { minLength: d, maxLength: d }),
          {
            minLength: n,
            maxLength: n,
          },
        ),
        reference: fc.array(fc.float({ min: -4, max: 4, noNaN: true }), { minLength: d, maxLength: d }),
        mask: fc.integer({ min: 0, max: 2 ** n - 1 }),
        weights: fc.option(
          fc.array(fc.double({ min: 0.1, max: 100, noNaN: true }), { minLength: n, maxLength: n }),
        ),
      }),
    );

  it('from the Gram matrix equals the direct computation from the updates', () => {
    fc.assert(
      fc.property(updatesArb, ({ updates, reference, mask, weights }) => {
        const u = updates.map((x) => Float32Array.from(x));
        const r = Float32Array.from(reference);
        const n = u.length;
        const geom = updateGeometry(u, r);
        const options = weights === null ? {} : { weights };
        const viaGram = trajectoryUtility(geom, maskToCoalition(n, mask), options);
        const direct = directUtility(u, r, bits(mask, n), weights ?? undefined);
        // Error bound: the Gram route cancels Q/W² − 2L/W + ‖r‖², each term bounded (Cauchy–Schwarz)
        // by scale = max G_ii + 2·sqrt(max G_ii·‖r‖²) + ‖r‖²; both routes round O(n·d) times, so the
        // squared distance is off by ≤ 64·n·d·2^−52·scale, and |∂v/∂dist²| ≤ 1/σ.
        const sigma = Math.max(geom.refNormSq, 1e-12);
        let maxDiag = 0;
        for (let i = 0; i < n; i++) maxDiag = Math.max(maxDiag, geom.gram[i * n + i]!);
        const scale = maxDiag + 2 * Math.sqrt(maxDiag * geom.refNormSq) + geom.refNormSq;
        const tol = 1e-14 + (64 * n * r.length * 2 ** -52 * scale) / sigma;
        expect(Math.abs(viaGram - direct)).toBeLessThanOrEqual(tol);
        expect(viaGram).toBeGreaterThan(0);
        expect(viaGram).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300, seed: 20240602 },
    );
  });

  it('the O(n·2^n) table, the game and the per-coalition utility agree on every coalition', async () => {
    const u = randomUpdates(7, 7, 5);
    const r = randomUpdates(8, 1, 5)[0]!;
    const geom = updateGeometry(u, r);
    const weights = [1, 2, 3, 1, 5, 0.5, 4];
    for (const options of [{}, { weights }]) {
      const table = trajectoryTable(geom, options);
      const game = trajectoryGame(geom, options);
      const all = Array.from({ length: 2 ** 7 }, (_, m) => maskToCoalition(7, m));
      const viaGame = await game.values(all);
      for (let m = 0; m < 2 ** 7; m++) {
        const direct = directUtility(u, r, bits(m, 7), 'weights' in options ? weights : undefined);
        expect(table[m]).toBeCloseTo(direct, 10);
        expect(viaGame[m]).toBeCloseTo(direct, 10);
      }
    }
  });

  it('v(∅) = 1/2 and a coalition whose mean is exactly r has v = 1', () => {
    const r = Float32Array.of(1, -2, 0.5);
    const geom = updateGeometry([r, Float32Array.of(2, -4, 1), Float32Array.of(0, 0, 0)], r);
    expect(trajectoryUtility(geom, coalitionOf(3, []))).toBe(0.5);
    expect(trajectoryUtility(geom, coalitionOf(3, [0]))).toBe(1);
    expect(trajectoryUtility(geom, coalitionOf(3, [1, 2]))).toBeCloseTo(1, 12); // (2r + 0)/2 = r
    expect(trajectoryUtility(geom, coalitionOf(3, [1]))).toBeCloseTo(0.5, 12); // ‖2r − r‖² = ‖r‖²
  });

  it('σ = max(‖r‖², ε) keeps the utility defined when the reference update is zero', () => {
    const geom = updateGeometry([Float32Array.of(1e-4, 0)], Float32Array.of(0, 0));
    // ‖Δ − 0‖² = 1e-8 (in float32), σ = ε = 1e-6.
    const v = trajectoryUtility(geom, coalitionOf(1, [0]), { epsilon: 1e-6 });
    const d2 = Math.fround(1e-4) ** 2;
    expect(v).toBeCloseTo(1 / (1 + d2 / 1e-6), 12);
    expect(trajectoryUtility(geom, coalitionOf(1, []), { epsilon: 1e-6 })).toBe(1);
  });

  it('rejects a malformed geometry, coalition, epsilon or weights naming the field', () => {
    const geom = updateGeometry(randomUpdates(1, 3, 2), Float32Array.of(1, 1));
    const c = coalitionOf(3, [0, 1]);
    expect(() => trajectoryUtility({ ...geom, gram: new Float64Array(8) }, c)).toThrow(/^geometry\.gram/);
    expect(() => trajectoryUtility({ ...geom, cross: new Float64Array(2) }, c)).toThrow(/^geometry\.cross/);
    expect(() => trajectoryUtility({ ...geom, refNormSq: -1 }, c)).toThrow(/^geometry\.refNormSq/);
    expect(() => trajectoryUtility({ ...geom, n: 0 }, c)).toThrow(/^geometry\.n/);
    expect(() => trajectoryUtility(geom, c, { epsilon: 0 })).toThrow(/^epsilon/);
    expect(() => trajectoryUtility(geom, c, { weights: [1, 0, 1] })).toThrow(/^weights/);
    expect(() => trajectoryUtility(geom, c, { weights: [1, 1] })).toThrow(/^weights/);
    expect(() => trajectoryUtility(geom, maskToCoalition(3, 0b1001))).toThrow(/^coalition/);
    expect(() => trajectoryGame(geom, { epsilon: Number.NaN })).toThrow(RangeError);
  });
});

describe('trajectoryShapley, exact', () => {
  it('equals exactShapleyOfGame on the trajectory game and is efficient', async () => {
    const u = randomUpdates(11, 8, 6);
    const r = randomUpdates(12, 1, 6)[0]!;
    const geom = updateGeometry(u, r);
    const est = trajectoryShapley(geom);
    expect(est.evaluations).toBe(2 ** 8);
    expect(est.stderr).toBeUndefined();
    const oracle = await exactShapleyOfGame(trajectoryGame(geom));
    for (let i = 0; i < 8; i++) expect(est.values[i]).toBeCloseTo(oracle.values[i]!, 12);
    const vN = trajectoryUtility(geom, maskToCoalition(8, 255));
    expect(sum(est.values)).toBeCloseTo(vN - 0.5, 12);
  });

  it('gives two identical updates equal values (symmetry)', () => {
    const u = randomUpdates(21, 6, 4);
    u[4] = u[1]!.slice();
    const est = trajectoryShapley(updateGeometry(u, randomUpdates(22, 1, 4)[0]!));
    expect(Math.abs(est.values[1]! - est.values[4]!)).toBeLessThan(1e-12);
    // …and the test can fail: the other players differ from player 1.
    expect(Math.abs(est.values[0]! - est.values[1]!)).toBeGreaterThan(1e-6);
  });

  it('a zero update (free-rider) is not a null player: it dilutes the mean and gets the closed-form negative value', () => {
    // n − 1 players send exactly r, one sends 0. With σ = ‖r‖²: v(S) = 1 for S of k ≥ 1 r-players,
    // v(S ∪ {z}) = (1 + 1/(k+1)²)^{−1}, v({z}) = v(∅) = 1/2. The free-rider's position is uniform, so
    // φ_z = (1/n) Σ_{k=1}^{n−1} [(1 + 1/(k+1)²)^{−1} − 1] = −(1/n) Σ_{k=1}^{n−1} 1/((k+1)² + 1).
    const n = 6;
    const r = Float32Array.of(0.5, -1, 2, 0.25);
    const updates = [...Array.from({ length: n - 1 }, () => r.slice()), new Float32Array(4)];
    const est = trajectoryShapley(updateGeometry(updates, r));
    let expected = 0;
    for (let k = 1; k <= n - 1; k++) expected -= 1 / ((k + 1) ** 2 + 1);
    expected /= n;
    expect(est.values[n - 1]).toBeCloseTo(expected, 12);
    expect(est.values[n - 1]).toBeLessThan(0);
    // Efficiency + symmetry share the rest: v(N) − v(∅) − φ_z over the n − 1 honest players.
    const vN = 1 / (1 + 1 / n ** 2);
    for (let i = 0; i < n - 1; i++) expect(est.values[i]).toBeCloseTo((vN - 0.5 - expected) / (n - 1), 12);
    // Eq. 13: its weight is truncated to zero; the honest players share the aggregation equally.
    const cumulative = accumulateTrajectory(new Float64Array(n), [0, 1, 2, 3, 4, 5], est.values);
    const w = trajectoryWeights(cumulative, [0, 1, 2, 3, 4, 5]);
    expect(w[n - 1]).toBe(0);
    for (let i = 0; i < n - 1; i++) expect(w[i]).toBeCloseTo(1 / (n - 1), 12);
  });

  it('runs the n = 20 table (the exact limit) and stays efficient', () => {
    const u = randomUpdates(31, 20, 3);
    const geom = updateGeometry(u, randomUpdates(32, 1, 3)[0]!);
    const est = trajectoryShapley(geom);
    expect(est.evaluations).toBe(2 ** 20);
    const vN = trajectoryUtility(geom, maskToCoalition(20, 2 ** 20 - 1));
    expect(sum(est.values)).toBeCloseTo(vN - trajectoryUtility(geom, maskToCoalition(20, 0)), 9);
  });

  it("rejects 'exact' beyond 20 players and unknown methods", () => {
    const geom = updateGeometry(randomUpdates(41, 21, 2), Float32Array.of(1, 0));
    expect(() => trajectoryShapley(geom, { method: 'exact' })).toThrow(/^method/);
    expect(() => trajectoryShapley(geom, { method: 'nope' as 'exact' })).toThrow(/^method/);
  });
});

describe('trajectoryShapley, sampled', () => {
  it('is within the Hoeffding bound of the exact values (n = 8)', () => {
    // Players of mixed quality: scaled copies of r plus noise, and one adversary sending −r.
    const d = 6;
    const r = randomUpdates(51, 1, d)[0]!;
    const noise = randomUpdates(52, 8, d, 0.5);
    const scales = [1, 0.8, 1.2, 0.5, 1, 2, 0.1, -1];
    const updates = scales.map((s, i) =>
      Float32Array.from(r, (x, k) => s * x + (i === 7 ? 0 : noise[i]![k]!)),
    );
    const geom = updateGeometry(updates, r);
    const exact = trajectoryShapley(geom);
    const table = trajectoryTable(geom);
    // Every marginal lies in [vmin − vmax, vmax − vmin]: width 2(vmax − vmin).
    const width = 2 * (Math.max(...table) - Math.min(...table));
    const budget = 1 + 8 * 4000;
    const est = trajectoryShapley(geom, { method: 'sampled', budget, rng: createRng(1) });
    const m = 4000;
    const tol = hoeffding(width, 8, m);
    // The bound must be tight enough to tell players apart, or the test would prove nothing.
    expect(tol).toBeLessThan(Math.max(...exact.values) - Math.min(...exact.values));
    for (let i = 0; i < 8; i++) expect(Math.abs(est.values[i]! - exact.values[i]!)).toBeLessThanOrEqual(tol);
    // Each permutation telescopes to v(N) − v(∅): efficiency holds for the estimate too.
    expect(sum(est.values)).toBeCloseTo(sum(exact.values), 12);
    // The adversary comes out last, as the paper intends.
    expect(est.values[7]).toBe(Math.min(...est.values));
    expect(est.stderr).toBeDefined();
    for (let i = 0; i < 8; i++) {
      expect(est.stderr![i]).toBeGreaterThan(0);
      expect(est.stderr![i]).toBeLessThan(width / Math.sqrt(m));
    }
  });

  it('samples automatically beyond 20 players; identical updates share v(N) − v(∅) within the bound', () => {
    // With identical updates u, v(S) = v1 for every S ≠ ∅ and v(∅) = 1/2: only the first player of a
    // permutation has a nonzero marginal, so φ_i = (v1 − 1/2)/n and marginals lie in [0, v1 − 1/2].
    const n = 24;
    const u0 = Float32Array.of(1, 0.5, -0.25);
    const r = Float32Array.of(0.5, 1, 0);
    const geom = updateGeometry(
      Array.from({ length: n }, () => u0.slice()),
      r,
    );
    const v1 = trajectoryUtility(geom, coalitionOf(n, [0]));
    expect(() => trajectoryShapley(geom)).toThrow(/^budget/);
    expect(() => trajectoryShapley(geom, { budget: 1000 })).toThrow(/^rng/);
    const m = 2000;
    const est = trajectoryShapley(geom, { budget: 1 + n * m, rng: createRng(3) });
    expect(est.evaluations).toBe(1 + n * m);
    const tol = hoeffding(Math.abs(v1 - 0.5), n, m);
    for (let i = 0; i < n; i++) expect(Math.abs(est.values[i]! - (v1 - 0.5) / n)).toBeLessThanOrEqual(tol);
    expect(sum(est.values)).toBeCloseTo(v1 - 0.5, 12);
  });

  it('same seed → same output, other seed → other output', () => {
    const geom = updateGeometry(randomUpdates(61, 10, 4), randomUpdates(62, 1, 4)[0]!);
    const run = (seed: number) =>
      trajectoryShapley(geom, { method: 'sampled', budget: 1 + 10 * 50, rng: createRng(seed) }).values;
    expect(Array.from(run(5))).toEqual(Array.from(run(5)));
    expect(Array.from(run(5))).not.toEqual(Array.from(run(6)));
  });

  it('never computes more utilities than the budget, and needs budget ≥ n + 1', () => {
    const geom = updateGeometry(randomUpdates(71, 30, 3), randomUpdates(72, 1, 3)[0]!);
    for (const budget of [31, 32, 60, 61, 1000, 12345]) {
      const est = trajectoryShapley(geom, { budget, rng: createRng(1) });
      expect(est.evaluations).toBeLessThanOrEqual(budget);
      expect(est.evaluations).toBe(1 + 30 * Math.floor((budget - 1) / 30));
    }
    // One permutation: no standard error to report.
    expect(Number.isNaN(trajectoryShapley(geom, { budget: 31, rng: createRng(1) }).stderr![0])).toBe(true);
    expect(() => trajectoryShapley(geom, { budget: 30, rng: createRng(1) })).toThrow(RangeError);
    expect(() => trajectoryShapley(geom, { budget: 30, rng: createRng(1) })).toThrow(/^budget/);
    expect(() => trajectoryShapley(geom, { budget: 100.5, rng: createRng(1) })).toThrow(/^budget/);
  });
});

describe('cumulative values and weights (Eq. 12, 13, Alg. 2)', () => {
  it('adds a round to its participants only (non-participants keep φ, Alg. 2 line 25)', () => {
    const phi0 = new Float64Array(5);
    const phi1 = accumulateTrajectory(phi0, [3, 0], [0.25, -0.5]);
    expect(Array.from(phi1)).toEqual([-0.5, 0, 0, 0.25, 0]);
    expect(Array.from(phi0)).toEqual([0, 0, 0, 0, 0]); // pure
    const phi2 = accumulateTrajectory(phi1, [0, 1, 3], [0.75, 0.1, 0.25]);
    expect(Array.from(phi2)).toEqual([0.25, 0.1, 0, 0.5, 0]);
  });

  it('weights are max(0, φ) normalized over the participants, uniform when all are zero', () => {
    const phi = Float64Array.of(0.25, -0.1, 0, 0.75, 2);
    expect(Array.from(trajectoryWeights(phi, [0, 1, 3]))).toEqual([0.25, 0, 0.75]);
    expect(Array.from(trajectoryWeights(phi, [1, 2]))).toEqual([0.5, 0.5]);
    const w = trajectoryWeights(phi, [4, 0, 1, 2, 3]);
    expect(sum(w)).toBeCloseTo(1, 15);
    expect(w[0]).toBeCloseTo(2 / 3, 15);
  });

  it('folds a three-round run end to end', () => {
    // Round k: participants vary; cumulative φ is the sum of the rounds a client took part in.
    const clients = 6;
    let phi: Float64Array = new Float64Array(clients);
    const expected = new Float64Array(clients);
    const rounds: { participants: number[]; seed: number }[] = [
      { participants: [0, 1, 2, 3], seed: 1 },
      { participants: [2, 4, 5], seed: 2 },
      { participants: [5, 0, 3], seed: 3 },
    ];
    for (const { participants, seed } of rounds) {
      const geom: UpdateGeometry = updateGeometry(
        randomUpdates(seed, participants.length, 3),
        randomUpdates(seed + 100, 1, 3)[0]!,
      );
      const est = trajectoryShapley(geom);
      phi = accumulateTrajectory(phi, participants, est.values);
      participants.forEach((c, k) => {
        expected[c]! += est.values[k]!;
      });
      const w = trajectoryWeights(phi, participants);
      expect(sum(w)).toBeCloseTo(1, 12);
      for (const x of w) expect(x).toBeGreaterThanOrEqual(0);
    }
    for (let c = 0; c < clients; c++) expect(phi[c]).toBeCloseTo(expected[c]!, 15);
  });

  it('rejects bad participants and values naming the field', () => {
    const phi = new Float64Array(3);
    expect(() => accumulateTrajectory(phi, [0, 3], [1, 1])).toThrow(/^participants/);
    expect(() => accumulateTrajectory(phi, [0, 0], [1, 1])).toThrow(/^participants/);
    expect(() => accumulateTrajectory(phi, [0, 1], [1])).toThrow(/^roundValues/);
    expect(() => accumulateTrajectory(phi, [0], [Number.NaN])).toThrow(/^roundValues/);
    expect(() => accumulateTrajectory(Float64Array.of(Number.NaN), [0], [1])).toThrow(/^cumulative/);
    expect(() => trajectoryWeights(phi, [])).toThrow(/^participants/);
    expect(() => trajectoryWeights(phi, [1.5])).toThrow(RangeError);
  });
});
