/**
 * The leaderboard's numbers, from recorded rounds of private utilities: per silo the headline
 * score (the `payout` weight of ./payout.ts summed over the scored rounds, mean over seeds), its
 * `share` of the consortium's reward, a 95 % bootstrap `interval`, the `rank` and the `rankRange`
 * a resampling of the rounds leaves it (issue 37). Pure: a library user gets the table fedscore
 * prints (src/records/leaderboard.ts adds names, every scheme's column and flags).
 *
 * - share_i = max(0, h_i) / Σ_j max(0, h_j) over the silos ever selected (Σ = 1); when no
 *   headline is positive, equal shares. A silo never selected has share null.
 * - interval: percentile bootstrap over rounds (`resamples` replicates, seeded: the same input
 *   gives the same interval): each replicate draws each run's scored rounds with replacement,
 *   sums the headline, and averages over runs; [2.5 %, 97.5 %] of the replicates.
 * - rankRange: [best, worst] of the silo's rank over the middle 95 % of the replicates, widened to
 *   contain `rank`; two silos whose ranges overlap are a near-tie, shown "2–3" (`rankLabel`).
 */
import { type EmptyCoalition, utilitiesUnder } from './empty-coalition.js';
import { schemeWeights } from './private.js';
import { createRng, randomInt } from './seeded-rng.js';

/** The scheme whose weight is the headline score (./payout.ts). */
export const HEADLINE_SCHEME = 'payout';

/** One recorded round: utilities with null for a silo without a report. */
export interface HeadlineRound {
  full: number;
  empty: number;
  withOnly: readonly (number | null | undefined)[];
  without: readonly (number | null | undefined)[];
  /** The silos scored (default: every silo that reported). A silo not in it has no headline. */
  scored?: readonly number[];
}

/** The leaderboard's numbers for one silo. */
export interface HeadlineEntry {
  silo: number;
  /** The headline weight summed over the scored rounds (mean over seeds). */
  headline: number;
  /** The headline weight of the last scored round (null when the silo was not scored in it). */
  lastRound: number | null;
  /** Fraction of the reward (≥ 0; Σ = 1 over the silos ever selected); null: never selected. */
  share: number | null;
  /** 95 % percentile-bootstrap interval of `headline` over rounds. */
  interval: [number, number];
  /** 1 = highest headline; equal headlines share a rank. */
  rank: number;
  /** [best, worst] rank over the middle 95 % of the bootstrap replicates (contains `rank`). */
  rankRange: [number, number];
}

/** Options of {@link headlineLeaderboard}. */
export interface HeadlineOptions {
  /** v(∅) convention (scoring/empty-coalition.ts); default 'initialModel'. */
  emptyCoalition?: EmptyCoalition;
  /** Whether each silo was ever selected (default: all); a silo never selected gets share null. */
  selected?: readonly boolean[];
  /** Bootstrap replicates (default 1000). */
  resamples?: number;
  /** Bootstrap seed (default 0). */
  seed?: number;
}

const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/**
 * The headline weight of every silo in one round over the silos scored and reporting (null for
 * the others; all null when fewer than 2).
 */
export function headlineOfRound(
  rd: HeadlineRound,
  n: number,
  emptyCoalition?: EmptyCoalition,
): (number | null)[] {
  const out = new Array<number | null>(n).fill(null);
  const reporting = (i: number) => finite(rd.withOnly[i]) && finite(rd.without[i]);
  const silos = (rd.scored ?? Array.from({ length: n }, (_, i) => i)).filter((i) => i < n && reporting(i));
  if (silos.length < 2) return out;
  const u = utilitiesUnder(
    {
      full: rd.full,
      empty: rd.empty,
      withOnly: silos.map((i) => rd.withOnly[i] as number),
      without: silos.map((i) => rd.without[i] as number),
    },
    emptyCoalition,
  );
  const w = schemeWeights(HEADLINE_SCHEME, u);
  silos.forEach((g, q) => {
    out[g] = w[q]!;
  });
  return out;
}

/** Competition ranks (1, 2, 2, 4) of values, highest first. */
export function competitionRanks(values: readonly number[]): number[] {
  return values.map((v) => 1 + values.filter((x) => x > v).length);
}

