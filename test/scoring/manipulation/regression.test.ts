/**
 * The split of scoring/manipulation.ts changed no number beyond rounding. test/vectors/manipulation/pre-split.json
 * was recorded (by `recordVectors` in _vectors.ts) from the single-file module of commit 090c416,
 * which computed its own weights; the modules now take every weight and score from
 * scoring/private.ts. Not a mirror of one source file: a regression check across all of them.
 *
 * - LOO, IOI, FP and everything scheme-independent (detection, undetected boxes, attack reports,
 *   LOO/IOI/FP closed forms, evaluation counts, exact/unbounded flags, methods): identical.
 * - EE and EE-median: private.ts sums β and γ separately, (ΣB − B_i)/(N−1)² + (ΣΓ − Γ_i)/(N−1)²,
 *   where the old code summed t_j = B_j + Γ_j; and takes medianβ/(N−1) + medianγ/(N−1) where the
 *   old code took (medianβ + medianγ)/(N−1). Same formulas (papers/003 Eq. 4–5, §5.3), another
 *   order of rounding: every number agrees to 1e-12 relative (observed ≤ 1.1e-15).
 * - Issue 37 replaced the detector (z against the others, one-sided, floored scale): everything
 *   that depends on it — `detection`, `undetectedBoxes`, the attacks' `detected` and
 *   `honestSilosFlagged`, `selfGainUndetected` — is no longer compared here (detection.test.ts and
 *   quarantine.test.ts test it); the attack reports themselves still are.
 * - Issue 32 (S1) changed FP, EE and EE-median on purpose: their normalizer D now counts as zero
 *   within the margin κ·Σ|w| (scoring/private.ts), so a search that the vectors record as unbounded
 *   (Infinity; `unbounded: true`, `reports: null`) is now finite, with reports attaining it, and
 *   within ±|v(M)|/κ. Those entries are compared as such (`issue32`). And where an attack or a
 *   coalition's reports reach that margin the score falls back (Remark 1), so FP's, EE's and
 *   EE-median's attack outcomes and collusion values may differ from the vectors: there only their
 *   honest scores and closed forms are compared exactly, the rest must be finite. LOO, IOI, the
 *   detector and the undetected boxes: exactly as before.
 * - EE Spearman under attack is the exception: a rank statistic jumps when exact ties among the
 *   scores are made or broken by a one-ulp change. It is compared only where the round's honest
 *   scores have no exact tie.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMES } from '../../../scoring/private.js';
import { currentApi, decodeNonFinite, encodeNonFinite, recordVectors } from './_vectors.js';

const stored = JSON.parse(
  readFileSync(new URL('../../vectors/manipulation/pre-split.json', import.meta.url), 'utf8'),
  decodeNonFinite,
) as ReturnType<typeof recordVectors>;
/** The current code's answers through the same JSON round trip as the stored ones. */
const current = JSON.parse(
  JSON.stringify(recordVectors(currentApi), encodeNonFinite),
  decodeNonFinite,
) as ReturnType<typeof recordVectors>;

type Vectors = ReturnType<typeof recordVectors>[number];
/** A scheme's record without what depends on the detector (issue 37 replaced it). */
function detectorFree(r: Vectors['schemes'][string]) {
  const { selfGainUndetected: _, ...rest } = r;
  return rest;
}
/** An attack's reports without the detector's verdict on them. */
function attackReports(a: Vectors['attacks'][number]) {
  const { detected: _d, honestSilosFlagged: _h, ...rest } = a;
  return rest;
}

/**
 * An extremum the vectors record as unbounded (pre issue 32): now bounded, with attaining reports.
 * @returns whether `expected` was such an extremum (then `actual` was checked here).
 */
function issue32(actual: unknown, expected: unknown, path: string): boolean {
  if (!/^(fp|ee|eeMedian)\./.test(path)) return false; // searches of the ratio schemes only
  if (expected === Number.POSITIVE_INFINITY) {
    expect(Number.isFinite(actual), path).toBe(true);
    return true;
  }
  if (
    expected === null ||
    typeof expected !== 'object' ||
    (expected as { unbounded?: unknown }).unbounded !== true
  )
    return false;
  const a = actual as { unbounded: boolean; value: number; reports: unknown };
  expect(a.unbounded, path).toBe(false);
  expect(Number.isFinite(a.value), path).toBe(true);
  expect(a.reports, path).not.toBeNull();
  return true;
}

/** Compares two JSON trees: exactly, or numbers within 1e-12 · max(1, |expected|). */
function agree(actual: unknown, expected: unknown, path: string, tolerant: boolean): void {
  if (issue32(actual, expected, path)) return;
  if (typeof expected === 'number' && typeof actual === 'number') {
    if (Object.is(actual, expected) || !tolerant) {
      expect(actual, path).toBe(expected);
      return;
    }
    expect(Number.isFinite(expected), path).toBe(true);
    expect(Math.abs(actual - expected), path).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(expected)));
  } else if (Array.isArray(expected)) {
    expect(Array.isArray(actual) && actual.length === expected.length, path).toBe(true);
    for (let i = 0; i < expected.length; i++)
      agree((actual as unknown[])[i], expected[i], `${path}[${i}]`, tolerant);
  } else if (expected !== null && typeof expected === 'object') {
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [k, e] of Object.entries(expected))
      agree((actual as Record<string, unknown>)[k], e, `${path}.${k}`, tolerant);
  } else expect(actual, path).toBe(expected);
}

describe('the split changed no number beyond rounding (test/vectors/manipulation/pre-split.json)', () => {
  it('records the same rounds', () => {
    expect(current.map((r) => r.utilities)).toEqual(stored.map((r) => r.utilities));
  });

  stored.forEach((round, r) => {
    it(`round ${r} (${round.utilities.withOnly.length} silos)`, () => {
      const now = current[r]!;
      // The attacks' reports (issue 37 changed only the detector's verdict on them).
      agree(now.attacks.map(attackReports), round.attacks.map(attackReports), 'attacks', false);
      for (const s of ['loo', 'ioi', 'fp'] as const)
        agree(now.closedForm[s], round.closedForm[s], `closedForm.${s}`, false);
      for (const s of ['loo', 'ioi'] as const)
        agree(detectorFree(now.schemes[s]!), detectorFree(round.schemes[s]!), s, false);
      agree(now.closedForm.ee, round.closedForm.ee, 'closedForm.ee', true);
      agree(now.eeMedianDamageBound, round.eeMedianDamageBound, 'eeMedianDamageBound', true);
      for (const s of ['fp', 'ee', 'eeMedian'] as const) {
        const stored = round.schemes[s]! as Record<string, unknown>;
        const nowS = now.schemes[s]! as Record<string, unknown>;
        expect(Object.keys(nowS).sort(), s).toEqual(Object.keys(stored).sort());
        agree(nowS.scores, stored.scores, `${s}.scores`, s !== 'fp');
        const numbers = JSON.stringify(nowS, encodeNonFinite);
        expect(numbers.includes('Infinity'), `${s}: every searched value finite`).toBe(false);
      }
      expect(Object.keys(now.schemes)).toEqual([...SCHEMES]);
    });
  });
});
