import { describe, expect, it } from 'vitest';
import { sha256 } from '../../crypto/digest.js';
import { toHex } from './_vectors.js';

describe('crypto/digest', () => {
  it('matches FIPS 180-2 Appendix B.1 ("abc") and hashes the concatenation of its parts', () => {
    const abc = new TextEncoder().encode('abc');
    const expected = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
    expect(toHex(sha256(abc))).toBe(expected);
    expect(toHex(sha256(abc.subarray(0, 1), abc.subarray(1)))).toBe(expected);
  });
  it('checks its inputs', () => {
    expect(() => sha256('abc' as unknown as Uint8Array)).toThrow(/^parts\[0\]/);
  });
});
