/**
 * Owen sampling with η-truncation under budget parity (papers/004 §3.2, Alg. 1, §4.1).
 *
 * Owen's multilinear extension (papers/004 Eq. 6–7):
 *   φ_j = ∫₀¹ e_j(q) dq,  e_j(q) = E[v(S ∪ {j}) − v(S)],  S ∌ j with each other player in S
 *   independently with probability q.
 * Discretised at Q inclusion levels (Eq. 10–11): φ̂_j = (1/Q) Σ_levels ê_j(q), ê_j(q) the mean
 * over the masks drawn at level q.
 *
 * One mask S ~ Bernoulli(q)ⁿ serves every player with a present/absent twin pair (§3.2, "for
 * each fixed q we generate two antithetic twins: one coalition where a given client is present
 * and a matching coalition where it is absent"): for j ∉ S the pair (S, S ∪ {j}), for j ∈ S the
 * pair (S ∖ {j}, S), so S ∖ {j} (resp. S) is a Bernoulli(q) sample of the others, as Eq. 7 asks.
 * One mask costs at most n + 1 evaluations (v(S) and one twin per player), all in one batch.
 *
 * η-truncation (Alg. 1 lines 8, 14–16): with the utility normalised so v(∅) = 0, v(N) = 1, the
 * optimistic remainder of a coalition S is Δ_left = (v(N) − v(S))/(v(N) − v(∅)). When
 * |Δ_left| < η, the absent players' twins S ∪ {j} are not evaluated and their increments are
 * taken as 0 (for a monotone game each lies in [0, η·|v(N) − v(∅)|), so the bias per player
 * is at most that; the paper's claim of exact unbiasedness, §3.3 Step 5, holds only when the
 * skipped increments are exactly 0). Present players' twins are always evaluated.
 *
 * Budget parity (§4.1): every method gets N×M evaluations (`budgetParity`); the budget is split
 * evenly over the Q levels and evaluations a level saves by truncation (or by memo hits) are
 * re-spent on fresh masks at that level ("any saved evaluations are immediately re-spent on
 * fresh walks", Alg. 1 line 16), what a level leaves over goes to the next one.
 *
 * Deviations from the literal Alg. 1, on purpose: Alg. 1 credits player j, when j ∈ S, with its
 * marginal to its predecessors among S in a random order, whose expectation is not e_j(q) (on an
 * additive game it returns (Q+1)/(2Q)·w_j); we use the twin pairs of Eq. 7/11 instead, so the
 * random visiting order of line 6 is not needed. The paper's levels q = i/Q (i = 1..Q, grid
 * 'right') are available; the default is the midpoint rule q = (i − ½)/Q, whose quadrature
 * error is O(1/Q²) instead of O(1/Q).
 */
import { Budget } from './_budget.js';
import { checkGame, checkNonNegative, checkPositiveInteger, checkRng } from './_checks.js';
import { RunningMoments } from './_stats.js';
import {
  type Coalition,
  emptyCoalition,
  grandCoalition,
  has,
  withoutPlayer,
  withPlayer,
} from './coalition.js';
import type { Game } from './game.js';
import type { SampledEstimate } from './sampled-estimate.js';
import type { Rng } from './seeded-rng.js';
import { bernoulliSubsets } from './subset-sampler.js';

/**
 * The common evaluation budget N×M of papers/004 §4.1 (N players, M samples per method).
 * Throws RangeError when n or m is not a positive integer.
 */
export function budgetParity(n: number, m: number): number {
  checkPositiveInteger('n', n);
  checkPositiveInteger('m', m);
  return n * m;
}

/** Options of `owenShapley`. */
export interface OwenOptions {
  /** Maximum distinct coalition evaluations (v(∅), v(N) included); at least 2 + Q·(n + 1). */
  budget: number;
  /** Seeded random source (see createRng). */
  rng: Rng;
  /** Q, the number of inclusion levels (default 2, the paper's setting, §4.1). */
  levels?: number;
  /** Inclusion levels: 'midpoint' q = (i − ½)/Q (default) or 'right' q = i/Q (papers/004 §3.2). */
  grid?: 'midpoint' | 'right';
  /** η, truncation tolerance on the normalised remainder (default 0: no truncation). */
  eta?: number;
  /** Cap on masks over all levels (default max(1000, budget)); masks of known coalitions are free. */
  maxSamples?: number;
}

