/**
 * Finding 5 of the trust issue — a selfish silo hijacks Fair-Private and disables the audit.
 *
 * The attack as found: score reports were only checked for finiteness, so silo 0 reporting
 * (v(M0+U_0), v(M−U_0)) = (1e300, −1e300) took FP = 0.8 of v(M) = 0.8 (α_0 = 1e300 swamps every
 * other α_j), and (1.7e308, −1.7e308) overflowed the scores to ±∞ so that `GET …/audit` answered
 * 500 from then on (a NaN reached scoring/metrics.ts through the manipulation audit). Against
 * f5e8247 both reports are accepted (201); the FP test below then sees FP_0 = 0.8 = v(M) and the
 * audit 500.
 *
 * Now: a consortium declares its utility (accuracy ∈ [0, 1], the default; negLoss ∈ [−L, 0] with
 * L = `utility.maxLoss`), a report or operator utility outside that range is refused with
 * `FEDSCORE_ERR_UTILITY_OUT_OF_RANGE` (400), and for every accepted input the scores, the
 * cumulative sums and the audit are finite and the audit answers 200 (property-tested below over
 * in-range reports, the extremes 0 and 1 included).
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { signScoreReport } from '../../protocol/score-report.js';
import { spearman } from '../../scoring/metrics.js';
import { fairPrivate, SCHEMES, schemeScores } from '../../scoring/private.js';
import { auditRecordedRounds } from '../../src/audit/manipulation-audit.js';
import { signedReport } from '../../src/consortium/private-scoring.js';
import { adminInject, consortiumBody, type Harness, harness, siloInject } from '../server/_harness.js';
import { roundInReporting } from './_service-round.js';

const URL_ = '/v1/consortia/c1/rounds/1/reports';
const OUT_OF_RANGE = 'FEDSCORE_ERR_UTILITY_OUT_OF_RANGE';

describe('reports outside the utility range', () => {
  let h: Harness;
  beforeEach(async () => {
    // No evaluator: the operator posts v(M) = 0.8 and v(M0) = 0.3, as in the attack run.
    h = await harness({ app: { evaluate: undefined } as never });
    await roundInReporting(h, 'c1', { utility: undefined }); // accuracy, the default
  });
  afterEach(async () => h.close());

  test('(1e300, −1e300) and (1.7e308, −1.7e308) are refused; the in-range extreme gains a bounded share', async () => {
    for (const [singleton, complement] of [
      [1e300, -1e300],
      [1.7e308, -1.7e308],
      [1.0000001, 0],
      [0.5, -1e-9],
    ] as const) {
      const res = await siloInject(
        h,
        0,
        'POST',
        URL_,
        signedReport('c1', 1, 0, singleton, complement, h.keys[0]!),
      );
      expect(res.statusCode, `${singleton}, ${complement}`).toBe(400);
      expect(res.json().code).toBe(OUT_OF_RANGE);
    }
    const refused = await siloInject(h, 0, 'POST', URL_, signedReport('c1', 1, 0, 1e300, -1e300, h.keys[0]!));
    expect(refused.json()).toEqual({
      code: OUT_OF_RANGE,
      message:
        "a utility lies outside the consortium's declared range: v(M0 + U_0) = 1e+300 is outside [0, 1] (accuracy)",
    });
    // Per-class utilities are checked too.
    const perClass = signScoreReport(
      {
        session: 'c1',
        round: 1,
        silo: 0,
        singleton: 0.5,
        complement: 0.5,
        perClass: { singleton: Float64Array.of(0.5, 2), complement: Float64Array.of(0.5, 0.5) },
      },
      h.keys[0]!.secretKey,
    );
    expect((await siloInject(h, 0, 'POST', URL_, perClass)).json().code).toBe(OUT_OF_RANGE);

    // The selfish silo's best in-range lie, (1, 0); the others report honestly.
    const reports = [
      [1, 0],
      [0.55, 0.75],
      [0.5, 0.7],
      [0.45, 0.72],
    ] as const;
    for (const [i, [s, c]] of reports.entries())
      expect(
        (await siloInject(h, i, 'POST', URL_, signedReport('c1', 1, i, s, c, h.keys[i]!))).statusCode,
      ).toBe(201);
    expect(
      (await adminInject(h, 'PUT', '/v1/consortia/c1/rounds/1/utilities', { full: 0.8, empty: 0.3 }))
        .statusCode,
    ).toBe(200);
    const scores = (await adminInject(h, 'GET', '/v1/consortia/c1/rounds/1/scores')).json();
    const all = {
      full: 0.8,
      empty: 0.3,
      withOnly: reports.map((r) => r[0]),
      without: reports.map((r) => r[1]),
    };
    // α_0 = 0.75 of Σα = 1.165 (was 0.8 = all of v(M)). The detector flags the lie, but a round of 4
    // reports is below MIN_REPORTS_FOR_QUARANTINE (5): nothing is quarantined, the lie is scored
    // with its bounded share (test/security/in-range-manipulation.test.ts quarantines at 5).
    expect(scores.quarantined).toEqual([]);
    const fp = scores.schemes.fp as (number | null)[];
    expect(fp).toEqual(Array.from(fairPrivate(all)));
    expect(fp[0]).toBeCloseTo((0.75 / 1.165) * 0.8, 12);
    for (const j of [1, 2, 3]) expect(fp[j]).toBeGreaterThan(0.05);
    // The audit answers, with finite numbers, on every report.
    const audit = await adminInject(h, 'GET', '/v1/consortia/c1/audit');
    expect(audit.statusCode).toBe(200);
    expect(audit.json().runs[0].rounds[0].schemes.fp.scores).toEqual(Array.from(fairPrivate(all)));
    const cumulative = (await adminInject(h, 'GET', '/v1/consortia/c1/scores')).json();
    for (const m of SCHEMES) for (const x of cumulative.cumulative[m]) expect(Number.isFinite(x)).toBe(true);
  });

  test("the operator's v(M), v(M0) must lie in the range too", async () => {
    for (const u of [
      { full: 1e300, empty: 0.3 },
      { full: 0.8, empty: -0.1 },
    ]) {
      const res = await adminInject(h, 'PUT', '/v1/consortia/c1/rounds/1/utilities', u);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe(OUT_OF_RANGE);
    }
    expect((await adminInject(h, 'GET', '/v1/consortia/c1/rounds/1')).json().utilities).toBeNull();
  });
});

describe('a negLoss consortium declares its bound L', () => {
  let h: Harness;
  afterEach(async () => h.close());

  test('reports in [−L, 0] are accepted, others refused; a missing or bad L is refused at creation', async () => {
    h = await harness({ app: { evaluate: undefined } as never });
    await roundInReporting(h, 'c1', { utility: { name: 'negLoss', maxLoss: 5 } });
    const c = (await adminInject(h, 'GET', '/v1/consortia/c1')).json();
    expect(c.utility).toEqual({ name: 'negLoss', maxLoss: 5 });
    const bad = await siloInject(h, 0, 'POST', URL_, signedReport('c1', 1, 0, -6, -1, h.keys[0]!));
    expect(bad.json()).toEqual({
      code: OUT_OF_RANGE,
      message:
        "a utility lies outside the consortium's declared range: v(M0 + U_0) = -6 is outside [-5, 0] (negLoss, maxLoss 5)",
    });
    expect(
      (await siloInject(h, 0, 'POST', URL_, signedReport('c1', 1, 0, -0.2, 0.1, h.keys[0]!))).json().code,
    ).toBe(OUT_OF_RANGE);
    expect(
      (await siloInject(h, 0, 'POST', URL_, signedReport('c1', 1, 0, -5, 0, h.keys[0]!))).statusCode,
    ).toBe(201);
    for (const utility of [
      { name: 'negLoss' },
      { name: 'negLoss', maxLoss: 0 },
      { name: 'negLoss', maxLoss: 1e300 },
      { name: 'accuracy', maxLoss: 1 },
      { name: 'loss' },
    ]) {
      const r = await adminInject(h, 'POST', '/v1/consortia', { ...consortiumBody(h.keys, 'c2'), utility });
      expect(r.statusCode, JSON.stringify(utility)).toBe(400);
      expect(r.json().code).toBe('FEDSCORE_ERR_VALIDATION');
    }
  });
});

// ── every accepted input: finite scores, finite sums, an audit ─────────────────────────────────

/** A utility in [lo, hi], the extremes and values next to them drawn often. */
const inRange = (lo: number, hi: number) =>
  fc.oneof(
    fc.constantFrom(lo, hi, (lo + hi) / 2, lo + (hi - lo) * 1e-12, hi - (hi - lo) * 1e-12),
    fc.double({ min: lo, max: hi, noNaN: true }),
  );

