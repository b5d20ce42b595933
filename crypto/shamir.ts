/**
 * Shamir t-of-n secret sharing of 32-byte secrets (Shamir 1979), over GF(2^8) byte-wise, through
 * the independently audited `shamir-secret-sharing` package (Privy; audited by Cure53 and Zellic).
 *
 * Share format (the package's): 32 bytes of y-values followed by one byte x ∈ [1, 255].
 *
 * Why not call the package's `split` directly: it draws its polynomial coefficients and a
 * shuffled set of x-coordinates from node:crypto, so a round could not be replayed from a seed
 * (docs/architecture.md, "Layers": randomness … passed in). {@link splitSecret} instead fixes the polynomial
 * by its values — p(0) = secret, p(1), …, p(t−1) drawn from the caller's random source — which
 * is the same uniform distribution over degree-(t−1) polynomials with p(0) = secret (the map from
 * coefficients to these values is a bijection, the Vandermonde matrix being invertible), and
 * evaluates p at the other points with the package's own audited Lagrange interpolation
 * (`combine`), shifted: in GF(2^8) addition is XOR, so q(x) = p(x ⊕ a) has the same degree and
 * q(0) = p(a). No field arithmetic is written here.
 *
 * Share i (1-based x = i) goes to participant i − 1: the protocol uses x = silo id + 1.
 */
import { combine } from 'shamir-secret-sharing';
import { checkBytes, checkInt } from './check.js';
import type { RandomSource } from './random-bytes.js';

/** Length of the secrets shared here (X25519 secret keys and self-mask seeds). */
export const SECRET_LENGTH = 32;
/** Length of one share: the y-values plus the x-coordinate byte. */
export const SHARE_LENGTH = SECRET_LENGTH + 1;
/** Largest number of shares (x-coordinates are the non-zero bytes). */
export const MAX_SHARES = 255;

/** The x-coordinate (1..255) of a share. @throws TypeError / RangeError on a malformed share. */
export function shareIndex(share: Uint8Array): number {
  checkBytes('share', share, SHARE_LENGTH);
  return share[SECRET_LENGTH]!;
}

function point(x: number, y: Uint8Array): Uint8Array {
  const s = new Uint8Array(SHARE_LENGTH);
  s.set(y, 0);
  s[SECRET_LENGTH] = x;
  return s;
}

/**
 * Splits `secret` into `n` shares with x-coordinates 1..n, any `t` of which reconstruct it and
 * any t − 1 of which are independent of it.
 *
 * @param secret - 32 bytes; not modified (the caller still owns and wipes it).
 * @param n - number of shares, t ≤ n ≤ 255.
 * @param t - threshold, 2 ≤ t ≤ n (the package does not support t = 1, which would not be secret).
 * @param random - source of the (t − 1)·32 random bytes defining the polynomial.
 * @returns `n` shares of 33 bytes; share k (0-based) has x = k + 1. The caller owns them.
 * @throws TypeError / RangeError naming the offending parameter.
 */
export async function splitSecret(
  secret: Uint8Array,
  n: number,
  t: number,
  random: RandomSource,
): Promise<Uint8Array[]> {
  checkBytes('secret', secret, SECRET_LENGTH);
  checkInt('n', n, 2, MAX_SHARES);
  checkInt('t', t, 2, n);
  if (typeof random !== 'function') throw new TypeError('random: expected a RandomSource function');
  // Shamir 1979: a degree-(t−1) polynomial through (0, secret) and t − 1 uniformly random points.
  const base: Uint8Array[] = [point(0, secret)];
  for (let x = 1; x < t; x++) {
    const r = checkBytes('random()', random(SECRET_LENGTH), SECRET_LENGTH);
    base.push(point(x, r));
    r.fill(0);
  }
  const shares: Uint8Array[] = base.slice(1).map((p) => Uint8Array.from(p));
  for (let a = t; a <= n; a++) {
    // p(a) = q(0) for q(x) = p(x ⊕ a): interpolate the shifted points with the audited code.
    const shifted = base.map((p) => point(p[SECRET_LENGTH]! ^ a, p.subarray(0, SECRET_LENGTH)));
    const y = await combine(shifted);
    shares.push(point(a, y));
    y.fill(0);
    for (const s of shifted) s.fill(0);
  }
  for (const p of base) p.fill(0);
  return shares;
}

/**
 * Reconstructs a secret from at least t shares with distinct x-coordinates (the package's
 * `combine`, Lagrange interpolation at 0). With fewer than t shares the result is a value
 * independent of the secret — the caller must know t; reconstruction cannot detect it.
 *
 * @param shares - 2..255 shares of 33 bytes with distinct, non-zero x-coordinates.
 * @returns the 32-byte secret, owned by the caller.
 * @throws TypeError if `shares` is not an array of Uint8Array; RangeError on a wrong count,
 *   length, zero x-coordinate or duplicated x-coordinate.
 */
export async function combineShares(shares: readonly Uint8Array[]): Promise<Uint8Array> {
  if (!Array.isArray(shares)) throw new TypeError('shares: expected an array');
  checkInt('shares.length', shares.length, 2, MAX_SHARES);
  const seen = new Set<number>();
  shares.forEach((s, i) => {
    checkBytes(`shares[${i}]`, s, SHARE_LENGTH);
    const x = s[SECRET_LENGTH]!;
    if (x === 0) throw new RangeError(`shares[${i}]: x-coordinate 0 is the secret itself`);
    if (seen.has(x)) throw new RangeError(`shares[${i}]: duplicate x-coordinate ${x}`);
    seen.add(x);
  });
  // The package checks `constructor === Uint8Array`: pass plain copies (Buffers would be refused).
  return combine(shares.map((s) => Uint8Array.from(s)));
}
