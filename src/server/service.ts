/**
 * The scoring service's core: consortia, rounds driven through the secure-aggregation server
 * state machine (protocol/server.ts), the global model, signed score reports and the private
 * scores (src/fl/private-scoring.ts — the same scorer as the in-process engine).
 *
 * Durability: every change is one database transaction, committed before the route answers 2xx.
 * The protocol state is not kept in memory: each step rebuilds `ServerState` from the accepted
 * messages and the closed stages' participant sets, so any process (or a restarted one) continues
 * the round. Steps on one round are serialized by the round row (`SELECT … FOR UPDATE` on
 * PostgreSQL; one connection and Kysely's mutex on SQLite).
 *
 * Stages close when every expected silo has sent its message, when an operator forces it, or
 * lazily when a request on the round finds the stage deadline passed; a silo that missed the
 * deadline is a dropout, which the protocol handles (or the round aborts below threshold).
 * Errors are {@link ServiceError}s with catalogue codes; no HTTP here.
 */

import type { Kysely, Selectable, Transaction } from 'kysely';
import { quantizer } from '../../crypto/quantize.js';
import { decodeClientMessage, encodeServerMessage } from '../../protocol/codec.js';
import { checkRoundConfig, type RoundConfig } from '../../protocol/config.js';
import { SecAggError } from '../../protocol/errors.js';
import type {
  AdvertiseKeys,
  ClientMessage,
  ConsistencyCheck,
  MaskedInput,
  ShareKeys,
  UnmaskResponse,
} from '../../protocol/messages.js';
import { verifyScoreReport } from '../../protocol/score-report.js';
import {
  type AggregationResult,
  type ServerStage,
  type ServerState,
  serverAdvance,
  serverHandle,
} from '../../protocol/server.js';
import { decodeWeightedSum, type WeightedEncoding } from '../../protocol/weighted.js';
import { type AuditResult, auditRecordedRounds } from '../fl/audit.js';
import { scoreReports } from '../fl/private-scoring.js';
import { asBuffer, floatBytes, fromHex, readFloat32, readFloat64 } from './_bytes.js';
import { type ErrorCode, ServiceError, secAggCode } from './errors.js';
import type {
  Consortium,
  ConsortiumInput,
  CumulativeScores,
  Deadlines,
  Round,
  RoundScores,
  RoundStage,
} from './schemas.js';
import type { StoreHandle } from './store/database.js';
import type { Database, RoundsTable } from './store/schema.js';

/** The server's utility v(·) of a parameter vector on the consortium's test set. */
export type Evaluator = (consortium: Consortium, params: Float32Array) => Promise<number>;

/** Options of {@link ScoringService}. */
export interface ServiceOptions {
  readonly store: StoreHandle;
  /** Clock in ms since the epoch (tests pass a fake one). */
  readonly now?: () => number;
  /**
   * Computes v(M) and v(M0) when a round's sum is known. Without it the operator posts the two
   * utilities (PUT …/rounds/:round/utilities) before the round can be scored.
   */
  readonly evaluate?: Evaluator;
  /** Where evaluator failures are reported. */
  readonly onWarning?: (message: string, error: unknown) => void;
}

/** Deadlines used when the operator gives none. */
export const DEFAULT_DEADLINES: Deadlines = {
  advertise: 60_000,
  share: 60_000,
  mask: 300_000,
  consistency: 60_000,
  unmask: 60_000,
  reporting: 600_000,
};

const PROTOCOL_STAGES: readonly RoundStage[] = ['advertise', 'share', 'mask', 'consistency', 'unmask'];
const TERMINAL: readonly RoundStage[] = ['scored', 'closed', 'aborted'];
const MESSAGE_STAGES = ['advertise', 'share', 'mask', 'consistency', 'unmask'] as const;
/** A stage endpoint: the client message type it takes. */
export type MessageStage = (typeof MESSAGE_STAGES)[number];
/**
 * The stored messages protocol/server.ts's serverAdvance reads when it closes each stage: the
 * stage's own (its participant set, relayed keys, boxes and signatures) and, for Unmasking, the
 * advertised keys and masked inputs it unmasks.
 */
