import { describe, expect, it } from 'vitest';
import { eeSelfGain, fpSelfGain, looSelfGain } from '../../scoring/manipulation/closed-form.js';
import {
  everybodyElse,
  fairPrivate,
  includeOneIn,
  leaveOneOut,
  type PrivateUtilities,
  ratioScoreBound,
  SCHEMES,
  type Scheme,
  schemeScores,
} from '../../scoring/private.js';
import { createRng } from '../../scoring/seeded-rng.js';
import {
  AUDIT_SCHEMA_VERSION,
  type AuditResult,
  auditExperiment,
  auditUtilities,
  type RoundAudit,
} from '../../src/audit/manipulation-audit.js';
import type { ExperimentResults, RoundRecord } from '../../src/records/results.js';
import { parseUtilitiesFile } from '../../src/records/utilities-file.js';

const N = 6;

/** Private scores of the participants, in silo order with null for the others (as the engine records them). */
function record(
  round: number,
  full: number,
  empty: number,
  withOnly: (number | null)[],
  without: (number | null)[],
): RoundRecord {
  const silos = withOnly.flatMap((x, i) => (x === null || without[i] === null ? [] : [i]));
  const u = { full, empty, withOnly: silos.map((i) => withOnly[i]!), without: silos.map((i) => without[i]!) };
  const scores: Record<string, (number | null)[]> = {};
  if (silos.length >= 2) {
    const by: Record<Scheme, Float64Array> = {
      loo: leaveOneOut(u),
      ioi: includeOneIn(u),
      fp: fairPrivate(u),
      ee: everybodyElse(u),
      eeMedian: everybodyElse(u, { reduce: 'median' }),
    };
    for (const s of SCHEMES) {
      const row: (number | null)[] = new Array(N).fill(null);
      silos.forEach((g, q) => {
        row[g] = by[s][q]!;
      });
      scores[s] = row;
    }
  }
  return {
    round,
    selected: silos,
    dropped: [],
    aggregationWeights: withOnly.map((x) => (x === null ? null : 1 / silos.length)),
    testAccuracy: full,
    testLoss: 0.5,
    utilities: { full, empty, withOnly, without },
    scores,
    evaluations: {},
    timingsMs: {},
  };
}

/**
 * A synthetic 6-silo run: round 1 early (large improvement, FP/EE normalizers far from 0), round 2
 * late and tight (small improvement, reports close together), round 3 with silo 4 absent, round 4
 * with only one reporting silo (skipped).
 */
function fixture(): ExperimentResults {
  const rng = createRng(3);
  const early = record(
    1,
    0.7,
    0.1,
    Array.from({ length: N }, () => 0.45 + 0.1 * rng.next()),
    Array.from({ length: N }, () => 0.6 + 0.05 * rng.next()),
  );
  const late = record(
    2,
    0.85,
    0.8,
    [0.81, 0.805, 0.812, 0.808, 0.803, 0.809],
    [0.84, 0.845, 0.842, 0.838, 0.846, 0.841],
  );
  const absent = record(
    3,
    0.86,
    0.85,
    [0.852, 0.851, 0.855, 0.853, null, 0.854],
    [0.855, 0.857, 0.853, 0.856, null, 0.854],
  );
  const lonely = record(
    4,
    0.87,
    0.86,
    [0.865, null, null, null, null, null],
    [0.86, null, null, null, null, null],
  );
  const rounds = [early, late, absent, lonely];
  return {
    schemaVersion: 1,
    config: {},
    backend: 'cpu',
    versions: { fedscore: '0.1.0', node: 'v20', tfjs: '4.22.0' },
    createdAt: '2025-01-01T00:00:00.000Z',
    dataSource: 'synthetic',
    visibility: { serverReadIndividualUpdates: false, harnessReadIndividualUpdates: true, note: '' },
    seeds: [1],
    silos: {
      count: N,
      names: Array.from({ length: N }, (_, i) => `silo-${i}`),
      examples: new Array(N).fill(100),
      roles: new Array(N).fill('honest'),
    },
    runs: [
      {
        seed: 1,
        rounds,
        cumulative: {},
        compared: {},
        finalAccuracy: 0.87,
        finalLoss: 0.4,
        evaluations: {},
        timingsMs: {},
        participation: new Array(N).fill(4),
      },
    ],
    comparison: { reference: 'mrsv', at: 'cumulative', methods: {} },
    wallTimeMs: 1,
  };
}

