/**
 * Issue 5 acceptance: a 4-silo, 3-round experiment on synthetic data, end to end, with the real
 * TensorFlow.js learner and the real secure-aggregation protocol.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { valueErrorBound, weightErrorBound } from '../../protocol/weighted.js';
import { keptUtilities, quarantineReports } from '../../scoring/manipulation/quarantine.js';
import { everybodyElse, fairPrivate, includeOneIn, leaveOneOut } from '../../scoring/private.js';
import { buildConsortium, dataShapeOf } from '../../src/fl/consortium-data.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { createTfLearner } from '../../src/fl/learner/tf-learner.js';
import { type ExperimentConfig, parseConfig } from '../../src/records/config.js';
import { type ExperimentResults, RESULTS_SCHEMA_VERSION } from '../../src/records/results.js';
import { writeOutputs } from '../../src/report/outputs.js';
import { runExperiment } from '../../src/sim/experiment.js';

const cfg: ExperimentConfig = parseConfig({
  name: 'integration',
  seed: 7,
  silos: 4,
  rounds: 3,
  data: { dataset: 'synthetic', trainSize: 800, testSize: 200, synthetic: { features: 32, classes: 4 } },
  partition: { kind: 'dirichlet', alpha: 1 },
  model: { kind: 'mlp', hidden: [16] },
  training: { epochs: 1, batchSize: 32 },
  attacks: [{ silo: 3, kind: 'free-rider' }],
  comparison: { estimators: { mrsv: {}, tmr: { threshold: 0.001 }, gtg: { budget: 12 }, cos: {} } },
});

/** Wraps the learner to record what the engine trained from and what it produced. */
function recording(inner: Learner) {
  const calls: { base: Float32Array; updates: Float32Array[] }[] = [];
  const learner: Learner = {
    ...inner,
    initialParameters: (s) => inner.initialParameters(s),
    async trainMany(params, jobs) {
      const updates = await inner.trainMany(params, jobs);
      if (jobs.length === cfg.silos)
        calls.push({ base: params.slice(), updates: updates.map((u) => u.slice()) });
      return updates;
    },
    evaluate: (p, d) => inner.evaluate(p, d),
    coalitionGames: (c) => inner.coalitionGames(c),
    close: () => inner.close(),
  };
  return { learner, calls };
}

let results: ExperimentResults;
let calls: { base: Float32Array; updates: Float32Array[] }[];
let inner: Learner;
let dir: string;

