/**
 * Multi-round differencing across bases (issue 32; So et al., AAAI 2023): the server's best linear
 * estimate of one silo's update from T rounds of published sums with known selection sets, against
 * the round-mean baseline, for the strategies that run networked with a changing selection
 * (k-of-n FedAvg, score-selection, score-weighted over a random k), with and without selection in
 * fixed groups (`strategy.selectionGroups`, src/strategies/selection-groups.ts). The table is
 * docs/threat-model.md's ("Multi-round differencing"). Method: bench/_multi-round.ts.
 *
 *   npx tsx bench/multi-round.ts [--silos 9] [--k 3] [--seeds 5] [--drift 0.1]
 */
import { parseArgs } from 'node:util';
import type { StrategyConfig } from '../src/strategies/registry.js';
import { measureDifferencing } from './_multi-round.js';

const { values } = parseArgs({
  options: {
    silos: { type: 'string', default: '9' },
    k: { type: 'string', default: '3' },
    seeds: { type: 'string', default: '5' },
    drift: { type: 'string', default: '0.1' },
    dimension: { type: 'string', default: '500' },
  },
});
const n = Number(values.silos);
const k = Number(values.k);
const seeds = Number(values.seeds);
const drift = Number(values.drift);
const dimension = Number(values.dimension);

const STRATEGIES: [string, StrategyConfig][] = [
  [
    'fedavg k-of-n (equal weights)',
    { name: 'fedavg', clientsPerRound: k, weights: 'equal' } as StrategyConfig,
  ],
  [
    'score-selection (EE, latest)',
    {
      name: 'score-selection',
      clientsPerRound: k,
      score: 'ee',
      accumulate: 'latest',
      weights: 'equal',
    } as StrategyConfig,
  ],
  [
    'score-weighted k-of-n (EE)',
    { name: 'score-weighted', clientsPerRound: k, score: 'ee' } as StrategyConfig,
  ],
];

const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
console.log(
  `${n} silos, ${k} selected per round, drift ε = ${drift}, d = ${dimension}, ${seeds} seeds (mean); cosine / relative error to the silo's update`,
);
console.log(
  '| strategy | groups | T | estimate cos | baseline cos | estimate rel. err | baseline rel. err | rank of A |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const [label, strategy] of STRATEGIES)
  for (const groups of [undefined, 3])
    for (const rounds of [10, 30]) {
      const rs = [];
      for (let seed = 1; seed <= seeds; seed++)
        rs.push(
          await measureDifferencing({
            strategy: { ...strategy, ...(groups ? { selectionGroups: groups } : {}) } as StrategyConfig,
            silos: n,
            rounds,
            dimension,
            drift,
            seed,
          }),
        );
      const f = (xs: number[]) => mean(xs).toFixed(3);
      console.log(
        `| ${label} | ${groups ?? '–'} | ${rounds} | ${f(rs.map((r) => r.estimate.cosine))} | ${f(rs.map((r) => r.baseline.cosine))} | ${f(rs.map((r) => r.estimate.relError))} | ${f(rs.map((r) => r.baseline.relError))} | ${f(rs.map((r) => r.rank))} |`,
      );
    }