const results = fixture();
const audit = auditExperiment(results, { randomTrials: 5 });
const roundsOf = (a: AuditResult) => a.runs[0]!.rounds;
const audited = (a: AuditResult, round: number) => roundsOf(a).find((r) => r.round === round) as RoundAudit;

describe('auditExperiment on a synthetic 6-silo run', () => {
  it('covers every round, restricts to the silos that reported and skips a round with one reporter', () => {
    expect(audit.auditSchemaVersion).toBe(AUDIT_SCHEMA_VERSION);
    expect(audit.schemes).toEqual(['loo', 'ioi', 'fp', 'ee', 'eeMedian']);
    expect(roundsOf(audit).map((r) => r.round)).toEqual([1, 2, 3, 4]);
    expect(roundsOf(audit)[3]).toEqual({ round: 4, skipped: 'fewer than 2 silos reported (1)' });
    const r3 = audited(audit, 3);
    expect(r3.silos).toEqual([0, 1, 2, 3, 5]);
    for (const s of SCHEMES) {
      expect(r3.schemes[s].influence).toHaveLength(5);
      expect(r3.schemes[s].damage.every((row) => row.length === 5)).toBe(true);
    }
    expect(audit.summary.fp.siloRounds).toBe(6 + 6 + 5);
  });

  it('is plain JSON: no NaN or Infinity survives serialization', () => {
    expect(JSON.parse(JSON.stringify(audit))).toEqual(audit);
  });

  it('recomputes the recorded scores and reports a mismatch', () => {
    for (const r of [1, 2, 3])
      for (const s of SCHEMES)
        expect(audited(audit, r).schemes[s].recordedScoresMaxAbsDiff).toBeLessThan(1e-12);
    const tampered = fixture();
    tampered.runs[0]!.rounds[1]!.scores.fp![2] = tampered.runs[0]!.rounds[1]!.scores.fp![2]! + 0.25;
    const t = auditExperiment(tampered, { randomTrials: 0, rounds: [2] });
    expect(roundsOf(t)).toHaveLength(1);
    expect(audited(t, 2).schemes.fp.recordedScoresMaxAbsDiff).toBeCloseTo(0.25, 12);
    expect(audited(t, 2).schemes.ee.recordedScoresMaxAbsDiff).toBeLessThan(1e-12);
  });

  it("scores as the run did: v(∅) = 0 under scoring.emptyCoalition 'zero' (results.json version 2)", () => {
    const zero = fixture();
    const rd = zero.runs[0]!.rounds[0]!;
    const u = { ...rd.utilities, empty: 0 } as PrivateUtilities; // round 1: every silo reported
    for (const s of SCHEMES) rd.scores[s] = Array.from(schemeScores(s, u));
    const v2 = {
      ...zero,
      schemaVersion: 2,
      scoring: { utility: 'accuracy', coalitions: 'fedavg', emptyCoalition: 'zero', raw: false },
    } as ExperimentResults;
    const a = auditExperiment(v2, { randomTrials: 0, rounds: [1] });
    expect(audited(a, 1).utilities.empty).toBe(0); // what the schemes saw
    for (const s of SCHEMES) expect(audited(a, 1).schemes[s].recordedScoresMaxAbsDiff).toBeLessThan(1e-12);
    // read as version 1 (no `scoring`), the same record is scored with v(∅) = v(M0): IOI is off by v(M0)
    const v1 = auditExperiment(zero, { randomTrials: 0, rounds: [1] });
    expect(audited(v1, 1).schemes.ioi.recordedScoresMaxAbsDiff).toBeCloseTo(rd.utilities.empty, 12);
    expect(audited(v1, 1).schemes.loo.recordedScoresMaxAbsDiff).toBeLessThan(1e-12);
  });

  it('influence rows sum to 1 and EE keeps its own silo off the diagonal', () => {
    for (const r of [1, 2, 3]) {
      const a = audited(audit, r);
      for (const s of SCHEMES)
        a.schemes[s].influence.forEach((row, i) => {
          expect(row.reduce((x, y) => x + y, 0)).toBeCloseTo(1, 12);
          if (s === 'ee' || s === 'eeMedian') expect(row[i]).toBe(0);
        });
    }
  });

  it('self-gains agree with the closed forms; the early round is bounded, the late one only by the range of issue 32 for FP and EE', () => {
    const early = audited(audit, 1);
    const u = {
      full: early.utilities.full,
      empty: early.utilities.empty,
      withOnly: early.utilities.withOnly,
      without: early.utilities.without,
    };
    const range = { lo: 0, hi: 1 };
    for (let i = 0; i < N; i++) {
      expect(early.schemes.loo.selfGain[i]!.value).toBeCloseTo(looSelfGain(u, i, range).value, 12);
      expect(early.schemes.fp.selfGain[i]!.value).toBeCloseTo(fpSelfGain(u, i, range).value, 12);
      expect(early.schemes.ee.selfGain[i]!.value).toBeCloseTo(eeSelfGain(u, i, range).value, 12);
      expect(early.schemes.ee.selfGainClosedForm![i]).toBeCloseTo(early.schemes.ee.selfGain[i]!.value!, 12);
      expect(early.schemes.fp.selfGain[i]!.share).toBeCloseTo(
        early.schemes.fp.selfGain[i]!.value! / u.full,
        12,
      );
    }
    expect(early.schemes.eeMedian.selfGainClosedForm).toBeNull();
    const late = audited(audit, 2);
    for (const s of ['fp', 'ee'] as const) {
      // Eq. 2 and 4 alone are unbounded here (the closed forms say so); the published scores fall
      // back within the margin of D = 0 and stay within ±|v(M)|/κ (scoring/private.ts).
      expect(late.schemes[s].selfGainClosedForm!.every((g) => g === null)).toBe(true);
      late.schemes[s].selfGain.forEach((g, i) => {
        expect(g.unbounded).toBe(false);
        expect(late.schemes[s].scores[i]! + g.value!).toBeLessThanOrEqual(
          ratioScoreBound(late.utilities.full),
        );
      });
    }
    expect(audit.summary.ee.unboundedSelfGain).toBe(0);
  });

  it('the detector bounds the undetected gain on the tight late round', () => {
    const late = audited(audit, 2);
    for (const s of SCHEMES)
      late.schemes[s].selfGainUndetected.forEach((g, i) => {
        const full = late.schemes[s].selfGain[i]!;
        // (where the unconstrained search is exact: one that met the normalizer's margin is a lower bound)
        if (full.exact && !g.unbounded) expect(g.value!).toBeLessThanOrEqual(full.value! + 1e-15);
      });
    // EE's undetected self-gain is finite here: the detector keeps t_i near the others'
    expect(late.schemes.ee.selfGainUndetected.every((g) => !g.unbounded)).toBe(true);
    expect(late.detection.flaggedHonest).toEqual([]);
    // Half the deflate-others lies (each claims the round's whole improvement, 0.05) are caught:
    // the evidence reference of issue 37 (scoring/manipulation/_evidence.ts) accepts a marginal up
    // to about 1.5 × what v(M) − v(M0) leaves unexplained by the others' LOO (less their two
    // largest), which here reaches 0.05 for three of the six silos. Before it, all six were caught
    // (docs/audit.md, "What the detector catches": deflate-others 7.3 % → 2.6 % on recorded runs).
    expect(late.detection.rates.deflateOthers).toBe(0.5);
  });

  it('EE-median damage stays within its order-statistic bound', () => {
    for (const r of [1, 2, 3]) {
      const m = audited(audit, r).schemes.eeMedian;
      m.damage.forEach((row, i) => {
        row.forEach((d, v) => {
          if (i === v) return;
          const bound = m.damageBound![i]![v]!;
          expect(d).not.toBeNull();
          expect(d!).toBeLessThanOrEqual(bound + 1e-12);
        });
      });
    }
  });

  it('collusion: k = 2 and 3 over all coalitions, members in global indices; member gain ≥ single gain', () => {
    const r3 = audited(audit, 3);
    const fp = r3.schemes.fp;
    expect(fp.collusion.map((c) => [c.k, c.coalitions.length, c.skipped])).toEqual([
      [2, 10, null],
      [3, 10, null],
    ]);
    for (const c of r3.schemes.eeMedian.collusion)
      for (const co of c.coalitions) {
        expect(co.members.includes(4)).toBe(false);
        co.members.forEach((m, q) => {
          const single = r3.schemes.eeMedian.selfGain[r3.silos.indexOf(m)]!;
          const joint = co.memberGain[q]!;
          // null = unbounded: two of the four others' values can move a median anywhere
          if (!joint.unbounded && joint.exact && single.exact)
            expect(joint.value!).toBeGreaterThanOrEqual(single.value! - 1e-12);
          if (single.unbounded) expect(joint.unbounded).toBe(true);
        });
        expect(co.damage.map((d) => d.silo).sort()).toEqual(r3.silos.filter((s) => !co.members.includes(s)));
      }
    const few = auditExperiment(results, { randomTrials: 0, rounds: [1], maxCoalitions: 15 });
    expect(audited(few, 1).schemes.ee.collusion.map((c) => c.skipped)).toEqual([
      null,
      'C(6, 3) = 20 coalitions exceed maxCoalitions = 15',
    ]);
  });

  it('attacks: per-attacker summaries, reproducible with the seed, changed by another seed', () => {
    const a = audited(audit, 1).schemes.fp.attacks;
    expect(a.inflateSelf.count).toBe(N);
    expect(a.random.count).toBe(N * 5);
    expect(a.inflateSelf.attackerShareChange).toHaveLength(N);
    // inflating one's own marginals raises one's FP share in the early (bounded) round
    for (const x of a.inflateSelf.attackerShareChange) expect(x!).toBeGreaterThan(0);
    const again = auditExperiment(results, { randomTrials: 5 });
    expect(again).toEqual(audit);
    const other = auditExperiment(results, { randomTrials: 5, seed: 9, rounds: [1] });
    expect(audited(other, 1).schemes.fp.attacks.random).not.toEqual(a.random);
  });

  it('checks its inputs', () => {
    expect(() => auditExperiment(null as unknown as ExperimentResults)).toThrow(/^results:/);
    expect(() => auditExperiment(results, { range: { lo: 1, hi: 0 } })).toThrow(/^options\.range:/);
    expect(() => auditExperiment(results, { collusionSizes: [0] })).toThrow(/^options\.collusionSizes:/);
    expect(() => auditExperiment(results, { threshold: -1 })).toThrow(/^options\.threshold:/);
  });
});

describe('auditUtilities', () => {
  it('audits a utilities file as auditExperiment audits the same rounds (source aside)', () => {
    const rounds = results.runs[0]!.rounds;
    const file = parseUtilitiesFile({
      silos: results.silos.names,
      rounds: rounds.map((r) => ({ round: r.round, ...r.utilities })),
    });
    const fromFile = auditUtilities(file, 'u.json', { randomTrials: 5 });
    expect(fromFile.source).toEqual({
      createdAt: null,
      dataSource: 'utilities file u.json',
      silos: results.silos.names,
      resultsSchemaVersion: null,
    });
    // Without recorded scores there is nothing to compare the recomputed ones with.
    const unrecorded = (a: AuditResult) =>
      JSON.parse(JSON.stringify(a.runs), (k, v) => (k === 'recordedScoresMaxAbsDiff' ? null : v));
    expect(unrecorded(fromFile)).toEqual(unrecorded({ ...audit, runs: [{ ...audit.runs[0]!, seed: 0 }] }));
    expect(fromFile.summary).toEqual(audit.summary);
  });
});
