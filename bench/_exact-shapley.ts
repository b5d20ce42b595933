/**
 * Exact per-round Shapley of the MLP 784-200-10 on 2,000 Fashion-MNIST test images (bench/ml.ts's
 * last table; `npm run bench -- ml [--baseline <dir>]`). For n = 10, 12, 15 silos (FedAvg,
 * accuracy), and at n = 15 for the additive convention and the class-wise (Maverick, MS-MR)
 * table, the whole computation — evaluator set-up, all 2ⁿ coalition values, exact Shapley — is
 * timed with this tree's evaluator and, when `--baseline <dir>` names a checkout of an older
 * commit, with that commit's evaluator and scoring/ loaded from there into this process,
 * interleaved (new, old, new, old for n ≤ 12; new, old at n = 15; best of each), on the same
 * updates and test set, with the same native addon. Reproduce the baseline of the issue:
 *
 *   git worktree add /tmp/fedscore-base f5e8247
 *   ln -s "$PWD/node_modules" /tmp/fedscore-base/node_modules
 *   ln -s "$PWD/native/build" /tmp/fedscore-base/native/build
 *   npm run bench -- --json bench.json --baseline /tmp/fedscore-base ml
 *
 * Checked on every row: the table and the Shapley values equal the baseline's bit for bit, and
 * the accuracies of a sample of coalitions (all of them at n = 10) equal naive evaluation's
 * (M_S formed, `evaluate` on it; its time extrapolated from the sample) — or, where they do not,
 * differ by no more examples than the coalition's near-ties (src/ml/near-ties.ts): naive
 * evaluation rounds X·W_S, not P₀ + s·U_S, so an example whose logits are within rounding of
 * each other may go either way, and which way depends on the processor's sgemm kernel.
 *
 * FLOPs are what the method must do: per coalition, the hidden update U_S = U_parent + Qⱼ (N·H),
 * relu(P₀ + s·U_S) (2·N·H), the output layer (2·N·H·C) and its bias (N·C); once, the n + 1
 * first-layer products (2·N·F·H each). The FLOP limit is that count at the rate OpenBLAS's sgemm
 * reaches in the same run on two cores (two worker threads, one product each at a time), the
 * better of two shapes: the output layer's [N×H]·[H×C] (the coalition product) and the first
 * layer's [N×F]·[F×H]. Measured before the first row and after the last; the larger rate is used.
 * The addon's gemm runs the first shape in OpenBLAS and, since issue 26, the coalition shape (C ≤ 16
 * columns) in native/narrow.c, the FMA chains the coalition kernel computes too.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { type Coalition, maskToCoalition, members } from '../scoring/coalition.js';
import * as game from '../scoring/game.js';
import * as classWise from '../scoring/maverick.js';
import * as shapley from '../scoring/shapley.js';
import { ADDITIVE_CONVENTION, type Convention, FEDAVG_CONVENTION } from '../src/consortium/convention.js';
import * as coalition from '../src/ml/coalition.js';
import type { Examples, ModelSpec } from '../src/ml/models.js';
import { nearTies } from '../src/ml/near-ties.js';

/** One row of the table (and of the JSON report's `exactShapley`). */
export interface ExactShapleyRow {
  n: number;
  convention: Convention;
  utility: 'accuracy' | 'class-wise';
  coalitions: number;
  /** This tree, seconds. */
  combinedS: number;
  /** The baseline commit's evaluator, seconds (when --baseline). */
  baselineS?: number;
  speedup?: number;
  /** Table and Shapley values equal to the baseline's bit for bit. */
  identicalToBaseline?: boolean;
  /** Naive evaluation, seconds (extrapolated from `naiveSample` coalitions). */
  naiveS: number;
  naiveSample: number;
  accuraciesIdenticalToNaive: boolean;
  /** Coalitions of the sample whose accuracies (class-wise: per class) differ from naive evaluation's. */
  naiveDisagreements: number;
  /**
   * Every such difference is no more examples than the coalition's near-ties (src/ml/near-ties.ts):
   * examples whose logits are within float32 rounding of each other, which the two evaluations
   * (P₀ + s·U_S against X·W_S) may send either way (issue 26).
   */
  naiveDisagreementsNearTies: boolean;
  /** |Σφ − (v(N) − v(∅))| (class-wise: the largest over classes). */
  efficiencyGap: number;
  gflop: number;
  gflops: number;
  /** The sgemm rate the limit uses (the better shape), and both shapes' rates. */
  sgemmGflops: number;
  sgemmGflopsCoalitionShape: number;
  sgemmGflopsFirstLayerShape: number;
  flopLimitS: number;
  ratioToLimit: number;
}

