/**
 * X25519 and Ed25519 signing on node:crypto's OpenSSL (internal to crypto/; never re-exported).
 *
 * @noble/curves is pure JavaScript: an X25519 agreement costs ≈0.6–1 ms and an Ed25519
 * signature ≈0.6 ms here, so a client's MaskedInputCollection step with n = 10 spent more time in
 * its 18 agreements (9 share boxes, 9 pairwise seeds) than in expanding its ten 4 MB masks.
 * OpenSSL does either in ≈0.05–0.09 ms, key import included. Both functions are deterministic
 * (RFC 7748, RFC 8032), so the bytes are the same whichever library computes them; each fast
 * path is used only after it reproduced the RFC's own test vector at load, else the caller keeps
 * noble.
 *
 * Raw keys go in as JWK: Node's PKCS#8 DER import costs ≈0.35 ms through OpenSSL 3's decoders,
 * JWK ≈0.04 ms. Node requires the `x` member of a private OKP JWK to be a string but derives the
 * public key from `d` (lib/internal/crypto/keys.js, initEDRaw), so `x` is left empty.
 */
import {
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  type KeyObject,
  sign as nodeSign,
} from 'node:crypto';

const b64 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');

function privateKey(crv: 'X25519' | 'Ed25519', secretKey: Uint8Array): KeyObject {
  return createPrivateKey({ key: { kty: 'OKP', crv, d: b64(secretKey), x: '' }, format: 'jwk' });
}

/** X25519(secretKey, peerPublicKey); throws when OpenSSL refuses (an all-zero result: low order). */
function x25519Shared(secretKey: Uint8Array, peerPublicKey: Uint8Array): Uint8Array {
  const publicKey = createPublicKey({
    key: { kty: 'OKP', crv: 'X25519', x: b64(peerPublicKey) },
    format: 'jwk',
  });
  return new Uint8Array(diffieHellman({ privateKey: privateKey('X25519', secretKey), publicKey }));
}

function x25519Public(secretKey: Uint8Array): Uint8Array {
  const jwk = createPublicKey(privateKey('X25519', secretKey)).export({ format: 'jwk' });
  return new Uint8Array(Buffer.from(jwk.x as string, 'base64url'));
}

function ed25519Sign(secretKey: Uint8Array, message: Uint8Array): Uint8Array {
  return new Uint8Array(nodeSign(null, message, privateKey('Ed25519', secretKey)));
}

const fromHex = (h: string) => new Uint8Array(Buffer.from(h, 'hex'));
const same = (a: Uint8Array, h: string) => Buffer.from(a).toString('hex') === h;

/** RFC 7748 §6.1 (Alice and Bob). */
function x25519Works(): boolean {
  try {
    const alice = fromHex('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a');
    const bob = fromHex('5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb');
    const shared = '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742';
    return (
      same(x25519Public(alice), '8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a') &&
      same(x25519Public(bob), 'de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f') &&
      same(x25519Shared(alice, x25519Public(bob)), shared) &&
      same(x25519Shared(bob, x25519Public(alice)), shared)
    );
  } catch {
    return false;
  }
}

/** RFC 8032 §7.1, TEST 1 (empty message). */
function ed25519Works(): boolean {
  try {
    const sk = fromHex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
    return same(
      ed25519Sign(sk, new Uint8Array(0)),
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
    );
  } catch {
    return false;
  }
}

/** OpenSSL's X25519, or undefined when it did not reproduce RFC 7748's vectors here. */
export const opensslX25519 = x25519Works() ? { shared: x25519Shared, publicKey: x25519Public } : undefined;

/** OpenSSL's Ed25519 signing, or undefined when it did not reproduce RFC 8032's vector here. */
export const opensslEd25519Sign = ed25519Works() ? ed25519Sign : undefined;
