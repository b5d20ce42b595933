/**
 * MR-SV (Song et al. 2019): the exact Shapley value of every round's coalition game (papers/003
 * Eq. 1, 2^k evaluations per round); after the run the rounds' tables are folded by
 * `multiRoundShapley`. The per-round values are recorded as they are.
 */
import { coalitionTable } from '../../scoring/game.js';
import { multiRoundShapley } from '../../scoring/multi-round.js';
import { exactShapley } from '../../scoring/shapley.js';
import { options } from './_schema.js';
import { defineEstimator } from './estimator.js';

/** Largest round for which the exact per-round Shapley value (MR-SV, TMR) is computed. */
export const MAX_EXACT_PLAYERS = 20;

export const mrsv = defineEstimator({
  name: 'mrsv',
  family: 'shapley',
  title: 'exact per-round Shapley, folded over rounds (MR-SV; Song et al. 2019)',
  schema: options({}),
  // Historical value, frozen for reproducibility: the stream the harness once derived from the
  // name (length 4, 'm' = 109). MR-SV draws no random numbers; the stream stays reserved.
  stream: [4, 109],
  compare: 'cumulative',
  byDefault: true,
  reference: true,
  async run({ game, participants, round }) {
    const k = participants.length;
    if (k > MAX_EXACT_PLAYERS)
      throw new RangeError(
        `comparison.estimators.mrsv: exact per-round Shapley needs at most ${MAX_EXACT_PLAYERS} participants per round, round ${round} has ${k}`,
      );
    const table = await coalitionTable(game);
    return {
      values: exactShapley(k, table),
      evaluations: game.evaluations,
      table: { players: participants, table },
    };
  },
  fold: async ({ n, tables }) => (await multiRoundShapley(tables, { n })).values,
});
