/**
 * Internal: how many silos a round takes, uniform and weighted sampling without replacement, a
 * stable softmax, and the checks shared by the strategies. Never re-exported.
 */

import type { Rng } from '../../scoring/seeded-rng.js';
import type { AggregateContext, FullVisibility, SelectContext, StrategySetup } from './strategy.js';

/** How many silos take part per round: a count, or a fraction of the federation. */
export interface RoundSize {
  /** Silos per round (overrides `fraction`). */
  clientsPerRound?: number;
  /** Fraction of the silos per round, in (0, 1]. */
  fraction: number;
}

/**
 * k for a federation of n silos: `clientsPerRound` capped at n, or round(fraction·n) but at least
 * min(2, n) (the private scores need two survivors) and at most n.
 */
export function roundSize(n: number, size: RoundSize): number {
  if (size.clientsPerRound !== undefined) return Math.min(n, size.clientsPerRound);
  return Math.min(n, Math.max(Math.min(2, n), Math.round(size.fraction * n)));
}

/** k distinct silos of 0..n−1 uniformly at random, increasing (partial Fisher–Yates). */
export function uniformSample(rng: Rng, n: number, k: number): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let j = 0; j < k; j++) {
    const r = j + Math.floor(rng.next() * (n - j));
    const t = a[j]!;
    a[j] = a[r]!;
    a[r] = t;
  }
  return a.slice(0, k).sort((x, y) => x - y);
}

/**
 * k distinct indices drawn with probability proportional to `weights`, without replacement, by
 * Efraimidis & Spirakis (2006) keys u_i^{1/w_i} (kept as ln(u_i)/w_i), the largest k winning. This is
 * papers/001 Alg. 1 lines 9–17 (keys k_i = u_i^{1/Proba_i}, replace the smallest kept key), and is
 * equivalent to drawing one index at a time proportional to the remaining weights. Indices of weight
 * 0 are taken only when fewer than k have a positive weight, uniformly among themselves (our rule;
 * the papers do not say). One uniform draw per index, in index order. Returns increasing indices.
 */
export function weightedSample(rng: Rng, weights: ArrayLike<number>, k: number): number[] {
  const n = weights.length;
  const keys: { i: number; key: number; tie: number }[] = [];
  for (let i = 0; i < n; i++) {
    const u = 1 - rng.next(); // (0, 1]
    const w = weights[i]!;
    keys.push(w > 0 ? { i, key: Math.log(u) / w, tie: 0 } : { i, key: Number.NEGATIVE_INFINITY, tie: u });
  }
  keys.sort((a, b) => (a.key !== b.key ? b.key - a.key : b.tie - a.tie || a.i - b.i));
  return keys
    .slice(0, k)
    .map((e) => e.i)
    .sort((x, y) => x - y);
}

/** softmax(x)_i = exp(x_i − max x) / Σ_j exp(x_j − max x). */
export function softmax(x: ArrayLike<number>): Float64Array {
  const out = new Float64Array(x.length);
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < x.length; i++) max = Math.max(max, x[i]!);
  let total = 0;
  for (let i = 0; i < x.length; i++) {
    out[i] = Math.exp(x[i]! - max);
    total += out[i]!;
  }
  for (let i = 0; i < x.length; i++) out[i]! /= total;
  return out;
}

/** A 32-bit seed drawn from the generator (for scoring/ functions that take a seed). */
export function seedFrom(rng: Rng): number {
  return Math.floor(rng.next() * 4294967296) >>> 0;
}

function checkObject(name: string, x: unknown): void {
  if (typeof x !== 'object' || x === null) throw new TypeError(`${name}: expected an object`);
}

/** Input checks of `init`. */
export function checkSetup(setup: StrategySetup): void {
  checkObject('setup', setup);
  const { numSilos, numClasses, rounds } = setup;
  if (!Number.isInteger(numSilos) || numSilos < 1)
    throw new RangeError(`setup.numSilos: expected a positive integer, got ${numSilos}`);
  if (!Number.isInteger(numClasses) || numClasses < 1)
    throw new RangeError(`setup.numClasses: expected a positive integer, got ${numClasses}`);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new RangeError(`setup.rounds: expected a positive integer, got ${rounds}`);
  if (!Number.isFinite(setup.seed))
    throw new RangeError(`setup.seed: expected a finite number, got ${setup.seed}`);
  if (!Array.isArray(setup.silos) || setup.silos.length !== numSilos)
    throw new RangeError(`setup.silos: expected ${numSilos} entries`);
  setup.silos.forEach((s, i) => {
    if (!(Number.isFinite(s.examples) && s.examples >= 0))
      throw new RangeError(`setup.silos[${i}].examples: expected a finite number ≥ 0, got ${s.examples}`);
    if (s.labelHistogram?.length !== numClasses)
      throw new RangeError(`setup.silos[${i}].labelHistogram: expected ${numClasses} class counts`);
  });
}

/** Input checks of `select`. */
export function checkSelectContext(ctx: SelectContext): void {
  checkObject('ctx', ctx);
  if (!Number.isInteger(ctx.round) || ctx.round < 1)
    throw new RangeError(`ctx.round: expected a positive integer, got ${ctx.round}`);
  if (typeof ctx.rng?.next !== 'function') throw new TypeError('ctx.rng: expected an Rng');
  checkObject('ctx.history', ctx.history);
  if (ctx.history.participation.length !== ctx.setup.numSilos)
    throw new RangeError(`ctx.history.participation: expected ${ctx.setup.numSilos} counts`);
}

/** Input checks of `aggregationWeights`. */
export function checkAggregateContext(ctx: AggregateContext): void {
  checkSelectContext(ctx);
  if (!Array.isArray(ctx.selected) || ctx.selected.length < 1)
    throw new RangeError('ctx.selected: expected at least one silo');
  const seen = new Set<number>();
  for (const s of ctx.selected) {
    if (!Number.isInteger(s) || s < 0 || s >= ctx.setup.numSilos)
      throw new RangeError(`ctx.selected: ${s} is not a silo in [0, ${ctx.setup.numSilos})`);
    if (seen.has(s)) throw new RangeError(`ctx.selected: silo ${s} appears twice`);
    seen.add(s);
  }
}

/** `ctx.full`, checked against the selection; throws TypeError when the run is private. */
export function requireFull(name: string, ctx: AggregateContext): FullVisibility {
  const full = ctx.full;
  if (full === undefined)
    throw new TypeError(`ctx.full: '${name}' needs full visibility (updates and the coalition game)`);
  const k = ctx.selected.length;
  if (!Array.isArray(full.updates) || full.updates.length !== k)
    throw new RangeError(`ctx.full.updates: expected ${k} updates, one per selected silo`);
  if (full.game?.n !== k) throw new RangeError(`ctx.full.game: expected a game over ${k} players`);
  if (full.perClass?.n !== k) throw new RangeError(`ctx.full.perClass: expected a game over ${k} players`);
  return full;
}
