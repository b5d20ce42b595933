/**
 * Issue 27, A4 — in-range lies pay, and the audit's flag changes nothing.
 *
 * The round of the issue: late in a run, v(M) = 0.86, v(M0) = 0.85, 5 silos. The honest reports
 * (v(M0 + U_i), v(M − U_i)) are those of `HONEST` below; silo 0 reports (0.02, 0.06) instead of
 * (0.854, 0.857) — both inside the declared accuracy range [0, 1], so the range check of the trust
 * issue lets them through.
 *
 * Against dc1119c (the same attack, printed by this file's first version):
 *   scoreReports (the scorer of the engine and the service) and the service's
 *   GET …/rounds/1/scores both published
 *     fp = [25.800000000002770, −6.020000000000668, −6.020000000000668, −6.020000000000668,
 *           −6.880000000000764]            (silo 0: 30 × v(M); every rival negative)
 *     ee = [0.1086, 0.1873, 0.1873, 0.1873, 0.1895], loo_0 = 0.8 (honest ≈ 0.003)
 *   while the audit's detector (robust z, threshold 3.5) flagged silo 0 only:
 *     zWithOnly = [−562.533, 0, 0.6745, −0.6745, 0.6745], zWithout = [537.5765, 0, −0.6745, 0.6745, 0].
 *
 * Now: the flagged report is quarantined (scoring/manipulation/quarantine.ts, applied by
 * `scoreReports`): the round is scored as if silo 0 had not reported — every scheme's scores of
 * silos 1–4 equal those of the round scored from their four reports alone, in the pure scorer and
 * through the service's REST API — and silo 0 is published as quarantined with its z values. The
 * operator can release the report (POST …/reports/0/release, admin token only); the round is then
 * scored with it.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { simulatedIdentities } from '../../protocol/simulate.js';
import { detectReports } from '../../scoring/manipulation/detection.js';
import { ratioScoreBound, SCHEMES } from '../../scoring/private.js';
import { scoreReports, signedReport } from '../../src/consortium/private-scoring.js';
import {
  adminInject,
  consortiumBody,
  f32bytes,
  type Harness,
  harness,
  INITIAL,
  Silo,
  STEPS,
  siloInject,
} from '../server/_harness.js';

const FULL = 0.86;
const EMPTY = 0.85;
/** Honest reports (v(M0 + U_i), v(M − U_i)): IOI_i ≈ 0.003–0.005, LOO_i ≈ 0.002–0.004. */
const HONEST: readonly (readonly [number, number])[] = [
  [0.854, 0.857],
  [0.854, 0.857],
  [0.855, 0.858],
  [0.853, 0.856],
  [0.855, 0.857],
];
const LIE = [0.02, 0.06] as const;
const REPORTED = HONEST.map((r, i) => (i === 0 ? LIE : r));
const RIVALS = [1, 2, 3, 4];

const utilitiesOf = (reports: readonly (readonly [number, number])[]) => ({
  full: FULL,
  empty: EMPTY,
  withOnly: reports.map((r) => r[0]),
  without: reports.map((r) => r[1]),
});

