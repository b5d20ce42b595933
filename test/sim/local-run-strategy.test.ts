/**
 * A silo on its own data (`fedscore client --data`) knows only its own example count: a strategy
 * whose plan weighs the selected silos by theirs is refused by name; one that does not (score
 * weights on an equal base) runs — before the fix the latter crashed on the missing silos' setup.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import { capWeights } from '../../src/consortium/weight-floor.js';
import { consortiumFileOf } from '../../src/fl/consortium-of-run.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { networkedLearner, networkedRun, siloPlan, weightOf } from '../../src/fl/networked.js';
import { checkLocalStrategy, localNetworkedRun } from '../../src/fl/own-data.js';
import type { ExperimentConfig } from '../../src/records/config.js';

const base: ExperimentConfig = {
  seed: 2,
  silos: 4,
  rounds: 2,
  data: {
    dataset: 'synthetic',
    trainSize: 80,
    testSize: 30,
    synthetic: { features: 4, classes: 3, examples: 200 },
  },
  partition: { kind: 'quantity-skew', beta: 2 },
  model: { kind: 'mlp', hidden: [5] },
};
const keys = [1, 2, 3, 4].map((i) =>
  Buffer.from(signingKeyPairFromSeed(new Uint8Array(32).fill(i)).publicKey).toString('hex'),
);
let learner: Learner;
beforeAll(async () => {
  learner = await networkedLearner(base, { backend: 'cpu' });
});
afterAll(async () => {
  await learner.close();
});

/** Silo 1's run on its own data (its partition of the configuration, as if read from a file). */
function local(cfg: ExperimentConfig) {
  const full = networkedRun(cfg, 2);
  const file = consortiumFileOf(full, 'c1', keys, learner, { examples: full.data.silos.map((s) => s.n) });
  return {
    file,
    full,
    run: localNetworkedRun(cfg, 2, { silo: 1, train: full.data.silos[1]!, test: full.data.test, file }),
  };
}

describe('a strategy on a silo with its own data', () => {
  it('EE weights on an equal base over 3 of 4: runs, with the plan of the full run', async () => {
    const cfg = {
      ...base,
      strategy: { name: 'score-weighted', score: 'ee', clientsPerRound: 3 } as ExperimentConfig['strategy'],
    };
    const { file, full, run } = local(cfg);
    await expect(checkLocalStrategy(run, 1)).resolves.toBeUndefined();
    // The lowest normalized score weighs 0 before the floor (issue 27 A1): the file's minimum
    // weight is the floor (not min n_j / max n_j), and the silo's run takes the file's bounds.
    expect(file.encoding.minWeight).toBe(file.encoding.weightFloor);
    expect(file.encoding.weightFloor).toBe(0.1);
    expect(run.minWeight).toBe(0.1);
    expect(run.weightBounds).toEqual({ weightFloor: 0.1, maxWeightShare: 0.5, minEffectiveSilos: 3 });
    expect(await siloPlan(run, 1, [])).toEqual(await siloPlan(full, 1, []));
  });

  it('FedAvg weighted by example counts over 3 of 4: refused, naming strategy.weights', async () => {
    const cfg = { ...base, strategy: { name: 'fedavg', clientsPerRound: 3 } as ExperimentConfig['strategy'] };
    await expect(checkLocalStrategy(local(cfg).run, 1)).rejects.toThrow(
      /^strategy\.weights: 'fedavg' weighs the selected silos by their example counts, which a silo on its own data \(--data\) does not know/,
    );
    const equal = {
      ...base,
      strategy: { name: 'fedavg', clientsPerRound: 3, weights: 'equal' } as ExperimentConfig['strategy'],
    };
    await expect(checkLocalStrategy(local(equal).run, 1)).resolves.toBeUndefined();
  });
});

describe('FedAvg by example counts over every silo, on its own data (issue 32 W1)', () => {
  it('each silo sends the capped weight the engine gives it, from the file alone', () => {
    // Counts far apart (one large silo): the floor and the cap both act.
    const cfg = { ...base, partition: { kind: 'quantity-skew', beta: 0.1 } } as ExperimentConfig;
    const full = networkedRun(cfg, 2);
    const counts = full.data.silos.map((s) => s.n);
    const capped = capWeights(counts, full.weightBounds);
    const file = consortiumFileOf(full, 'c1', keys, learner, { examples: counts });
    expect(file.weights.scale).toBe(Math.max(...capped));
    for (let silo = 0; silo < 4; silo++) {
      const run = localNetworkedRun(cfg, 2, {
        silo,
        train: full.data.silos[silo]!,
        test: full.data.test,
        file,
      });
      const { weight, scale } = weightOf(run, silo);
      expect(weight / scale).toBeCloseTo(capped[silo]! / Math.max(...capped), 12);
      expect(weight / scale).toBeGreaterThanOrEqual(file.encoding.minWeight);
    }
    console.log(`counts ${counts}, capped ${capped.map((w) => w.toFixed(1))}`);
  });
});
