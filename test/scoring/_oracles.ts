/**
 * Test helpers for the sampled estimators: concentration bounds that turn a failure probability
 * into a tolerance, per-player marginal ranges from a full table, and the airport game's exact
 * marginal moments. Not a test file (no `.test.ts`), imported by the estimator tests.
 */
import { popcount } from '../../scoring/coalition.js';
import type { Game } from '../../scoring/game.js';
import { AIRPORT_COSTS, AIRPORT_GROUPS } from '../../scoring/games.js';

/** Failure probability allowed per test (split over players by a union bound where needed). */
export const DELTA = 1e-6;

/**
 * Hoeffding: the mean of k i.i.d. samples in an interval of width `range` is within
 * range·√(ln(2/δ)/(2k)) of its expectation with probability ≥ 1 − δ.
 */
export function hoeffding(range: number, k: number, delta: number): number {
  return range * Math.sqrt(Math.log(2 / delta) / (2 * k));
}

/**
 * Bernstein: for k i.i.d. samples with variance σ² and |X − μ| ≤ b, the mean is within
 * √(2σ²L/k) + 2bL/(3k), L = ln(2/δ), of μ with probability ≥ 1 − δ.
 */
export function bernstein(variance: number, b: number, k: number, delta: number): number {
  const L = Math.log(2 / delta);
  return Math.sqrt((2 * variance * L) / k) + (2 * b * L) / (3 * k);
}

/** Per player: [min, max] over S ∌ i of v(S ∪ i) − v(S), from the full table. */
export function marginalRanges(n: number, table: Float64Array): { lo: Float64Array; hi: Float64Array } {
  const lo = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
  const hi = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);
  for (let mask = 0; mask < table.length; mask++)
    for (let i = 0; i < n; i++) {
      const bit = 1 << i;
      if ((mask & bit) !== 0) continue;
      const d = table[mask | bit]! - table[mask]!;
      if (d < lo[i]!) lo[i] = d;
      if (d > hi[i]!) hi[i] = d;
    }
  return { lo, hi };
}

/**
 * Exact moments of the airport game's per-permutation marginals, per group j of g_j players
 * with cost c_j. In a random permutation only the first member of group j can have a positive
 * marginal, Y_j = max(0, c_j − M), M the largest cost before it; group j's mean estimate is
 * Y_j/g_j per permutation. P(M ≤ c_m) = g_j/(H_m + g_j), H_m = players outside group j with
 * cost > c_m (the first of the g_j members must precede all of them), c_0 = 0.
 * Returns, per group, E[Y/g] (= the Shapley value of each member), Var[Y/g] and the bound
 * |Y/g − E| ≤ c_j/g_j.
 */
export function airportGroupMoments(): { mean: number[]; variance: number[]; bound: number[] } {
  const costs = [0, ...AIRPORT_COSTS];
  const groups = AIRPORT_GROUPS;
  const mean: number[] = [];
  const variance: number[] = [];
  const bound: number[] = [];
  for (let j = 0; j < groups.length; j++) {
    const c = costs[j + 1]!;
    const g = groups[j]!;
    const cdf = (m: number) => {
      let h = 0;
      for (let l = 0; l < groups.length; l++) if (l !== j && costs[l + 1]! > costs[m]!) h += groups[l]!;
      return g / (h + g);
    };
    let m1 = 0;
    let m2 = 0;
    for (let m = 0; m <= j; m++) {
      const p = cdf(m) - (m > 0 ? cdf(m - 1) : 0);
      const y = (c - costs[m]!) / g;
      m1 += p * y;
      m2 += p * y * y;
    }
    mean.push(m1);
    variance.push(m2 - m1 * m1);
    bound.push(c / g);
  }
  return { mean, variance, bound };
}

/** The table of a seeded random non-additive game: v(S) = √(Σ_{i∈S} w_i) + Σ_{i<j∈S} a_ij. */
export function syntheticTable(n: number, seed: number): Float64Array {
  let s = seed >>> 0;
  const u = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
  const w = Array.from({ length: n }, () => u() * 4);
  const a = Array.from({ length: n }, () => Array.from({ length: n }, () => u() * 0.4 - 0.1));
  const table = new Float64Array(2 ** n);
  for (let mask = 0; mask < table.length; mask++) {
    let sw = 0;
    let pair = 0;
    for (let i = 0; i < n; i++) {
      if (((mask >>> i) & 1) === 0) continue;
      sw += w[i]!;
      for (let j = i + 1; j < n; j++) if (((mask >>> j) & 1) === 1) pair += a[i]![j]!;
    }
    table[mask] = Math.sqrt(sw) + pair;
  }
  return table;
}

/** A game that counts the coalitions its value function is called on. */
export function counting(game: Game): Game & { readonly calls: number } {
  let calls = 0;
  return {
    n: game.n,
    get calls() {
      return calls;
    },
    async values(coalitions) {
      calls += coalitions.length;
      return game.values(coalitions);
    },
  };
}

/**
 * Owen's quadrature target (1/Q) Σ_q e_j(q), e_j(q) = Σ_{S ∌ j} q^{|S|}(1 − q)^{n−1−|S|}
 * (v(S ∪ j) − v(S)) (papers/004 Eq. 7, 10), exactly from the full table.
 */
export function quadratureTarget(n: number, table: Float64Array, levels: Float64Array): Float64Array {
  const t = new Float64Array(n);
  for (const q of levels)
    for (let mask = 0; mask < table.length; mask++) {
      const s = popcount(mask);
      for (let j = 0; j < n; j++) {
        const bit = 1 << j;
        if (mask & bit) continue;
        t[j]! += (q ** s * (1 - q) ** (n - 1 - s) * (table[mask | bit]! - table[mask]!)) / levels.length;
      }
    }
  return t;
}