describe('A4: an in-range lie the detector flags', () => {
  const keys = simulatedIdentities(5, 11);
  const roster = keys.map((k) => k.publicKey);
  const sign = (silos: readonly number[], reports: readonly (readonly [number, number])[] = REPORTED) =>
    silos.map((i) => signedReport('c1', 9, i, reports[i]![0], reports[i]![1], keys[i]!));

  test('the detector flags silo 0 alone, far beyond the threshold', () => {
    const d = detectReports(utilitiesOf(REPORTED));
    expect(d.flagged).toEqual([true, false, false, false, false]);
    // since issue 37 the detector is one-sided: IOI_0 = −0.83 lies below the others (what an
    // honest Maverick reports), LOO_0 = 0.80 above them by far more than their typical magnitude
    expect(d.zWithOnly[0]).toBeLessThan(0);
    expect(d.zWithout[0]).toBeGreaterThan(50);
  });

  test('the scorer quarantines it: rivals get the scores of the round without silo 0', () => {
    const r = scoreReports('c1', 9, sign([0, 1, 2, 3, 4]), roster, FULL, EMPTY);
    const without0 = scoreReports('c1', 9, sign(RIVALS), roster, FULL, EMPTY);
    expect(without0.quarantined).toEqual([]);
    expect(r.silos).toEqual([0, 1, 2, 3, 4]);
    expect(r.scored).toEqual(RIVALS);
    for (const m of SCHEMES) expect(r.scores[m], m).toEqual(without0.scores[m]);
    expect(Math.min(...r.scores.fp)).toBeGreaterThan(0);
    expect(r.scores.fp.reduce((a, b) => a + b, 0)).toBeCloseTo(FULL, 12);
    expect(r.quarantined).toHaveLength(1);
    const q = r.quarantined[0]!;
    expect(q).toMatchObject({ silo: 0, withOnly: 0.02, without: 0.06, flagged: ['without'] });
    expect(q.threshold).toBe(3.5);
    expect(q.released).toBe(false);
    const d = detectReports(utilitiesOf(REPORTED));
    expect(q.zWithOnly).toBe(d.zWithOnly[0]);
    expect(q.zWithout).toBe(d.zWithout[0]);
  });

  test('what the lie would pay if released: no longer 30 × v(M) — FP is bounded (issue 32, S1)', () => {
    const r = scoreReports('c1', 9, sign([0, 1, 2, 3, 4]), roster, FULL, EMPTY, {
      quarantine: { released: [0] },
    });
    expect(r.scored).toEqual([0, 1, 2, 3, 4]);
    // Before issue 32 the released lie paid FP_0 = 30 × v(M) (25.8) with every rival below −6: the
    // lie drives FP's normalizer D close to 0. Now |D| within κ·Σ|w| counts as zero (papers/003
    // Remark 1's fallback, scoring/private.ts): every published FP lies within ±|v(M)|/κ.
    for (const i of [0, ...RIVALS])
      expect(Math.abs(r.scores.fp[i]!)).toBeLessThanOrEqual(ratioScoreBound(FULL));
    expect(r.scores.fp[0]).toBeLessThan(FULL); // nowhere near 30 × v(M)
    expect(r.quarantined[0]!.released).toBe(true);
    // `quarantine: false` (every report scored) gives the same numbers.
    const all = scoreReports('c1', 9, sign([0, 1, 2, 3, 4]), roster, FULL, EMPTY, { quarantine: false });
    for (const m of SCHEMES) expect(all.scores[m], m).toEqual(r.scores[m]);
  });

  test('honest reports of the same round: nothing is quarantined', () => {
    const r = scoreReports('c1', 9, sign([0, 1, 2, 3, 4], HONEST), roster, FULL, EMPTY);
    const all = scoreReports('c1', 9, sign([0, 1, 2, 3, 4], HONEST), roster, FULL, EMPTY, {
      quarantine: false,
    });
    expect(r.quarantined).toEqual([]);
    expect(r.scored).toEqual([0, 1, 2, 3, 4]);
    for (const m of SCHEMES) expect(r.scores[m], m).toEqual(all.scores[m]);
  });
});

