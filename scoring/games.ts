/**
 * Games with closed-form values: oracles for tests and benchmarks, and the built-in demo games.
 * Each returns the game with its known Shapley values (and Banzhaf values where closed-form),
 * so an estimator can be checked without enumerating 2^n coalitions.
 */
import { type Coalition, has, members, size } from './coalition.js';
import { type Game, gameFromFunction } from './game.js';

/** A game together with its closed-form values. */
export interface KnownGame {
  name: string;
  game: Game;
  /** Exact Shapley values in player order. */
  shapley: Float64Array;
  /** Exact Banzhaf values in player order, where a closed form exists. */
  banzhaf?: Float64Array;
  /** Players that are null players (zero marginal to every coalition). */
  nullPlayers: number[];
}

function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

/** v(S) = Σ_{i∈S} w_i. φ_i = β_i = w_i. */
export function additiveGame(weights: readonly number[]): KnownGame {
  const w = Float64Array.from(weights);
  const n = w.length;
  return {
    name: `additive(${n})`,
    game: gameFromFunction(n, (c) => members(c).reduce((s, i) => s + w[i]!, 0)),
    shapley: w.slice(),
    banzhaf: w.slice(),
    nullPlayers: [...w.keys()].filter((i) => w[i] === 0),
  };
}

/** Unanimity game u_T: v(S) = 1 iff T ⊆ S. φ_i = 1/|T| on T; β_i = 2^{1−|T|} on T; 0 elsewhere. */
export function unanimityGame(n: number, carrier: readonly number[]): KnownGame {
  const t = carrier.length;
  if (t < 1) throw new RangeError('carrier: expected at least one player');
  const shapley = new Float64Array(n);
  const banzhaf = new Float64Array(n);
  for (const i of carrier) {
    shapley[i] = 1 / t;
    banzhaf[i] = 2 ** (1 - t);
  }
  return {
    name: `unanimity(${n}; T=${carrier.join(',')})`,
    game: gameFromFunction(n, (c) => (carrier.every((i) => has(c, i)) ? 1 : 0)),
    shapley,
    banzhaf,
    nullPlayers: [...Array(n).keys()].filter((i) => !carrier.includes(i)),
  };
}

/**
 * Symmetric voting: v(S) = 1 iff |S| ≥ q (default q = ⌊n/2⌋ + 1, simple majority).
 * φ_i = 1/n; β_i = C(n−1, q−1)/2^{n−1} (i is pivotal exactly when |S| = q − 1).
 */
export function symmetricVotingGame(n: number, quota = Math.floor(n / 2) + 1): KnownGame {
  return {
    name: `voting(${n}; q=${quota})`,
    game: gameFromFunction(n, (c) => (size(c) >= quota ? 1 : 0)),
    shapley: new Float64Array(n).fill(1 / n),
    banzhaf: new Float64Array(n).fill(binomial(n - 1, quota - 1) / 2 ** (n - 1)),
    nullPlayers: [],
  };
}

/**
 * Glove (shoes) game with k left and k right gloves: v(S) = min(|S ∩ L|, |S ∩ R|).
 * Players 0..k−1 hold left gloves, k..2k−1 right ones. By symmetry between the sides and
 * efficiency (v(N) = k), φ_i = 1/2 for all i.
 */
export function gloveGame(k: number): KnownGame {
  const n = 2 * k;
  const value = (c: Coalition) => {
    let left = 0;
    let right = 0;
    for (const i of members(c)) i < k ? left++ : right++;
    return Math.min(left, right);
  };
  return {
    name: `glove(${k}+${k})`,
    game: gameFromFunction(n, value),
    shapley: new Float64Array(n).fill(0.5),
    nullPlayers: [],
  };
}

/** The airport instance of the issue: costs 1..10, group sizes 8,12,6,14,8,9,13,10,10,10 (100 players). */
export const AIRPORT_COSTS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const;
export const AIRPORT_GROUPS = [8, 12, 6, 14, 8, 9, 13, 10, 10, 10] as const;

/**
 * Airport game (Littlechild & Owen 1973): players in group j need a runway of cost c_j
 * (c_1 ≤ … ≤ c_k); v(S) = max_{i∈S} c(i), v(∅) = 0. Shapley value of a player of group j:
 *   φ = Σ_{m ≤ j} (c_m − c_{m−1}) / (Σ_{l ≥ m} g_l),  c_0 = 0.
 */
export function airportGame(
  costs: readonly number[] = AIRPORT_COSTS,
  groups: readonly number[] = AIRPORT_GROUPS,
): KnownGame {
  if (costs.length !== groups.length) throw new RangeError('groups: expected one group size per cost');
  const playerCost: number[] = [];
  const playerGroup: number[] = [];
  groups.forEach((g, j) => {
    for (let r = 0; r < g; r++) {
      playerCost.push(costs[j]!);
      playerGroup.push(j);
    }
  });
  const n = playerCost.length;
  const groupValue = costs.map((_, j) => {
    let phi = 0;
    for (let m = 0; m <= j; m++) {
      let rest = 0;
      for (let l = m; l < groups.length; l++) rest += groups[l]!;
      phi += (costs[m]! - (m > 0 ? costs[m - 1]! : 0)) / rest;
    }
    return phi;
  });
  return {
    name: `airport(${n})`,
    game: gameFromFunction(n, (c) => members(c).reduce((mx, i) => Math.max(mx, playerCost[i]!), 0)),
    shapley: Float64Array.from(playerGroup, (j) => groupValue[j]!),
    nullPlayers: [],
  };
}

/**
 * Paper 003 Example 2 (three players A, B, C = 0, 1, 2): v(∅)=0, v(A)=0, v(B)=1, v(C)=2,
 * v(AB)=1, v(AC)=2, v(BC)=3, v(ABC)=3. A is a null player; EE(A) = 3/4 nevertheless.
 * Shapley: A = 0, B = 1, C = 2.
 */
export function paper003Example2(): KnownGame {
  const table = Float64Array.from([0, 0, 1, 1, 2, 2, 3, 3]); // index = mask, bit 0 = A
  return {
    name: 'paper003-example2',
    game: gameFromFunction(3, (c) => table[c[0]!]!),
    shapley: Float64Array.from([0, 1, 2]),
    banzhaf: Float64Array.from([0, 1, 2]),
    nullPlayers: [0],
  };
}
