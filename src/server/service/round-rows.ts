/**
 * The `rounds` table: one row per round with its service stage, deadline, the closed stages'
 * participant sets and everything the round has produced; and its conversion to the API's `Round`.
 *
 * Every change to a round happens under {@link RoundRows.locked}: one transaction that first reads
 * the row `FOR UPDATE` on PostgreSQL (on SQLite one connection and Kysely's mutex serialize
 * transactions), so steps on one round are serialized across processes and each is committed
 * before the route answers.
 */
import type { Selectable, Transaction } from 'kysely';
import type { Round, RoundScores, RoundStage } from '../../consortium/schemas.js';
import { ServiceError } from '../errors.js';
import type { Database, RoundsTable } from '../store/schema.js';
import { BlobCache } from './blob-cache.js';
import type { Executor, RoundEvent, ServiceContext, StageClosed } from './context.js';

/**
 * A round row without its aggregate: Σ w_iΔ_i (8·d bytes) is read only where it is published
 * ({@link RoundRows.weightedSum}), not on each of the hundreds of row reads of a round.
 */
export type RoundRow = Omit<Selectable<RoundsTable>, 'weighted_sum'>;

/** A change to a round row (the aggregate included). */
export type RoundPatch = Partial<Selectable<RoundsTable>>;

const ROUND_COLUMNS = [
  'consortium',
  'round',
  'stage',
  'deadline',
  'base_version',
  'sets',
  'survivors',
  'dropped',
  'total_weight',
  'full_utility',
  'empty_utility',
  'scores',
  'error',
  'faults',
  'selected',
  'opened_at',
] as const satisfies readonly (keyof RoundRow)[];

/** The most bytes of published aggregates the process keeps (8 MB per round at d = 10^6). */
export const SUM_CACHE_BYTES = 128 * 1024 * 1024;

/** Queries on the `rounds` table. */
export class RoundRows {
  constructor(private readonly ctx: ServiceContext) {}

  /**
   * Published aggregates, once read: a round's Σ w_iΔ_i is written once, when its sum is known,
   * and never changed, while every silo downloads it (./blob-cache.ts).
   */
  private readonly sums = new BlobCache<Buffer>(SUM_CACHE_BYTES);

  /** A round's row. @throws ServiceError ROUND_NOT_FOUND. */
  async find(db: Executor, id: string, round: number): Promise<RoundRow> {
    const row = await db
      .selectFrom('rounds')
      .select(ROUND_COLUMNS)
      .where('consortium', '=', id)
      .where('round', '=', round)
      .executeTakeFirst();
    if (!row) throw new ServiceError('FEDSCORE_ERR_ROUND_NOT_FOUND', `round ${round} of ${id}`);
    return row;
  }

  /** Per consortium, the highest round number seen to exist (rounds are never deleted). */
  private readonly known = new Map<string, number>();

  /**
   * Whether the round exists (asked before every silo request's body is read). Rounds are
   * numbered 1, 2, … and never deleted, so once round r exists every round up to r does: only a
   * round above the highest one seen costs a query.
   */
  async exists(id: string, round: number): Promise<boolean> {
    if (round <= (this.known.get(id) ?? 0)) return true;
    const row = await this.ctx.db
      .selectFrom('rounds')
      .select('round')
      .where('consortium', '=', id)
      .where('round', '=', round)
      .executeTakeFirst();
    if (row !== undefined) this.known.set(id, Math.max(round, this.known.get(id) ?? 0));
    return row !== undefined;
  }

  /**
   * Runs `fn` in one transaction on the locked row of a round.
   * @throws ServiceError ROUND_NOT_FOUND; whatever `fn` throws (the transaction is rolled back).
   */
  async locked<T>(
    id: string,
    round: number,
    fn: (trx: Transaction<Database>, row: RoundRow) => Promise<T>,
  ): Promise<T> {
    const committed: (() => void)[] = [];
    const out = await this.ctx.db.transaction().execute(async (trx) => {
      this.pending.set(trx, committed);
      let q = trx
        .selectFrom('rounds')
        .select(ROUND_COLUMNS)
        .where('consortium', '=', id)
        .where('round', '=', round);
      if (this.ctx.dialect === 'postgres') q = q.forUpdate();
      const row = await q.executeTakeFirst();
      if (!row) throw new ServiceError('FEDSCORE_ERR_ROUND_NOT_FOUND', `round ${round} of ${id}`);
      return fn(trx, row);
    });
    // Run once committed (a rolled-back change never happened).
    for (const action of committed) action();
    return out;
  }

