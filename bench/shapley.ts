/**
 * Exact Shapley wall time for n = 10 … 20 on a memoized synthetic game (issue 2 bench).
 * Splits the time into evaluating the 2^n coalitions (through `memoize`, as a model-backed game
 * would be) and the O(n·2^n) pass of `exactShapley` over the table.
 * Run: npx tsx bench/shapley.ts [maxN]
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { members } from '../scoring/coalition.js';
import { coalitionTable, gameFromFunction, memoize } from '../scoring/game.js';
import { createRng } from '../scoring/seeded-rng.js';
import { exactShapley } from '../scoring/shapley.js';

/** A saturating "accuracy" game: v(S) = 1 − exp(−Σ_{i∈S} q_i / 4) with random silo qualities. */
function syntheticGame(n: number, seed: number) {
  const rng = createRng(seed);
  const q = Array.from({ length: n }, () => rng.next() * 2 - 0.2);
  return gameFromFunction(n, (c) => 1 - Math.exp(-members(c).reduce((s, i) => s + q[i]!, 0) / 4));
}

export async function main(maxN = 20): Promise<void> {
  console.log('\n## Exact Shapley, memoized synthetic game (time in ms)\n');
  console.log('| n | coalitions | evaluate 2^n (memoized) | exactShapley pass | total | pass ns per n·2^n |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (let n = 10; n <= maxN; n++) {
    const game = memoize(syntheticGame(n, n));
    const t0 = performance.now();
    const table = await coalitionTable(game, { batchSize: 1 << 14 });
    const t1 = performance.now();
    const phi = exactShapley(n, table);
    const t2 = performance.now();
    if (!Number.isFinite(phi[0])) throw new Error('non-finite Shapley value');
    const perOp = ((t2 - t1) * 1e6) / (n * 2 ** n);
    console.log(
      `| ${n} | ${2 ** n} | ${(t1 - t0).toFixed(1)} | ${(t2 - t1).toFixed(1)} | ${(t2 - t0).toFixed(1)} | ${perOp.toFixed(2)} |`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main(Number(process.argv[2] ?? 20));
}
