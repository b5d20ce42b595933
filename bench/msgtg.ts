/**
 * MS-GTG, joint against per-class sampling (papers/000 Alg. 1; scoring/ms-gtg.ts against GTG run
 * once per class, scoring/gtg.ts), on synthetic class-wise games with a Maverick: how close each
 * sampler's Maverick-Shapley rewards R_i = Σ_c β^c φ_i^c come to the exact ones (exact class-wise
 * Shapley over all 2^n coalitions, β of the exact coreset), at the same budget and truncation.
 *
 * Game (one per seed): 8 players, 10 classes; players 0–6 hold classes 0–8 in Dirichlet(0.5)
 * proportions and 100–300 examples, player 7 (the Maverick) holds 700 examples of class 9 only. A
 * coalition's class-c accuracy models its FedAvg model: v^c(S) = 0.1 + 0.85·(1 − exp(−8 f_c(S)))
 * with f_c(S) the share of class c in the coalition's pooled data, v^c(∅) = 0.1 (the starting
 * model), so the Maverick dilutes the common classes. GTG's stopping rule is papers/000 Eq. 11 for
 * both (per class on that class's φ; joint on the β-weighted φ), ε_i = 0.001 (§5.1) or 0.01, the budget is
 * per class for per-class GTG (its historical meaning) and in total for the joint sampler.
 * Run: npx tsx bench/msgtg.ts [seeds]
 */
import { pathToFileURL } from 'node:url';
import { members } from '../scoring/coalition.js';
import type { VectorGame } from '../scoring/game.js';
import { gtgShapley } from '../scoring/gtg.js';
import { type ClassEstimator, type JointClassEstimator, maverickShapleyRound } from '../scoring/maverick.js';
import { normalizedL2, spearman } from '../scoring/metrics.js';
import { msGtg } from '../scoring/ms-gtg.js';
import { createRng, type Rng } from '../scoring/seeded-rng.js';
import { exactShapleyOfGame } from '../scoring/shapley.js';

const N = 8;
const C = 10;
const T = 0.01; // papers/000 §5.1

/** Gamma(k, 1) by Marsaglia–Tsang (k < 1 via the boost k + 1). */
function gamma(rng: Rng, k: number): number {
  if (k < 1) return gamma(rng, k + 1) * rng.next() ** (1 / k);
  const d = k - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      const u1 = rng.next() || 1e-12;
      x = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * rng.next());
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = rng.next();
    if (u < 1 - 0.0331 * x ** 4 || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

/** Per-player class counts of one seed's consortium. */
function consortium(seed: number): number[][] {
  const rng = createRng(seed);
  const counts: number[][] = [];
  for (let i = 0; i < N - 1; i++) {
    const g = Array.from({ length: C - 1 }, () => gamma(rng, 0.5));
    const total = g.reduce((a, b) => a + b, 0);
    const size = 100 + Math.floor(200 * rng.next());
    counts.push([...g.map((x) => (size * x) / total), 0]);
  }
  counts.push([...new Array(C - 1).fill(0), 700]); // the Maverick
  return counts;
}

function classGame(counts: number[][]): VectorGame {
  return {
    n: N,
    dims: C,
    async values(coalitions) {
      const out = new Float64Array(coalitions.length * C);
      coalitions.forEach((co, b) => {
        const ms = members(co);
        const pooled = new Array<number>(C).fill(0);
        for (const i of ms) for (let c = 0; c < C; c++) pooled[c]! += counts[i]![c]!;
        const total = pooled.reduce((a, x) => a + x, 0);
        for (let c = 0; c < C; c++)
          out[b * C + c] = ms.length === 0 ? 0.1 : 0.1 + 0.85 * (1 - Math.exp((-8 * pooled[c]!) / total));
      });
      return out;
    },
  };
}

export async function main(seeds = 20): Promise<void> {
  const rows: string[] = [];
  // ε_i = 0.001 is papers/000 §5.1's; 0.01 shows what truncation does when it bites.
  for (const [budget, eps] of [
    [64, 0.001],
    [256, 0.001],
    [512, 0.001],
    [256, 0.01],
  ] as const) {
    const samplers: [string, (seed: number) => ClassEstimator | JointClassEstimator][] = [
      ['per class', () => (g, ctx) => gtgShapley(g, { budget, rng: ctx.rng, withinRoundTolerance: eps })],
      ['joint', () => msGtg({ budget, withinRoundTolerance: eps })],
    ];
    for (const [name, make] of samplers) {
      let rho = 0;
      let l2 = 0;
      let evals = 0;
      let maverickRankHits = 0;
      for (let s = 1; s <= seeds; s++) {
        const counts = consortium(s);
        const exact = await maverickShapleyRound(classGame(counts), (g) => exactShapleyOfGame(g), {
          temperature: T,
        });
        const est = await maverickShapleyRound(classGame(counts), make(s), { temperature: T, seed: s });
        rho += spearman(est.rewards, exact.rewards) / seeds;
        l2 += normalizedL2(est.rewards, exact.rewards) / seeds;
        evals += est.evaluations / seeds;
        const rankOf = (r: Float64Array) => [...r].filter((x) => x > r[N - 1]!).length;
        if (rankOf(est.rewards) === rankOf(exact.rewards)) maverickRankHits++;
      }
      rows.push(
        `| ${budget} | ${eps} | ${name} | ${evals.toFixed(1)} | ${rho.toFixed(3)} | ${l2.toFixed(3)} | ${maverickRankHits}/${seeds} |`,
      );
    }
  }
  console.log(`\n## MS-GTG: joint vs per-class sampling against exact class-wise Shapley (${seeds} seeds)\n`);
  console.log(
    '| budget | ε_i | sampler | distinct evaluations | Spearman to exact rewards | normalized L2 | Maverick rank as exact |',
  );
  console.log('|---:|---:|---|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main(Number(process.argv[2] ?? 20));
}