const roundOf = (lo: number, hi: number) =>
  fc.integer({ min: 2, max: 5 }).chain((n) =>
    fc.record({
      full: inRange(lo, hi),
      empty: inRange(lo, hi),
      withOnly: fc.array(inRange(lo, hi), { minLength: n, maxLength: n }),
      without: fc.array(inRange(lo, hi), { minLength: n, maxLength: n }),
    }),
  );

/** Every number in a JSON-able value (the audit document), with its path. */
function numbers(v: unknown, path = '$', out: [string, number][] = []): [string, number][] {
  if (typeof v === 'number') out.push([path, v]);
  else if (Array.isArray(v))
    v.forEach((x, i) => {
      numbers(x, `${path}[${i}]`, out);
    });
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) numbers(x, `${path}.${k}`, out);
  return out;
}

describe('any accepted input gives finite scores, sums and audits (fast-check)', () => {
  for (const [label, lo, hi] of [
    ['accuracy', 0, 1],
    ['negLoss, L = 1e6', -1e6, 0],
  ] as const)
    test(`${label}: scores and cumulative sums finite, the audit completes with finite numbers`, () => {
      fc.assert(
        fc.property(fc.array(roundOf(lo, hi), { minLength: 1, maxLength: 2 }), (rounds) => {
          const n = Math.max(...rounds.map((r) => r.withOnly.length));
          const cumulative = new Float64Array(n);
          const recorded = rounds.map((u, k) => {
            const schemes: Record<string, (number | null)[]> = {};
            for (const m of SCHEMES) {
              const s = schemeScores(m, u);
              for (const x of s) expect(Number.isFinite(x)).toBe(true);
              s.forEach((x, i) => {
                cumulative[i] = cumulative[i]! + x;
              });
              schemes[m] = Array.from({ length: n }, (_, i) => (i < s.length ? s[i]! : null));
            }
            const pad = (x: number[]) => Array.from({ length: n }, (_, i) => x[i] ?? null);
            return {
              round: k + 1,
              utilities: { full: u.full, empty: u.empty },
              withOnly: pad(u.withOnly),
              without: pad(u.without),
              schemes,
            };
          });
          for (const x of cumulative) expect(Number.isFinite(x)).toBe(true);
          const names = Array.from({ length: n }, (_, i) => `silo-${i}`);
          const audit = auditRecordedRounds(recorded, names, 'property', {
            range: { lo, hi },
            randomTrials: 3,
            collusionSizes: [2],
          });
          const bad = numbers(audit).filter(([, x]) => !Number.isFinite(x));
          expect(bad).toEqual([]);
          expect(audit.runs[0]!.rounds.every((r) => 'schemes' in r)).toBe(true);
        }),
        { numRuns: 40 },
      );
    }, 120_000);

  test('a round stored before ranges were enforced is skipped by the service’s audit, not a 500', () => {
    const legacy = {
      round: 1,
      utilities: { full: 0.8, empty: 0.3 },
      withOnly: [1.7e308, 0.55, 0.5],
      without: [-1.7e308, 0.75, 0.7],
      schemes: {},
    };
    const audit = auditRecordedRounds([legacy], ['silo-0', 'silo-1', 'silo-2'], 'legacy', {
      range: { lo: 0, hi: 1 },
      outOfRange: 'skip',
    });
    expect(audit.runs[0]!.rounds).toEqual([{ round: 1, skipped: 'a utility lies outside the range [0, 1]' }]);
  });

  test('rank metrics on finite score vectors never throw (Spearman of the in-range extremes)', () => {
    fc.assert(
      fc.property(roundOf(0, 1), (u) => {
        const fp = fairPrivate(u);
        const r = spearman(fp, schemeScores('loo', u));
        expect(Number.isNaN(r) || (r >= -1 && r <= 1)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
