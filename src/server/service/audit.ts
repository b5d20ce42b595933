/** The manipulation audit (docs/audit.md) of a consortium's scored rounds, for its operator. */
import { type AuditResult, auditRecordedRounds } from '../../fl/audit.js';
import { type Consortia, rangeOf } from './consortia.js';
import type { Scores } from './scores.js';

/** Auditing the recorded rounds (src/fl/audit.ts). */
export class Audit {
  constructor(
    private readonly consortia: Consortia,
    private readonly scores: Scores,
  ) {}

  /**
   * The audit of the scored rounds, over the consortium's declared utility range (rounds stored
   * with values outside it — before ranges were enforced — are listed as skipped).
   * @throws ServiceError CONSORTIUM_NOT_FOUND.
   */
  async run(id: string): Promise<AuditResult> {
    const { consortium } = await this.consortia.load(id);
    const { rounds } = await this.scores.cumulative(id);
    const names = consortium.participants.map((_, i) => `silo-${i}`);
    const { lo, hi } = rangeOf(consortium);
    return auditRecordedRounds(
      rounds,
      names,
      `fedscore service, consortium ${id}`,
      { range: { lo, hi }, outOfRange: 'skip' },
      consortium.emptyCoalition,
    );
  }
}
