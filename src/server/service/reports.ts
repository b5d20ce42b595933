/**
 * Signed score reports (protocol/score-report.ts): after the aggregate is published each survivor
 * posts its report of v(M0 + U_i) and v(M − U_i); the report that completes the round scores it
 * (./scoring.ts). Reports are stored in table `reports`, one per round and silo.
 */
import { SecAggError } from '../../../protocol/errors.js';
import { verifyScoreReport } from '../../../protocol/score-report.js';
import type { ErrorCode } from '../../consortium/error-codes.js';
import type { Round } from '../../consortium/schemas.js';
import { ServiceError } from '../errors.js';
import { type Consortia, checkUtilities } from './consortia.js';
import { view } from './round-rows.js';
import type { Rounds } from './rounds.js';
import type { Scoring } from './scoring.js';

function reportFailure(e: unknown): ServiceError {
  if (!(e instanceof SecAggError)) {
    if (e instanceof TypeError || e instanceof RangeError)
      return new ServiceError('FEDSCORE_ERR_REPORT_INVALID', e.message);
    throw e;
  }
  const code: ErrorCode =
    e.code === 'BAD_SIGNATURE'
      ? 'FEDSCORE_ERR_REPORT_BAD_SIGNATURE'
      : e.code === 'WRONG_SESSION' || e.code === 'WRONG_ROUND' || e.code === 'UNKNOWN_SENDER'
        ? 'FEDSCORE_ERR_REPORT_MISMATCH'
        : 'FEDSCORE_ERR_REPORT_INVALID';
  return new ServiceError(code, e.message);
}

/** Submitting signed score reports. */
export class Reports {
  constructor(
    private readonly consortia: Consortia,
    private readonly rounds: Rounds,
    private readonly scoring: Scoring,
  ) {}

  /**
   * Stores `silo`'s signed score report; scores the round once every survivor reported and the
   * utilities are known. Re-posting the same report is an idempotent success.
   * @throws ServiceError REPORT_INVALID / REPORT_MISMATCH / REPORT_BAD_SIGNATURE, FORBIDDEN,
   *   UTILITY_OUT_OF_RANGE (a value outside the consortium's declared range), NOT_REPORTING,
   *   NOT_A_SURVIVOR, REPORT_CONFLICT.
   */
  async submit(
    id: string,
    round: number,
    silo: number,
    bytes: Uint8Array,
  ): Promise<{ duplicate: boolean; round: Round }> {
    const loaded = await this.consortia.load(id);
    let report: ReturnType<typeof verifyScoreReport>;
    try {
      report = verifyScoreReport(new Uint8Array(bytes), { session: id, round, roster: loaded.roster });
    } catch (e) {
      throw reportFailure(e);
    }
    if (report.silo !== silo)
      throw new ServiceError(
        'FEDSCORE_ERR_FORBIDDEN',
        `silo ${silo} submitted the report of silo ${report.silo}`,
      );
    // The report's values must lie in the declared range: an unbounded one would own every
    // ratio score (FP, EE) and overflow the scores and the audit (docs/threat-model.md).
    checkUtilities(loaded.consortium, [
      [`v(M0 + U_${silo})`, report.singleton],
      [`v(M − U_${silo})`, report.complement],
      ...Array.from(
        report.perClass?.singleton ?? [],
        (x, k) => [`v(M0 + U_${silo}) of class ${k}`, x] as const,
      ),
      ...Array.from(
        report.perClass?.complement ?? [],
        (x, k) => [`v(M − U_${silo}) of class ${k}`, x] as const,
      ),
    ]);
    return this.rounds.lockedCurrent(id, round, async (trx, row) => {
      // A stored report first: its retry is accepted even after the round was scored (the last
      // report scores the round, and its answer may be the one that was lost).
      const existing = await trx
        .selectFrom('reports')
        .select('body')
        .where('consortium', '=', id)
        .where('round', '=', round)
        .where('silo', '=', silo)
        .executeTakeFirst();
      if (existing) {
        if (Buffer.compare(Buffer.from(existing.body), Buffer.from(bytes)) !== 0)
          throw new ServiceError('FEDSCORE_ERR_REPORT_CONFLICT', `silo ${silo}`);
        return { duplicate: true, round: view(row) };
      }
      if (row.stage !== 'reporting')
        throw new ServiceError('FEDSCORE_ERR_NOT_REPORTING', `round ${round} is ${row.stage}`);
      const survivors = JSON.parse(row.survivors ?? '[]') as number[];
      if (!survivors.includes(silo)) throw new ServiceError('FEDSCORE_ERR_NOT_A_SURVIVOR', `silo ${silo}`);
      await trx
        .insertInto('reports')
        .values({ consortium: id, round, silo, body: Buffer.from(bytes) })
        .execute();
      const next = await this.scoring.maybeScore(trx, loaded, row);
      return { duplicate: false, round: view(next) };
    });
  }
}
