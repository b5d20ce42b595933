/**
 * Secure aggregation inside the store: the protocol server's state is never kept in memory.
 * {@link Aggregation.state} rebuilds it for one step from the round row (stage, closed stages'
 * sets) and the stored messages that step reads (protocol/server.ts `messagesRead`), so any
 * process — or a restarted one — continues the round. {@link Aggregation.close} closes a
 * collecting stage of a locked round: the protocol's next messages go to the outbox, an abort
 * ends the round, and after Unmasking the sum becomes the next model M = M0 + Σ w_iΔ_i / Σ w_i
 * (with v(M) and v(M0) when the service has an evaluator) and the round moves to reporting.
 * The protocol's faults (bad shares discarded and their senders, wrong corrections, a bad
 * dealer) are stored with the round (`faults`) and logged; an abort's culprits are named in its
 * error.
 *
 * The decoded messages of rounds still aggregating are kept in the process
 * ({@link Aggregation.remember}, once the transaction that stored them has committed), so that
 * rebuilding a state reads only the list of stored messages, not their bodies: each masked input
 * is otherwise read back from the store at the Unmasking close, and the stage's earlier masked
 * inputs on every MaskedInputCollection post (the DUPLICATE check). The protocol server never
 * modifies a message it holds (its states are rebuilt, not updated in place), so one decoded
 * message can serve every step.
 */
import type { Transaction } from 'kysely';
import type { Fault } from '../../../protocol/errors.js';
import type { ClientMessage } from '../../../protocol/messages.js';
import {
  type AggregationResult,
  type CollectingStage,
  isCollectingStage,
  messagesRead,
  restoreServer,
  type ServerState,
  serverAdvance,
} from '../../../protocol/server.js';
import { decodeWeightedSum, stepModel } from '../../../protocol/weighted.js';
import { floatBytes, readFloat32 } from '../_bytes.js';
import type { Database } from '../store/schema.js';
import { BlobCache } from './blob-cache.js';
import { type LoadedConsortium, roundConfig, weightedEncoding } from './consortia.js';
import type { Executor, ServiceContext } from './context.js';
import {
  deleteMessages,
  loadMessages,
  messageName,
  outboxMessage,
  outboxName,
  type RoundKey,
  type StoredPair,
  storeOutbox,
} from './messages.js';
import type { Models } from './models.js';
import { type RoundPatch, type RoundRow, type RoundRows, selectedOf } from './round-rows.js';

/** The collecting stage a round row is at. @throws Error when the round is past aggregation. */
export function collectingStageOf(row: RoundRow): CollectingStage {
  if (!isCollectingStage(row.stage))
    throw new Error(`round ${row.round} of ${row.consortium} is ${row.stage}, not aggregating`);
  return row.stage;
}

/**
 * The most bytes of decoded client messages the process keeps (a round at d = 10^6 with 20 silos
 * holds 80 MB of masked inputs; beyond this the oldest are read back from the store).
 */
export const MESSAGE_CACHE_BYTES = 256 * 1024 * 1024;

/** The most bytes of server messages (the outbox) the process keeps. */
export const OUTBOX_CACHE_BYTES = 32 * 1024 * 1024;

/** Rebuilding the protocol server's state and closing its stages. */
export class Aggregation {
  /** Decoded accepted messages of rounds still aggregating, by round and `messageName`. */
  private readonly cache = new BlobCache<ClientMessage>(MESSAGE_CACHE_BYTES);
  /**
   * Encoded server messages of rounds still aggregating, by round and `outboxName`: each is
   * written once when its stage closes and then fetched by its recipient.
   */
  private readonly outbox = new BlobCache<Buffer>(OUTBOX_CACHE_BYTES);

  constructor(
    private readonly ctx: ServiceContext,
    private readonly models: Models,
    private readonly rows: RoundRows,
  ) {}

  /**
   * The protocol server's state of a round at a collecting stage, holding only the stored
   * messages `step` reads: a 4 MB masked vector per silo must not be read back for every later
   * message of the round (which made storage O(n²·d) per round). `listed`: the round's stored
   * pairs, when the caller read them in the same transaction.
   */
  async state(
    db: Executor,
    loaded: LoadedConsortium,
    row: RoundRow,
    step: 'handle' | 'advance',
    listed?: readonly StoredPair[],
  ): Promise<ServerState> {
    const stage = collectingStageOf(row);
    const messages = await loadMessages(db, row, messagesRead(step, stage), this.cache, listed);
    const config = roundConfig(loaded.consortium, loaded.roster, row.round, selectedOf(row));
    return restoreServer({ config, stage, sets: JSON.parse(row.sets) as number[][] }, messages);
  }

  /**
   * Keeps an accepted message for the round's later steps. Call only once the transaction that
   * stored it has committed (and while the round is still aggregating): the cache must hold
   * nothing the store does not.
   */
  remember(key: RoundKey, stage: CollectingStage, silo: number, message: ClientMessage, bytes: number): void {
    this.cache.set(key, messageName(stage, silo), message, bytes);
  }

