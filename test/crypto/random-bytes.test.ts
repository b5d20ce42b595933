import { describe, expect, it } from 'vitest';
import { seededRandom, seededRandomFromInts, systemRandom } from '../../crypto/random-bytes.js';

describe('crypto/random-bytes', () => {
  it('seeded sources replay; different seeds differ; consecutive draws differ', () => {
    const a = seededRandomFromInts(1, 2);
    const b = seededRandomFromInts(1, 2);
    const c = seededRandomFromInts(1, 3);
    const a1 = a(32);
    expect(a1).toEqual(b(32));
    expect(a1).not.toEqual(c(32));
    expect(a(32)).not.toEqual(a1);
  });
  it('system source returns the requested length', () => {
    expect(systemRandom()(24).length).toBe(24);
  });
  it('checks its inputs', () => {
    expect(() => seededRandom(new Uint8Array(8))).toThrow(/^seed/);
    expect(() => seededRandomFromInts(-1)).toThrow(/^parts\[0\]/);
    expect(() => systemRandom()(-1)).toThrow(/^length/);
  });
});
