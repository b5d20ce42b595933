import { describe, expect, it } from 'vitest';
import { SECAGG_ERRORS, SecAggError, type SecAggErrorCode } from '../../protocol/errors.js';

describe('protocol/errors', () => {
  it('every code has a description, and the error carries its code', () => {
    const codes = Object.keys(SECAGG_ERRORS) as SecAggErrorCode[];
    expect(codes.length).toBeGreaterThan(10);
    for (const c of codes) {
      expect(SECAGG_ERRORS[c].length).toBeGreaterThan(10);
      const e = new SecAggError(c);
      expect(e.code).toBe(c);
      expect(e.message.startsWith(`${c}: `)).toBe(true);
      expect(e).toBeInstanceOf(Error);
    }
    expect(new SecAggError('MALFORMED', 'detail').message).toBe('MALFORMED: detail');
  });
});
