/**
 * Reports-only consortia (`secureAggregation: "external"`): training and secure aggregation run
 * elsewhere (Flower SecAgg+, NVIDIA FLARE, …); fedscore runs no masking stages and only scores.
 *
 * Lifecycle of round r (docs/networked.md, "Reports-only consortia"):
 *   1. the operator posts v(M) and v(M0) of round r ({@link ExternalRounds.postUtilities}), which
 *      opens it directly in `reporting`, every member a survivor, with the reporting deadline of
 *      the consortium (`deadlines.reporting`);
 *   2. each silo posts its signed report of v(M0 + U_i) and v(M − U_i) on the ordinary report
 *      route (./reports.ts: signatures, range, replay and membership checks unchanged);
 *   3. the round is scored as soon as every member has reported (./scoring.ts `maybeScore`), or at
 *      the reporting deadline — or when the operator closes it early (…/advance) — from the
 *      reports that arrived (at least two; otherwise it is closed without scores).
 * Scores, the audit and the dashboard then treat it as any other round. Round numbers run 1, 2, …
 * and a round opens only when the previous one is over, as for fedscore's own rounds.
 */

import { type Consortium, isTerminal, type Round } from '../../consortium/schemas.js';
import { ServiceError } from '../errors.js';
import type { Consortia } from './consortia.js';
import { checkUtilities } from './consortia.js';
import { isUniqueViolation, type ServiceContext } from './context.js';
import { type RoundRow, type RoundRows, view } from './round-rows.js';
import type { Rounds } from './rounds.js';

/** Whether `c` is a reports-only consortium. */
export const isExternal = (c: Consortium): boolean => c.secureAggregation === 'external';

/**
 * Refuses what a reports-only consortium does not run (masking stages, their inbox and aggregate,
 * rounds opened without utilities).
 * @throws ServiceError EXTERNAL_AGGREGATION when `c` is reports-only.
 */
export function refuseExternal(c: Consortium, what: string): void {
  if (isExternal(c))
    throw new ServiceError(
      'FEDSCORE_ERR_EXTERNAL_AGGREGATION',
      `${c.id} is reports-only (secureAggregation: external): ${what}`,
    );
}

/** Opening the rounds of reports-only consortia. */
export class ExternalRounds {
  constructor(
    private readonly ctx: ServiceContext,
    private readonly consortia: Consortia,
    private readonly rows: RoundRows,
    private readonly rounds: Rounds,
  ) {}

  /**
   * The operator's v(M) and v(M0) of round `round`: opens it in `reporting` when it is the next
   * round (`created`); re-posting the same values to an existing round is an idempotent success
   * (a retry after a lost answer).
   * @throws ServiceError CONSORTIUM_NOT_FOUND, NOT_EXTERNAL, UTILITY_OUT_OF_RANGE, ROUND_NUMBER
   *   (not the next round), ROUND_OPEN (the previous round is not over), UTILITIES_SET (different
   *   values already posted).
   */
  async postUtilities(
    id: string,
    round: number,
    full: number,
    empty: number,
  ): Promise<{ created: boolean; round: Round }> {
    const { consortium } = await this.consortia.load(id);
    if (!isExternal(consortium))
      throw new ServiceError(
        'FEDSCORE_ERR_NOT_EXTERNAL',
        `${id} runs fedscore's secure aggregation; set a round's utilities with PUT …/rounds/${round}/utilities`,
      );
    checkUtilities(consortium, [
      ['v(M)', full],
      ['v(M0)', empty],
    ]);
    const last = await this.rows.latest(id);
    const next = (last?.round ?? 0) + 1;
    if (round < next) {
      const row = await this.rows.find(this.ctx.db, id, round);
      if (row.full_utility === full && row.empty_utility === empty)
        return { created: false, round: await this.rounds.get(id, round) };
      throw new ServiceError(
        'FEDSCORE_ERR_UTILITIES_SET',
        `round ${round} has v(M) = ${row.full_utility}, v(M0) = ${row.empty_utility}`,
      );
    }
    if (round > next)
      throw new ServiceError(
        'FEDSCORE_ERR_ROUND_NUMBER',
        `round ${round}: the next round of ${id} is ${next}`,
      );
    if (last && !isTerminal(last.stage)) {
      const now = await this.rounds.tickRow(id, last.round);
      if (!isTerminal(now.stage))
        throw new ServiceError(
          'FEDSCORE_ERR_ROUND_OPEN',
          `round ${last.round} is ${now.stage} until its deadline (or POST …/rounds/${last.round}/advance)`,
        );
    }
    const now = this.ctx.now();
    const row: RoundRow = {
      consortium: id,
      round,
      stage: 'reporting',
      deadline: now + consortium.deadlines.reporting,
      base_version: 0, // no model is kept for a reports-only consortium
      sets: '[]',
      survivors: JSON.stringify(consortium.participants.map((_, i) => i)),
      dropped: '[]',
      total_weight: null,
      full_utility: full,
      empty_utility: empty,
      scores: null,
      error: null,
      faults: null,
      selected: null,
      opened_at: now,
    };
    try {
      await this.rows.insert(row);
    } catch (e) {
      // Opened concurrently (a retry racing its original): answered as a retry.
      if (isUniqueViolation(e)) return this.postUtilities(id, round, full, empty);
      throw e;
    }
    return { created: true, round: view(row) };
  }
}
