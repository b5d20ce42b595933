/**
 * Wall time of one consortium round (issue 5 bench): 9 silos, MLP 784-200-10, Fashion-MNIST,
 * split into local training, secure aggregation, private scoring and each reference estimator.
 * Run: npx tsx bench/round.ts
 */
import { pathToFileURL } from 'node:url';
import { estimatorDefinitions } from '../src/estimators/registry.js';
import { dataShapeOf } from '../src/fl/consortium-data.js';
import { createTfLearner } from '../src/fl/learner/tf-learner.js';
import { parseConfig } from '../src/records/config.js';
import { runSeed } from '../src/sim/round-loop.js';

/** The estimators that run per round (those that only fold other estimators' tables cost nothing here). */
const ESTIMATORS = estimatorDefinitions().filter((e) => e.run);

function config(estimator: (typeof ESTIMATORS)[number], budget: number) {
  return parseConfig({
    name: `bench-round-${estimator.name}`,
    silos: 9,
    rounds: 2,
    data: { dataset: 'fashion-mnist', trainSize: 9000, testSize: 2000 },
    partition: { kind: 'dirichlet', alpha: 0.5 },
    model: { kind: 'mlp', hidden: [200] },
    // Budgeted estimators (a `budget` option) get the bench's budget; the others their defaults.
    comparison: {
      estimators: { [estimator.name]: 'budget' in estimator.schema.properties ? { budget } : {} },
    },
  });
}

export async function main(): Promise<void> {
  const budget = 128;
  const base = config(ESTIMATORS[0]!, budget);
  const learner = await createTfLearner({ ...dataShapeOf(base), model: base.model!, training: {} });
  // One run per estimator, so that no estimator rides on evaluations another one already paid for
  // (the coalition evaluator caches utilities within a round). Round 2 is timed: warm JIT and caches.
  const rows: [string, number, number | string][] = [];
  for (const estimator of ESTIMATORS) {
    const run = await runSeed(config(estimator, budget), 1, { learner });
    const rd = run.rounds[1]!;
    if (rows.length === 0)
      for (const k of ['training', 'secureAggregation', 'privateScoring'])
        rows.push([k, rd.timingsMs[k]!, '-']);
    const { name } = estimator;
    rows.push([name, rd.timingsMs[name] ?? Number.NaN, rd.evaluations[name] ?? '-']);
  }
  console.log(
    `\n## One round: 9 silos (Dirichlet 0.5, 1000 examples each), MLP 784-200-10, Fashion-MNIST, 2000 test examples, backend ${learner.backend}\n`,
  );
  console.log(
    `Sampled estimators at a budget of ${budget} coalitions, Maverick-Shapley's per class (exact per-round Shapley: 2^9 = 512).\n`,
  );
  console.log('| phase | wall time (ms) | coalition evaluations |');
  console.log('|---|---:|---:|');
  for (const [k, ms, ev] of rows) console.log(`| ${k} | ${ms.toFixed(0)} | ${ev} |`);
  await learner.close();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