const READ_ON_CLOSE: Record<MessageStage, readonly MessageStage[]> = {
  advertise: ['advertise'],
  share: ['share'],
  mask: ['mask'],
  consistency: ['consistency'],
  unmask: ['advertise', 'mask', 'unmask'],
};
/** The server messages a silo can fetch from its inbox. */
export const INBOX_KINDS = ['keys', 'shares', 'survivors', 'unmask-request'] as const;
export type InboxKind = (typeof INBOX_KINDS)[number];

type Executor = Kysely<Database> | Transaction<Database>;
/**
 * A round row without its aggregate: Σ w_iΔ_i (8·d bytes) is read only where it is published
 * (`aggregate`), not on each of the hundreds of row reads of a round.
 */
type RoundRow = Omit<Selectable<RoundsTable>, 'weighted_sum'>;
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
  'opened_at',
] as const satisfies readonly (keyof RoundRow)[];

interface Loaded {
  readonly consortium: Consortium;
  readonly roster: readonly Uint8Array[];
}

const isProtocolStage = (s: string): s is ServerStage & RoundStage =>
  PROTOCOL_STAGES.includes(s as RoundStage);

/** Whether `e` is a unique-constraint violation from better-sqlite3 or pg. */
function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

function secAggFailure(e: unknown): ServiceError {
  if (e instanceof SecAggError) return new ServiceError(secAggCode(e.code), e.message);
  if (e instanceof TypeError || e instanceof RangeError)
    return new ServiceError('FEDSCORE_ERR_SECAGG_MALFORMED', e.message);
  throw e;
}

/** The scoring service over a store. All methods are safe to call from several processes. */
export class ScoringService {
  private readonly db: Kysely<Database>;
  private readonly dialect: StoreHandle['dialect'];
  private readonly now: () => number;
  private readonly evaluate: Evaluator | undefined;
  private readonly warn: (message: string, error: unknown) => void;
  /** Consortia are immutable once created, so their decoded form is cached. */
  private readonly cache = new Map<string, Loaded>();

  constructor(options: ServiceOptions) {
    this.db = options.store.db;
    this.dialect = options.store.dialect;
    this.now = options.now ?? Date.now;
    this.evaluate = options.evaluate;
    this.warn = options.onWarning ?? (() => {});
  }

  /** Whether the store answers (readiness). */
  async ping(): Promise<boolean> {
    try {
      await this.db.selectFrom('consortia').select('id').limit(1).execute();
      return true;
    } catch {
      return false;
    }
  }

  // ── consortia ────────────────────────────────────────────────────────────────────────────

  /**
   * Creates a consortium.
   * @throws ServiceError INVALID_CONSORTIUM (threshold, repeated keys, encoding), CONSORTIUM_EXISTS.
   */
  async createConsortium(input: ConsortiumInput): Promise<Consortium> {
    const consortium: Consortium = {
      id: input.id,
      participants: input.participants.map((p) => ({ publicKey: p.publicKey })),
      threshold: input.threshold,
      model: { ...input.model },
      testSetDigest: input.testSetDigest,
      schemes: [...input.schemes],
      encoding: { ...input.encoding },
      convention: input.convention ?? 'fedavg',
      deadlines: input.deadlines ?? DEFAULT_DEADLINES,
      createdAt: this.now(),
    };
    const keys = consortium.participants.map((p) => p.publicKey);
    const repeated = keys.findIndex((k, i) => keys.indexOf(k) !== i);
    if (repeated >= 0)
      throw new ServiceError(
        'FEDSCORE_ERR_INVALID_CONSORTIUM',
        `participants[${repeated}]: repeated public key`,
      );
    try {
      checkRoundConfig(this.roundConfig(consortium, keys.map(fromHex), 1));
      for (const range of [consortium.encoding.clip, consortium.encoding.weightRange])
        quantizer({ range, n: keys.length });
    } catch (e) {
      throw new ServiceError('FEDSCORE_ERR_INVALID_CONSORTIUM', (e as Error).message);
    }
    try {
      await this.db
        .insertInto('consortia')
        .values({ id: consortium.id, config: JSON.stringify(consortium), created_at: consortium.createdAt })
        .execute();
    } catch (e) {
      if (isUniqueViolation(e)) throw new ServiceError('FEDSCORE_ERR_CONSORTIUM_EXISTS', consortium.id);
      throw e;
    }
    return consortium;
  }

