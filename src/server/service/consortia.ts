/**
 * Consortia: creating one (checked against the protocol's round configuration and the
 * quantizer's limits) and reading it back. A consortium is immutable once created, so its decoded
 * form — the configuration and the roster of Ed25519 keys — is cached per process.
 */
import { quantizer } from '../../../crypto/quantize.js';
import { checkRoundConfig, type RoundConfig } from '../../../protocol/config.js';
import type { WeightedEncoding } from '../../../protocol/weighted.js';
import { DEFAULT_EMPTY_COALITION } from '../../../scoring/empty-coalition.js';
import { DEFAULT_CONVENTION } from '../../ml/convention.js';
import { fromHex } from '../_bytes.js';
import { ServiceError } from '../errors.js';
import type { Consortium, ConsortiumInput, Deadlines } from '../schemas.js';
import { isUniqueViolation, type ServiceContext } from './context.js';

/** Deadlines used when the operator gives none. */
export const DEFAULT_DEADLINES: Deadlines = {
  advertise: 60_000,
  share: 60_000,
  mask: 300_000,
  consistency: 60_000,
  unmask: 60_000,
  reporting: 600_000,
};

/** A consortium with its roster decoded (silo id = index). */
export interface LoadedConsortium {
  readonly consortium: Consortium;
  readonly roster: readonly Uint8Array[];
}

/** The protocol's configuration of round `round` of consortium `c`: the vector is (w·Δ, w), d + 1 words. */
export function roundConfig(c: Consortium, roster: readonly Uint8Array[], round: number): RoundConfig {
  return { session: c.id, round, threshold: c.threshold, length: c.model.parameters + 1, roster };
}

/** How the consortium's silos quantize their weighted inputs (protocol/weighted.ts). */
export function weightedEncoding(c: Consortium): WeightedEncoding {
  return { valueRange: c.encoding.clip, weightRange: c.encoding.weightRange, n: c.participants.length };
}

/** Creating and reading consortia (table `consortia`). */
export class Consortia {
  private readonly cache = new Map<string, LoadedConsortium>();

  constructor(private readonly ctx: ServiceContext) {}

  /**
   * Creates a consortium.
   * @throws ServiceError INVALID_CONSORTIUM (threshold, repeated keys, encoding), CONSORTIUM_EXISTS.
   */
  async create(input: ConsortiumInput): Promise<Consortium> {
    const consortium: Consortium = {
      id: input.id,
      participants: input.participants.map((p) => ({ publicKey: p.publicKey })),
      threshold: input.threshold,
      model: { ...input.model },
      testSetDigest: input.testSetDigest,
      schemes: [...input.schemes],
      encoding: { ...input.encoding },
      convention: input.convention ?? DEFAULT_CONVENTION,
      emptyCoalition: input.emptyCoalition ?? DEFAULT_EMPTY_COALITION,
      deadlines: input.deadlines ?? DEFAULT_DEADLINES,
      createdAt: this.ctx.now(),
    };
    const keys = consortium.participants.map((p) => p.publicKey);
    const repeated = keys.findIndex((k, i) => keys.indexOf(k) !== i);
    if (repeated >= 0)
      throw new ServiceError(
        'FEDSCORE_ERR_INVALID_CONSORTIUM',
        `participants[${repeated}]: repeated public key`,
      );
    try {
      checkRoundConfig(roundConfig(consortium, keys.map(fromHex), 1));
      for (const range of [consortium.encoding.clip, consortium.encoding.weightRange])
        quantizer({ range, n: keys.length });
    } catch (e) {
      throw new ServiceError('FEDSCORE_ERR_INVALID_CONSORTIUM', (e as Error).message);
    }
    try {
      await this.ctx.db
        .insertInto('consortia')
        .values({ id: consortium.id, config: JSON.stringify(consortium), created_at: consortium.createdAt })
        .execute();
    } catch (e) {
      if (isUniqueViolation(e)) throw new ServiceError('FEDSCORE_ERR_CONSORTIUM_EXISTS', consortium.id);
      throw e;
    }
    return consortium;
  }

  /** A consortium's configuration. @throws ServiceError CONSORTIUM_NOT_FOUND. */
  async get(id: string): Promise<Consortium> {
    return (await this.load(id)).consortium;
  }

  /** The registered Ed25519 public keys (silo id = index). @throws ServiceError CONSORTIUM_NOT_FOUND. */
  async roster(id: string): Promise<readonly Uint8Array[]> {
    return (await this.load(id)).roster;
  }

  /** The configuration and decoded roster, cached. @throws ServiceError CONSORTIUM_NOT_FOUND. */
  async load(id: string): Promise<LoadedConsortium> {
    const hit = this.cache.get(id);
    if (hit) return hit;
    const row = await this.ctx.db
      .selectFrom('consortia')
      .select('config')
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new ServiceError('FEDSCORE_ERR_CONSORTIUM_NOT_FOUND', id);
    // Stored as JSON (no migration): a consortium stored before `emptyCoalition` existed scores with v(∅) = v(M0).
    const consortium = { emptyCoalition: DEFAULT_EMPTY_COALITION, ...(JSON.parse(row.config) as Consortium) };
    const loaded = { consortium, roster: consortium.participants.map((p) => fromHex(p.publicKey)) };
    this.cache.set(id, loaded);
    return loaded;
  }
}
