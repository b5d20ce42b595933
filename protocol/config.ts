/**
 * Configuration of one secure-aggregation round, shared by all clients and the server.
 */
import { checkBytes, checkInt, checkString } from '../crypto/_check.js';
import { ED25519_KEY_LENGTH } from '../crypto/signature.js';

/** Largest roster: Shamir x-coordinates are silo id + 1 ∈ [1, 255]. */
export const MAX_PARTICIPANTS = 255;

/** The consortium's view of a round. */
export interface RoundConfig {
  /** Session identifier (1..255 UTF-8 bytes), e.g. the consortium run id. */
  readonly session: string;
  /** Round number, integer in [0, 2^32). */
  readonly round: number;
  /**
   * Threshold t: the round needs t survivors at every stage. n/2 < t ≤ n. Bonawitz et al. 2017
   * (§6, active model): with n_C corrupted clients, privacy against a malicious server needs
   * t > (n + n_C)/2 — otherwise the server can gather t consistency signatures for two different
   * survivor sets. With t ≤ n/2 even n_C = 0 fails, so it is refused.
   */
  readonly threshold: number;
  /** Length d of the masked vectors (uint32 words), 1 ≤ d < 2^31. */
  readonly length: number;
  /**
   * The registered long-term Ed25519 public keys; silo id = index, 2 ≤ n ≤ 255. All of them are
   * invited; those that do not advertise keys are simply absent from the round.
   */
  readonly roster: readonly Uint8Array[];
  /**
   * Whether surviving clients send, with their Unmasking response, their summed pairwise masks
   * with the dropped silos (UnmaskResponse.correction), so that the server's Unmasking costs
   * O(|U_3|) vector operations instead of O(|U_3| + |D|·|U_3|) mask expansions. Default true;
   * false trades server time for upload (one d-word vector per survivor when D is non-empty).
   */
  readonly corrections?: boolean;
}

/**
 * Validates a round configuration.
 *
 * @returns the same object.
 * @throws TypeError / RangeError naming the bad field.
 */
export function checkRoundConfig(config: RoundConfig): RoundConfig {
  if (typeof config !== 'object' || config === null) throw new TypeError('config: expected an object');
  checkString('config.session', config.session, 255);
  checkInt('config.round', config.round, 0, 0xffffffff);
  if (!Array.isArray(config.roster)) throw new TypeError('config.roster: expected an array of public keys');
  const n = checkInt('config.roster.length', config.roster.length, 2, MAX_PARTICIPANTS);
  config.roster.forEach((k, i) => {
    checkBytes(`config.roster[${i}]`, k, ED25519_KEY_LENGTH);
  });
  checkInt('config.threshold', config.threshold, 2, n);
  if (2 * config.threshold <= n)
    throw new RangeError(
      `config.threshold: ${config.threshold} must exceed n/2 = ${n / 2} (active security)`,
    );
  checkInt('config.length', config.length, 1, 0x7fffffff);
  if (config.corrections !== undefined && typeof config.corrections !== 'boolean')
    throw new TypeError('config.corrections: expected a boolean');
  return config;
}
