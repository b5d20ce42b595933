/**
 * Sampled estimators at equal budgets: error against exact (or closed-form) values.
 *
 * For each game, every method gets the same budget of distinct coalition evaluations, N×M
 * (papers/004 §4.1, budget parity), and runs over several seeds. MC, TMC, GTG and Owen are
 * compared with the exact Shapley values; Data Banzhaf (MSR) with the exact Banzhaf values.
 * GTG stops by its own rule (papers/000 Eq. 11) and may use less than the budget: the "evals"
 * column says how much each method actually used.
 *
 * Games: a random 12-player weighted voting game (exact values from `exactShapley` /
 * `exactBanzhaf` over its table), the glove game 6+6 (Shapley ½), and the 100-player
 * airport game (closed-form Shapley; Banzhaf from the closed form of E_S[max(0, c − max cost
 * in S)] with each other player in S with probability ½).
 * Reading the table: Owen's error on airport is mostly quadrature bias, not noise — with 100
 * players e_j(q) is concentrated near q = 0 (any coalition with q ≥ 0.1 almost surely holds a
 * cost-10 player), which Q = 2..8 levels miss (tests check the estimator hits its quadrature
 * target). The paper grid's level q = 1 only has n + 1 distinct coalitions, so under
 * distinct-evaluation counting it cannot spend its half of the budget ("evals used").
 * Airport Banzhaf values are ≈ 2^{−99}·c, so MSR's relative L2 there compares noise with ~0.
 * Run: npx tsx bench/estimators.ts [seeds]
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { msrBanzhaf } from '../scoring/banzhaf-msr.js';
import { members } from '../scoring/coalition.js';
import { coalitionTable, type Game, gameFromFunction } from '../scoring/game.js';
import { AIRPORT_COSTS, AIRPORT_GROUPS, airportGame, gloveGame } from '../scoring/games.js';
import { gtgShapley } from '../scoring/gtg.js';
import { monteCarloShapley } from '../scoring/monte-carlo.js';
import { budgetParity, owenShapley } from '../scoring/owen.js';
import type { SampledEstimate } from '../scoring/sampled-estimate.js';
import { createRng } from '../scoring/seeded-rng.js';
import { exactBanzhaf, exactShapley } from '../scoring/shapley.js';

interface BenchGame {
  name: string;
  game: Game;
  shapley: Float64Array;
  banzhaf: Float64Array;
  /** M of the N×M budgets to try. */
  ms: number[];
}

function weightedVoting(n: number, seed: number): Game {
  const rng = createRng(seed);
  const w = Array.from({ length: n }, () => 1 + Math.floor(rng.next() * 9));
  const quota = Math.floor(w.reduce((a, b) => a + b, 0) / 2) + 1;
  return gameFromFunction(n, (c) => (members(c).reduce((s, i) => s + w[i]!, 0) >= quota ? 1 : 0));
}

async function fromTable(name: string, game: Game, ms: number[]): Promise<BenchGame> {
  const table = await coalitionTable(game);
  return { name, game, shapley: exactShapley(game.n, table), banzhaf: exactBanzhaf(game.n, table), ms };
}

/** Airport Banzhaf: E[max(0, c − M)], P(M ≤ c_m) = 2^{−H_m}, H_m = other players with cost > c_m. */
function airportBanzhaf(): Float64Array {
  const costs = [0, ...AIRPORT_COSTS];
  const out: number[] = [];
  AIRPORT_GROUPS.forEach((g, j) => {
    const cdf = (m: number) => {
      let h = -1;
      for (let l = 0; l < AIRPORT_GROUPS.length; l++) if (costs[l + 1]! > costs[m]!) h += AIRPORT_GROUPS[l]!;
      return 0.5 ** h;
    };
    let e = 0;
    for (let m = 0; m <= j; m++) e += (cdf(m) - (m > 0 ? cdf(m - 1) : 0)) * (costs[j + 1]! - costs[m]!);
    for (let r = 0; r < g; r++) out.push(e);
  });
  return Float64Array.from(out);
}

