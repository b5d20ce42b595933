import { ed25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import { opensslEd25519Sign } from '../../crypto/_openssl.js';
import { publicKeyProblem, sign, signingKeyPairFromSeed, verify } from '../../crypto/signature.js';
import { hex, loadVectors, toHex } from './_vectors.js';

const v = loadVectors<{ ed25519: Record<string, string> }>('crypto-rfc/rfc-vectors.json').ed25519;

describe('crypto/signature (Ed25519)', () => {
  it('matches RFC 8032 §7.1 TEST 1', () => {
    const k = signingKeyPairFromSeed(hex(v.secretKey!));
    expect(toHex(k.publicKey)).toBe(v.publicKey);
    const sig = sign(k.secretKey, hex(v.message!));
    expect(toHex(sig)).toBe(v.signature);
    expect(verify(k.publicKey, hex(v.message!), sig)).toBe(true);
  });
  it('rejects a flipped message bit, a flipped signature bit and another key', () => {
    const k = signingKeyPairFromSeed(new Uint8Array(32).fill(1));
    const other = signingKeyPairFromSeed(new Uint8Array(32).fill(2));
    const m = new TextEncoder().encode('bound to session s, round 3');
    const sig = sign(k.secretKey, m);
    expect(verify(k.publicKey, m, sig)).toBe(true);
    const m2 = m.slice();
    m2[0]! ^= 1;
    expect(verify(k.publicKey, m2, sig)).toBe(false);
    const s2 = sig.slice();
    s2[10]! ^= 0x20;
    expect(verify(k.publicKey, m, s2)).toBe(false);
    expect(verify(other.publicKey, m, sig)).toBe(false);
  });
  it('rejects a non-canonical S (malleability: S + L)', () => {
    const k = signingKeyPairFromSeed(new Uint8Array(32).fill(3));
    const m = new Uint8Array([1, 2, 3]);
    const sig = sign(k.secretKey, m);
    // S is little-endian in bytes 32..63; add the group order L = 2^252 + 27742317777372353535851937790883648493.
    const L = (1n << 252n) + 27742317777372353535851937790883648493n;
    let s = 0n;
    for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i]!);
    s += L;
    const forged = sig.slice();
    for (let i = 32; i < 64; i++) {
      forged[i] = Number(s & 0xffn);
      s >>= 8n;
    }
    expect(verify(k.publicKey, m, forged)).toBe(false);
  });
  it('checks its inputs', () => {
    expect(() => sign(new Uint8Array(31), new Uint8Array(0))).toThrow(/^secretKey/);
    expect(() => verify(new Uint8Array(32), new Uint8Array(0), new Uint8Array(63))).toThrow(/^signature/);
  });

  it('publicKeyProblem: honest keys pass; small-order, mixed-order and non-canonical encodings do not', () => {
    for (let i = 0; i < 8; i++)
      expect(publicKeyProblem(signingKeyPairFromSeed(new Uint8Array(32).fill(i)).publicKey)).toBeUndefined();
    const bad: [string, RegExp][] = [
      ['00'.repeat(32), /small order/], // y = 0: order 4
      [`01${'00'.repeat(31)}`, /small order/], // the identity
      [`ec${'ff'.repeat(30)}7f`, /small order/], // y = −1: order 2
      ['26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', /small order/], // order 8
      [`ed${'ff'.repeat(30)}7f`, /not a valid point/], // y = p
      [`02${'00'.repeat(31)}`, /not a valid point/], // y = 2 is not on the curve
    ];
    for (const [key, why] of bad) expect(publicKeyProblem(hex(key))).toMatch(why);
    expect(() => publicKeyProblem(new Uint8Array(31))).toThrow(/^publicKey/);
  });

  it('signs with the bytes of @noble/curves (OpenSSL is used here)', () => {
    expect(opensslEd25519Sign).toBeDefined();
    for (let i = 0; i < 20; i++) {
      const sk = Uint8Array.from({ length: 32 }, (_, k) => (k * 29 + i * 101 + 3) & 255);
      const m = Uint8Array.from({ length: i * 37 }, (_, k) => (k * 7 + i) & 255);
      expect(toHex(sign(sk, m))).toBe(toHex(ed25519.sign(m, sk)));
    }
  });
});
