/**
 * The paper-code example (examples/paper003-code-table4.json: v(∅) = 0, FedAvg coalitions weighted
 * by examples, the scored round's exact Shapley value as reference, raw scores), shrunk to 4 silos
 * and 2 rounds of synthetic data, end to end with the real learner and secure aggregation. Its
 * scores must equal the authors' `pri_ce` and `shapley` (./_pri-ce.ts, an independent transcription
 * of their utils.py) on the same tables.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableUnder } from '../../scoring/empty-coalition.js';
import { coalitionTable } from '../../scoring/game.js';
import { exactShapley } from '../../scoring/shapley.js';
import { dataShapeOf } from '../../src/fl/consortium-data.js';
import type { CoalitionSpec, Learner } from '../../src/fl/learner/learner.js';
import { createTfLearner } from '../../src/fl/learner/tf-learner.js';
import { type ExperimentConfig, parseConfig } from '../../src/records/config.js';
import type { ExperimentResults } from '../../src/records/results.js';
import { runExperiment } from '../../src/sim/experiment.js';
import { groupsOf, priCe, shapley } from './_pri-ce.js';

const example = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../examples/paper003-code-table4.json'), 'utf8'),
) as Record<string, Record<string, unknown>>;
const AT = 2;
const cfg: ExperimentConfig = parseConfig({
  ...example,
  name: 'paper003-code, shrunk',
  seed: 5,
  seeds: 1,
  silos: 4,
  rounds: 2,
  data: { dataset: 'synthetic', trainSize: 800, testSize: 200, synthetic: { features: 32, classes: 4 } },
  model: { kind: 'mlp', hidden: [16] },
  training: { ...example.training, batchSize: 32 },
  comparison: { ...example.comparison, at: AT },
});

let inner: Learner;
let results: ExperimentResults;
const specs: CoalitionSpec[] = [];

beforeAll(async () => {
  inner = await createTfLearner({ ...dataShapeOf(cfg), model: cfg.model, training: cfg.training ?? {} });
  const learner: Learner = {
    ...inner,
    initialParameters: (s) => inner.initialParameters(s),
    trainMany: (p, jobs) => inner.trainMany(p, jobs),
    evaluate: (p, d) => inner.evaluate(p, d),
    coalitionGames(spec) {
      specs.push(spec); // one per round: the references step's game over the survivors
      return inner.coalitionGames(spec);
    },
    close: () => inner.close(),
  };
  results = await runExperiment(cfg, { learner, seeds: [5], fedscoreVersion: 'test' });
}, 120_000);

afterAll(async () => {
  await inner.close();
});

describe('the paper-code example (shrunk)', () => {
  it("keeps the authors' conventions and records them", () => {
    expect(example.scoring).toEqual({ quarantine: false, emptyCoalition: 'zero', raw: true });
    expect(example.aggregation).toEqual({ convention: 'fedavg' });
    expect(example.strategy).toEqual({ name: 'fedavg', weights: 'examples' });
    expect(example.comparison?.reference).toBe('roundSv');
    expect(results.scoring).toEqual({
      utility: 'accuracy',
      coalitions: 'fedavg',
      emptyCoalition: 'zero',
      raw: true,
      quarantine: false,
    });
    expect(results.comparison.references).toEqual(['roundSv', 'mrsv']);
    expect(Object.keys(results.comparison.byReference!)).toEqual(['roundSv', 'mrsv']);
    expect(results.comparison.methods).toBe(results.comparison.byReference!.roundSv);
    // each reference is compared with the other, and the raw scores with both
    expect(Object.keys(results.comparison.byReference!.roundSv!)).toEqual(
      expect.arrayContaining(['mrsv', 'fp', 'fpRaw', 'ee', 'eeRaw', 'eeMedianRaw', 'cos']),
    );
    expect(Object.keys(results.comparison.byReference!.mrsv!)).toContain('roundSv');
  });

  it("the round's private scores equal pri_ce on the reported utilities (v(∅) = 0)", () => {
    const run = results.runs[0]!;
    const rd = run.rounds[AT - 1]!;
    const n = cfg.silos;
    const all = 2 ** n - 1;
    // pri_ce reads v(N), v({i}), v(N∖{i}) and v(∅) only; here they are what the silos reported.
    const table = new Float64Array(2 ** n).fill(Number.NaN);
    table[all] = rd.utilities.full;
    for (let i = 0; i < n; i++) {
      table[1 << i] = rd.utilities.withOnly[i]!;
      table[all ^ (1 << i)] = rd.utilities.without[i]!;
    }
    const { groups, acc } = groupsOf(n, table);
    const o = priCe(n, groups, acc);
    const close = (got: (number | null)[] | undefined, want: number[]) => {
      expect(got).toHaveLength(n);
      for (const [i, g] of got!.entries()) expect(g).toBeCloseTo(want[i]!, 12);
    };
    close(rd.scores.loo, o.l1o);
    close(rd.scores.ioi, o.i1i);
    close(rd.scores.fpRaw, o.se); // α(i), not rescaled
    close(rd.scores.eeRaw, o.ee); // (β(i) + γ(i))/2, not rescaled
    const full = rd.utilities.full;
    const rescaled = (w: number[]) => w.map((x) => (x / w.reduce((a, b) => a + b, 0)) * full);
    close(rd.scores.fp, rescaled(o.se)); // papers/003 Eq. 2 on the authors' se
    close(rd.scores.ee, rescaled(o.ee)); // Eq. 4 on the authors' ee
    expect(rd.utilities.empty).toBeGreaterThan(0); // v(M0) is still measured and recorded
    expect(run.compared.fpRaw).toEqual(rd.scores.fpRaw); // compared at round `at`, as they are
  });

  it("roundSv equals exactShapley of round at's table and the authors' shapley with d[()] = 0", async () => {
    expect(specs).toHaveLength(cfg.rounds);
    const spec = specs[AT - 1]!;
    const games = inner.coalitionGames(spec);
    const measured = await coalitionTable(games.game);
    games.dispose();
    const n = spec.updates.length;
    const { groups, acc } = groupsOf(n, measured);
    const oracle = shapley(n, groups, acc);
    const ours = exactShapley(n, tableUnder(measured, 'zero'));
    const got = results.runs[0]!.compared.roundSv!;
    for (let i = 0; i < n; i++) {
      expect(got[i]).toBeCloseTo(ours[i]!, 12);
      expect(got[i]).toBeCloseTo(oracle[i]!, 12);
    }
    // efficiency under v(∅) = 0: the values sum to v(N) itself
    expect(got.reduce((a, b) => a + b, 0)).toBeCloseTo(measured[2 ** n - 1]!, 12);
    // roundSv is round at's own value, not MR-SV accumulated to it
    expect(results.runs[0]!.rounds[AT - 1]!.scores.mrsv).toEqual(got);
  });
});