/** Shares: max(0, h)/Σ max(0, h) over the eligible silos; equal when none is positive. */
export function sharesOf(headline: readonly number[], eligible: readonly boolean[]): (number | null)[] {
  const pos = headline.map((h, i) => (eligible[i] ? Math.max(0, h) : 0));
  const total = pos.reduce((a, b) => a + b, 0);
  const count = eligible.filter(Boolean).length;
  return headline.map((_, i) => (!eligible[i] ? null : total > 0 ? pos[i]! / total : 1 / count));
}

/** The q-quantile of sorted values (linear interpolation). */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const p = q * (sorted.length - 1);
  const lo = Math.floor(p);
  const hi = Math.ceil(p);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (p - lo);
}

/** "2–3" for a near-tie, "2" for a rank that no resampling changes. */
export function rankLabel(e: { rank: number; rankRange?: readonly [number, number] | null }): string {
  const r = e.rankRange;
  return r && r[0] !== r[1] ? `${r[0]}–${r[1]}` : String(e.rank);
}

/**
 * The leaderboard's numbers for n silos (see the module comment), in silo order.
 * @param n the number of silos (≥ 1).
 * @param runs one list of rounds per seed.
 * @throws RangeError naming `n` or `options.resamples` when out of range.
 */
export function headlineLeaderboard(
  n: number,
  runs: readonly (readonly HeadlineRound[])[],
  options: HeadlineOptions = {},
): HeadlineEntry[] {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`n: expected a positive integer, got ${n}`);
  const resamples = options.resamples ?? 1000;
  if (!Number.isInteger(resamples) || resamples < 1)
    throw new RangeError(`options.resamples: expected a positive integer, got ${resamples}`);
  const perRun = runs.map((rounds) =>
    rounds
      .map((rd) => headlineOfRound(rd, n, options.emptyCoalition))
      .filter((h) => h.some((v) => v !== null)),
  );
  const sumOf = (rounds: readonly (number | null)[][], pick: (k: number) => number, count: number) => {
    const total = new Array<number>(n).fill(0);
    for (let k = 0; k < count; k++) {
      const h = rounds[pick(k)]!;
      for (let i = 0; i < n; i++) total[i]! += h[i] ?? 0;
    }
    return total;
  };
  const meanOverRuns = (totals: number[][]) =>
    Array.from({ length: n }, (_, i) =>
      totals.length === 0 ? 0 : totals.reduce((s, t) => s + t[i]!, 0) / totals.length,
    );
  const headline = meanOverRuns(perRun.map((rounds) => sumOf(rounds, (k) => k, rounds.length)));
  const lastRound = Array.from({ length: n }, (_, i) => {
    const lasts = perRun.flatMap((rounds) => {
      const v = rounds.at(-1)?.[i];
      return v === null || v === undefined ? [] : [v];
    });
    return lasts.length === perRun.length && lasts.length > 0
      ? lasts.reduce((a, b) => a + b, 0) / lasts.length
      : null;
  });
  const rank = competitionRanks(headline);
  const rng = createRng(options.seed ?? 0);
  const reps: number[][] = [];
  const repRanks: number[][] = [];
  for (let b = 0; b < resamples; b++) {
    const h = meanOverRuns(
      perRun.map((rounds) => sumOf(rounds, () => randomInt(rng, rounds.length), rounds.length)),
    );
    reps.push(h);
    repRanks.push(competitionRanks(h));
  }
  const share = sharesOf(headline, options.selected ?? new Array<boolean>(n).fill(true));
  return Array.from({ length: n }, (_, i) => {
    const hs = reps.map((h) => h[i]!).sort((a, b) => a - b);
    const rs = repRanks.map((r) => r[i]!).sort((a, b) => a - b);
    const best = Math.min(rank[i]!, Math.round(quantile(rs, 0.025)));
    const worst = Math.max(rank[i]!, Math.round(quantile(rs, 0.975)));
    return {
      silo: i,
      headline: headline[i]!,
      lastRound: lastRound[i]!,
      share: share[i]!,
      interval: [quantile(hs, 0.025), quantile(hs, 0.975)] as [number, number],
      rank: rank[i]!,
      rankRange: [best, worst] as [number, number],
    };
  });
}