type Setup = coalition.CoalitionSetup;

/** One tree's modules (only what this bench calls; the old tree's have the same signatures). */
interface Modules {
  coalition: typeof coalition;
  game: typeof game;
  shapley: typeof shapley;
  classWise: typeof classWise;
}
interface Baseline extends Modules {
  commit: string;
}

async function loadBaseline(dir: string): Promise<Baseline> {
  const from = async <T>(path: string): Promise<T> =>
    (await import(pathToFileURL(join(dir, path)).href)) as T;
  // The old tree's own kernel module must register (it keeps its own "active" flag); its kernels
  // call the same addon (native/build is linked to this tree's build).
  const blas = await from<{ registerBlasKernels(): { native: boolean } }>('src/ml/_blas_kernels.ts');
  if (!blas.registerBlasKernels().native)
    throw new Error(`--baseline ${dir}: its native kernels did not load`);
  const { execFileSync } = await import('node:child_process');
  let commit = '?';
  try {
    commit = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {}
  return {
    commit,
    coalition: await from<typeof coalition>('src/ml/coalition.ts'),
    game: await from<typeof game>('scoring/game.ts'),
    shapley: await from<typeof shapley>('scoring/shapley.ts'),
    classWise: await from<typeof classWise>('scoring/maverick.ts'),
  };
}

/** Two-core sgemm rate (GFLOP/s) of [m×k]·[k×n]: two worker threads, one product at a time each. */
async function sgemmRate(m: number, n: number, k: number, seconds = 1): Promise<number> {
  const path = join(import.meta.dirname, '..', 'native', 'build', 'fedscore_kernels.node');
  const code = `
    const { parentPort, workerData: w } = require('node:worker_threads');
    const addon = require(w.path);
    addon.setLocalThreads(1);
    const a = Float32Array.from({ length: w.m * w.k }, (_, i) => ((i * 7) % 13) / 13 - 0.5);
    const b = Float32Array.from({ length: w.k * w.n }, (_, i) => ((i * 5) % 11) / 11 - 0.5);
    const c = new Float32Array(w.m * w.n);
    for (let i = 0; i < 3; i++) addon.gemm(1, 0, 0, w.m, w.n, w.k, a, 0, b, 0, c, 0);
    parentPort.postMessage('ready');
    parentPort.once('message', () => {
      let reps = 0;
      const t0 = performance.now();
      while (performance.now() - t0 < w.seconds * 1000) {
        addon.gemm(1, 0, 0, w.m, w.n, w.k, a, 0, b, 0, c, 0);
        reps++;
      }
      parentPort.postMessage({ reps, ms: performance.now() - t0 });
    });`;
  const workers = [0, 1].map(() => new Worker(code, { eval: true, workerData: { path, m, n, k, seconds } }));
  try {
    await Promise.all(workers.map((w) => new Promise((ok) => w.once('message', ok))));
    const done = workers.map((w) => new Promise<{ reps: number; ms: number }>((ok) => w.once('message', ok)));
    for (const w of workers) w.postMessage('go');
    const r = await Promise.all(done);
    const reps = r.reduce((s, x) => s + x.reps, 0);
    return (2 * m * n * k * reps) / (Math.max(...r.map((x) => x.ms)) / 1000) / 1e9;
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** FLOPs of the exact-Shapley computation (see the module comment). */
function flops(n: number, N: number, F: number, H: number, C: number): number {
  return (n + 1) * 2 * N * F * H + 2 ** n * N * (3 * H + 2 * H * C + C);
}

const time = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
  const t0 = performance.now();
  const v = await f();
  return [v, (performance.now() - t0) / 1000];
};

const sameBits = (a: Float64Array, b: Float64Array) =>
  a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

/**
 * The sampled coalitions whose accuracies (class-wise: per class) differ between the combined
 * values `cv` and naive evaluation's `nv`, and whether each difference is covered by near-ties.
 */
function naiveDisagreements(
  setup: Setup,
  masks: readonly Coalition[],
  utility: 'accuracy' | 'class-wise',
  cv: coalition.CoalitionValues,
  nv: coalition.CoalitionValues,
): { coalitions: number; nearTies: boolean } {
  const N = setup.data.n;
  const C = setup.spec.numClasses;
  const ofClass = new Int32Array(C);
  for (let r = 0; r < N; r++) ofClass[Number(setup.data.y[r])]!++;
  let coalitions = 0;
  let covered = true;
  masks.forEach((m, b) => {
    const moved = (x: number, y: number, k: number) => Math.round(Math.abs(x - y) * k);
    const perClass = Array.from(ofClass, (k, c) =>
      utility === 'accuracy' ? 0 : moved(cv.perClassAccuracy[b * C + c]!, nv.perClassAccuracy[b * C + c]!, k),
    );
    const all = utility === 'accuracy' ? moved(cv.accuracy[b]!, nv.accuracy[b]!, N) : 0;
    if (all === 0 && perClass.every((x) => x === 0)) return;
    coalitions++;
    const ties = nearTies(setup, members(m));
    if (all > ties.total || perClass.some((x, c) => x > ties.perClass[c]!)) covered = false;
  });
  return { coalitions, nearTies: covered };
}

/**
 * Runs the rows and prints the table. `train(n)` gives n updates of silos trained from `m0`.
 */
export async function exactShapleyBench(options: {
  spec: ModelSpec;
  m0: Float32Array;
  updates: readonly Float32Array[];
  test: Examples;
  baselineDir?: string;
  quick?: boolean;
}): Promise<ExactShapleyRow[]> {
  const { spec, m0, test } = options;
  const base = options.baselineDir ? await loadBaseline(options.baselineDir) : undefined;
  const [F, H, C, N] = [784, 200, spec.numClasses, test.n];
  const rates = async () => ({
    coalition: await sgemmRate(N, C, H),
    first: await sgemmRate(N, H, F),
  });
  const before = await rates();
  const plan: [number, Convention, 'accuracy' | 'class-wise'][] = [
    [10, FEDAVG_CONVENTION, 'accuracy'],
    [12, FEDAVG_CONVENTION, 'accuracy'],
  ];
  if (!options.quick)
    plan.push(
      [15, FEDAVG_CONVENTION, 'accuracy'],
      [15, ADDITIVE_CONVENTION, 'accuracy'],
      [15, FEDAVG_CONVENTION, 'class-wise'],
    );
  const measured: Omit<
    ExactShapleyRow,
    'sgemmGflops' | 'sgemmGflopsCoalitionShape' | 'sgemmGflopsFirstLayerShape' | 'flopLimitS' | 'ratioToLimit'
  >[] = [];
  for (const [n, convention, utility] of plan) {
    const updates = options.updates.slice(0, n);
    const setup: Setup = {
      spec,
      m0,
      updates,
      data: test,
      weights: updates.map((_, i) => 300 + 10 * i),
      convention,
    };
    /** The whole computation with one tree's modules: table(s) and Shapley values. */
    const runWith = async (
      mods: Modules,
    ): Promise<{ table: Float64Array; phi: Float64Array; gap: number }> => {
      const ev = mods.coalition.createCoalitionEvaluator(setup, { mode: 'combined' });
      try {
        if (utility === 'accuracy') {
          const table = await mods.game.coalitionTable(mods.coalition.coalitionGame(ev));
          const phi = mods.shapley.exactShapley(n, table);
          const gap = Math.abs(phi.reduce((s, x) => s + x, 0) - (table[2 ** n - 1]! - table[0]!));
          return { table, phi, gap };
        }
        // MS-MR (papers/000 Alg. 3): exact class-wise Shapley from the class-wise table.
        const round = await mods.classWise.maverickShapleyRound(
          mods.coalition.classwiseGame(ev),
          (g) => mods.shapley.exactShapleyOfGame(g),
          { temperature: 0.01 },
        );
        const rows = (await ev.values([maskToCoalition(n, 0), maskToCoalition(n, 2 ** n - 1)]))
          .perClassAccuracy;
        let gap = 0;
        for (let c = 0; c < C; c++) {
          let s = 0;
          for (let i = 0; i < n; i++) s += round.phi[i * C + c]!;
          gap = Math.max(gap, Math.abs(s - (rows[C + c]! - rows[c]!)));
        }
        // The class-wise "table" compared with the baseline: the coreset's accuracies and the rewards.
        return {
          table: Float64Array.from([...round.coresetAccuracy, ...round.rewards]),
          phi: round.phi,
          gap,
        };
      } finally {
        ev.dispose();
      }
    };
    const mine: Modules = { coalition, game, shapley, classWise };
    const reps = n <= 12 ? 2 : 1;
    let combinedS = Number.POSITIVE_INFINITY;
    let baselineS = Number.POSITIVE_INFINITY;
    let result: Awaited<ReturnType<typeof runWith>> | undefined;
    let old: Awaited<ReturnType<typeof runWith>> | undefined;
    for (let r = 0; r < reps; r++) {
      const [a, ta] = await time(() => runWith(mine));
      [result, combinedS] = [a, Math.min(combinedS, ta)];
      if (base) {
        const [b, tb] = await time(() => runWith(base));
        [old, baselineS] = [b, Math.min(baselineS, tb)];
      }
    }
    // Naive evaluation on a spread sample of masks (every k-th), so coalition sizes are representative.
    const total = 2 ** n;
    const sample = n <= 10 ? total : 256;
    const step = Math.floor(total / sample);
    const masks = Array.from({ length: sample }, (_, k) => maskToCoalition(n, k * step));
    const naive = coalition.createCoalitionEvaluator(setup, { mode: 'naive' });
    const [nv, naiveRun] = await time(() => naive.values(masks));
    const check = coalition.createCoalitionEvaluator(setup);
    const cv = await check.values(masks);
    check.dispose();
    const same = (
      utility === 'accuracy' ? [[cv.accuracy, nv.accuracy]] : [[cv.perClassAccuracy, nv.perClassAccuracy]]
    ).every(([x, y]) => sameBits(x!, y!));
    const disagreements = naiveDisagreements(setup, masks, utility, cv, nv);
    const gflop = flops(n, N, F, H, C) / 1e9;
    measured.push({
      n,
      convention,
      utility,
      coalitions: total,
      combinedS,
      ...(base && old
        ? {
            baselineS,
            speedup: baselineS / combinedS,
            identicalToBaseline: sameBits(result!.table, old.table) && sameBits(result!.phi, old.phi),
          }
        : {}),
      naiveS: naiveRun * (total / sample),
      naiveSample: sample,
      accuraciesIdenticalToNaive: same,
      naiveDisagreements: disagreements.coalitions,
      naiveDisagreementsNearTies: disagreements.nearTies,
      efficiencyGap: result!.gap,
      gflop,
      gflops: gflop / combinedS,
    });
  }
  const after = await rates();
  const coalitionRate = Math.max(before.coalition, after.coalition);
  const firstRate = Math.max(before.first, after.first);
  const sgemm = Math.max(coalitionRate, firstRate);
  const rows: ExactShapleyRow[] = measured.map((m) => ({
    ...m,
    sgemmGflops: sgemm,
    sgemmGflopsCoalitionShape: coalitionRate,
    sgemmGflopsFirstLayerShape: firstRate,
    flopLimitS: m.gflop / sgemm,
    ratioToLimit: m.combinedS / (m.gflop / sgemm),
  }));
  const f = (x: number | undefined, d = 2) => (x === undefined ? '—' : x.toFixed(d));
  console.log(
    `\n### Exact per-round Shapley, MLP 784-200-10, ${N} test images (whole computation: set-up, 2ⁿ values, Shapley)\n`,
  );
  console.log(
    base
      ? `baseline: ${options.baselineDir} at ${base.commit}, loaded into this process, interleaved with this tree`
      : 'baseline: not timed (pass --baseline <dir>, a checkout of the older commit; see bench/_exact-shapley.ts)',
  );
  console.log(
    `the addon's gemm (2 worker threads) in this run: ${f(coalitionRate, 1)} GFLOP/s on [${N}×${H}]·[${H}×${C}] (native/narrow.c), ${f(firstRate, 1)} GFLOP/s on [${N}×${F}]·[${F}×${H}] (OpenBLAS); the limit uses ${f(sgemm, 1)}\n`,
  );
  console.log(
    '| n | convention | utility | coalitions | baseline s | new s | speed-up | identical to baseline | naive s | accuracies = naive | GFLOP | GFLOP/s | sgemm GFLOP/s | FLOP-limit s | ÷ limit |',
  );
  console.log('|---:|---|---|---:|---:|---:|---:|---|---:|---|---:|---:|---:|---:|---:|');
  for (const r of rows)
    console.log(
      `| ${r.n} | ${r.convention} | ${r.utility} | ${r.coalitions} | ${f(r.baselineS)} | ${f(r.combinedS)} | ${r.speedup === undefined ? '—' : `${r.speedup.toFixed(1)}×`} | ${r.identicalToBaseline === undefined ? '—' : r.identicalToBaseline ? 'yes' : 'NO'} | ${f(r.naiveS, 1)}${r.naiveSample < r.coalitions ? ` (${r.naiveSample})` : ''} | ${r.accuraciesIdenticalToNaive ? 'yes' : `${r.naiveDisagreements} differ${r.naiveDisagreementsNearTies ? ', near-ties' : ', NOT near-ties'}`} | ${f(r.gflop, 1)} | ${f(r.gflops, 1)} | ${f(r.sgemmGflops, 1)} | ${f(r.flopLimitS)} | ${f(r.ratioToLimit)} |`,
    );
  return rows;
}