/** An Owen estimate: a sampled estimate plus the levels used and the masks drawn at each. */
export interface OwenEstimate extends SampledEstimate {
  /** The inclusion probabilities q, in the order they were sampled. */
  levels: Float64Array;
  /** Masks drawn at each level (their sum is `samples`). */
  levelSamples: number[];
}

/**
 * Shapley values by Owen sampling with η-truncation (papers/004 Alg. 1, Eq. 6–11).
 * stderr combines the levels' standard errors: √(Σ_q s_q²/k_q)/Q.
 * Throws TypeError when game, options or rng are malformed; RangeError when budget is not an
 * integer ≥ 2 + Q·(n + 1), levels not a positive integer, eta negative, grid unknown.
 */
export async function owenShapley(game: Game, options: OwenOptions): Promise<OwenEstimate> {
  checkGame(game);
  if (typeof options !== 'object' || options === null) throw new TypeError('options: expected an object');
  checkRng(options.rng);
  const Q = options.levels ?? 2;
  checkPositiveInteger('levels', Q);
  const eta = options.eta ?? 0;
  checkNonNegative('eta', eta);
  const grid = options.grid ?? 'midpoint';
  if (grid !== 'midpoint' && grid !== 'right')
    throw new RangeError(`grid: expected 'midpoint' or 'right', got ${String(grid)}`);
  const { n } = game;
  checkPositiveInteger('budget', options.budget);
  if (options.budget < 2 + Q * (n + 1))
    throw new RangeError(
      `budget: expected at least 2 + Q·(n + 1) = ${2 + Q * (n + 1)}, got ${options.budget}`,
    );
  const maxSamples = options.maxSamples ?? Math.max(1000, options.budget);
  checkPositiveInteger('maxSamples', maxSamples);

  const budget = new Budget(game, options.budget);
  const ends = (await budget.values([emptyCoalition(n), grandCoalition(n)]))!;
  const v0 = ends[0]!;
  const vN = ends[1]!;
  const scale = Math.abs(vN - v0);
  const levels = Float64Array.from({ length: Q }, (_, i) =>
    grid === 'midpoint' ? (i + 0.5) / Q : (i + 1) / Q,
  );
  const perLevel: RunningMoments[] = [];
  const levelSamples: number[] = [];

  for (let l = 0; l < Q; l++) {
    const q = levels[l]!;
    const moments = new RunningMoments(n);
    const levelEnd = budget.spent + Math.floor(budget.remaining / (Q - l)); // parity share
    const cap = Math.floor(maxSamples / Q) + (l < maxSamples % Q ? 1 : 0);
    const masks = bernoulliSubsets(q)(n, options.rng); // Alg. 1 line 8
    let k = 0;
    while (k < cap) {
      const S = masks.next().value!;
      const twins: Coalition[] = [];
      for (let j = 0; j < n; j++) twins.push(has(S, j) ? withoutPlayer(S, j) : withPlayer(S, j));
      // A mask is atomic: it is drawn only when its untruncated cost fits in the level's share.
      if (budget.cost([S, ...twins]) > levelEnd - budget.spent) break;
      const h = new Float64Array(n);
      if (eta === 0) {
        const v = (await budget.values([S, ...twins]))!;
        for (let j = 0; j < n; j++) h[j] = has(S, j) ? v[0]! - v[j + 1]! : v[j + 1]! - v[0]!;
      } else {
        const vS = (await budget.values([S]))![0]!;
        const truncated = Math.abs(vN - vS) < eta * scale; // Alg. 1 line 15, Δ_left < η
        const ask = [...Array(n).keys()].filter((j) => has(S, j) || !truncated);
        const v = (await budget.values(ask.map((j) => twins[j]!)))!;
        ask.forEach((j, b) => {
          h[j] = has(S, j) ? vS - v[b]! : v[b]! - vS;
        });
      }
      moments.addAll(h);
      k++;
    }
    perLevel.push(moments);
    levelSamples.push(k);
  }

  const values = new Float64Array(n);
  const stderr = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let mean = 0;
    let v = 0;
    for (const m of perLevel) {
      mean += m.mean[i]!;
      v += m.variance(i) / m.count[i]!;
    }
    values[i] = mean / Q;
    stderr[i] = Math.sqrt(v) / Q;
  }
  return {
    values,
    stderr,
    evaluations: budget.evaluations,
    samples: levelSamples.reduce((a, b) => a + b, 0),
    levels,
    levelSamples,
  };
}
