/**
 * The round lifecycle: opening the next round from the latest model, listing and reading rounds,
 * and closing stages — when every expected silo has sent its message (./secagg.ts), when the
 * operator forces it, or lazily when a request on the round finds the stage deadline passed
 * ({@link Rounds.tickRow}). A silo that missed a deadline is a dropout, which the protocol
 * handles (or the round aborts below threshold). {@link Rounds.advance} is the one place that
 * closes a stage: a secure-aggregation stage through ./aggregation.ts, reporting through
 * ./scoring.ts.
 */
import type { Transaction } from 'kysely';
import { isTerminal, type Round, type RoundStage } from '../../consortium/schemas.js';
import { ServiceError } from '../errors.js';
import type { Database } from '../store/schema.js';
import type { Aggregation } from './aggregation.js';
import type { Consortia, LoadedConsortium } from './consortia.js';
import { isUniqueViolation, type ServiceContext } from './context.js';
import { refuseExternal } from './external.js';
import type { Models } from './models.js';
import { type RoundRow, type RoundRows, selectedOf, view } from './round-rows.js';
import type { Scoring } from './scoring.js';
import { selectionOf } from './selection.js';

/** Who a round's current stage waits for ({@link Rounds.progress}). */
export interface StageWaiting {
  readonly round: number;
  readonly stage: RoundStage;
  /** When the stage closes (ms since the epoch). */
  readonly deadline: number;
  readonly expected: number[];
  readonly received: number[];
  readonly missing: number[];
}

/** Opening rounds, reading them, and closing their stages. */
export class Rounds {
  constructor(
    private readonly ctx: ServiceContext,
    private readonly consortia: Consortia,
    private readonly models: Models,
    private readonly rows: RoundRows,
    private readonly aggregation: Aggregation,
    private readonly scoring: Scoring,
  ) {}

  /**
   * Opens the next round from the latest model.
   * @throws ServiceError CONSORTIUM_NOT_FOUND, EXTERNAL_AGGREGATION, MODEL_MISSING, ROUND_OPEN,
   *   SCHEDULE_DONE (the consortium's schedule of R rounds has run round R).
   */
  async open(id: string): Promise<Round> {
    const loaded = await this.consortia.load(id);
    const { consortium } = loaded;
    refuseExternal(consortium, 'its rounds open when the operator posts their utilities (./external.ts)');
    const last = await this.rows.latest(id);
    if (last && !isTerminal(last.stage)) {
      const now = await this.tickRow(id, last.round);
      if (!isTerminal(now.stage))
        throw new ServiceError('FEDSCORE_ERR_ROUND_OPEN', `round ${last.round} is ${now.stage}`);
    }
    const round = (last?.round ?? 0) + 1;
    // A schedule of R rounds runs exactly R: a round R + 1 would only abort below threshold once
    // the silos have left (issue 34), and the dashboard would show "round R + 1 of R".
    if (consortium.rounds !== undefined && round > consortium.rounds)
      throw new ServiceError(
        'FEDSCORE_ERR_SCHEDULE_DONE',
        `the schedule of ${id} is ${consortium.rounds} round${consortium.rounds === 1 ? '' : 's'} and round ${last?.round ?? 0} was its last; register a new consortium for more rounds`,
      );
    const latest = await this.models.latestVersion(id);
    if (latest === undefined) throw new ServiceError('FEDSCORE_ERR_MODEL_MISSING');
    const selected = await selectionOf(loaded, round, round > 1 ? await this.rows.list(id) : []);
    const now = this.ctx.now();
    const row: RoundRow = {
      consortium: id,
      round,
      stage: 'advertise',
      deadline: now + consortium.deadlines.advertise,
      base_version: latest,
      sets: '[]',
      survivors: null,
      dropped: null,
      total_weight: null,
      full_utility: null,
      empty_utility: null,
      scores: null,
      error: null,
      faults: null,
      selected: selected === null ? null : JSON.stringify(selected),
      opened_at: now,
    };
    try {
      await this.rows.insert(row);
    } catch (e) {
      if (isUniqueViolation(e))
        throw new ServiceError('FEDSCORE_ERR_ROUND_OPEN', `round ${row.round} was just opened`);
      throw e;
    }
    this.ctx.event({
      consortium: id,
      round: row.round,
      event: 'opened',
      detail: selected === null ? 'every silo' : `silos ${selected.join(', ')}`,
    });
    return view(row);
  }

  /** Every round, in order (closes the last one's stage first if its deadline passed). */
  async list(id: string): Promise<Round[]> {
    await this.consortia.load(id);
    const rows = await this.rows.list(id);
    const last = rows[rows.length - 1];
    if (last && !isTerminal(last.stage)) rows[rows.length - 1] = await this.tickRow(id, last.round);
    return rows.map(view);
  }

  /**
   * A round, after closing its stage if the deadline has passed.
   * @throws ServiceError CONSORTIUM_NOT_FOUND, ROUND_NOT_FOUND.
   */
  async get(id: string, round: number): Promise<Round> {
    return view(await this.tickRow(id, round));
  }

