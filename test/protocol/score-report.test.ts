import { describe, expect, it } from 'vitest';
import { SecAggError } from '../../protocol/errors.js';
import {
  decodeScoreReport,
  type ScoreReport,
  signScoreReport,
  verifyScoreReport,
} from '../../protocol/score-report.js';
import { simulatedIdentities } from '../../protocol/simulate.js';

const ids = simulatedIdentities(4, 3);
const roster = ids.map((k) => k.publicKey);
const report: ScoreReport = {
  session: 'sess',
  round: 5,
  silo: 2,
  singleton: 0.8125,
  complement: 0.9,
  perClass: { singleton: Float64Array.from([0.5, 1, 0.75]), complement: Float64Array.from([0.25, 0.5, 1]) },
};
const expected = { session: 'sess', round: 5, roster };

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return e instanceof SecAggError ? e.code : `other: ${(e as Error).message}`;
  }
  return 'no error';
}

describe('protocol/score-report', () => {
  it('signs and verifies, with and without per-class vectors', () => {
    expect(verifyScoreReport(signScoreReport(report, ids[2]!.secretKey), expected)).toEqual(report);
    const { perClass: _p, ...plain } = report;
    expect(verifyScoreReport(signScoreReport(plain, ids[2]!.secretKey), expected)).toEqual(plain);
  });

  it('rejects tampering, another signer, another round or session, and unknown silos', () => {
    const signed = signScoreReport(report, ids[2]!.secretKey);
    const { body } = decodeScoreReport(signed);
    const tampered = signed.slice();
    tampered[body.length - 30]! ^= 1; // inside the per-class values
    expect(codeOf(() => verifyScoreReport(tampered, expected))).toBe('BAD_SIGNATURE');
    expect(codeOf(() => verifyScoreReport(signScoreReport(report, ids[1]!.secretKey), expected))).toBe(
      'BAD_SIGNATURE',
    );
    expect(codeOf(() => verifyScoreReport(signed, { ...expected, round: 6 }))).toBe('WRONG_ROUND');
    expect(codeOf(() => verifyScoreReport(signed, { ...expected, session: 'x' }))).toBe('WRONG_SESSION');
    const stranger = signScoreReport({ ...report, silo: 9 }, ids[0]!.secretKey);
    expect(codeOf(() => verifyScoreReport(stranger, expected))).toBe('UNKNOWN_SENDER');
    expect(codeOf(() => verifyScoreReport(signed.subarray(0, 40), expected))).toBe('MALFORMED');
    expect(codeOf(() => verifyScoreReport(Uint8Array.from([...signed, 1]), expected))).toBe('MALFORMED');
  });

  it('refuses to sign non-finite or mismatched values', () => {
    const k = ids[2]!.secretKey;
    expect(() => signScoreReport({ ...report, singleton: Number.NaN }, k)).toThrow(/^report\.singleton/);
    expect(() =>
      signScoreReport(
        { ...report, perClass: { singleton: new Float64Array(2), complement: new Float64Array(3) } },
        k,
      ),
    ).toThrow(/^report\.perClass\.complement/);
    expect(() => signScoreReport({ ...report, round: -1 }, k)).toThrow(/^report\.round/);
  });
});