type Method = (game: Game, budget: number, seed: number) => Promise<SampledEstimate>;

const METHODS: [string, 'shapley' | 'banzhaf', Method][] = [
  ['MC', 'shapley', (g, budget, s) => monteCarloShapley(g, { budget, rng: createRng(s) })],
  [
    'TMC (ε = 1e-3)',
    'shapley',
    (g, budget, s) => monteCarloShapley(g, { budget, rng: createRng(s), tolerance: 1e-3 }),
  ],
  [
    'GTG (ε_i = 1e-3, Eq. 11 stop)',
    'shapley',
    (g, budget, s) => gtgShapley(g, { budget, rng: createRng(s), withinRoundTolerance: 1e-3 }),
  ],
  [
    'GTG (ε_i = 1e-3, budget only)',
    'shapley',
    (g, budget, s) =>
      gtgShapley(g, {
        budget,
        rng: createRng(s),
        withinRoundTolerance: 1e-3,
        stop: { name: 'never', start: () => () => false },
      }),
  ],
  [
    'Owen Q=2 paper grid',
    'shapley',
    (g, budget, s) => owenShapley(g, { budget, rng: createRng(s), levels: 2, grid: 'right' }),
  ],
  [
    'Owen Q=2 midpoint',
    'shapley',
    (g, budget, s) => owenShapley(g, { budget, rng: createRng(s), levels: 2 }),
  ],
  [
    'Owen Q=8 midpoint',
    'shapley',
    (g, budget, s) => owenShapley(g, { budget, rng: createRng(s), levels: 8 }),
  ],
  [
    'Banzhaf MSR (vs exact Banzhaf)',
    'banzhaf',
    (g, budget, s) => msrBanzhaf(g, { budget, rng: createRng(s) }),
  ],
];

function errors(est: Float64Array, exact: Float64Array): { mae: number; rel: number } {
  let abs = 0;
  let d2 = 0;
  let e2 = 0;
  for (let i = 0; i < exact.length; i++) {
    const d = est[i]! - exact[i]!;
    abs += Math.abs(d);
    d2 += d * d;
    e2 += exact[i]! * exact[i]!;
  }
  return { mae: abs / exact.length, rel: Math.sqrt(d2 / e2) };
}

/** Prints the table. `seeds` runs per cell (default 5). */
export async function main(seeds = 5): Promise<void> {
  // TMC/GTG tolerances are absolute: the games below have |v(N) − v(∅)| = 1, 6 and 10.
  const games: BenchGame[] = [
    await fromTable('weighted voting (12)', weightedVoting(12, 7), [20, 100]),
    await fromTable('glove (6+6)', gloveGame(6).game, [20, 100]),
    {
      name: 'airport (100)',
      game: airportGame().game,
      shapley: airportGame().shapley,
      banzhaf: airportBanzhaf(),
      ms: [20, 100],
    },
  ];
  console.log(`\n## Sampled estimators at equal budgets N×M (${seeds} seeds; mean over seeds)\n`);
  console.log('| game | N×M | method | evals used | mean abs error | relative L2 | ms per run |');
  console.log('|---|---:|---|---:|---:|---:|---:|');
  for (const bg of games) {
    for (const m of bg.ms) {
      const budget = budgetParity(bg.game.n, m);
      for (const [name, target, run] of METHODS) {
        let mae = 0;
        let rel = 0;
        let evals = 0;
        const t0 = performance.now();
        for (let s = 1; s <= seeds; s++) {
          const est = await run(bg.game, budget, 1000 * m + s);
          const e = errors(est.values, target === 'shapley' ? bg.shapley : bg.banzhaf);
          mae += e.mae / seeds;
          rel += e.rel / seeds;
          evals += est.evaluations / seeds;
        }
        const ms = (performance.now() - t0) / seeds;
        console.log(
          `| ${bg.name} | ${budget} | ${name} | ${evals.toFixed(0)} | ${mae.toExponential(2)} | ${rel.toFixed(3)} | ${ms.toFixed(0)} |`,
        );
      }
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main(Number(process.argv[2] ?? 5));
}
