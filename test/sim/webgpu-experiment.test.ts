/**
 * The quickstart experiment (examples/quickstart.json, cut short: 3 silos, 2 rounds, a small
 * Fashion-MNIST split and a 32-unit MLP) on the webgpu backend against the wasm backend: the run
 * records the backend and the adapter, and its scores agree with the wasm run's.
 *
 * Tolerances: the scores built on accuracy (LOO, IOI, FP, EE, the Shapley family) are equal:
 * accuracies are arg-max counts, equal unless a test image sits on a near-tie between two classes
 * (test/ml/webgpu.test.ts explains the float32 differences behind that); cosine scores are
 * compared to 1e-6 (cosines of updates that differ in float32 rounding: measured 2e-8 on the
 * longer configuration of docs/performance.md).
 *
 * The webgpu run trains a round's silos in the same dispatches (src/ml/train-silos.ts); a third
 * run with FEDSCORE_GPU_SILOS=1 trains them one after another and must give the same results,
 * exactly (every utility and score of every round).
 *
 * Skipped, with the reason printed, when no WebGPU adapter can be created; fails then with CI=true.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dataShapeOf } from '../../src/fl/consortium-data.js';
import { createTfLearner } from '../../src/fl/learner/tf-learner.js';
import { loadWebGpu } from '../../src/ml/_webgpu.js';
import { parseConfig } from '../../src/records/config.js';
import type { ExperimentResults } from '../../src/records/results.js';
import { runExperiment } from '../../src/sim/experiment.js';

const gpu = await loadWebGpu();
const inCi = process.env.CI === 'true';
if (!gpu.ok)
  console.warn(`test/sim/webgpu-experiment.test.ts: ${inCi ? 'CI=true, failing' : 'skipped'}: ${gpu.why}`);

const quickstart = JSON.parse(readFileSync('examples/quickstart.json', 'utf8'));
const cfg = parseConfig({
  ...quickstart,
  name: 'quickstart, short',
  silos: 3,
  rounds: 2,
  data: { ...quickstart.data, trainSize: 300, testSize: 200 },
  model: { kind: 'mlp', hidden: [32] },
  comparison: { ...quickstart.comparison, at: 2, trueShapley: false },
});

async function run(backend: 'webgpu' | 'wasm'): Promise<ExperimentResults> {
  const learner = await createTfLearner({
    ...dataShapeOf(cfg),
    model: cfg.model,
    training: cfg.training ?? {},
    backend,
    workers: 1,
  });
  try {
    return await runExperiment(cfg, { learner, seeds: [1], fedscoreVersion: 'test' });
  } finally {
    await learner.close();
  }
}

describe.runIf(gpu.ok || inCi)('the quickstart on webgpu', () => {
  it('records the backend and adapter, and scores as the wasm run does', async () => {
    const g = await run('webgpu');
    const c = await run('wasm');
    expect(g.backend).toBe('webgpu');
    expect(g.adapter).toEqual(gpu.ok ? gpu.adapter : undefined);
    expect(c.backend).toBe('wasm');
    expect(c.adapter).toBeUndefined();
    const [rg, rc] = [g.runs[0]!, c.runs[0]!];
    expect(rg.rounds.map((r) => r.testAccuracy)).toEqual(rc.rounds.map((r) => r.testAccuracy));
    let compared = 0;
    for (const [k, round] of rc.rounds.entries()) {
      expect(rg.rounds[k]!.utilities).toEqual(round.utilities);
      for (const [scheme, scores] of Object.entries(round.scores as Record<string, number[]>)) {
        const ours = (rg.rounds[k]!.scores as Record<string, number[]>)[scheme]!;
        const tolerance = scheme.startsWith('cos') ? 1e-6 : 0;
        for (const [i, s] of scores.entries()) expect(Math.abs(ours[i]! - s)).toBeLessThanOrEqual(tolerance);
        compared += scores.length;
      }
    }
    expect(compared).toBeGreaterThan(30);
    process.env.FEDSCORE_GPU_SILOS = '1';
    const separate = await run('webgpu').finally(() => delete process.env.FEDSCORE_GPU_SILOS);
    const results = (r: ExperimentResults) => r.runs[0]!.rounds.map(({ timingsMs: _, ...rest }) => rest);
    expect(results(separate)).toEqual(results(g));
    expect(separate.runs[0]!.cumulative).toEqual(rg.cumulative);
  }, 300_000);
});
