/**
 * The public surface of `fedscore/crypto`: the primitives fedscore's secure aggregation is built
 * on — Ed25519 signatures, X25519 key agreement, XChaCha20-Poly1305 with bound context, HKDF and
 * SHA-256, Shamir sharing of 32-byte secrets, fixed-point quantization into Z_(2^32), and random
 * sources (seeded ones for replayable runs). An explicit list: the mask PRG and the `_`-prefixed
 * helpers stay internal (docs/api.md lists this surface).
 */
export { type AeadContext, open, seal } from './aead.js';
export { sha256 } from './digest.js';
export { hkdfSha256 } from './kdf.js';
export {
  type AgreementKeyPair,
  agree,
  agreementKeyPairFromSeed,
  agreementPublicKey,
} from './key-agreement.js';
export { dequantizeSum, type Quantizer, type QuantizerConfig, quantize, quantizer } from './quantize.js';
export { type RandomSource, seededRandom, seededRandomFromInts, systemRandom } from './random-bytes.js';
export { combineShares, splitSecret } from './shamir.js';
export { type SigningKeyPair, sign, signingKeyPairFromSeed, verify } from './signature.js';