  /**
   * A round's row, after closing its stage if the deadline has passed.
   * @throws ServiceError CONSORTIUM_NOT_FOUND, ROUND_NOT_FOUND.
   */
  async tickRow(id: string, round: number): Promise<RoundRow> {
    const loaded = await this.consortia.load(id);
    const row = await this.rows.find(this.ctx.db, id, round);
    if (isTerminal(row.stage) || this.ctx.now() < row.deadline) return row;
    return this.rows.locked(id, round, async (trx, locked) => {
      if (isTerminal(locked.stage) || this.ctx.now() < locked.deadline) return locked;
      return this.advance(trx, loaded, locked, false);
    });
  }

  /**
   * {@link RoundRows.locked} on a round whose passed deadline, if any, has been dealt with: a
   * silo's post sees the round as {@link Rounds.tickRow} would leave it. The deadline is checked
   * on the locked row (one query fewer per post than ticking first); a due stage is closed in a
   * transaction of its own, so that a post it then refuses cannot roll the closing back (and
   * make the next post redo it), and `fn` runs on the row after it.
   */
  async lockedCurrent<T>(
    id: string,
    round: number,
    fn: (trx: Transaction<Database>, row: RoundRow) => Promise<T>,
  ): Promise<T> {
    const due = Symbol('due');
    const out = await this.rows.locked(id, round, async (trx, row) =>
      !isTerminal(row.stage) && this.ctx.now() >= row.deadline ? due : fn(trx, row),
    );
    if (out !== due) return out as T;
    await this.tickRow(id, round);
    return this.rows.locked(id, round, fn);
  }

  /**
   * Closes the current stage now (operator override of the deadline), if it is `expected`: racing
   * the stage's own close (its deadline, its last message), a request for the stage just closed
   * is refused rather than closing the next one (issue 27 A7).
   * @throws ServiceError ROUND_NOT_FOUND, ROUND_CLOSED when the round is over, STAGE_MISMATCH
   *   naming the current stage when it is not `expected`.
   */
  async forceAdvance(id: string, round: number, expected: RoundStage): Promise<Round> {
    const loaded = await this.consortia.load(id);
    return view(
      await this.rows.locked(id, round, async (trx, row) => {
        if (isTerminal(row.stage))
          throw new ServiceError('FEDSCORE_ERR_ROUND_CLOSED', `round ${round} is ${row.stage}`);
        // under the round's lock: a stage closed meanwhile (deadline, last message) is not skipped
        if (row.stage !== expected)
          throw new ServiceError(
            'FEDSCORE_ERR_STAGE_MISMATCH',
            `round ${round} is in stage ${row.stage}, not ${expected}`,
          );
        return this.advance(trx, loaded, row, true);
      }),
    );
  }

  /**
   * Ends a round that is not over now, as aborted (ABORTED_BY_OPERATOR): nothing more is accepted
   * for it and the next round may open (the model stays the one it started from).
   * @throws ServiceError ROUND_NOT_FOUND, ROUND_CLOSED when the round is over.
   */
  async abort(id: string, round: number): Promise<Round> {
    await this.consortia.load(id);
    return view(
      await this.rows.locked(id, round, async (trx, row) => {
        if (isTerminal(row.stage))
          throw new ServiceError('FEDSCORE_ERR_ROUND_CLOSED', `round ${round} is ${row.stage}`);
        return this.rows.update(trx, row, {
          stage: 'aborted',
          error: JSON.stringify({
            code: 'ABORTED_BY_OPERATOR',
            detail: `aborted by the operator in stage ${row.stage}`,
          }),
        });
      }),
    );
  }

  /**
   * Who the current stage of a round waits for: the silos expected (the selection, or every silo,
   * at advertise; the previous stage's set after it; the survivors while reporting), those whose
   * message or report is in, and those missing. Empty lists once the round is over.
   * @throws ServiceError CONSORTIUM_NOT_FOUND, ROUND_NOT_FOUND.
   */
  async progress(id: string, round: number): Promise<StageWaiting> {
    const loaded = await this.consortia.load(id);
    const row = await this.tickRow(id, round);
    const none = {
      round,
      stage: row.stage as RoundStage,
      deadline: row.deadline,
      expected: [],
      received: [],
      missing: [],
    };
    if (isTerminal(row.stage)) return none;
    let expected: number[];
    let received: number[];
    if (row.stage === 'reporting') {
      expected = JSON.parse(row.survivors ?? '[]') as number[];
      received = await this.rows.reporters(id, round);
    } else {
      const sets = JSON.parse(row.sets) as number[][];
      const everyone = selectedOf(row) ?? loaded.roster.map((_, i) => i);
      expected = sets.length === 0 ? everyone : sets[sets.length - 1]!;
      received = await this.rows.senders(id, round, row.stage);
    }
    const got = new Set(received);
    return { ...none, expected, received, missing: expected.filter((s) => !got.has(s)) };
  }

  /**
   * Closes the current stage of a locked round that is not over; returns the updated row.
   * `forced`: the operator closes it (reporting then closes even without utilities).
   */
  async advance(
    trx: Transaction<Database>,
    loaded: LoadedConsortium,
    row: RoundRow,
    forced: boolean,
  ): Promise<RoundRow> {
    if (row.stage === 'reporting') return this.scoring.closeReporting(trx, loaded, row, forced);
    return this.aggregation.close(trx, loaded, row);
  }
}
