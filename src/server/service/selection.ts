/**
 * The round's selection by the consortium's strategy (src/strategies/networked-plan.ts): computed from
 * public information only — the strategy, the public seed, the number of silos and the published
 * rounds before it (their selections, survivors and private scores) — when the round opens, and
 * stored with it (`rounds.selected`). Every silo computes the same selection; the service refuses
 * secure-aggregation messages from a silo not selected (./secagg.ts). A consortium without a
 * strategy takes every silo (null).
 */

import { DEFAULT_SELECTION_SEED } from '../../consortium/defaults.js';
import {
  networkedStrategy,
  type PublishedRound,
  planRound,
  publicSetup,
} from '../../strategies/networked-plan.js';
import { type LoadedConsortium, strategyConfigOf } from './consortia.js';
import { type RoundRow, scoresOf, selectedOf } from './round-rows.js';

/** A stored round as the strategies see it: its selection, survivors and private scores. */
export function publishedOf(row: RoundRow): PublishedRound {
  return {
    round: row.round,
    selected: selectedOf(row),
    survivors: row.survivors === null ? null : (JSON.parse(row.survivors) as number[]),
    scores: scoresOf(row)?.schemes ?? null,
  };
}

/**
 * The silos of round `round` of a consortium, given its earlier rounds (all over); null when the
 * consortium has no strategy (every silo takes part).
 */
export async function selectionOf(
  loaded: LoadedConsortium,
  round: number,
  earlier: readonly RoundRow[],
): Promise<number[] | null> {
  const c = loaded.consortium;
  if (c.strategy === undefined) return null;
  const strategy = networkedStrategy(strategyConfigOf(c));
  const seed = c.seed ?? DEFAULT_SELECTION_SEED;
  const setup = publicSetup(c.participants.length, c.rounds ?? Math.max(round, 1), seed);
  const plan = await planRound({
    strategy,
    setup,
    seed,
    round,
    published: earlier.filter((r) => r.round < round).map(publishedOf),
    weights: false,
  });
  return [...plan.selected];
}
