/**
 * Consortia: creating one (checked against the protocol's round configuration, the quantizer's
 * limits, the service's upload limit and the Ed25519 keys' validity) and reading it back. A
 * consortium is immutable once created, so its decoded form — the configuration and the roster
 * of Ed25519 keys — is cached per process.
 */

import { quantizer } from '../../../crypto/quantize.js';
import { publicKeyProblem } from '../../../crypto/signature.js';
import {
  checkRoundConfig,
  defaultCorruptTolerated,
  minimumThreshold,
  type RoundConfig,
  weakThresholdMessage,
} from '../../../protocol/config.js';
import type { WeightedEncoding } from '../../../protocol/weighted.js';
import { DEFAULT_EMPTY_COALITION } from '../../../scoring/empty-coalition.js';
import { DEFAULT_CONVENTION } from '../../consortium/convention.js';
import { DEFAULT_MIN_WEIGHT, DEFAULT_SELECTION_SEED, DEFAULT_UTILITY } from '../../consortium/defaults.js';
import { utilityRange } from '../../consortium/private-scoring.js';
import type { Consortium, ConsortiumInput, Deadlines } from '../../consortium/schemas.js';
import { MIN_SELECTED_SILOS } from '../../consortium/weight-floor.js';
import { networkedStrategy, planRound, publicSetup } from '../../strategies/networked-plan.js';
import type { StrategyConfig } from '../../strategies/registry.js';
import { fromHex } from '../_bytes.js';
import { largestUpload } from '../_limits.js';
import { ServiceError } from '../errors.js';
import { isUniqueViolation, type ServiceContext } from './context.js';

/** The utility of a consortium that declares none (and of those created before declarations). */

/** The range every utility of consortium `c` must lie in, and its description for messages. */
export function rangeOf(c: Consortium): { lo: number; hi: number; label: string } {
  const u = c.utility ?? DEFAULT_UTILITY;
  const { lo, hi } = utilityRange(u);
  return { lo, hi, label: u.name === 'accuracy' ? 'accuracy' : `negLoss, maxLoss ${u.maxLoss}` };
}

/**
 * Checks that each named utility of consortium `c` lies in its declared range.
 * @throws ServiceError UTILITY_OUT_OF_RANGE naming the first that does not.
 */
