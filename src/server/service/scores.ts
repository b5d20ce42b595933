/** Published scores: a scored round's, and every scored round's with per-silo sums per scheme. */

import type { CumulativeScores, RoundScores } from '../../consortium/schemas.js';
import { ServiceError } from '../errors.js';
import type { Consortia } from './consortia.js';
import { type RoundRows, scoresOf } from './round-rows.js';
import type { Rounds } from './rounds.js';

/** Reading the scores of scored rounds. */
export class Scores {
  constructor(
    private readonly consortia: Consortia,
    private readonly rows: RoundRows,
    private readonly rounds: Rounds,
  ) {}

  /** A scored round's scores. @throws ServiceError NOT_READY before scoring. */
  async round(id: string, round: number): Promise<RoundScores> {
    const row = await this.rounds.tickRow(id, round);
    const s = scoresOf(row);
    if (!s) throw new ServiceError('FEDSCORE_ERR_NOT_READY', `round ${round} is ${row.stage}`);
    return s;
  }

  /** Scores of every scored round and, per scheme, each silo's sum over them (0 where absent). */
  async cumulative(id: string): Promise<CumulativeScores> {
    const { consortium } = await this.consortia.load(id);
    const rows = await this.rows.list(id, 'scored');
    const rounds = rows.map((r) => scoresOf(r)!);
    const n = consortium.participants.length;
    const cumulative: Record<string, number[]> = {};
    for (const m of consortium.schemes) {
      const acc = Array.from({ length: n }, () => 0);
      for (const r of rounds)
        r.schemes[m]?.forEach((v, i) => {
          acc[i]! += v ?? 0;
        });
      cumulative[m] = acc;
    }
    return { consortium: id, rounds, cumulative };
  }
}