  /**
   * Runs `action` once the transaction of {@link RoundRows.locked} that `trx` belongs to has
   * committed (never, if it rolls back): round events for the log, and filling the process's
   * caches with rows the transaction wrote (a cache must hold nothing the store does not).
   * @throws Error when `trx` is not one of {@link RoundRows.locked}.
   */
  afterCommit(trx: Transaction<Database>, action: () => void): void {
    const committed = this.pending.get(trx);
    if (committed === undefined) throw new Error('afterCommit: not a transaction of RoundRows.locked');
    committed.push(action);
  }

  /** The after-commit actions of each open transaction of {@link RoundRows.locked}. */
  private readonly pending = new WeakMap<Transaction<Database>, (() => void)[]>();

  /** Applies `patch` to a locked row; returns the row as it now is (without the aggregate). */
  async update(trx: Transaction<Database>, row: RoundRow, patch: RoundPatch): Promise<RoundRow> {
    await trx
      .updateTable('rounds')
      .set(patch)
      .where('consortium', '=', row.consortium)
      .where('round', '=', row.round)
      .execute();
    const { weighted_sum: sum, ...rest } = patch;
    // The aggregate is written once: silos downloading it read it from the process.
    if (sum !== undefined && sum !== null)
      this.afterCommit(trx, () => this.sums.set(row, 'weighted_sum', sum, sum.byteLength));
    if (patch.stage !== undefined && patch.stage !== row.stage) {
      let event: RoundEvent = {
        consortium: row.consortium,
        round: row.round,
        event: patch.stage as RoundEvent['event'],
        detail: eventDetail({ ...row, ...rest }),
      };
      const progress = stageClosed(row, { ...row, ...rest });
      if (progress) event = { ...event, progress };
      this.afterCommit(trx, () => this.ctx.event(event));
    }
    return { ...row, ...rest };
  }

  /** Inserts a new round (a unique violation when the round number is taken). */
  async insert(row: RoundRow): Promise<void> {
    await this.ctx.db
      .insertInto('rounds')
      .values({ ...row, weighted_sum: null })
      .execute();
  }

