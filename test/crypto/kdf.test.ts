import { describe, expect, it } from 'vitest';
import { hkdfSha256 } from '../../crypto/kdf.js';
import { hex, loadVectors, toHex } from './_vectors.js';

const v = loadVectors<{ hkdf: { ikm: string; salt: string; info: string; length: number; okm: string } }>(
  'crypto-rfc/rfc-vectors.json',
).hkdf;

describe('crypto/kdf', () => {
  it('matches RFC 5869 A.1', () => {
    expect(toHex(hkdfSha256(hex(v.ikm), hex(v.salt), hex(v.info), v.length))).toBe(v.okm);
  });
  it('different info gives different keys', () => {
    const ikm = new Uint8Array(32).fill(7);
    const a = hkdfSha256(ikm, new Uint8Array(0), new Uint8Array([1]), 32);
    const b = hkdfSha256(ikm, new Uint8Array(0), new Uint8Array([2]), 32);
    expect(toHex(a)).not.toBe(toHex(b));
  });
  it('checks its inputs', () => {
    const z = new Uint8Array(1);
    expect(() => hkdfSha256('x' as unknown as Uint8Array, z, z, 32)).toThrow(/^ikm/);
    expect(() => hkdfSha256(z, z, z, 0)).toThrow(RangeError);
    expect(() => hkdfSha256(z, z, z, 255 * 32 + 1)).toThrow(/^length/);
  });
});
