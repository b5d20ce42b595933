/**
 * SHA-256 (FIPS 180-4) from node:crypto (native, several hundred MB/s to GB/s).
 *
 * Used to pre-hash large protocol messages before Ed25519 signing: PureEdDSA hashes the whole
 * message twice with SHA-512 when signing and once when verifying (RFC 8032 §5.1.6–5.1.7), which
 * in pure JavaScript costs more than the masking itself for a 4 MB masked vector. Signing
 * SHA-256(message) instead is secure as long as SHA-256 is collision resistant.
 */
import { createHash } from 'node:crypto';
import { checkBytes } from './check.js';

/**
 * SHA-256 of the concatenation of `parts`.
 *
 * @returns 32 bytes owned by the caller.
 * @throws TypeError if a part is not a Uint8Array.
 */
export function sha256(...parts: Uint8Array[]): Uint8Array {
  const h = createHash('sha256');
  parts.forEach((p, i) => {
    checkBytes(`parts[${i}]`, p);
    h.update(p);
  });
  return new Uint8Array(h.digest());
}