export function checkUtilities(c: Consortium, values: readonly (readonly [string, number])[]): void {
  const { lo, hi, label } = rangeOf(c);
  for (const [name, x] of values)
    if (!(x >= lo && x <= hi))
      throw new ServiceError(
        'FEDSCORE_ERR_UTILITY_OUT_OF_RANGE',
        `${name} = ${x} is outside [${lo}, ${hi}] (${label})`,
      );
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

/** A consortium with its roster decoded (silo id = index). */
export interface LoadedConsortium {
  readonly consortium: Consortium;
  readonly roster: readonly Uint8Array[];
}

/**
 * The protocol's configuration of round `round` of consortium `c`: the vector is (w·Δ, w), d + 1
 * words; n_C and the weak-threshold opt-in as the consortium records them; the encoding, so that
 * the protocol server checks every aggregate (protocol/weighted.ts checkWeightedSum).
 */
export function roundConfig(
  c: Consortium,
  roster: readonly Uint8Array[],
  round: number,
  selected?: readonly number[] | null,
): RoundConfig {
  return {
    session: c.id,
    round,
    threshold: c.threshold,
    length: c.model.parameters + 1,
    roster,
    corruptTolerated: c.corruptSilos,
    ...(c.weakThreshold ? { weakThreshold: true } : {}),
    encoding: weightedEncoding(c, selected),
    ...(selected ? { participants: [...selected] } : {}),
  };
}

/**
 * How the consortium's silos quantize their weighted inputs (protocol/weighted.ts): for n summands,
 * or for the round's k selected silos when its strategy selects (the engine's encoding,
 * src/sim/secure-round.ts, quantizes for the k silos of the round).
 */
export function weightedEncoding(c: Consortium, selected?: readonly number[] | null): WeightedEncoding {
  return {
    valueRange: c.encoding.clip,
    weightRange: c.encoding.weightRange,
    n: selected ? selected.length : c.participants.length,
    minWeight: c.encoding.minWeight,
  };
}

/**
 * A stored consortium with the fields of the active-security threshold filled in: consortia
 * stored before they existed get n_C = ⌈n/3⌉ − 1, minWeight 0, and are flagged `weakThreshold`
 * when their threshold is below the bound (they were created under the older t > n/2 rule).
 */
function withSecurityFields(
  c: Omit<Consortium, 'corruptSilos' | 'minimumThreshold' | 'weakThreshold'> & Partial<Consortium>,
): Consortium {
  const n = c.participants.length;
  const corruptSilos = c.corruptSilos ?? defaultCorruptTolerated(n);
  const minimum = minimumThreshold(n, corruptSilos);
  return {
    ...c,
    corruptSilos,
    minimumThreshold: minimum,
    weakThreshold: c.threshold < minimum,
    encoding: { ...c.encoding, minWeight: c.encoding.minWeight ?? DEFAULT_MIN_WEIGHT },
  };
}

/** The selection of round 1 (nothing published yet) by the consortium's strategy. */
async function firstSelection(c: Consortium): Promise<readonly number[]> {
  const strategy = networkedStrategy(strategyConfigOf(c));
  const seed = c.seed ?? DEFAULT_SELECTION_SEED;
  const setup = publicSetup(c.participants.length, c.rounds ?? 1, seed);
  return (await planRound({ strategy, setup, seed, round: 1, published: [], weights: false })).selected;
}

/** A consortium's strategy as an experiment configuration writes it: `{ name, ...parameters }`. */
export function strategyConfigOf(c: Consortium): StrategyConfig | undefined {
  return c.strategy === undefined ? undefined : { ...c.strategy.parameters, name: c.strategy.name };
}

/** Creating and reading consortia (table `consortia`). */
export class Consortia {
  private readonly cache = new Map<string, LoadedConsortium>();

  /** `maxVectorBytes`: the largest upload the service accepts (a round's uploads must fit). */
  constructor(
    private readonly ctx: ServiceContext,
    private readonly maxVectorBytes: number,
  ) {}

  /**
   * Creates a consortium.
   * @throws ServiceError INVALID_CONSORTIUM naming the field (threshold — below ⌊(n + n_C)/2⌋ + 1
   *   without allowWeakThreshold, or ≤ n/2 —, corruptSilos ≥ n, a repeated, small-order or invalid
   *   key, an encoding the quantizer refuses, uploads above `maxVectorBytes`), CONSORTIUM_EXISTS.
   */
  async create(input: ConsortiumInput): Promise<Consortium> {
    const n = input.participants.length;
    if (input.corruptSilos !== undefined && input.corruptSilos >= n)
      throw new ServiceError(
        'FEDSCORE_ERR_INVALID_CONSORTIUM',
        `corruptSilos: ${input.corruptSilos} must be < the ${n} participants`,
      );
    const consortium = withSecurityFields({
      id: input.id,
      participants: input.participants.map((p) => ({ publicKey: p.publicKey })),
      threshold: input.threshold,
      corruptSilos: input.corruptSilos ?? defaultCorruptTolerated(n),
      model: { ...input.model },
      testSetDigest: input.testSetDigest,
      schemes: [...input.schemes],
      encoding: { ...input.encoding, minWeight: input.encoding.minWeight ?? DEFAULT_MIN_WEIGHT },
      convention: input.convention ?? DEFAULT_CONVENTION,
      emptyCoalition: input.emptyCoalition ?? DEFAULT_EMPTY_COALITION,
      ...(input.quarantine === false ? { quarantine: false } : {}),
      utility: input.utility ?? DEFAULT_UTILITY,
      deadlines: input.deadlines ?? DEFAULT_DEADLINES,
      ...(input.rounds !== undefined ? { rounds: input.rounds } : {}),
      ...(input.strategy !== undefined
        ? { strategy: { name: input.strategy.name, parameters: { ...input.strategy.parameters } } }
        : {}),
      ...(input.seed !== undefined ? { seed: input.seed } : {}),
      secureAggregation: input.secureAggregation ?? 'fedscore',
      createdAt: this.ctx.now(),
    });
    const invalid = (detail: string) => new ServiceError('FEDSCORE_ERR_INVALID_CONSORTIUM', detail);
    const tooFew = (detail: string) =>
      new ServiceError(
        'FEDSCORE_ERR_TOO_FEW_SILOS',
        `${detail}: fewer than ${MIN_SELECTED_SILOS}, so each would read the others' updates off the sum`,
      );
    const keys = consortium.participants.map((p) => p.publicKey);
    const repeated = keys.findIndex((k, i) => keys.indexOf(k) !== i);
    if (repeated >= 0) throw invalid(`participants[${repeated}]: repeated public key`);
    keys.forEach((k, i) => {
      const problem = publicKeyProblem(fromHex(k));
      if (problem !== undefined) throw invalid(`participants[${i}].publicKey: ${problem}`);
    });
    try {
      checkRoundConfig(roundConfig(consortium, keys.map(fromHex), 1));
    } catch (e) {
      throw invalid((e as Error).message);
    }
    // Below the bound only by the explicit opt-in (protocol/config.ts; docs/threat-model.md).
    if (consortium.weakThreshold && input.allowWeakThreshold !== true)
      throw invalid(
        `${weakThresholdMessage('threshold', consortium.threshold, n, consortium.corruptSilos)} (allowWeakThreshold)`,
      );
    // A reports-only consortium's rounds open when the operator posts their utilities (./external.ts).
    if (consortium.secureAggregation === 'external')
      for (const field of ['rounds', 'strategy', 'seed'] as const)
        if (consortium[field] !== undefined)
          throw invalid(
            `${field}: a reports-only consortium (secureAggregation 'external') has no schedule or selection: its rounds open when the operator posts their utilities`,
          );
    if (consortium.strategy !== undefined) {
      // The strategy must run under secure aggregation, and its rounds must reach the threshold.
      let k: number;
      try {
        k = (await firstSelection(consortium)).length;
      } catch (e) {
        throw invalid((e as Error).message);
      }
      if (k < consortium.threshold)
        throw invalid(
          `strategy: selects ${k} of the ${n} silos per round, below the threshold t = ${consortium.threshold}: no round could complete`,
        );
      if (k < MIN_SELECTED_SILOS) throw tooFew(`strategy: selects ${k} of the ${n} silos per round`);
    } else if (input.seed !== undefined) throw invalid('seed: applies only with a strategy');
    // Issue 32 W1: a round of 2 shows each silo the other's update (the silos refuse it too).
    if (
      consortium.strategy === undefined &&
      consortium.secureAggregation !== 'external' &&
      n < MIN_SELECTED_SILOS
    )
      throw tooFew(`participants: ${n} silos, every one in every round`);
    for (const field of ['clip', 'weightRange'] as const)
      try {
        quantizer({ range: consortium.encoding[field], n: keys.length });
      } catch (e) {
        throw invalid(`encoding.${field}: ${(e as Error).message}`);
      }
    const needed = largestUpload({
      id: consortium.id,
      parameters: consortium.model.parameters,
      silos: keys.length,
    });
    if (needed > this.maxVectorBytes)
      throw invalid(
        `model.parameters: d = ${consortium.model.parameters} needs uploads of ${needed} bytes; the service takes at most ${this.maxVectorBytes} (maxVectorBytes)`,
      );
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
    // Stored as JSON (no migration): consortia stored before `emptyCoalition`, the utility
    // declaration or `secureAggregation` existed score with v(∅) = v(M0), report accuracy and
    // run fedscore's secure aggregation.
    const stored = JSON.parse(row.config) as Consortium;
    const consortium = withSecurityFields({
      emptyCoalition: DEFAULT_EMPTY_COALITION,
      ...stored,
      utility: stored.utility ?? DEFAULT_UTILITY,
      secureAggregation: stored.secureAggregation ?? 'fedscore',
    });
    const loaded = { consortium, roster: consortium.participants.map((p) => fromHex(p.publicKey)) };
    this.cache.set(id, loaded);
    return loaded;
  }
}