  /** @throws ServiceError CONSORTIUM_NOT_FOUND. */
  async consortium(id: string): Promise<Consortium> {
    return (await this.load(id)).consortium;
  }

  /** The registered Ed25519 public keys (silo id = index). @throws CONSORTIUM_NOT_FOUND. */
  async roster(id: string): Promise<readonly Uint8Array[]> {
    return (await this.load(id)).roster;
  }

  private async load(id: string): Promise<Loaded> {
    const hit = this.cache.get(id);
    if (hit) return hit;
    const row = await this.db
      .selectFrom('consortia')
      .select('config')
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new ServiceError('FEDSCORE_ERR_CONSORTIUM_NOT_FOUND', id);
    const consortium = JSON.parse(row.config) as Consortium;
    const loaded = { consortium, roster: consortium.participants.map((p) => fromHex(p.publicKey)) };
    this.cache.set(id, loaded);
    return loaded;
  }

  private roundConfig(c: Consortium, roster: readonly Uint8Array[], round: number): RoundConfig {
    return { session: c.id, round, threshold: c.threshold, length: c.model.parameters + 1, roster };
  }

  private encoding(c: Consortium): WeightedEncoding {
    return { valueRange: c.encoding.clip, weightRange: c.encoding.weightRange, n: c.participants.length };
  }

  // ── models ───────────────────────────────────────────────────────────────────────────────

  /**
   * Sets the initial model (version 0) from Float32 little-endian bytes.
   * @throws ServiceError CONSORTIUM_NOT_FOUND, WRONG_MODEL_LENGTH, MODEL_LOCKED.
   */
  async setInitialModel(id: string, bytes: Uint8Array): Promise<void> {
    const { consortium } = await this.load(id);
    const expected = 4 * consortium.model.parameters;
    if (bytes.length !== expected)
      throw new ServiceError(
        'FEDSCORE_ERR_WRONG_MODEL_LENGTH',
        `${bytes.length} bytes, expected ${expected}`,
      );
    await this.db.transaction().execute(async (trx) => {
      const opened = await trx
        .selectFrom('rounds')
        .select('round')
        .where('consortium', '=', id)
        .limit(1)
        .execute();
      if (opened.length > 0) throw new ServiceError('FEDSCORE_ERR_MODEL_LOCKED');
      await trx.deleteFrom('models').where('consortium', '=', id).where('version', '=', 0).execute();
      await trx
        .insertInto('models')
        .values({ consortium: id, version: 0, params: Buffer.from(bytes) })
        .execute();
    });
  }

  /**
   * A model's Float32 little-endian bytes: `version`, or the latest when omitted.
   * @throws ServiceError CONSORTIUM_NOT_FOUND, MODEL_NOT_FOUND / MODEL_MISSING.
   */
  async model(id: string, version?: number): Promise<{ version: number; bytes: Buffer }> {
    await this.load(id);
    let q = this.db.selectFrom('models').select(['version', 'params']).where('consortium', '=', id);
    q = version === undefined ? q.orderBy('version', 'desc').limit(1) : q.where('version', '=', version);
    const row = await q.executeTakeFirst();
    if (!row)
      throw version === undefined
        ? new ServiceError('FEDSCORE_ERR_MODEL_MISSING')
        : new ServiceError('FEDSCORE_ERR_MODEL_NOT_FOUND', `version ${version}`);
    return { version: row.version, bytes: Buffer.from(row.params) };
  }

  // ── rounds ───────────────────────────────────────────────────────────────────────────────

