/**
 * Request nonces (table `nonces`): a signed request's nonce must be new within its freshness
 * window (auth.ts). They are stored, so the check holds across server processes.
 *
 * One statement per request: the insert takes the nonce if it is new or its earlier use has
 * expired (an upsert whose update only applies to an expired row), and expired rows are pruned at
 * most once per {@link PRUNE_INTERVAL_MS} of the service's clock. A prune on every request was a
 * second round trip per request on PostgreSQL (2 s of a 20-silo round's 11 s of storage, issue 17).
 */
import type { ServiceContext } from './context.js';

/** Expired nonces are deleted at most this often (ms); until then an expired row is reusable. */
export const PRUNE_INTERVAL_MS = 1000;

/** Recording request nonces. */
export class Nonces {
  /** When this process last pruned (service clock, ms). */
  private prunedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly ctx: ServiceContext) {}

  /**
   * Records a request nonce; false when it was already used within its lifetime.
   * Expired nonces are pruned on the way (at most once per PRUNE_INTERVAL_MS).
   */
  async use(id: string, silo: number, nonce: string, expiresAt: number): Promise<boolean> {
    const now = this.ctx.now();
    if (now - this.prunedAt >= PRUNE_INTERVAL_MS) {
      this.prunedAt = now;
      await this.ctx.db.deleteFrom('nonces').where('expires_at', '<', now).execute();
    }
    const result = await this.ctx.db
      .insertInto('nonces')
      .values({ consortium: id, silo, nonce, expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .columns(['consortium', 'silo', 'nonce'])
          .doUpdateSet({ expires_at: expiresAt })
          // only an expired earlier use is replaced; an unexpired one makes this a replay
          .where('nonces.expires_at', '<', now),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }
}