describe('A4 through the service: the published scores leave the flagged report out', () => {
  let h: Harness;
  const base = '/v1/consortia/c1/rounds/1';
  beforeEach(async () => {
    // No evaluator: the operator posts v(M) = 0.86 and v(M0) = 0.85, as in the round.
    h = await harness({ n: 5, app: { evaluate: undefined } as never });
    const body = JSON.parse(JSON.stringify({ ...consortiumBody(h.keys, 'c1', 4), utility: undefined }));
    expect((await adminInject(h, 'POST', '/v1/consortia', body)).statusCode).toBe(201);
    expect((await adminInject(h, 'PUT', '/v1/consortia/c1/model', f32bytes(INITIAL))).statusCode).toBe(204);
    expect((await adminInject(h, 'POST', '/v1/consortia/c1/rounds')).statusCode).toBe(201);
    const silos = [0, 1, 2, 3, 4].map((i) => new Silo(h, 'c1', 1, i, 4));
    for (const s of silos) await s.start();
    for (const k of STEPS) for (const s of silos) await s.step(k);
    const u = await adminInject(h, 'PUT', `${base}/utilities`, { full: FULL, empty: EMPTY });
    expect(u.statusCode).toBe(200);
    for (const [i, [a, b]] of REPORTED.entries()) {
      const res = await siloInject(
        h,
        i,
        'POST',
        `${base}/reports`,
        signedReport('c1', 1, i, a, b, h.keys[i]!),
      );
      expect(res.statusCode).toBe(201);
    }
  });
  afterEach(async () => h.close());

  test('silo 0 is quarantined with its z values; rivals get the scores of the round without it; the operator releases it', async () => {
    const res = await adminInject(h, 'GET', `${base}/scores`);
    expect(res.statusCode).toBe(200);
    const published = res.json();
    // The reference: the pure scorer on silos 1–4's reports alone.
    const rivals = scoreReports(
      'c1',
      1,
      RIVALS.map((i) => signedReport('c1', 1, i, REPORTED[i]![0], REPORTED[i]![1], h.keys[i]!)),
      h.keys.map((k) => k.publicKey),
      FULL,
      EMPTY,
    );
    expect(published.silos).toEqual(RIVALS);
    for (const m of SCHEMES) expect(published.schemes[m], m).toEqual([null, ...Array.from(rivals.scores[m])]);
    expect(published.withOnly[0]).toBe(0.02); // the report stays visible (the audit reads it)
    expect(published.quarantined).toHaveLength(1);
    expect(published.quarantined[0]).toMatchObject({
      silo: 0,
      withOnly: 0.02,
      without: 0.06,
      flagged: ['without'],
      threshold: 3.5,
      released: false,
    });
    expect(published.quarantined[0].zWithout).toBe(detectReports(utilitiesOf(REPORTED)).zWithout[0]);
    const cumulative = (await adminInject(h, 'GET', '/v1/consortia/c1/scores')).json();
    expect(cumulative.rounds).toEqual([published]);
    expect(cumulative.cumulative.fp).toEqual([0, ...Array.from(rivals.scores.fp)]);

    // The dashboard lists the flagged silo with the detector's reason.
    const charts = (await adminInject(h, 'GET', '/dashboard/c1/charts')).json();
    expect(charts.quarantined).toEqual([
      {
        round: 1,
        silo: 0,
        flagged: ['without'],
        zWithOnly: published.quarantined[0].zWithOnly,
        zWithout: published.quarantined[0].zWithout,
        released: false,
      },
    ]);
    // …and its leaderboard flags it, last, with the reason; the other silos carry no flag.
    const silo0 = charts.leaderboard.entries.find((e: { silo: number }) => e.silo === 0);
    expect(silo0.flags).toEqual([
      {
        kind: 'misbehaving',
        reason: 'reports quarantined by the detector (robust |z| above its threshold) in round 1',
      },
    ]);
    expect(silo0.lastRound).toBeNull();
    expect(
      charts.leaderboard.entries
        .filter((e: { flags: unknown[] }) => e.flags.length > 0)
        .map((e: { silo: number }) => e.silo),
    ).toEqual([0]);

    // Releasing is the operator's: no token → 401, a silo's signature → 401, an unflagged report → 409.
    const release = `${base}/reports/0/release`;
    expect((await h.app.inject({ method: 'POST', url: release })).statusCode).toBe(401);
    expect((await siloInject(h, 0, 'POST', release)).statusCode).toBe(401);
    const notFlagged = await adminInject(h, 'POST', `${base}/reports/1/release`);
    expect(notFlagged.statusCode).toBe(409);
    expect(notFlagged.json().code).toBe('FEDSCORE_ERR_NOT_QUARANTINED');
    expect((await adminInject(h, 'POST', `${base}/reports/255/release`)).statusCode).toBe(400);

    const released = await adminInject(h, 'POST', release);
    expect(released.statusCode).toBe(200);
    const after = released.json();
    expect(after.silos).toEqual([0, 1, 2, 3, 4]);
    // released, the lie no longer pays 30 × v(M): FP is bounded (issue 32, S1)
    for (const x of after.schemes.fp) expect(Math.abs(x)).toBeLessThanOrEqual(ratioScoreBound(FULL));
    expect(after.schemes.fp[0]).toBeLessThan(FULL);
    expect(after.quarantined[0].released).toBe(true);
    expect((await adminInject(h, 'GET', `${base}/scores`)).json()).toEqual(after);
    const again = await adminInject(h, 'POST', release);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('FEDSCORE_ERR_NOT_QUARANTINED');
  });
});
