import { describe, expect, it } from 'vitest';
import { AEAD_NONCE_LENGTH, type AeadContext, open, seal } from '../../crypto/aead.js';

const key = new Uint8Array(32).fill(5);
const nonce = new Uint8Array(AEAD_NONCE_LENGTH).fill(6);
const ctx: AeadContext = { sender: 1, receiver: 2, session: 's', round: 3 };
const pt = new TextEncoder().encode('two shares');

describe('crypto/aead (XChaCha20-Poly1305)', () => {
  it('round-trips', () => {
    const box = seal(key, nonce, pt, ctx);
    expect(box.length).toBe(AEAD_NONCE_LENGTH + pt.length + 16);
    expect(open(key, box, ctx)).toEqual(pt);
  });
  it('fails for another sender, receiver, session, round, key or a flipped bit', () => {
    const box = seal(key, nonce, pt, ctx);
    expect(open(key, box, { ...ctx, sender: 9 })).toBeNull();
    expect(open(key, box, { ...ctx, receiver: 9 })).toBeNull();
    expect(open(key, box, { ...ctx, session: 't' })).toBeNull();
    expect(open(key, box, { ...ctx, round: 4 })).toBeNull();
    expect(open(new Uint8Array(32).fill(7), box, ctx)).toBeNull();
    for (const i of [0, AEAD_NONCE_LENGTH, box.length - 1]) {
      const b = box.slice();
      b[i]! ^= 1;
      expect(open(key, b, ctx)).toBeNull();
    }
    expect(open(key, box.subarray(0, 20), ctx)).toBeNull();
  });
  it('checks its inputs', () => {
    expect(() => seal(new Uint8Array(16), nonce, pt, ctx)).toThrow(/^key/);
    expect(() => seal(key, new Uint8Array(12), pt, ctx)).toThrow(/^nonce/);
    expect(() => seal(key, nonce, pt, { ...ctx, round: -1 })).toThrow(/^context\.round/);
    expect(() => seal(key, nonce, pt, { ...ctx, session: '' })).toThrow(/^context\.session/);
  });
});
