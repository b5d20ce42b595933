/**
 * Configuration of one secure-aggregation round, shared by all clients and the server, and the
 * threshold rule of the actively secure mode.
 *
 * Threshold (Bonawitz et al. 2017, §6, active model: the server may be malicious and up to n_C
 * silos corrupted). The consistency check makes every honest silo sign the survivor set U_3 it
 * was shown and refuse to unmask without t signatures on the same set. A malicious server can
 * still show different sets to two disjoint groups of honest silos; each group's set is
 * completed by the n_C corrupted silos, which sign anything. If both groups reach t signatures,
 * one group reveals the seed shares and the other the key shares of the same silo, and its input
 * is unmasked (test/security/threshold-split-view.test.ts). The n − n_C honest silos split into
 * two groups that both reach t exactly when 2t ≤ (n − n_C) + 2·n_C = n + n_C, so privacy needs
 *
 *   t > (n + n_C)/2,  i.e.  t ≥ ⌊(n + n_C)/2⌋ + 1,   (and t > n_C, implied since n_C < n)
 *
 * the corrupted silos alone must not reach t either. The paper's instance is n_C < n/3 with
 * t ≥ ⌊2n/3⌋ + 1, fedscore's default: n_C defaults to ⌈n/3⌉ − 1, the largest n_C < n/3, and t to
 * ⌊2n/3⌋ + 1, which meets the bound for that n_C. A lower t is refused (WEAK_THRESHOLD) unless
 * the configuration sets `weakThreshold`; t ≤ n/2 is refused always (even n_C = 0 fails).
 *
 * A round of k < n participants (the engine selects k of n silos) has its own roster of k: all
 * n_C corrupted silos may be among them, so the round tolerates n_C(k) = min(n_C, k − 1) (with
 * k corrupted participants there is no honest input left to protect) and needs
 * t ≥ ⌊(k + n_C(k))/2⌋ + 1 ({@link roundThreshold}).
 */
import { checkBytes, checkInt, checkString } from '../crypto/check.js';
import { ED25519_KEY_LENGTH } from '../crypto/signature.js';
import { WeakThresholdError } from './errors.js';
import { checkWeightedEncoding, type WeightedEncoding } from './weighted.js';

/** Largest roster: Shamir x-coordinates are silo id + 1 ∈ [1, 255]. */
export const MAX_PARTICIPANTS = 255;

/**
 * What survivors send with their Unmasking response, and what the server does with it
 * (UnmaskResponse.correction: a survivor's summed pairwise masks with the dropped silos).
 *  - `'off'` (default): no correction; the server rebuilds every survivor's masks with the
 *    dropped silos from their reconstructed s_u^SK (Bonawitz et al. 2017, round 4). Nothing to
 *    forge. Server cost |D|·|U_3| mask expansions.
 *  - `'recompute'`: survivors send corrections and the server recomputes each one from s_u^SK,
 *    discarding a wrong one (its recomputed value is used) and naming its sender
 *    (BAD_CORRECTION). The same server cost as `'off'`, plus the upload; it adds attribution.
 *  - `'fallback'`: the server subtracts the corrections unchecked — O(|U_3|) vector operations
 *    instead of |D|·|U_3| expansions — and checks the decoded aggregate (requires `encoding`);
 *    when the check fails it rebuilds the masks from s_u^SK as `'recompute'` does. A forged
 *    correction that keeps the aggregate in range is NOT detected: it has the effect of a wrong
 *    input, which the protocol cannot detect either (docs/threat-model.md).
 */
export type CorrectionMode = 'off' | 'recompute' | 'fallback';

/** The correction modes, in the order above. */
export const CORRECTION_MODES: readonly CorrectionMode[] = ['off', 'recompute', 'fallback'];

/** The consortium's view of a round. */
export interface RoundConfig {
  /** Session identifier (1..255 UTF-8 bytes), e.g. the consortium run id. */
  readonly session: string;
  /** Round number, integer in [0, 2^32). */
  readonly round: number;
  /**
   * Threshold t: the round needs t survivors at every stage. At least ⌊(n + n_C)/2⌋ + 1 (module
   * comment) unless `weakThreshold`; always more than n/2; at most n.
   */
  readonly threshold: number;
  /** Length d of the masked vectors (uint32 words), 1 ≤ d < 2^31. */
  readonly length: number;
  /**
   * The registered long-term Ed25519 public keys; silo id = index, 2 ≤ n ≤ 255. All of them are
   * invited; those that do not advertise keys are simply absent from the round.
   */
  readonly roster: readonly Uint8Array[];
  /** n_C: how many corrupted silos the round must tolerate, 0 ≤ n_C < n (default ⌈n/3⌉ − 1). */
  readonly corruptTolerated?: number;
  /**
   * Explicit opt-in to a threshold below ⌊(n + n_C)/2⌋ + 1 (default false). A weak round is not
   * private against a malicious server colluding with n_C silos; results record it.
   */
  readonly weakThreshold?: boolean;
  /** Unmasking corrections ({@link CorrectionMode}, default `'off'`). */
  readonly corrections?: CorrectionMode;
  /**
   * When the vectors are weighted inputs (protocol/weighted.ts: d − 1 values and a weight word),
   * their encoding: the server then checks the aggregate after Unmasking (AGGREGATE_OUT_OF_RANGE).
   * `encoding.n` must be at least the roster size, or the number of `participants` when given.
   */
  readonly encoding?: WeightedEncoding;
  /**
   * The silos allowed to take part in this round (a strategy's selection: distinct roster ids,
   * ascending, at least t of them); absent: every silo. The server refuses any other sender
   * (UNKNOWN_SENDER), so at most |participants| inputs are ever summed and `encoding.n` need only
   * cover them; AdvertiseKeys expects the participants only (stageProgress).
   */
  readonly participants?: readonly number[];
}

