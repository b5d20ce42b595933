/**
 * Request nonces (table `nonces`): a signed request's nonce must be new within its freshness
 * window (auth.ts). They are stored, so the check holds across server processes.
 */
import { isUniqueViolation, type ServiceContext } from './context.js';

/** Recording request nonces. */
export class Nonces {
  constructor(private readonly ctx: ServiceContext) {}

  /**
   * Records a request nonce; false when it was already used within its lifetime.
   * Expired nonces are pruned on the way.
   */
  async use(id: string, silo: number, nonce: string, expiresAt: number): Promise<boolean> {
    await this.ctx.db.deleteFrom('nonces').where('expires_at', '<', this.ctx.now()).execute();
    try {
      await this.ctx.db
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
