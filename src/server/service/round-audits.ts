/**
 * The manipulation audit (docs/audit.md) of a consortium's scored rounds, for its operator.
 *
 * Each round is audited once, when it is scored (the service's 'scored' event): in a worker thread
 * (./audit-worker.ts), one round at a time, never on the event loop, and in the bounded mode for
 * rounds of more than {@link SERVICE_AUDIT_MAX_OPTIMIZED_SILOS} silos (src/audit/manipulation-audit.ts
 * `maxOptimizedSilos`: such a round lists what it left out). The entry is stored (table
 * `round_audits`) with the digest of the scores it audited and the part of it the summary reads;
 * `GET …/audit` computes the summary from those parts (O(rounds · N)) and splices the stored JSON
 * of the rounds into the answer unparsed (O(its bytes): about 0.2 MB per bounded round of 128
 * silos). A round not audited yet is queued, waited for up to {@link AUDIT_WAIT_MS} and otherwise
 * listed as skipped ("audit pending") — so rounds scored before this table existed, or on a
 * replica that stopped, are audited after the next call. Two replicas may audit the same round
 * (the same entry; the later write wins).
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep, setImmediate as yieldToLoop } from 'node:timers/promises';
import { DEFAULT_EMPTY_COALITION } from '../../../scoring/empty-coalition.js';
import {
  type AuditOptions,
  assembleRecordedSummary,
  type RoundAuditSummaryPart,
} from '../../audit/manipulation-audit.js';
import type { Consortium } from '../../consortium/schemas.js';
import { type AuditedRoundJson, AuditWorker } from './audit-worker.js';
import { type Consortia, rangeOf } from './consortia.js';
import type { ServiceContext } from './context.js';
import { type RoundRow, type RoundRows, scoresOf } from './round-rows.js';

/**
 * Rounds of more silos than this are audited in the bounded mode (docs/audit.md "Bounded mode").
 * A full round audit of 32 silos took 8.3 s in the issue (4.5–11 s here, 2 cores shared), of 128
 * silos 454 s; a bounded round of 128 silos takes about 1.2–1.7 s, of 255 about 3.5 s.
 */
export const SERVICE_AUDIT_MAX_OPTIMIZED_SILOS = 32;

/** What a round not audited yet says in the audit. */
export const AUDIT_PENDING =
  'audit pending: each round is audited once, off the request path, after it is scored; ask again shortly';

/** How long `GET …/audit` waits (without computing) for the audits of rounds just scored (ms). */
export const AUDIT_WAIT_MS = 2000;

/** A round's entry as the summary reads it, or why it is not audited. */
type Entry = RoundAuditSummaryPart | { round: number; skipped: string };

/** The audit options of a consortium's rounds in the service. */
function optionsOf(c: Consortium): AuditOptions {
  const { lo, hi } = rangeOf(c);
  // rounds stored with values outside the range (before ranges were enforced) are listed as skipped
  return { range: { lo, hi }, outOfRange: 'skip', maxOptimizedSilos: SERVICE_AUDIT_MAX_OPTIMIZED_SILOS };
}

/** The digest of what a round's audit depends on: its scores row and utilities. */
function scoresDigest(row: RoundRow): string {
  return createHash('sha256')
    .update(`${row.scores}\n${row.full_utility}\n${row.empty_utility}`)
    .digest('hex');
}

