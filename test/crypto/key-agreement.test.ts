import { describe, expect, it } from 'vitest';
import { agree, agreementKeyPairFromSeed, agreementPublicKey } from '../../crypto/key-agreement.js';
import { hex, loadVectors, toHex } from './_vectors.js';

const v = loadVectors<{ x25519: Record<string, string> }>('crypto-rfc/rfc-vectors.json').x25519;

describe('crypto/key-agreement (X25519)', () => {
  it('matches RFC 7748 §6.1', () => {
    const a = agreementKeyPairFromSeed(hex(v.alicePrivate!));
    const b = agreementKeyPairFromSeed(hex(v.bobPrivate!));
    expect(toHex(a.publicKey)).toBe(v.alicePublic);
    expect(toHex(agreementPublicKey(b.secretKey))).toBe(v.bobPublic);
    expect(toHex(agree(a.secretKey, b.publicKey))).toBe(v.shared);
    expect(toHex(agree(b.secretKey, a.publicKey))).toBe(v.shared);
  });
  it('refuses a low-order peer key and malformed inputs', () => {
    const a = agreementKeyPairFromSeed(new Uint8Array(32).fill(9));
    expect(() => agree(a.secretKey, new Uint8Array(32))).toThrow(/^peerPublicKey/);
    expect(() => agree(a.secretKey, new Uint8Array(31))).toThrow(RangeError);
    expect(() => agreementKeyPairFromSeed(new Uint8Array(16))).toThrow(/^seed/);
  });
});