/** The default n_C for n silos: ⌈n/3⌉ − 1, the largest n_C < n/3 (Bonawitz et al. 2017, §6). */
export function defaultCorruptTolerated(n: number): number {
  checkInt('n', n, 1, MAX_PARTICIPANTS);
  return Math.ceil(n / 3) - 1;
}

/**
 * The smallest threshold that keeps a round of n silos private against a malicious server
 * colluding with n_C of them: ⌊(n + n_C)/2⌋ + 1 (module comment).
 *
 * @throws RangeError naming `n` or `corrupt` when out of range (0 ≤ n_C < n).
 */
export function minimumThreshold(n: number, corrupt: number): number {
  checkInt('n', n, 1, MAX_PARTICIPANTS);
  checkInt('corrupt', corrupt, 0, n - 1);
  return Math.floor((n + corrupt) / 2) + 1;
}

/** The default threshold for n participants: ⌊2n/3⌋ + 1, a strict two-thirds majority. */
export function defaultThreshold(n: number): number {
  return Math.floor((2 * n) / 3) + 1;
}

/** What a consortium or experiment configures about thresholds (for all of its n silos). */
export interface ThresholdPolicy {
  /** The configured t (default {@link defaultThreshold} of the round's participants). */
  readonly threshold?: number;
  /** n_C of the whole consortium (resolved: the caller applies the default). */
  readonly corruptSilos: number;
  /** The explicit opt-in to a threshold below the bound. */
  readonly weakThreshold?: boolean;
}

/** n_C of a round of k participants: min(n_C, k − 1) (module comment). */
export function roundCorruptTolerated(k: number, corruptSilos: number): number {
  return Math.max(0, Math.min(corruptSilos, k - 1));
}

/**
 * The threshold a round of k participants runs with: the configured one (default
 * {@link defaultThreshold}(k)), raised to the round's bound ⌊(k + n_C(k))/2⌋ + 1 — or, with the
 * weak opt-in, only to a strict majority — and capped at k.
 */
export function roundThreshold(k: number, policy: ThresholdPolicy): number {
  checkInt('k', k, 1, MAX_PARTICIPANTS);
  const floor = policy.weakThreshold
    ? Math.floor(k / 2) + 1
    : minimumThreshold(k, roundCorruptTolerated(k, policy.corruptSilos));
  return Math.min(k, Math.max(policy.threshold ?? defaultThreshold(k), floor));
}

/** The message of a refused weak threshold (also used by the service and the engine's config). */
export function weakThresholdMessage(field: string, t: number, n: number, corrupt: number): string {
  return `${field}: t = ${t} is below ⌊(n + n_C)/2⌋ + 1 = ${minimumThreshold(n, corrupt)} for n = ${n} silos and n_C = ${corrupt} corrupted ones (Bonawitz et al. 2017, §6: a malicious server could show two survivor sets and unmask inputs); opt in to a weak threshold explicitly to run below the bound`;
}

/**
 * Validates a round configuration.
 *
 * @returns the same object.
 * @throws TypeError / RangeError naming the bad field; {@link WeakThresholdError} (a RangeError
 *   with code WEAK_THRESHOLD) when t is below the bound without the opt-in.
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
  const corrupt =
    config.corruptTolerated === undefined
      ? defaultCorruptTolerated(n)
      : checkInt('config.corruptTolerated', config.corruptTolerated, 0, n - 1);
  if (config.weakThreshold !== undefined && typeof config.weakThreshold !== 'boolean')
    throw new TypeError('config.weakThreshold: expected a boolean');
  if (config.threshold < minimumThreshold(n, corrupt) && config.weakThreshold !== true)
    throw new WeakThresholdError(weakThresholdMessage('config.threshold', config.threshold, n, corrupt));
  checkInt('config.length', config.length, 1, 0x7fffffff);
  if (config.corrections !== undefined && !CORRECTION_MODES.includes(config.corrections))
    throw new TypeError(`config.corrections: expected one of ${CORRECTION_MODES.join(', ')}`);
  if (config.participants !== undefined) {
    const p = config.participants;
    if (!Array.isArray(p)) throw new TypeError('config.participants: expected an array of silo ids');
    p.forEach((id, k) => {
      checkInt(`config.participants[${k}]`, id, 0, n - 1);
      if (k > 0 && id <= p[k - 1]!)
        throw new RangeError('config.participants: expected distinct silo ids in ascending order');
    });
    if (p.length < config.threshold)
      throw new RangeError(
        `config.participants: ${p.length} participants cannot reach the threshold t = ${config.threshold}`,
      );
  }
  if (config.encoding !== undefined) {
    checkWeightedEncoding('config.encoding', config.encoding);
    const inputs = config.participants?.length ?? n;
    if (config.encoding.n < inputs)
      throw new RangeError(
        `config.encoding.n: ${config.encoding.n} is below the ${config.participants ? 'number of participants' : 'roster size'} ${inputs}`,
      );
    if (config.length < 2) throw new RangeError('config.length: a weighted input has ≥ 1 value and a weight');
  }
  if (config.corrections === 'fallback' && config.encoding === undefined)
    throw new RangeError("config.corrections: 'fallback' needs config.encoding to check the aggregate");
  return config;
}

/** Whether a validated configuration runs below the active-security bound (weak opt-in used). */
export function isWeakRound(config: RoundConfig): boolean {
  const n = config.roster.length;
  return config.threshold < minimumThreshold(n, config.corruptTolerated ?? defaultCorruptTolerated(n));
}
