import { x25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import { opensslX25519 } from '../../crypto/_openssl.js';
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
  it('gives the bytes of @noble/curves (OpenSSL is used here), also for keys with the top bit set', () => {
    expect(opensslX25519).toBeDefined();
    for (let i = 0; i < 40; i++) {
      const sk = Uint8Array.from({ length: 32 }, (_, k) => (k * 31 + i * 97 + 5) & 255);
      const peer = Uint8Array.from({ length: 32 }, (_, k) => (k * 57 + i * 13 + 1) & 255);
      if (i % 2) peer[31]! |= 0x80; // non-canonical u: RFC 7748 masks the top bit
      expect(toHex(agreementPublicKey(sk))).toBe(toHex(x25519.getPublicKey(sk)));
      expect(toHex(agree(sk, peer))).toBe(toHex(x25519.getSharedSecret(sk, peer)));
    }
  });

  it('refuses every low-order point as noble does', () => {
    const sk = new Uint8Array(32).fill(7);
    const p = 2n ** 255n - 19n;
    const le = (v: bigint) => Uint8Array.from({ length: 32 }, (_, k) => Number((v >> BigInt(8 * k)) & 255n));
    for (const u of [0n, 1n, p - 1n, p, p + 1n]) {
      expect(() => x25519.getSharedSecret(sk, le(u))).toThrow();
      expect(() => agree(sk, le(u))).toThrow(/^peerPublicKey: low-order/);
    }
  });
});
