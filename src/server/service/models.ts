/**
 * Global models as Float32 little-endian parameter vectors (table `models`): version 0 is the
 * operator's initial model, version r the result of round r (written by ./aggregation.ts when the
 * round's sum is known).
 *
 * Models are immutable once a round exists (version 0 may be replaced only before the first
 * round opens; a version r ≥ 1 is written once), so the process keeps the ones it has read or
 * written (./blob-cache.ts): every silo downloads the round's model, and the round's base is read
 * again when its sum is known — 4·d bytes each, which PostgreSQL sends as hex text.
 */
import { ServiceError } from '../errors.js';
import { BlobCache } from './blob-cache.js';
import type { Consortia } from './consortia.js';
import type { Executor, ServiceContext } from './context.js';

/** The most bytes of model parameters the process keeps (4 MB per version at d = 10^6). */
export const MODEL_CACHE_BYTES = 64 * 1024 * 1024;

/** The cache key of a model version (the cache groups entries by consortium and number). */
const versionKey = (consortium: string, version: number) => ({ consortium, round: version });

/** Setting the initial model and reading model versions. */
export class Models {
  /**
   * Model versions known to be immutable: every version ≥ 1 that was read or committed, and
   * version 0 once read as a round's base (a round exists, so it can no longer be replaced).
   */
  private readonly cache = new BlobCache<Buffer>(MODEL_CACHE_BYTES);

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
    const v = version ?? (await this.latestVersion(id));
    if (v === undefined) throw new ServiceError('FEDSCORE_ERR_MODEL_MISSING');
    const cached = this.cache.get(versionKey(id, v), 'params');
    if (cached !== undefined) return { version: v, bytes: Buffer.from(cached) };
    const row = await this.ctx.db
      .selectFrom('models')
      .select('params')
      .where('consortium', '=', id)
      .where('version', '=', v)
      .executeTakeFirst();
    if (!row)
      throw version === undefined
        ? new ServiceError('FEDSCORE_ERR_MODEL_MISSING')
        : new ServiceError('FEDSCORE_ERR_MODEL_NOT_FOUND', `version ${version}`);
    if (v >= 1) this.remember(id, v, row.params);
    return { version: v, bytes: Buffer.from(row.params) };
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

  /**
   * The stored bytes of a round's base version, which must exist (shared: read-only). A round
   * exists, so the version is immutable and kept.
   */
  async paramsOf(db: Executor, id: string, version: number): Promise<Buffer> {
    const cached = this.cache.get(versionKey(id, version), 'params');
    if (cached !== undefined) return cached;
    const row = await db
      .selectFrom('models')
      .select('params')
      .where('consortium', '=', id)
      .where('version', '=', version)
      .executeTakeFirstOrThrow();
    this.remember(id, version, row.params);
    return row.params;
  }

  /** Stores a new version (a round's result); {@link Models.remember} it once committed. */
  async insert(db: Executor, id: string, version: number, params: Buffer): Promise<void> {
    await db.insertInto('models').values({ consortium: id, version, params }).execute();
  }

  /** Keeps an immutable, committed version in the process. */
  remember(id: string, version: number, params: Buffer): void {
    this.cache.set(versionKey(id, version), 'params', params, params.byteLength);
  }
}
