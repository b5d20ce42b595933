/**
 * The local default (src/sweep/local.ts): seeds run in child processes, one per core, assemble into
 * the results.json a single process computes, timings aside; a failing seed names itself.
 */
import { describe, expect, it } from 'vitest';
import { dataShapeOf } from '../../src/fl/consortium-data.js';
import { createTfLearner } from '../../src/fl/learner/tf-learner.js';
import { workerBlasThreads } from '../../src/ml/core-share.js';
import { parseConfig } from '../../src/records/config.js';
import { assembleResults, runExperiment } from '../../src/sim/experiment.js';
import { runSeedsLocally } from '../../src/sweep/local.js';
import { timingsAside } from './_results.js';

const tiny = (extra: Record<string, unknown> = {}) =>
  parseConfig({
    seed: 5,
    silos: 4,
    rounds: 2,
    data: { dataset: 'synthetic', trainSize: 300, testSize: 100, synthetic: { features: 16, classes: 3 } },
    partition: { kind: 'dirichlet', alpha: 0.5 },
    model: { kind: 'mlp', hidden: [8] },
    training: { epochs: 1, batchSize: 32 },
    ...extra,
  });

describe('local sweeps: one process per core', () => {
  it('two seeds in two processes give the single-process results.json', async () => {
    const cfg = tiny();
    const learner = await createTfLearner({
      ...dataShapeOf(cfg),
      model: cfg.model,
      training: cfg.training ?? {},
    });
    const single = await runExperiment(cfg, { learner, seeds: [5, 6], fedscoreVersion: 't' });
    await learner.close();
    const records = await runSeedsLocally(cfg, [5, 6], { workers: 2 });
    const local = assembleResults(cfg, records, { fedscoreVersion: 't', wallTimeMs: 0 });
    expect(local.seeds).toEqual([5, 6]);
    expect(timingsAside(local)).toEqual(timingsAside(single));
    // Two children on this machine's cores: each child's native kernels get ⌊cores ÷ 2⌋ threads.
    if (typeof local.kernels === 'string' && !process.env.FEDSCORE_BLAS_THREADS)
      expect(local.kernels).toMatch(new RegExp(`\\(${workerBlasThreads(2)} threads?\\)$`));
  }, 300_000);

  it('a seed that fails names itself', async () => {
    const bad = tiny({ silos: 12, data: { dataset: 'synthetic', trainSize: 10, testSize: 100 } });
    await expect(runSeedsLocally(bad, [1, 2], { workers: 2 })).rejects.toThrow(
      /^seed [12]: RangeError: partition: /,
    );
  }, 300_000);
});
