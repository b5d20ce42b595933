import { describe, expect, it } from 'vitest';
import { checkRoundConfig, MAX_PARTICIPANTS } from '../../protocol/config.js';

const key = new Uint8Array(32);
const base = { session: 's', round: 0, threshold: 3, length: 10, roster: [key, key, key, key] };

describe('protocol/config', () => {
  it('accepts a valid configuration and returns it', () => {
    expect(checkRoundConfig(base)).toBe(base);
  });
  it('requires n/2 < t ≤ n and names the field', () => {
    expect(() => checkRoundConfig({ ...base, threshold: 2 })).toThrow(/^config\.threshold.*exceed n\/2/);
    expect(() => checkRoundConfig({ ...base, threshold: 5 })).toThrow(/^config\.threshold/);
    expect(() => checkRoundConfig({ ...base, threshold: 2.5 })).toThrow(TypeError);
  });
  it('bounds the roster, the round, the length and the session', () => {
    expect(() => checkRoundConfig({ ...base, roster: Array(MAX_PARTICIPANTS + 1).fill(key) })).toThrow(
      /^config\.roster\.length/,
    );
    expect(() => checkRoundConfig({ ...base, roster: [key, key, key, new Uint8Array(31)] })).toThrow(
      /^config\.roster\[3\]/,
    );
    expect(() => checkRoundConfig({ ...base, round: 2 ** 32 })).toThrow(/^config\.round/);
    expect(() => checkRoundConfig({ ...base, length: 0 })).toThrow(/^config\.length/);
    expect(() => checkRoundConfig({ ...base, session: 'x'.repeat(256) })).toThrow(/^config\.session/);
    expect(() => checkRoundConfig(null as never)).toThrow(/^config/);
  });
});
