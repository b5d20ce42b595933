/** Shared fixtures for the strategy tests: setups, contexts, synthetic games, a mini run loop. */
import { type Coalition, members } from '../../scoring/coalition.js';
import { type Game, gameFromFunction, memoize, type VectorGame } from '../../scoring/game.js';
import { createRng } from '../../scoring/seeded-rng.js';
import {
  type AggregateContext,
  emptyHistory,
  type FullVisibility,
  type History,
  recordRound,
  type SelectContext,
  type Strategy,
  type StrategySetup,
} from '../../src/strategies/strategy.js';

/** A setup of n silos with the given examples and label histograms (default: 100 each, uniform). */
export function makeSetup(
  n: number,
  o: { classes?: number; rounds?: number; seed?: number; examples?: number[]; histograms?: number[][] } = {},
): StrategySetup {
  const C = o.classes ?? 2;
  return {
    numSilos: n,
    numClasses: C,
    rounds: o.rounds ?? 10,
    seed: o.seed ?? 1,
    silos: Array.from({ length: n }, (_, i) => ({
      examples: o.examples?.[i] ?? 100,
      labelHistogram: o.histograms?.[i] ?? new Array(C).fill(100 / C),
    })),
  };
}

export function selectContext(
  setup: StrategySetup,
  round: number,
  seed: number,
  history?: History,
): SelectContext {
  return { round, setup, history: history ?? emptyHistory(setup.numSilos), rng: createRng(seed) };
}

export function aggregateContext(
  setup: StrategySetup,
  round: number,
  selected: number[],
  seed: number,
  o: { history?: History; full?: FullVisibility } = {},
): AggregateContext {
  return {
    round,
    setup,
    selected,
    history: o.history ?? emptyHistory(setup.numSilos),
    rng: createRng(seed),
    ...(o.full ? { full: o.full } : {}),
  };
}

/** Additive game over the selected silos: v(S) = Σ_{k∈S} w[selected[k]] (Shapley value = w). */
export function additiveOver(selected: readonly number[], w: readonly number[]): Game {
  return gameFromFunction(selected.length, (c: Coalition) =>
    members(c).reduce((s, k) => s + w[selected[k]!]!, 0),
  );
}

/** Additive per-class game: v^c(S) = base[c] + Σ_{k∈S} a[selected[k]][c] (class-wise Shapley = a). */
export function additiveClassGame(
  selected: readonly number[],
  base: readonly number[],
  a: readonly number[][],
): VectorGame {
  const C = base.length;
  return {
    n: selected.length,
    dims: C,
    async values(coalitions) {
      const out = new Float64Array(coalitions.length * C);
      coalitions.forEach((c, b) => {
        for (let d = 0; d < C; d++) out[b * C + d] = base[d]!;
        for (const k of members(c)) for (let d = 0; d < C; d++) out[b * C + d]! += a[selected[k]!]![d]!;
      });
      return out;
    },
  };
}

/** Full visibility with the given games and zero updates. */
export function fullFor(
  selected: readonly number[],
  game: Game,
  perClass: VectorGame,
  dims = 4,
): FullVisibility {
  return {
    updates: selected.map(() => new Float32Array(dims)),
    game: memoize(game),
    perClass,
  };
}

/** Drives a strategy like the engine does, for `rounds` rounds; returns selections and weights. */
export async function run<S>(
  strategy: Strategy<S>,
  setup: StrategySetup,
  rounds: number,
  seed: number,
  full?: (selected: number[]) => FullVisibility,
): Promise<{ selections: number[][]; weights: Float64Array[]; state: S; history: History }> {
  let state = strategy.init(setup);
  let history = emptyHistory(setup.numSilos);
  const selections: number[][] = [];
  const weights: Float64Array[] = [];
  for (let r = 1; r <= rounds; r++) {
    const selected = strategy.select(state, selectContext(setup, r, seed * 7919 + r, history));
    const agg = await strategy.aggregationWeights(
      state,
      aggregateContext(setup, r, selected, seed * 104729 + r, {
        history,
        ...(full ? { full: full(selected) } : {}),
      }),
    );
    state = agg.state;
    const outcome = { round: r, selected, scores: {} };
    history = recordRound(history, outcome);
    state = strategy.observe(state, outcome);
    selections.push(selected);
    weights.push(agg.weights);
  }
  return { selections, weights, state, history };
}

/**
 * Hoeffding: a frequency over `trials` Bernoulli(p) draws is within this of p except with probability
 * `delta` (two-sided): √(ln(2/δ)/(2·trials)).
 */
export function hoeffding(trials: number, delta: number): number {
  return Math.sqrt(Math.log(2 / delta) / (2 * trials));
}

/**
 * Exact inclusion probabilities of successive sampling (draw one index at a time ∝ the remaining
 * weights, k times), by recursion over the draws (small n only).
 */
export function inclusionProbabilities(weights: readonly number[], k: number): number[] {
  const n = weights.length;
  const incl = new Array<number>(n).fill(0);
  const rec = (taken: number[], prob: number) => {
    if (taken.length === k) {
      for (const i of taken) incl[i]! += prob;
      return;
    }
    const rest = weights.reduce((s, w, i) => (taken.includes(i) ? s : s + w), 0);
    for (let i = 0; i < n; i++) if (!taken.includes(i)) rec([...taken, i], (prob * weights[i]!) / rest);
  };
  rec([], 1);
  return incl;
}