/** Auditing the scored rounds (src/audit/manipulation-audit.ts) once each, off the request path. */
export class RoundAudits {
  private readonly worker = new AuditWorker();
  /** Rounds waiting to be audited, keyed `consortium/round`. */
  private readonly queue = new Map<string, { id: string; round: number }>();
  /** Rounds whose audit failed, with the digest and the reason (not retried for that digest). */
  private readonly failed = new Map<string, { digest: string; reason: string }>();
  private draining: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly consortia: Consortia,
    private readonly rows: RoundRows,
  ) {}

  /** Queues round `round` of `id` for its audit (the service calls it when the round is scored). */
  enqueue(id: string, round: number): void {
    if (this.closed) return;
    this.queue.set(`${id}/${round}`, { id, round });
    this.draining ??= this.drain().finally(() => {
      this.draining = null;
    });
  }

  /** Resolves once no round is queued or being audited. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Ends the audit thread; queued rounds stay unaudited (the next GET queues them again). */
  async close(): Promise<void> {
    this.closed = true;
    this.queue.clear();
    await this.worker.close();
    await this.draining?.catch(() => {});
  }

  /**
   * The audit of the scored rounds (the JSON text of src/audit/manipulation-audit.ts `AuditResult`) from their
   * stored entries, over the consortium's declared utility range. A round not audited yet is
   * queued and waited for up to {@link AUDIT_WAIT_MS} (the call computes nothing); still not
   * audited, it is listed as skipped ({@link AUDIT_PENDING}).
   * @throws ServiceError CONSORTIUM_NOT_FOUND.
   */
  async run(id: string): Promise<string> {
    const { consortium } = await this.consortia.load(id);
    let got = await this.collect(id);
    if (got.pending) {
      // rounds scored a moment ago: wait (not compute) a bounded time for their audits
      await Promise.race([this.idle(), sleep(AUDIT_WAIT_MS, undefined, { ref: false })]);
      got = await this.collect(id);
    }
    const { parts, texts } = got;
    const names = consortium.participants.map((_, i) => `silo-${i}`);
    const doc = assembleRecordedSummary(
      parts,
      names,
      `fedscore service, consortium ${id}`,
      optionsOf(consortium),
    );
    // the document with the rounds' stored JSON in place of `runs[0].rounds` (key order kept)
    const head = JSON.stringify({
      auditSchemaVersion: doc.auditSchemaVersion,
      source: doc.source,
      options: doc.options,
      schemes: doc.schemes,
    });
    const tail = JSON.stringify({ summary: doc.summary, detectionRates: doc.detectionRates });
    return `${head.slice(0, -1)},"runs":[{"seed":0,"rounds":[${texts.join(',')}]}],${tail.slice(1)}`;
  }

  /** The stored rounds' summary parts and JSON, a skipped entry for each round not audited (queued). */
  private async collect(id: string): Promise<{ parts: Entry[]; texts: string[]; pending: boolean }> {
    const scored = await this.rows.list(id, 'scored');
    const stored = new Map(
      (
        await this.ctx.db
          .selectFrom('round_audits')
          .select(['round', 'scores_digest', 'summary'])
          .where('consortium', '=', id)
          .execute()
      ).map((r) => [r.round, r]),
    );
    const parts: Entry[] = [];
    const texts: string[] = [];
    let pending = false;
    for (const row of scored) {
      const digest = scoresDigest(row);
      const hit = stored.get(row.round);
      if (hit && hit.scores_digest === digest) {
        parts.push(JSON.parse(hit.summary) as Entry);
        // one round's JSON per query: other requests run in between
        const { audit } = await this.ctx.db
          .selectFrom('round_audits')
          .select('audit')
          .where('consortium', '=', id)
          .where('round', '=', row.round)
          .executeTakeFirstOrThrow();
        texts.push(audit);
        await yieldToLoop();
        continue;
      }
      const failure = this.failed.get(`${id}/${row.round}`);
      const failed = failure !== undefined && failure.digest === digest;
      const skipped = {
        round: row.round,
        skipped: failed ? `audit failed: ${failure.reason}` : AUDIT_PENDING,
      };
      if (!failed) {
        pending = true;
        this.enqueue(id, row.round);
      }
      parts.push(skipped);
      texts.push(JSON.stringify(skipped));
    }
    return { parts, texts, pending };
  }

  /** Audits the queued rounds one at a time. */
  private async drain(): Promise<void> {
    for (;;) {
      const next = this.queue.entries().next();
      if (next.done || this.closed) return;
      const [key, { id, round }] = next.value;
      this.queue.delete(key);
      try {
        await this.auditOne(id, round);
      } catch (e) {
        if (!this.closed) this.ctx.warn(`the audit of round ${round} of ${id} failed`, e);
      }
    }
  }

  /** Audits one scored round in the worker and stores its entry (latest wins between replicas). */
  private async auditOne(id: string, round: number): Promise<void> {
    const { consortium } = await this.consortia.load(id);
    const row = await this.rows.find(this.ctx.db, id, round);
    const scores = scoresOf(row);
    if (row.stage !== 'scored' || scores === null) return;
    const digest = scoresDigest(row);
    let done: AuditedRoundJson;
    try {
      done = await this.worker.run({
        round: scores,
        options: optionsOf(consortium),
        emptyCoalition: consortium.emptyCoalition ?? DEFAULT_EMPTY_COALITION,
      });
    } catch (e) {
      if (!this.closed)
        this.failed.set(`${id}/${round}`, { digest, reason: e instanceof Error ? e.message : String(e) });
      throw e;
    }
    if (this.closed) return;
    const { json, summary } = done;
    const values = {
      consortium: id,
      round,
      scores_digest: digest,
      audit: json,
      summary,
      computed_at: this.ctx.now(),
    };
    await this.ctx.db
      .insertInto('round_audits')
      .values(values)
      .onConflict((oc) =>
        oc
          .columns(['consortium', 'round'])
          .doUpdateSet({ scores_digest: digest, audit: json, summary, computed_at: values.computed_at }),
      )
      .execute();
  }
}
