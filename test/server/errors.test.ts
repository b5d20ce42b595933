/** The error catalogue: every code documented in docs/errors.md with its status, and nothing else. */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { ERRORS, errorBody, SILO_CODES } from '../../src/consortium/error-codes.js';
import { toErrorResponse } from '../../src/server/app.js';
import { ServiceError } from '../../src/server/errors.js';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const rows = new Map(
  [...doc.matchAll(/^\| `(FEDSCORE_ERR_[A-Z_]+)` \| (\d{3}) \| ([^|]+) \|/gm)].map((m) => [
    m[1]!,
    { status: Number(m[2]), message: m[3]!.trim() },
  ]),
);

describe('error catalogue', () => {
  test('every code is documented with its status and message', () => {
    for (const [code, e] of Object.entries(ERRORS)) expect(rows.get(code), code).toEqual(e);
  });

  test('the document lists no code the catalogue lacks', () => {
    expect([...rows.keys()].filter((c) => !(c in ERRORS))).toEqual([]);
  });

  test('every silo-side code is documented in the silo-side table, and none is a service code', () => {
    const silo = doc.slice(doc.indexOf('## Silo-side refusals'));
    const table = silo.slice(0, silo.indexOf('\n## ', 1));
    const documented = new Set([...table.matchAll(/^\| `(FEDSCORE_ERR_[A-Z_]+)` \|/gm)].map((m) => m[1]!));
    for (const code of Object.keys(SILO_CODES)) {
      expect(documented.has(code), code).toBe(true);
      expect(code in ERRORS, code).toBe(false);
    }
  });

  test('statuses are 4xx or 5xx and codes are namespaced', () => {
    for (const [code, e] of Object.entries(ERRORS)) {
      expect(code).toMatch(/^FEDSCORE_ERR_[A-Z0-9_]+$/);
      expect(e.status >= 400 && e.status < 600, code).toBe(true);
    }
  });

  test('bodies carry the catalogue text and the detail', () => {
    expect(errorBody('FEDSCORE_ERR_ROUND_CLOSED', 'round 2 is scored')).toEqual({
      code: 'FEDSCORE_ERR_ROUND_CLOSED',
      message: 'the round no longer takes secure-aggregation messages: round 2 is scored',
    });
    expect(new ServiceError('FEDSCORE_ERR_ROUND_OPEN').status).toBe(409);
  });

  test('unknown failures become FEDSCORE_ERR_INTERNAL without leaking their text', () => {
    expect(toErrorResponse(new Error('disk full at /var/secret'))).toEqual({
      status: 500,
      body: { code: 'FEDSCORE_ERR_INTERNAL', message: 'internal error' },
    });
  });
});