  /** The number and stage of the consortium's latest round, if any. */
  async latest(id: string): Promise<{ round: number; stage: string } | undefined> {
    return this.ctx.db
      .selectFrom('rounds')
      .select(['round', 'stage'])
      .where('consortium', '=', id)
      .orderBy('round', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** The consortium's rounds in order, all of them or those in `stage`. */
  async list(id: string, stage?: RoundStage): Promise<RoundRow[]> {
    let q = this.ctx.db.selectFrom('rounds').select(ROUND_COLUMNS).where('consortium', '=', id);
    if (stage !== undefined) q = q.where('stage', '=', stage);
    return q.orderBy('round').execute();
  }

  /** The silos whose message of `stage` is stored for the round, ascending. */
  async senders(id: string, round: number, stage: string): Promise<number[]> {
    const rows = await this.ctx.db
      .selectFrom('messages')
      .select('silo')
      .where('consortium', '=', id)
      .where('round', '=', round)
      .where('stage', '=', stage)
      .orderBy('silo')
      .execute();
    return rows.map((r) => r.silo);
  }

  /** The silos whose score report is stored for the round, ascending. */
  async reporters(id: string, round: number): Promise<number[]> {
    const rows = await this.ctx.db
      .selectFrom('reports')
      .select('silo')
      .where('consortium', '=', id)
      .where('round', '=', round)
      .orderBy('silo')
      .execute();
    return rows.map((r) => r.silo);
  }

  /**
   * The stored Float64 Σ w_iΔ_i of a round, or null before its sum is known. The buffer is shared
   * by every caller (read-only): the process reads each round's aggregate from the store once.
   */
  async weightedSum(id: string, round: number): Promise<Buffer | null> {
    const key = { consortium: id, round };
    const cached = this.sums.get(key, 'weighted_sum');
    if (cached !== undefined) return cached;
    const stored = await this.ctx.db
      .selectFrom('rounds')
      .select('weighted_sum')
      .where('consortium', '=', id)
      .where('round', '=', round)
      .executeTakeFirst();
    const sum = stored?.weighted_sum ?? null;
    // Read outside any transaction: committed, and written once.
    if (sum !== null) this.sums.set(key, 'weighted_sum', sum, sum.byteLength);
    return sum;
  }
}

/** What the log says of a round that moved to its stage. */
function eventDetail(row: RoundRow): string {
  const error = errorOf(row);
  if (error !== null) return `${error.code}: ${error.detail}`;
  if (row.stage === 'scored') return 'scores published';
  if (row.stage === 'reporting')
    return `survivors ${JSON.parse(row.survivors ?? '[]').join(', ')}; dropped ${JSON.parse(row.dropped ?? '[]').join(', ') || 'none'}`;
  const sets = JSON.parse(row.sets) as number[][];
  const last = sets[sets.length - 1];
  return last ? `${last.length} silos went on` : '';
}

/**
 * Who the stage that `before` was in waited for and who went on, once `after` left it for the
 * next protocol stage or scores: a collecting stage waits for the previous stage's set (the
 * first for the selected silos, null: every silo); reporting waits for the survivors, and a
 * silo went on when its report was scored or quarantined. Undefined for other changes.
 */
function stageClosed(before: RoundRow, after: RoundRow): StageClosed | undefined {
  if (after.stage === 'scored' && after.scores !== null) {
    const s = JSON.parse(after.scores) as Pick<RoundScores, 'silos'> &
      Partial<Pick<RoundScores, 'quarantined'>>;
    const went = [...s.silos, ...(s.quarantined ?? []).map((q) => q.silo)].sort((a, b) => a - b);
    return { closed: before.stage, waited: JSON.parse(after.survivors ?? '[]') as number[], went };
  }
  const setsBefore = JSON.parse(before.sets) as number[][];
  const setsAfter = JSON.parse(after.sets) as number[][];
  if (after.stage === 'aborted' || after.stage === 'closed' || setsAfter.length <= setsBefore.length)
    return undefined;
  const waited = setsBefore.length === 0 ? selectedOf(before) : setsBefore[setsBefore.length - 1]!;
  return { closed: before.stage, waited, went: setsAfter[setsAfter.length - 1]! };
}

/** The error a round was aborted or closed with, if any. */
export function errorOf(row: RoundRow): { code: string; detail: string } | null {
  return row.error === null ? null : (JSON.parse(row.error) as { code: string; detail: string });
}

/** A scored round's scores, or null before scoring. */
export function scoresOf(row: RoundRow): RoundScores | null {
  if (row.scores === null) return null;
  const s = JSON.parse(row.scores) as Omit<RoundScores, 'round' | 'utilities' | 'quarantined' | 'selected'> &
    Partial<Pick<RoundScores, 'quarantined'>>;
  // Rounds scored before quarantine existed (issue 27) stored no `quarantined`: none was set aside.
  return {
    round: row.round,
    utilities: { full: row.full_utility!, empty: row.empty_utility! },
    ...s,
    quarantined: s.quarantined ?? [],
    // Issue 37: who was asked to report (a silo left out of the round owes no report), from the row.
    selected: selectedOf(row),
  };
}

/** The silos the strategy selected for the round, or null when every silo takes part. */
export function selectedOf(row: Pick<RoundRow, 'selected'>): number[] | null {
  return row.selected === null ? null : (JSON.parse(row.selected) as number[]);
}

/** A round row as the API shows it. */
export function view(row: RoundRow): Round {
  return {
    consortium: row.consortium,
    round: row.round,
    stage: row.stage as RoundStage,
    deadline: row.deadline,
    baseModel: row.base_version,
    // total_weight is stored with the aggregate (aggregation.ts, finish)
    resultModel: row.total_weight === null ? null : row.round,
    sets: JSON.parse(row.sets) as number[][],
    survivors: row.survivors === null ? null : (JSON.parse(row.survivors) as number[]),
    dropped: row.dropped === null ? null : (JSON.parse(row.dropped) as number[]),
    totalWeight: row.total_weight,
    utilities:
      row.full_utility === null || row.empty_utility === null
        ? null
        : { full: row.full_utility, empty: row.empty_utility },
    error: errorOf(row),
    selected: selectedOf(row),
    faults: row.faults === null ? [] : (JSON.parse(row.faults) as Round['faults']),
    openedAt: row.opened_at,
  };
}
