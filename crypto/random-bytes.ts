/**
 * Sources of random bytes for key generation and nonces.
 *
 * Protocol code never calls a random generator itself: it receives a {@link RandomSource}
 * through its `deps`, so a whole secure-aggregation round can be replayed from a seed
 * (docs/architecture.md, "Layers": protocol/ … randomness and key generation are
 * passed in).
 */
import { createCipheriv } from 'node:crypto';
import { checkBytes, checkInt } from './check.js';
import { hkdfSha256 } from './kdf.js';

/** A function returning `length` fresh random bytes in a buffer the caller owns. */
export type RandomSource = (length: number) => Uint8Array;

const MAX_REQUEST = 1 << 30;

/** Largest request crypto.getRandomValues serves in one call (Web Crypto API). */
const GET_RANDOM_VALUES_MAX = 65536;

/**
 * The operating system's CSPRNG through the Web Crypto API (`crypto.getRandomValues`, which Node
 * backs with the OS source, as node:crypto `randomBytes`). Use this outside simulations; it is
 * the only source the networked silo uses (src/client/silo.ts `siloDeps`).
 */
export function systemRandom(): RandomSource {
  return (length: number) => {
    checkInt('length', length, 0, MAX_REQUEST);
    const out = new Uint8Array(length);
    for (let o = 0; o < length; o += GET_RANDOM_VALUES_MAX)
      globalThis.crypto.getRandomValues(out.subarray(o, Math.min(length, o + GET_RANDOM_VALUES_MAX)));
    return out;
  };
}

/**
 * A deterministic random source: the AES-128-CTR keystream under a key and IV derived by
 * HKDF-SHA256 from `seed` (RFC 5869) — the CTR_DRBG idea of NIST SP 800-90A without reseeding.
 * Two sources built from equal seeds return equal byte streams; use only for simulations and
 * replays, where the seed is the experiment's seed (protocol/simulation-random.ts) — never on a
 * networked path (test/arch/layers.ts checks that src/client and src/server cannot reach one).
 *
 * @param seed - 16 to 64 bytes; copied, the caller keeps ownership.
 * @throws TypeError if `seed` is not a Uint8Array; RangeError if its length is outside [16, 64].
 */
export function seededRandom(seed: Uint8Array): RandomSource {
  checkBytes('seed', seed);
  if (seed.length < 16 || seed.length > 64) throw new RangeError('seed: expected 16 to 64 bytes');
  const okm = hkdfSha256(seed, new Uint8Array(0), new TextEncoder().encode('fedscore/seeded-random/v1'), 32);
  const cipher = createCipheriv('aes-128-ctr', okm.subarray(0, 16), okm.subarray(16, 32));
  okm.fill(0);
  return (length: number) => {
    checkInt('length', length, 0, MAX_REQUEST);
    return new Uint8Array(cipher.update(new Uint8Array(length)));
  };
}

/**
 * A seeded random source from a small integer seed (e.g. an experiment seed and a silo index).
 *
 * @throws TypeError / RangeError if a part is not an integer in [0, 2^32).
 */
export function seededRandomFromInts(...parts: number[]): RandomSource {
  const seed = new Uint8Array(16 + 4 * parts.length);
  seed.set(new TextEncoder().encode('fedscore-seeded!'), 0);
  const dv = new DataView(seed.buffer);
  parts.forEach((p, i) => {
    checkInt(`parts[${i}]`, p, 0, 0xffffffff);
    dv.setUint32(16 + 4 * i, p, false);
  });
  return seededRandom(seed.length > 64 ? seed.subarray(0, 64) : seed);
}
