/**
 * What the empty coalition is worth: v(∅) in the private scores and in the coalition games of a
 * round (papers/003 Eq. 1–5).
 *
 * - 'initialModel' (the default): v(∅) = v(M0), the utility of the round's starting model — the
 *   reading of papers/003's equations, where IOI(i) = v(M0 + U_i) − v(M0) and γ(i) sums
 *   v(M − U_j) − v(M0).
 * - 'zero': v(∅) = 0, the convention of the authors' published code (repository
 *   Delio090418/Fair-privacy-Preserving-Contribution-Scoring-, commit 428d561: `games_local.py`
 *   `local_coalicional_value_at_round` sets `d[()] = 0`, and `utils.py` `pri_ce` computes
 *   `i1i = include − null` and `ieei += leave − null` with that 0).
 *
 * The convention is applied at one place per kind of input: `utilitiesUnder` on the four private
 * utilities before any scheme is computed, `gameUnder` on a scalar coalition game before any
 * estimator sees it, `tableUnder` on a table of 2^n values. What a server or silo measured is never
 * changed: v(M0) is still evaluated and recorded; it is only not used as v(∅).
 *
 * Consequences under 'zero' (test/scoring/empty-coalition.test.ts): every exact Shapley value
 * grows by exactly v(M0)/N (the weight of the empty coalition's marginal is 1/N); LOO is
 * unchanged; IOI grows by v(M0), α (FP's weight) by v(M0)/2 and EE's weight (β + γ)/2 by
 * v(M0)/(2(N − 1)) for every silo — so EE's ranking is unchanged while both normalizers stay
 * positive, but its values are not.
 */
import { type Coalition, size } from './coalition.js';
import type { Game } from './game.js';

/** The conventions for v(∅), the default first. */
export const EMPTY_COALITIONS = ['initialModel', 'zero'] as const;

/** What v(∅) is: the starting model's utility, or 0. */
export type EmptyCoalition = (typeof EMPTY_COALITIONS)[number];

/** v(∅) = v(M0) (papers/003's equations) unless configured otherwise. */
export const DEFAULT_EMPTY_COALITION: EmptyCoalition = EMPTY_COALITIONS[0];

/**
 * Validates a convention name (undefined → the default).
 * @throws RangeError starting with `name` for anything else.
 */
export function checkEmptyCoalition(convention: unknown, name = 'emptyCoalition'): EmptyCoalition {
  if (convention === undefined) return DEFAULT_EMPTY_COALITION;
  if (typeof convention !== 'string' || !(EMPTY_COALITIONS as readonly string[]).includes(convention))
    throw new RangeError(
      `${name}: expected one of ${EMPTY_COALITIONS.map((c) => `'${c}'`).join(', ')}, got ${String(convention)}`,
    );
  return convention as EmptyCoalition;
}

/** Whether the convention replaces v(∅) by 0. */
const zero = (convention: EmptyCoalition | undefined) => checkEmptyCoalition(convention) === 'zero';

/**
 * Private utilities `{ full, empty, withOnly, without }` as the schemes see them: unchanged under
 * 'initialModel'; a copy with `empty = 0` under 'zero' (the authors' `null = acc[()] = 0`).
 * @throws RangeError for an unknown convention.
 */
export function utilitiesUnder<U extends { empty: number }>(utilities: U, convention?: EmptyCoalition): U {
  return zero(convention) ? { ...utilities, empty: 0 } : utilities;
}

/**
 * A scalar coalition game whose empty coalition is worth 0 under 'zero' (the inner game is never
 * asked for it); the game itself under 'initialModel'.
 * @throws RangeError for an unknown convention.
 */
export function gameUnder(game: Game, convention?: EmptyCoalition): Game {
  if (!zero(convention)) return game;
  return {
    n: game.n,
    async values(coalitions: readonly Coalition[]) {
      const out = new Float64Array(coalitions.length);
      const asked: Coalition[] = [];
      const at: number[] = [];
      coalitions.forEach((c, b) => {
        if (size(c) > 0) {
          asked.push(c);
          at.push(b);
        }
      });
      if (asked.length > 0) {
        const v = await game.values(asked);
        at.forEach((b, k) => {
          out[b] = v[k]!;
        });
      }
      return out;
    },
  };
}

/**
 * A table of 2^n coalition values (index = mask) under the convention: a copy with entry 0 = 0
 * under 'zero', the table itself under 'initialModel'.
 * @throws RangeError for an unknown convention.
 */
export function tableUnder(table: Float64Array, convention?: EmptyCoalition): Float64Array {
  if (!zero(convention)) return table;
  const out = table.slice();
  out[0] = 0;
  return out;
}
