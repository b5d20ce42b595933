/**
 * Scoring a round in reporting: it is scored (src/consortium/private-scoring.ts, the same scorer as the
 * in-process engine) as soon as every survivor reported and v(M), v(M0) are known — from the
 * evaluator or posted by the operator ({@link Scoring.setUtilities}). At the reporting deadline
 * (or when the operator closes it) it is scored from the reports that arrived, or closed without
 * scores (no utilities yet, or fewer than two reports).
 *
 * Reports the detector flags are quarantined (scoring/manipulation/quarantine.ts, in
 * `scoreReports`): the round is scored without them and they are published with the scores
 * (`quarantined`, with their z values); the operator may release one ({@link Scoring.release}),
 * which scores the round again with it.
 */
import type { Transaction } from 'kysely';
import { scoreReports } from '../../consortium/private-scoring.js';
import type { QuarantinedReport, Round, RoundScores } from '../../consortium/schemas.js';
import { ServiceError } from '../errors.js';
import type { Database } from '../store/schema.js';
import { type Consortia, checkUtilities, type LoadedConsortium } from './consortia.js';
import type { Executor } from './context.js';
import { refuseExternal } from './external.js';
import { type RoundRow, type RoundRows, scoresOf, view } from './round-rows.js';

/** The stored signed reports of a round, in silo order (table `reports`). */
async function reportBodies(db: Executor, row: RoundRow): Promise<Buffer[]> {
  const rows = await db
    .selectFrom('reports')
    .select('body')
    .where('consortium', '=', row.consortium)
    .where('round', '=', row.round)
    .orderBy('silo')
    .execute();
  return rows.map((r) => Buffer.from(r.body));
}

/** Turning a round's reports and utilities into its scores. */
export class Scoring {
  constructor(
    private readonly consortia: Consortia,
    private readonly rows: RoundRows,
  ) {}

  /**
   * Sets v(M) and v(M0) for a round in reporting (when the service has no evaluator).
   * @throws ServiceError EXTERNAL_AGGREGATION (a reports-only consortium: it POSTs them), UTILITY_OUT_OF_RANGE,
   * NOT_REPORTING, UTILITIES_SET.
   */
  async setUtilities(id: string, round: number, full: number, empty: number): Promise<Round> {
    const loaded = await this.consortia.load(id);
    // A reports-only consortium opens its rounds by posting their utilities: say so, rather than
    // "round not found" for the round the operator meant to open.
    refuseExternal(
      loaded.consortium,
      `its rounds are opened, with v(M) and v(M0), by POST /v1/consortia/${id}/rounds/${round}/utilities`,
    );
    checkUtilities(loaded.consortium, [
      ['v(M)', full],
      ['v(M0)', empty],
    ]);
    return view(
      await this.rows.locked(id, round, async (trx, row) => {
        if (row.stage !== 'reporting')
          throw new ServiceError('FEDSCORE_ERR_NOT_REPORTING', `round ${round} is ${row.stage}`);
        if (row.full_utility !== null) throw new ServiceError('FEDSCORE_ERR_UTILITIES_SET', `round ${round}`);
        const next = await this.rows.update(trx, row, { full_utility: full, empty_utility: empty });
        return this.maybeScore(trx, loaded, next);
      }),
    );
  }

  /** Scores a locked round when every survivor reported and the utilities are known. */
  async maybeScore(trx: Transaction<Database>, loaded: LoadedConsortium, row: RoundRow): Promise<RoundRow> {
    const survivors = JSON.parse(row.survivors ?? '[]') as number[];
    const reports = await reportBodies(trx, row);
    if (reports.length < survivors.length || row.full_utility === null) return row;
    return this.score(trx, loaded, row, reports);
  }

  /** Reporting deadline (or operator): score what arrived, or close the round without scores. */
  async closeReporting(
    trx: Transaction<Database>,
    loaded: LoadedConsortium,
    row: RoundRow,
    forced: boolean,
  ): Promise<RoundRow> {
    const reports = await reportBodies(trx, row);
    if (row.full_utility === null) {
      if (!forced) return row; // waiting for the operator's utilities
      return this.rows.update(trx, row, {
        stage: 'closed',
        error: JSON.stringify({
          code: 'NO_UTILITIES',
          detail: 'closed by the operator before v(M) and v(M0) were known',
        }),
      });
    }
    if (reports.length < 2)
      return this.rows.update(trx, row, {
        stage: 'closed',
        error: JSON.stringify({
          code: 'TOO_FEW_REPORTS',
          detail: `${reports.length} report(s); scoring needs 2`,
        }),
      });
    return this.score(trx, loaded, row, reports);
  }

  /**
   * The operator releases silo `silo`'s quarantined report of a scored round: the round is scored
   * again with it (the report stays listed in `quarantined`, with `released: true`).
   * @throws ServiceError ROUND_NOT_FOUND, NOT_READY (the round is not scored),
   *   NOT_QUARANTINED (the detector did not flag that report, or it was released already).
   */
  async release(id: string, round: number, silo: number): Promise<RoundScores> {
    const loaded = await this.consortia.load(id);
    const row = await this.rows.locked(id, round, async (trx, row) => {
      const published = scoresOf(row);
      if (row.stage !== 'scored' || published === null)
        throw new ServiceError('FEDSCORE_ERR_NOT_READY', `round ${round} is ${row.stage}, not scored`);
      const q = published.quarantined.find((x) => x.silo === silo);
      if (q === undefined || q.released)
        throw new ServiceError(
          'FEDSCORE_ERR_NOT_QUARANTINED',
          `silo ${silo}'s report of round ${round} ${q ? 'was released already' : 'is not quarantined'}`,
        );
      const released = [...published.quarantined.filter((x) => x.released).map((x) => x.silo), silo];
      return this.score(trx, loaded, row, await reportBodies(trx, row), released);
    });
    return scoresOf(row)!;
  }

  private async score(
    trx: Transaction<Database>,
    loaded: LoadedConsortium,
    row: RoundRow,
    reports: Buffer[],
    released: readonly number[] = [],
  ): Promise<RoundRow> {
    const { consortium, roster } = loaded;
    // v(∅) as the consortium says; the stored v(M0) stays what was measured. Flagged reports
    // not released are left out (the same `scoreReports` as the in-process engine).
    const r = scoreReports(
      row.consortium,
      row.round,
      reports,
      roster,
      row.full_utility!,
      row.empty_utility!,
      {
        ...(consortium.emptyCoalition !== undefined ? { emptyCoalition: consortium.emptyCoalition } : {}),
        quarantine: consortium.quarantine === false ? false : { released },
      },
    );
    const n = roster.length;
    const spread = (silos: readonly number[], values: ArrayLike<number>) => {
      const out: (number | null)[] = Array.from({ length: n }, () => null);
      silos.forEach((s, k) => {
        const v = values[k]!;
        out[s] = Number.isFinite(v) ? v : null;
      });
      return out;
    };
    const quarantined: QuarantinedReport[] = r.quarantined.map((q) => ({ ...q, flagged: [...q.flagged] }));
    const scores: Omit<RoundScores, 'round' | 'utilities' | 'selected'> = {
      silos: r.scored,
      withOnly: spread(r.silos, r.withOnly),
      without: spread(r.silos, r.without),
      schemes: Object.fromEntries(consortium.schemes.map((m) => [m, spread(r.scored, r.scores[m])])),
      quarantined,
    };
    return this.rows.update(trx, row, { stage: 'scored', scores: JSON.stringify(scores) });
  }
}