beforeAll(async () => {
  inner = await createTfLearner({
    ...dataShapeOf(cfg),
    model: { kind: 'mlp', hidden: [16] },
    training: cfg.training ?? {},
  });
  const rec = recording(inner);
  // trueShapley defaults to on for N ≤ 6: its 15 coalition runs also call trainMany, with fewer jobs.
  results = await runExperiment(cfg, { learner: rec.learner, seeds: [7], fedscoreVersion: 'test' });
  calls = rec.calls.slice(0, cfg.rounds);
  dir = await mkdtemp(join(tmpdir(), 'fedscore-exp-'));
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('experiment end to end (4 silos, 3 rounds, synthetic)', () => {
  it('the securely aggregated model equals plaintext FedAvg within the quantization bound', () => {
    const consortium = buildConsortium(cfg, 7);
    const w = consortium.silos.map((s) => s.n);
    const maxW = Math.max(...w);
    const k = cfg.silos;
    // clip c = 1, weight range 1 (crypto/quantize.ts bound for k·2^GUARD_BITS summands)
    const epsValue = valueErrorBound({ valueRange: 1, weightRange: 1, n: k });
    const epsWeight = weightErrorBound({ valueRange: 1, weightRange: 1, n: k });
    for (let r = 0; r < cfg.rounds; r++) {
      const { base, updates } = calls[r]!;
      const next = r + 1 < cfg.rounds ? calls[r + 1]!.base : undefined;
      if (!next) continue;
      const wn = w.map((x) => x / maxW);
      const W = wn.reduce((a, b) => a + b, 0);
      let worst = 0;
      for (let j = 0; j < base.length; j++) {
        let s = 0;
        for (let i = 0; i < k; i++) s += wn[i]! * (i === 3 ? 0 : updates[i]![j]!); // silo 3 is a free rider
        const avg = s / W;
        const bound =
          (k * epsValue + Math.abs(avg) * k * epsWeight) / (W - k * epsWeight) +
          2 ** -23 * Math.abs(base[j]! + avg);
        const err = Math.abs(next[j]! - (base[j]! + avg));
        expect(err).toBeLessThanOrEqual(bound);
        worst = Math.max(worst, err);
      }
      expect(worst).toBeGreaterThan(0); // the comparison is not vacuous: quantization/rounding did something
    }
  });

  it('private scores equal the scoring formulas on directly computed utilities', async () => {
    const consortium = buildConsortium(cfg, 7);
    const w = consortium.silos.map((s) => s.n);
    const run = results.runs[0]!;
    for (let r = 0; r < cfg.rounds - 1; r++) {
      const rd = run.rounds[r]!;
      const { base, updates } = calls[r]!;
      const sent = updates.map((u, i) => (i === 3 ? new Float32Array(u.length) : u));
      const model = (members: number[]) => {
        const out = new Float32Array(base.length);
        const W = members.reduce((a, i) => a + w[i]!, 0);
        for (let j = 0; j < base.length; j++) {
          let s = 0;
          for (const i of members) s += w[i]! * sent[i]![j]!;
          out[j] = base[j]! + (W > 0 ? s / W : 0);
        }
        return out;
      };
      const all = [0, 1, 2, 3];
      const acc = async (p: Float32Array) => (await inner.evaluate(p, consortium.test)).accuracy;
      const direct = {
        full: await acc(model(all)),
        empty: await acc(base),
        withOnly: await Promise.all(all.map((i) => acc(model([i])))),
        without: await Promise.all(all.map((i) => acc(model(all.filter((j) => j !== i))))),
      };
      const oneExample = 1 / consortium.test.n + 1e-12; // quantization may flip at most a borderline example
      expect(Math.abs(rd.utilities.full - direct.full)).toBeLessThanOrEqual(oneExample);
      expect(rd.utilities.empty).toBe(direct.empty);
      for (const i of all) {
        expect(Math.abs(rd.utilities.withOnly[i]! - direct.withOnly[i]!)).toBeLessThanOrEqual(oneExample);
        expect(Math.abs(rd.utilities.without[i]! - direct.without[i]!)).toBeLessThanOrEqual(oneExample);
      }
      const reported = {
        full: rd.utilities.full,
        empty: rd.utilities.empty,
        withOnly: rd.utilities.withOnly as number[],
        without: rd.utilities.without as number[],
      };
      // Reports the detector flags are quarantined (scoring.quarantine, on by default): the round
      // is scored from the others, and the quarantined silos' private scores are null. The engine
      // compares the marginals in steps of 1/T (an accuracy on T test examples).
      const { kept, quarantined } = quarantineReports(reported, { resolution: 1 / consortium.test.n });
      expect((rd.quarantined ?? []).map((q) => q.silo)).toEqual(quarantined.map((q) => q.index));
      const u = keptUtilities(reported, kept);
      const spread = (v: Float64Array) => all.map((i) => (kept.includes(i) ? v[kept.indexOf(i)]! : null));
      const expected = {
        loo: leaveOneOut(u),
        ioi: includeOneIn(u),
        fp: fairPrivate(u),
        ee: everybodyElse(u),
        eeMedian: everybodyElse(u, { reduce: 'median' }),
      };
      for (const [m, v] of Object.entries(expected))
        expect({ m, s: rd.scores[m] }).toEqual({ m, s: spread(v) });
      // The free rider sends Δ = 0: its singleton model is M0, so IOI = 0. (It is not a null player under
      // FedAvg: its weight dilutes every coalition it joins, so LOO and FP need not vanish.)
      if (kept.includes(3)) expect(rd.scores.ioi![3]).toBe(0);
    }
  });

  it('records the harness, the comparison and the private-mode visibility', () => {
    const run = results.runs[0]!;
    expect(results.comparison.reference).toBe('trueSv'); // computed for N ≤ 6, so it is the reference
    expect(Object.keys(results.comparison.methods).sort()).toEqual(
      ['cos', 'ee', 'eeMedian', 'fp', 'gtg', 'ioi', 'loo', 'mrsv', 'tmr'].sort(),
    );
    const sum = (x: number[]) => x.reduce((a, b) => a + b, 0);
    // MR-SV is the sum of the per-round exact values; each round's values sum to v(M) − v(M0).
    const rounds = run.rounds;
    expect(sum(run.cumulative.mrsv!)).toBeCloseTo(
      sum(rounds.map((rd) => rd.utilities.full - rd.utilities.empty)),
      10,
    );
    expect(run.evaluations.mrsv).toBe(cfg.rounds * 16);
    expect(run.evaluations.gtg).toBeLessThanOrEqual(cfg.rounds * 12);
    expect(results.visibility.serverReadIndividualUpdates).toBe(false);
    expect(results.backend).toMatch(/^(wasm|cpu|tensorflow)$/);
    expect(results.silos.roles[3]).toBe('free-rider');
  });

  it('writes results.json, report.md, report.html and charts that parse', async () => {
    const files = await writeOutputs(dir, results);
    expect(files.map((f) => f.slice(dir.length + 1)).sort()).toEqual(
      [
        'charts/accuracy.svg',
        'charts/agreement-trueSv.svg',
        'charts/leaderboard.svg',
        'charts/trajectories.svg',
        'leaderboard.csv',
        'report.html',
        'report.md',
        'results.json',
      ].sort(),
    );
    const parsed = JSON.parse(await readFile(join(dir, 'results.json'), 'utf8')) as ExperimentResults;
    expect(parsed.schemaVersion).toBe(RESULTS_SCHEMA_VERSION);
    expect(parsed.scoring).toEqual({
      utility: 'accuracy',
      coalitions: 'fedavg',
      emptyCoalition: 'initialModel',
      raw: false,
      quarantine: true,
    });
    expect(parsed.comparison.references).toEqual(['trueSv']);
    expect(parsed.comparison.byReference).toEqual({ trueSv: parsed.comparison.methods });
    expect(parsed.runs[0]!.rounds).toHaveLength(3);
    const html = await readFile(join(dir, 'report.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<svg');
    const md = await readFile(join(dir, 'report.md'), 'utf8');
    // fp is shown only where --schemes asks for it (issue 22); the other private schemes are rows
    expect(md).toMatch(/\| loo \| /);
    expect(md).toMatch(/\| eeMedian \| /);
    expect(md).not.toMatch(/\| fp[ |]/);
    expect(md).toContain('- participation: every silo in every round'); // hence no participation chart
  });
});