  /**
   * The server message of `kind` for `silo` (encoded; shared, read-only) if the process holds
   * it: no query, so that a silo fetching its message does not cost a round trip.
   */
  heldServerMessage(key: RoundKey, kind: string, silo: number): Buffer | undefined {
    return this.outbox.get(key, outboxName(kind, silo));
  }

  /** The stored server message of `kind` for `silo`, if any (kept once read: written once). */
  async serverMessage(key: RoundKey, kind: string, silo: number): Promise<Buffer | undefined> {
    const held = this.heldServerMessage(key, kind, silo);
    if (held !== undefined) return held;
    const stored = await outboxMessage(this.ctx.db, key, kind, silo);
    // Read outside any transaction: committed, and never changed.
    if (stored !== undefined) this.outbox.set(key, outboxName(kind, silo), stored, stored.byteLength);
    return stored;
  }

  /** Closes the current collecting stage of a locked round; returns the updated row. */
  async close(trx: Transaction<Database>, loaded: LoadedConsortium, row: RoundRow): Promise<RoundRow> {
    const now = this.ctx.now();
    const state = await this.state(trx, loaded, row, 'advance');
    const { state: next, output } = await serverAdvance(state);
    let patch: RoundPatch;
    if (output.type === 'send') {
      const sent = await storeOutbox(trx, row, output.messages);
      this.rows.afterCommit(trx, () => {
        for (const m of sent) this.outbox.set(row, outboxName(m.kind, m.silo), m.body, m.body.byteLength);
      });
      patch = {
        stage: next.stage,
        sets: JSON.stringify(next.sets),
        // a stage that sends messages opens the next collecting stage
        deadline: now + loaded.consortium.deadlines[next.stage as CollectingStage],
      };
    } else if (output.type === 'abort') {
      const named = output.culprits.length > 0 ? ` (culprits: silos ${output.culprits.join(', ')})` : '';
      patch = {
        stage: 'aborted',
        sets: JSON.stringify(next.sets),
        error: JSON.stringify({ code: output.code, detail: `${output.detail}${named}` }),
        ...this.faults(row, output.faults),
      };
    } else {
      patch = await this.finish(trx, loaded, row, output.result);
      // Masked inputs are useless once unmasked (the sum is stored): drop the bulk of the round.
      await deleteMessages(trx, row, 'mask');
    }
    // Past aggregation no step reads the round's messages again (forgetting is always safe: a
    // miss reads the store, should this transaction roll back).
    if (output.type !== 'send') {
      this.cache.dropRound(row);
      this.outbox.dropRound(row);
    }
    return this.rows.update(trx, row, patch);
  }

  /**
   * The faults the protocol server recorded (bad shares discarded, wrong corrections replaced,
   * a bad dealer): stored with the round, where silos and the dashboard read them, and reported
   * to the operator's log.
   */
  private faults(row: RoundRow, faults: readonly Fault[]): { faults: string } | Record<string, never> {
    if (faults.length === 0) return {};
    for (const f of faults)
      this.ctx.warn(`round ${row.round} of ${row.consortium}: silo ${f.silo} ${f.code}: ${f.detail}`, f);
    return { faults: JSON.stringify(faults) };
  }

  /** The sum is known: decode it, store M = M0 + Σ w_iΔ_i / Σ w_i and the utilities. */
  private async finish(
    trx: Transaction<Database>,
    loaded: LoadedConsortium,
    row: RoundRow,
    result: AggregationResult,
  ): Promise<RoundPatch> {
    const { consortium } = loaded;
    // The protocol server checked the aggregate already (roundConfig carries the encoding); the
    // decoder checks it again against |U_3| before anything is published.
    const sum = decodeWeightedSum(
      result.sum,
      weightedEncoding(consortium, selectedOf(row)),
      result.survivors.length,
    );
    const base = readFloat32(await this.models.paramsOf(trx, row.consortium, row.base_version));
    // The silos derive the same bytes from the published Σ w_iΔ_i and Σ w_i (their model chain).
    const next = stepModel(base, sum.weightedSum, sum.totalWeight);
    const params = floatBytes(next);
    await this.models.insert(trx, row.consortium, row.round, params);
    this.rows.afterCommit(trx, () => this.models.remember(row.consortium, row.round, params));
    let utilities: { full_utility: number; empty_utility: number } | Record<string, never> = {};
    const { evaluate, warn } = this.ctx;
    if (evaluate) {
      try {
        const full = await evaluate(consortium, next);
        const empty = await evaluate(consortium, base);
        if (Number.isFinite(full) && Number.isFinite(empty))
          utilities = { full_utility: full, empty_utility: empty };
        else warn(`round ${row.round}: evaluator returned a non-finite utility`, { full, empty });
      } catch (e) {
        warn(`round ${row.round}: evaluator failed; the operator must post the utilities`, e);
      }
    }
    return {
      stage: 'reporting',
      deadline: this.ctx.now() + consortium.deadlines.reporting,
      sets: JSON.stringify(result.sets),
      survivors: JSON.stringify(result.survivors),
      dropped: JSON.stringify(result.dropped),
      weighted_sum: floatBytes(sum.weightedSum),
      total_weight: sum.totalWeight,
      ...utilities,
      ...this.faults(row, result.faults),
    };
  }
}
