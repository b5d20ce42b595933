/**
 * Exact Shapley and Banzhaf values from the 2^n coalition values.
 *
 * Shapley (papers/003 Eq. 1):
 *   φ_i = Σ_{S ⊆ N∖{i}} |S|!(n−|S|−1)!/n! · (v(S ∪ {i}) − v(S)).
 * Banzhaf: β_i = 2^{−(n−1)} Σ_{S ⊆ N∖{i}} (v(S ∪ {i}) − v(S)).
 * Both are one pass over the table of 2^n values: O(n·2^n) time, O(n) extra space.
 * Combinatorial weights are computed in log space (docs/architecture.md, "Conventions") so n up to 30 does not overflow.
 */

import { popcount } from './coalition.js';
import type { Estimate } from './estimate.js';
import { coalitionTable, type Game, type TableOptions } from './game.js';

function checkTable(n: number, table: Float64Array): void {
  if (!Number.isInteger(n) || n < 1 || n > 30)
    throw new RangeError(`n: expected an integer in [1, 30], got ${n}`);
  if (table.length !== 2 ** n)
    throw new RangeError(`table: expected 2^${n} = ${2 ** n} values, got ${table.length}`);
}

/** ln Γ(k+1) = ln k! for integers k ≥ 0, by summation (exact enough for k ≤ 30). */
function logFactorials(n: number): Float64Array {
  const lf = new Float64Array(n + 1);
  for (let k = 2; k <= n; k++) lf[k] = lf[k - 1]! + Math.log(k);
  return lf;
}

/**
 * Shapley weights w[s] = s!(n−s−1)!/n! for s = 0..n−1, from log factorials.
 * Σ_s C(n−1, s)·w[s] = 1.
 */
export function shapleyWeights(n: number): Float64Array {
  const lf = logFactorials(n);
  const w = new Float64Array(n);
  for (let s = 0; s < n; s++) w[s] = Math.exp(lf[s]! + lf[n - s - 1]! - lf[n]!);
  return w;
}

/** Semivalue from a table: value_i = Σ_{S ∌ i} weight[|S|]·(v(S∪i) − v(S)). */
function semivalueFromTable(n: number, table: Float64Array, weight: Float64Array): Float64Array {
  const phi = new Float64Array(n);
  const total = table.length;
  for (let mask = 0; mask < total; mask++) {
    const vS = table[mask]!;
    const w = weight[popcount(mask)]!;
    for (let i = 0; i < n; i++) {
      const bit = 1 << i;
      if ((mask & bit) === 0) phi[i]! += w * (table[mask | bit]! - vS);
    }
  }
  return phi;
}

/**
 * Exact Shapley values from the table of all 2^n coalition values (index = integer mask,
 * bit i = player i). Throws RangeError when n ∉ [1, 30] or the table length is not 2^n.
 */
export function exactShapley(n: number, table: Float64Array): Float64Array {
  checkTable(n, table);
  return semivalueFromTable(n, table, shapleyWeights(n));
}

/**
 * Exact Banzhaf values from the table of all 2^n coalition values.
 * Throws RangeError when n ∉ [1, 30] or the table length is not 2^n.
 */
export function exactBanzhaf(n: number, table: Float64Array): Float64Array {
  checkTable(n, table);
  return semivalueFromTable(n, table, new Float64Array(n).fill(2 ** -(n - 1)));
}

/** Exact Shapley values of a game: evaluates all 2^n coalitions, then `exactShapley`. */
export async function exactShapleyOfGame(game: Game, options: TableOptions = {}): Promise<Estimate> {
  const table = await coalitionTable(game, options);
  return { values: exactShapley(game.n, table), evaluations: table.length };
}

/** Exact Banzhaf values of a game: evaluates all 2^n coalitions, then `exactBanzhaf`. */
export async function exactBanzhafOfGame(game: Game, options: TableOptions = {}): Promise<Estimate> {
  const table = await coalitionTable(game, options);
  return { values: exactBanzhaf(game.n, table), evaluations: table.length };
}
