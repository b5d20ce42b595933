/**
 * Scoring a round in reporting: it is scored (src/fl/private-scoring.ts, the same scorer as the
 * in-process engine) as soon as every survivor reported and v(M), v(M0) are known — from the
 * evaluator or posted by the operator ({@link Scoring.setUtilities}). At the reporting deadline
 * (or when the operator closes it) it is scored from the reports that arrived, or closed without
 * scores (no utilities yet, or fewer than two reports).
 */
import type { Transaction } from 'kysely';
import { scoreReports } from '../../fl/private-scoring.js';
import { ServiceError } from '../errors.js';
import type { Round, RoundScores } from '../schemas.js';
import type { Database } from '../store/schema.js';
import { type Consortia, checkUtilities, type LoadedConsortium } from './consortia.js';
import type { Executor } from './context.js';
import { type RoundRow, type RoundRows, view } from './round-rows.js';

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
   * @throws ServiceError UTILITY_OUT_OF_RANGE, NOT_REPORTING, UTILITIES_SET.
   */
  async setUtilities(id: string, round: number, full: number, empty: number): Promise<Round> {
    const loaded = await this.consortia.load(id);
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

  private async score(
    trx: Transaction<Database>,
    loaded: LoadedConsortium,
    row: RoundRow,
    reports: Buffer[],
  ): Promise<RoundRow> {
    const { consortium, roster } = loaded;
    // v(∅) as the consortium says; the stored v(M0) stays what was measured.
    const r = scoreReports(
      row.consortium,
      row.round,
      reports,
      roster,
      row.full_utility!,
      row.empty_utility!,
      {
        ...(consortium.emptyCoalition !== undefined ? { emptyCoalition: consortium.emptyCoalition } : {}),
      },
    );
    const n = roster.length;
    const spread = (values: ArrayLike<number>) => {
      const out: (number | null)[] = Array.from({ length: n }, () => null);
      r.silos.forEach((s, k) => {
        const v = values[k]!;
        out[s] = Number.isFinite(v) ? v : null;
      });
      return out;
    };
    const scores: Omit<RoundScores, 'round' | 'utilities'> = {
      silos: r.silos,
      withOnly: spread(r.withOnly),
      without: spread(r.without),
      schemes: Object.fromEntries(consortium.schemes.map((m) => [m, spread(r.scores[m])])),
    };
    return this.rows.update(trx, row, { stage: 'scored', scores: JSON.stringify(scores) });
  }
}