  /**
   * Opens the next round from the latest model.
   * @throws ServiceError CONSORTIUM_NOT_FOUND, MODEL_MISSING, ROUND_OPEN.
   */
  async openRound(id: string): Promise<Round> {
    const { consortium } = await this.load(id);
    const last = await this.db
      .selectFrom('rounds')
      .select(['round', 'stage'])
      .where('consortium', '=', id)
      .orderBy('round', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (last && !TERMINAL.includes(last.stage as RoundStage)) {
      const now = await this.tick(id, last.round);
      if (!TERMINAL.includes(now.stage))
        throw new ServiceError('FEDSCORE_ERR_ROUND_OPEN', `round ${last.round} is ${now.stage}`);
    }
    const latest = await this.db
      .selectFrom('models')
      .select('version')
      .where('consortium', '=', id)
      .orderBy('version', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!latest) throw new ServiceError('FEDSCORE_ERR_MODEL_MISSING');
    const now = this.now();
    const row: RoundRow = {
      consortium: id,
      round: (last?.round ?? 0) + 1,
      stage: 'advertise',
      deadline: now + consortium.deadlines.advertise,
      base_version: latest.version,
      sets: '[]',
      survivors: null,
      dropped: null,
      total_weight: null,
      full_utility: null,
      empty_utility: null,
      scores: null,
      error: null,
      opened_at: now,
    };
    try {
      await this.db
        .insertInto('rounds')
        .values({ ...row, weighted_sum: null })
        .execute();
    } catch (e) {
      if (isUniqueViolation(e))
        throw new ServiceError('FEDSCORE_ERR_ROUND_OPEN', `round ${row.round} was just opened`);
      throw e;
    }
    return view(row);
  }

  /** Every round, in order (closes stages whose deadline passed first). */
  async rounds(id: string): Promise<Round[]> {
    await this.load(id);
    const rows = await this.db
      .selectFrom('rounds')
      .select(ROUND_COLUMNS)
      .where('consortium', '=', id)
      .orderBy('round')
      .execute();
    const last = rows[rows.length - 1];
    if (last && !TERMINAL.includes(last.stage as RoundStage))
      rows[rows.length - 1] = await this.tickRow(id, last.round);
    return rows.map(view);
  }

  /** @throws ServiceError CONSORTIUM_NOT_FOUND, ROUND_NOT_FOUND. */
  async round(id: string, round: number): Promise<Round> {
    return this.tick(id, round);
  }

  /** Closes the current stage if its deadline has passed; returns the round. */
  async tick(id: string, round: number): Promise<Round> {
    return view(await this.tickRow(id, round));
  }

  private async tickRow(id: string, round: number): Promise<RoundRow> {
    const loaded = await this.load(id);
    const row = await this.roundRow(this.db, id, round);
    if (TERMINAL.includes(row.stage as RoundStage) || this.now() < row.deadline) return row;
    return this.locked(id, round, async (trx, locked) => {
      if (TERMINAL.includes(locked.stage as RoundStage) || this.now() < locked.deadline) return locked;
      return this.advance(trx, loaded, locked, false);
    });
  }

  /**
   * Closes the current stage now (operator override of the deadline).
   * @throws ServiceError ROUND_NOT_FOUND, ROUND_CLOSED when the round is over.
   */
  async forceAdvance(id: string, round: number): Promise<Round> {
    const loaded = await this.load(id);
    return view(
      await this.locked(id, round, async (trx, row) => {
        if (TERMINAL.includes(row.stage as RoundStage))
          throw new ServiceError('FEDSCORE_ERR_ROUND_CLOSED', `round ${round} is ${row.stage}`);
        return this.advance(trx, loaded, row, true);
      }),
    );
  }

  private async roundRow(db: Executor, id: string, round: number): Promise<RoundRow> {
    const row = await db
      .selectFrom('rounds')
      .select(ROUND_COLUMNS)
      .where('consortium', '=', id)
      .where('round', '=', round)
      .executeTakeFirst();
    if (!row) throw new ServiceError('FEDSCORE_ERR_ROUND_NOT_FOUND', `round ${round} of ${id}`);
    return row;
  }

  private locked<T>(
    id: string,
    round: number,
    fn: (trx: Transaction<Database>, row: RoundRow) => Promise<T>,
  ) {
    return this.db.transaction().execute(async (trx) => {
      let q = trx
        .selectFrom('rounds')
        .select(ROUND_COLUMNS)
        .where('consortium', '=', id)
        .where('round', '=', round);
      if (this.dialect === 'postgres') q = q.forUpdate();
      const row = await q.executeTakeFirst();
      if (!row) throw new ServiceError('FEDSCORE_ERR_ROUND_NOT_FOUND', `round ${round} of ${id}`);
      return fn(trx, row);
    });
  }

  /**
   * Rebuilds the protocol server's state from the stored messages of `stages` and the sets.
   * Only the stages a step reads are loaded: a 4 MB masked vector per silo must not be read back
   * for every later message of the round (which made storage O(n²·d) per round).
   */
  private async serverState(
    trx: Executor,
    loaded: Loaded,
    row: RoundRow,
    stages: readonly MessageStage[],
  ): Promise<ServerState> {
    const rows =
      stages.length === 0
        ? []
        : await trx
            .selectFrom('messages')
            .select(['stage', 'silo', 'body'])
            .where('consortium', '=', row.consortium)
            .where('round', '=', row.round)
            .where('stage', 'in', [...stages])
            .execute();
    const maps = {
      advertise: new Map<number, AdvertiseKeys>(),
      share: new Map<number, ShareKeys>(),
      mask: new Map<number, MaskedInput>(),
      consistency: new Map<number, ConsistencyCheck>(),
      unmask: new Map<number, UnmaskResponse>(),
    };
    for (const m of rows) {
      const message = decodeClientMessage(new Uint8Array(m.body));
      (maps[m.stage as MessageStage] as Map<number, ClientMessage>).set(m.silo, message);
    }
    return {
      stage: row.stage as ServerStage,
      config: this.roundConfig(loaded.consortium, loaded.roster, row.round),
      adverts: maps.advertise,
      shares: maps.share,
      masked: maps.mask,
      checks: maps.consistency,
      unmasks: maps.unmask,
      sets: JSON.parse(row.sets) as number[][],
    };
  }

  /** Closes the current stage of a locked round; returns the updated row. */
  private async advance(
    trx: Transaction<Database>,
    loaded: Loaded,
    row: RoundRow,
    forced: boolean,
  ): Promise<RoundRow> {
    const { consortium } = loaded;
    const now = this.now();
    if (row.stage === 'reporting') return this.closeReporting(trx, loaded, row, forced);
    const state = await this.serverState(
      trx,
      loaded,
      row,
      READ_ON_CLOSE[row.stage as MessageStage] ?? MESSAGE_STAGES,
    );
    const { state: next, output } = await serverAdvance(state);
    const key = { consortium: row.consortium, round: row.round };
    let patch: Partial<Selectable<RoundsTable>>;
    if (output.type === 'send') {
      if (output.messages.length > 0)
        await trx
          .insertInto('outbox')
          .values(
            output.messages.map(({ to, message }) => ({
              ...key,
              kind: message.type,
              silo: to,
              body: asBuffer(encodeServerMessage(message)),
            })),
          )
          .execute();
      patch = {
        stage: next.stage,
        sets: JSON.stringify(next.sets),
        deadline: now + consortium.deadlines[next.stage as MessageStage],
      };
    } else if (output.type === 'abort') {
      patch = {
        stage: 'aborted',
        sets: JSON.stringify(next.sets),
        error: JSON.stringify({ code: output.code, detail: output.detail }),
      };
    } else {
      patch = await this.finishAggregation(trx, loaded, row, output.result);
      // Masked inputs are useless once unmasked (the sum is stored): drop the bulk of the round.
      await trx
        .deleteFrom('messages')
        .where('consortium', '=', key.consortium)
        .where('round', '=', key.round)
        .where('stage', '=', 'mask')
        .execute();
    }
    return this.update(trx, row, patch);
  }

  private async update(
    trx: Transaction<Database>,
    row: RoundRow,
    patch: Partial<Selectable<RoundsTable>>,
  ): Promise<RoundRow> {
    await trx
      .updateTable('rounds')
      .set(patch)
      .where('consortium', '=', row.consortium)
      .where('round', '=', row.round)
      .execute();
    const { weighted_sum: _stored, ...rest } = patch;
    return { ...row, ...rest };
  }

  /** The sum is known: decode it, store M = M0 + Σ w_iΔ_i / Σ w_i and the utilities. */
  private async finishAggregation(
    trx: Transaction<Database>,
    loaded: Loaded,
    row: RoundRow,
    result: AggregationResult,
  ): Promise<Partial<Selectable<RoundsTable>>> {
    const { consortium } = loaded;
    const sum = decodeWeightedSum(result.sum, this.encoding(consortium));
    const baseRow = await trx
      .selectFrom('models')
      .select('params')
      .where('consortium', '=', row.consortium)
      .where('version', '=', row.base_version)
      .executeTakeFirstOrThrow();
    const base = readFloat32(baseRow.params);
    const next = new Float32Array(base.length);
    for (let j = 0; j < base.length; j++) next[j] = base[j]! + sum.average[j]!;
    await trx
      .insertInto('models')
      .values({ consortium: row.consortium, version: row.round, params: floatBytes(next) })
      .execute();
    let utilities: { full_utility: number; empty_utility: number } | Record<string, never> = {};
    if (this.evaluate) {
      try {
        const full = await this.evaluate(consortium, next);
        const empty = await this.evaluate(consortium, base);
        if (Number.isFinite(full) && Number.isFinite(empty))
          utilities = { full_utility: full, empty_utility: empty };
        else this.warn(`round ${row.round}: evaluator returned a non-finite utility`, { full, empty });
      } catch (e) {
        this.warn(`round ${row.round}: evaluator failed; the operator must post the utilities`, e);
      }
    }
    return {
      stage: 'reporting',
      deadline: this.now() + consortium.deadlines.reporting,
      sets: JSON.stringify(result.sets),
      survivors: JSON.stringify(result.survivors),
      dropped: JSON.stringify(result.dropped),
      weighted_sum: floatBytes(sum.weightedSum),
      total_weight: sum.totalWeight,
      ...utilities,
    };
  }

  /**
   * Accepts one secure-aggregation message posted by `silo` to the `stage` endpoint. Posting a
   * message identical to one already accepted is an idempotent success (a silo retrying after a
   * lost answer), except for a masked input after the round's sum was computed (masked inputs are
   * deleted then).
   * @throws ServiceError WRONG_MESSAGE_TYPE, FORBIDDEN (sender ≠ silo), ROUND_CLOSED, or
   *   FEDSCORE_ERR_SECAGG_* for the protocol's rejections (the stored state is then unchanged).
   */
  async postMessage(
    id: string,
    round: number,
    stage: MessageStage,
    silo: number,
    bytes: Uint8Array,
  ): Promise<Round> {
    const loaded = await this.load(id);
    await this.tickRow(id, round);
    let message: ClientMessage;
    try {
      // A plain copy: protocol/codec.ts's reader slices its input, and Buffer#slice is a view
      // into Node's pool, which the vector decoder would then read from the pool's offset 0.
      message = decodeClientMessage(new Uint8Array(bytes));
    } catch (e) {
      throw secAggFailure(e);
    }
    if (message.type !== stage)
      throw new ServiceError('FEDSCORE_ERR_WRONG_MESSAGE_TYPE', `${message.type} message posted to ${stage}`);
    if (message.sender !== silo)
      throw new ServiceError(
        'FEDSCORE_ERR_FORBIDDEN',
        `silo ${silo} sent a message as silo ${message.sender}`,
      );
    const row = await this.locked(id, round, async (trx, row) => {
      // A retry of an accepted message (its answer was lost) is accepted again, whatever the
      // stage now is; a different message from the same silo and stage is the protocol's DUPLICATE.
      const stored = await trx
        .selectFrom('messages')
        .select('body')
        .where('consortium', '=', id)
        .where('round', '=', round)
        .where('stage', '=', stage)
        .where('silo', '=', silo)
        .executeTakeFirst();
      if (stored && Buffer.compare(Buffer.from(stored.body), Buffer.from(bytes)) === 0) return row;
      if (!isProtocolStage(row.stage))
        throw new ServiceError('FEDSCORE_ERR_ROUND_CLOSED', `round ${round} is ${row.stage}`);
      // serverHandle reads the current stage's messages only (duplicates); the rest is in the sets.
      const state = await this.serverState(trx, loaded, row, [row.stage as MessageStage]);
      const step = serverHandle(state, message);
      if (step.reply.type === 'rejected')
        throw new ServiceError(secAggCode(step.reply.code), step.reply.detail);
      await trx
        .insertInto('messages')
        .values({ consortium: id, round, stage, silo, body: Buffer.from(bytes) })
        .execute();
      const sets = state.sets;
      const expected = sets.length === 0 ? loaded.roster.length : sets[sets.length - 1]!.length;
      const received = (step.state[MAP_OF[stage]] as ReadonlyMap<number, unknown>).size;
      return received >= expected ? this.advance(trx, loaded, row, false) : row;
    });
    return view(row);
  }

  /**
   * The server message of `kind` addressed to `silo` (binary codec).
   * @throws ServiceError NOT_READY, SECAGG_ABORTED when the round aborted.
   */
  async inbox(id: string, round: number, kind: InboxKind, silo: number): Promise<Buffer> {
    const row = await this.tickRow(id, round);
    const found = await this.db
      .selectFrom('outbox')
      .select('body')
      .where('consortium', '=', id)
      .where('round', '=', round)
      .where('kind', '=', kind)
      .where('silo', '=', silo)
      .executeTakeFirst();
    if (found) return Buffer.from(found.body);
    if (row.stage === 'aborted') throw new ServiceError('FEDSCORE_ERR_SECAGG_ABORTED', errorOf(row)?.code);
    throw new ServiceError(
      'FEDSCORE_ERR_NOT_READY',
      `no ${kind} message for silo ${silo} in round ${round} (${row.stage})`,
    );
  }

  /** The published aggregate of a round. @throws ServiceError NOT_READY before the sum is known. */
  async aggregate(id: string, round: number): Promise<{ view: Round; weightedSum: Buffer }> {
    const row = await this.tickRow(id, round);
    const stored = await this.db
      .selectFrom('rounds')
      .select('weighted_sum')
      .where('consortium', '=', id)
      .where('round', '=', round)
      .executeTakeFirst();
    if (!stored?.weighted_sum)
      throw new ServiceError('FEDSCORE_ERR_NOT_READY', `round ${round} is ${row.stage}`);
    return { view: view(row), weightedSum: Buffer.from(stored.weighted_sum) };
  }

  // ── reports and scores ──────────────────────────────────────────────────────────────────

  /**
   * Stores `silo`'s signed score report; scores the round once every survivor reported and the
   * utilities are known. Re-posting the same report is an idempotent success.
   * @throws ServiceError REPORT_INVALID / REPORT_MISMATCH / REPORT_BAD_SIGNATURE, FORBIDDEN,
   *   NOT_REPORTING, NOT_A_SURVIVOR, REPORT_CONFLICT.
   */
  async submitReport(
    id: string,
    round: number,
    silo: number,
    bytes: Uint8Array,
  ): Promise<{ duplicate: boolean; round: Round }> {
    const loaded = await this.load(id);
    await this.tickRow(id, round);
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
    return this.locked(id, round, async (trx, row) => {
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
      const next = await this.maybeScore(trx, loaded, row);
      return { duplicate: false, round: view(next) };
    });
  }

  /**
   * Sets v(M) and v(M0) for a round in reporting (when the service has no evaluator).
   * @throws ServiceError NOT_REPORTING, UTILITIES_SET.
   */
  async setUtilities(id: string, round: number, full: number, empty: number): Promise<Round> {
    const loaded = await this.load(id);
    return view(
      await this.locked(id, round, async (trx, row) => {
        if (row.stage !== 'reporting')
          throw new ServiceError('FEDSCORE_ERR_NOT_REPORTING', `round ${round} is ${row.stage}`);
        if (row.full_utility !== null) throw new ServiceError('FEDSCORE_ERR_UTILITIES_SET', `round ${round}`);
        const next = await this.update(trx, row, { full_utility: full, empty_utility: empty });
        return this.maybeScore(trx, loaded, next);
      }),
    );
  }

  private async reports(trx: Executor, row: RoundRow): Promise<Buffer[]> {
    const rows = await trx
      .selectFrom('reports')
      .select('body')
      .where('consortium', '=', row.consortium)
      .where('round', '=', row.round)
      .orderBy('silo')
      .execute();
    return rows.map((r) => Buffer.from(r.body));
  }

  /** Scores the round when every survivor reported and the utilities are known. */
  private async maybeScore(trx: Transaction<Database>, loaded: Loaded, row: RoundRow): Promise<RoundRow> {
    const survivors = JSON.parse(row.survivors ?? '[]') as number[];
    const reports = await this.reports(trx, row);
    if (reports.length < survivors.length || row.full_utility === null) return row;
    return this.score(trx, loaded, row, reports);
  }

  /** Reporting deadline (or operator): score what arrived, or close the round without scores. */
  private async closeReporting(
    trx: Transaction<Database>,
    loaded: Loaded,
    row: RoundRow,
    forced: boolean,
  ): Promise<RoundRow> {
    const reports = await this.reports(trx, row);
    if (row.full_utility === null) {
      if (!forced) return row; // waiting for the operator's utilities
      return this.update(trx, row, {
        stage: 'closed',
        error: JSON.stringify({
          code: 'NO_UTILITIES',
          detail: 'closed by the operator before v(M) and v(M0) were known',
        }),
      });
    }
    if (reports.length < 2)
      return this.update(trx, row, {
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
    loaded: Loaded,
    row: RoundRow,
    reports: Buffer[],
  ): Promise<RoundRow> {
    const { consortium, roster } = loaded;
    const r = scoreReports(row.consortium, row.round, reports, roster, row.full_utility!, row.empty_utility!);
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
    return this.update(trx, row, { stage: 'scored', scores: JSON.stringify(scores) });
  }

  /** A scored round's scores. @throws ServiceError NOT_READY before scoring. */
  async roundScores(id: string, round: number): Promise<RoundScores> {
    const row = await this.tickRow(id, round);
    const s = scoresOf(row);
    if (!s) throw new ServiceError('FEDSCORE_ERR_NOT_READY', `round ${round} is ${row.stage}`);
    return s;
  }

  /** Scores of every scored round and, per scheme, each silo's sum over them (0 where absent). */
  async cumulativeScores(id: string): Promise<CumulativeScores> {
    const { consortium } = await this.load(id);
    const rows = await this.db
      .selectFrom('rounds')
      .select(ROUND_COLUMNS)
      .where('consortium', '=', id)
      .where('stage', '=', 'scored')
      .orderBy('round')
      .execute();
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

  /**
   * The manipulation audit of the consortium's scored rounds (docs/audit.md), for its operator.
   * @throws ServiceError NOT_FOUND for an unknown consortium.
   */
  async audit(id: string): Promise<AuditResult> {
    const { consortium } = await this.load(id);
    const { rounds } = await this.cumulativeScores(id);
    const names = consortium.participants.map((_, i) => `silo-${i}`);
    return auditRecordedRounds(rounds, names, `fedscore service, consortium ${id}`);
  }

  // ── request nonces ──────────────────────────────────────────────────────────────────────

  /**
   * Records a request nonce; false when it was already used within its lifetime.
   * Expired nonces of the silo are pruned on the way.
   */
  async useNonce(id: string, silo: number, nonce: string, expiresAt: number): Promise<boolean> {
    await this.db.deleteFrom('nonces').where('expires_at', '<', this.now()).execute();
    try {
      await this.db
        .insertInto('nonces')
        .values({ consortium: id, silo, nonce, expires_at: expiresAt })
        .execute();
      return true;
    } catch (e) {
      if (isUniqueViolation(e)) return false;
      throw e;
    }
  }
}

const MAP_OF = {
  advertise: 'adverts',
  share: 'shares',
  mask: 'masked',
  consistency: 'checks',
  unmask: 'unmasks',
} as const satisfies Record<MessageStage, keyof ServerState>;

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

function errorOf(row: RoundRow): { code: string; detail: string } | null {
  return row.error === null ? null : (JSON.parse(row.error) as { code: string; detail: string });
}

function scoresOf(row: RoundRow): RoundScores | null {
  if (row.scores === null) return null;
  const s = JSON.parse(row.scores) as Omit<RoundScores, 'round' | 'utilities'>;
  return { round: row.round, utilities: { full: row.full_utility!, empty: row.empty_utility! }, ...s };
}

function view(row: RoundRow): Round {
  return {
    consortium: row.consortium,
    round: row.round,
    stage: row.stage as RoundStage,
    deadline: row.deadline,
    baseModel: row.base_version,
    // total_weight is stored with the aggregate (finishAggregation)
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
    openedAt: row.opened_at,
  };
}

/** Decodes a stored Float64 weighted sum (for callers that want numbers, e.g. tests). */
export function weightedSumOf(bytes: Uint8Array): Float64Array {
  return readFloat64(bytes);
}
