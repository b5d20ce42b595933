/**
 * Global models as Float32 little-endian parameter vectors (table `models`): version 0 is the
 * operator's initial model, version r the result of round r (written by ./aggregation.ts when the
 * round's sum is known).
 */
import { ServiceError } from '../errors.js';
import type { Consortia } from './consortia.js';
import type { Executor, ServiceContext } from './context.js';

/** Setting the initial model and reading model versions. */
export class Models {
  constructor(
    private readonly ctx: ServiceContext,
    private readonly consortia: Consortia,
  ) {}

  /**
   * Sets the initial model (version 0) from Float32 little-endian bytes.
   * @throws ServiceError CONSORTIUM_NOT_FOUND, WRONG_MODEL_LENGTH, MODEL_LOCKED.
   */
  async setInitial(id: string, bytes: Uint8Array): Promise<void> {
    const { consortium } = await this.consortia.load(id);
    const expected = 4 * consortium.model.parameters;
    if (bytes.length !== expected)
      throw new ServiceError(
        'FEDSCORE_ERR_WRONG_MODEL_LENGTH',
        `${bytes.length} bytes, expected ${expected}`,
      );
    await this.ctx.db.transaction().execute(async (trx) => {
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
  async get(id: string, version?: number): Promise<{ version: number; bytes: Buffer }> {
    await this.consortia.load(id);
    let q = this.ctx.db.selectFrom('models').select(['version', 'params']).where('consortium', '=', id);
    q = version === undefined ? q.orderBy('version', 'desc').limit(1) : q.where('version', '=', version);
    const row = await q.executeTakeFirst();
    if (!row)
      throw version === undefined
        ? new ServiceError('FEDSCORE_ERR_MODEL_MISSING')
        : new ServiceError('FEDSCORE_ERR_MODEL_NOT_FOUND', `version ${version}`);
    return { version: row.version, bytes: Buffer.from(row.params) };
  }

  /** The latest version of the consortium's model, or undefined before the initial model is set. */
  async latestVersion(id: string): Promise<number | undefined> {
    const latest = await this.ctx.db
      .selectFrom('models')
      .select('version')
      .where('consortium', '=', id)
      .orderBy('version', 'desc')
      .limit(1)
      .executeTakeFirst();
    return latest?.version;
  }

  /** The stored bytes of a version that must exist (a round's base model). */
  async paramsOf(db: Executor, id: string, version: number): Promise<Buffer> {
    const row = await db
      .selectFrom('models')
      .select('params')
      .where('consortium', '=', id)
      .where('version', '=', version)
      .executeTakeFirstOrThrow();
    return row.params;
  }

  /** Stores a new version (a round's result). */
  async insert(db: Executor, id: string, version: number, params: Buffer): Promise<void> {
    await db.insertInto('models').values({ consortium: id, version, params }).execute();
  }
}
