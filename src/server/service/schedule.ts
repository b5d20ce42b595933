/**
 * The operator's schedule (`rounds: R` in a consortium's settings): the service runs rounds 1 … R
 * by itself. Each pass ({@link Schedule.tick}, every second in `fedscore serve`) looks only at the
 * stored state, so a restarted service resumes where the store is:
 *
 *  - no round yet: round 1 opens once the initial model is set (PUT …/model);
 *  - the latest round running: its stage closes when its deadline has passed (a silo that missed
 *    it is a dropout, as for any request on the round, ./rounds.ts) — without the pass, a round no
 *    silo asks about would wait forever;
 *  - the latest round over — scored, or closed or aborted — and below R: round r + 1 opens from
 *    the latest model. An aborted or closed round counts as one of the R: the schedule bounds the
 *    rounds the consortium spends, and a failure that repeats (too few silos) must not loop forever;
 *    the model is unchanged by such a round, so the next starts from the same one.
 *
 * Several service replicas on one database may run passes at once: a round is opened by inserting
 * its row, whose primary key (consortium, round) lets one insert win; the others get ROUND_OPEN and
 * skip (./rounds.ts). Each opening and each end is logged once, by the process that made it
 * (RoundEvent, ./context.ts).
 */

import { isTerminal } from '../../consortium/schemas.js';
import { ServiceError } from '../errors.js';
import type { Consortia } from './consortia.js';
import type { ServiceContext } from './context.js';
import type { Models } from './models.js';
import type { RoundRows } from './round-rows.js';
import type { Rounds } from './rounds.js';

/** The schedule of every consortium that has one. */
export class Schedule {
  constructor(
    private readonly ctx: ServiceContext,
    private readonly consortia: Consortia,
    private readonly models: Models,
    private readonly rows: RoundRows,
    private readonly rounds: Rounds,
  ) {}

  /** The ids of the consortia with a schedule. */
  private async scheduled(): Promise<string[]> {
    const ids = await this.ctx.db.selectFrom('consortia').select('id').orderBy('id').execute();
    const out: string[] = [];
    for (const { id } of ids)
      if ((await this.consortia.load(id)).consortium.rounds !== undefined) out.push(id);
    return out;
  }

  /** One pass over every scheduled consortium; a failure on one is reported and the others go on. */
  async tick(): Promise<void> {
    for (const id of await this.scheduled())
      try {
        await this.step(id);
      } catch (e) {
        this.ctx.warn(`schedule of ${id}: ${(e as Error).message}`, e);
      }
  }

  /** Advances one consortium's schedule by what its stored state allows. */
  async step(id: string): Promise<void> {
    const { consortium } = await this.consortia.load(id);
    const total = consortium.rounds;
    if (total === undefined || consortium.secureAggregation === 'external') return;
    let latest = await this.rows.latest(id);
    if (latest && !isTerminal(latest.stage)) {
      const row = await this.rounds.tickRow(id, latest.round);
      latest = { round: row.round, stage: row.stage };
      if (!isTerminal(latest.stage)) return;
    }
    if ((latest?.round ?? 0) >= total) return;
    if (latest === undefined && (await this.models.latestVersion(id)) === undefined) return;
    try {
      await this.rounds.open(id);
    } catch (e) {
      // Another replica opened it first (the row's primary key), or it is not over there yet.
      if (e instanceof ServiceError && e.code === 'FEDSCORE_ERR_ROUND_OPEN') return;
      throw e;
    }
  }
}
