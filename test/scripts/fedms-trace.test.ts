/**
 * scripts/fedms-trace.ts: the `--plugin` that registers `fedms-trace` and writes FedMS's selection
 * per round (docs/reproductions.md, "FedMS's selection"). It must select and weigh exactly as
 * `fedms` does and write what the next round draws from.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { selectionProbabilities } from '../../src/strategies/fedms.js';
import { createStrategy } from '../../src/strategies/registry.js';
import {
  additiveClassGame,
  additiveOver,
  aggregateContext,
  fullFor,
  makeSetup,
} from '../strategies/_fixtures.js';

describe('scripts/fedms-trace.ts', () => {
  it('registers fedms-trace, which weighs like fedms and logs Ŝ, P (Eq. 12), β and the coreset', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'fedms-trace-')), 'trace.jsonl');
    process.env.FEDMS_TRACE = file;
    await import('../../scripts/fedms-trace.js');
    const setup = makeSetup(4, { classes: 2, rounds: 2, examples: [10, 20, 30, 40] });
    const a = [
      [0.1, 0],
      [0.1, 0.05],
      [0.05, 0.3],
      [-0.2, -0.1],
    ];
    const sel = [0, 1, 2, 3];
    const ctx = () =>
      aggregateContext(setup, 1, sel, 3, {
        full: fullFor(sel, additiveOver(sel, [0, 0, 0, 0]), additiveClassGame(sel, [0.5, 0.2], a)),
      });
    const params = { estimator: 'exact', temperature: 0.5 };
    const plain = createStrategy({ name: 'fedms', ...params });
    const traced = createStrategy({ name: 'fedms-trace', ...params });
    expect(traced.name).toBe('fedms-trace');
    const want = await plain.aggregationWeights(plain.init(setup), ctx());
    const got = await traced.aggregationWeights(traced.init(setup), ctx());
    expect(Array.from(got.weights)).toEqual(Array.from(want.weights));
    const line = JSON.parse(readFileSync(file, 'utf8').trim());
    const state = want.state as { scores: Float64Array; coreset: number[] };
    expect(line.round).toBe(1);
    expect(line.selected).toEqual(sel);
    expect(line.coreset).toEqual(state.coreset);
    expect(line.weights).toEqual(Array.from(want.weights));
    // β = softmax((1 − v̂)/T) on the coreset {0, 1, 2}: v̂ = [0.75, 0.55], so class 1 leads.
    expect(line.betaTop.class).toBe(1);
    expect(line.betaTop.beta).toBeCloseTo(0.598688, 6);
    const p = selectionProbabilities(state.scores, 'percent'); // the default unit
    line.p.forEach((x: number, i: number) => {
      expect(x).toBeCloseTo(p[i]!, 6);
    });
  });
});
