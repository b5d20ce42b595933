/**
 * `npm run bench -- gray-code [--players 15,16,17,18] [--repeat 2]` (or `npx tsx bench/gray-code.ts …`):
 * Gray-code coalition order against the native kernel's member-list prefix order (issue 36), on
 * the exact per-round Shapley table of the MLP 784-200-10 (2,000 seeded synthetic test images,
 * FedAvg, accuracy; the coalition model's combined first layer, native/coalitions.c).
 *
 * In Gray-code order the k-th coalition is k ^ (k >> 1), one silo away from the previous one, so
 * U_S = U_prev ± Qᵢ costs one addition per coalition (the FedAvg scale s(S) applied after, in
 * relu(P₀ + s·U_S)). The prefix order already costs one addition per coalition on average (a
 * stack of prefix sums along sorted member lists), so the two differ in memory traffic (one
 * running sum against a stack in L2) and in exactness: the prefix order's U_S is the member-list
 * sum, the same bits as the tfjs path; Gray's drifts between anchors (re-summed every P).
 *
 * Per n, interleaved `--repeat` times (best of each): the prefix order, Gray with P = 128 (the
 * kernel's chunk) and Gray with one anchor for all 2ⁿ (the longest chain), all on the native
 * threads of the process (FEDSCORE_BLAS_THREADS, default every core). Reported: the process's CPU
 * seconds (what the orders differ in, less sensitive to other processes' load than the wall
 * time, also shown) and their ratio; coalitions whose accuracy differs from the prefix order's, the largest difference and
 * the Shapley values' largest difference; and the drift of U_S itself: on 16 test rows (fewer
 * above n = 15, 16 >> (n − 15), at least 2), the walk in float32 against the member-list sum, the
 * largest |difference| ÷ the largest |U_S|.
 */
import { pathToFileURL } from 'node:url';
import { exactShapley } from '../scoring/shapley.js';
import { gaussianMixture } from '../src/data/synthetic.js';
import { loadBlasKernels } from '../src/ml/_blas_kernels.js';
import { coalitionKernel, nativeCoalitions } from '../src/ml/_coalition_fast.js';
import { initBackend } from '../src/ml/backend.js';
import { initParams, mlp } from '../src/ml/models.js';

/** One row per n. */
export interface GrayRow {
  n: number;
  threads: number;
  /** CPU seconds (all threads of the process), best of the repeats. */
  prefixS: number;
  gray128S: number;
  grayOneChainS: number;
  /** Wall seconds, best of the repeats. */
  prefixWallS: number;
  gray128WallS: number;
  /** prefix ÷ Gray (P = 128), CPU time: > 1 when Gray is faster. */
  speedup: number;
  differingCoalitions128: number;
  differingCoalitionsOneChain: number;
  maxAccuracyDiff: number;
  maxShapleyDiff: number;
  /** max |U_gray − U_sum| ÷ max |U_sum| over the 16 rows and all coalitions, one chain. */
  uDriftOneChain: number;
  uDrift128: number;
}

function option(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

function ints(text: string | undefined, name: string, fallback: number[], max: number): number[] {
  if (text === undefined) return fallback;
  const list = text.split(',').map(Number);
  if (list.some((k) => !Number.isInteger(k) || k < 1 || k > max))
    throw new RangeError(
      `bench gray: ${name}: expected integers in [1, ${max}] separated by commas, got '${text}'`,
    );
  return list;
}

/** Float32 drift of the Gray walk's U_S against the member-list sum on `q` (n × len floats). */
function uDrift(q: Float32Array[], anchor: number): number {
  const n = q.length;
  const len = q[0]!.length;
  const u = new Float32Array(len);
  const direct = new Float32Array(len);
  let worst = 0;
  let scale = 0;
  for (let k = 0; k < 2 ** n; k++) {
    const mask = k ^ (k >> 1);
    if (k % anchor === 0) {
      u.fill(0);
      let first = true;
      for (let i = 0; i < n; i++)
        if ((mask >> i) & 1) {
          const qi = q[i]!;
          for (let e = 0; e < len; e++) u[e] = first ? qi[e]! : u[e]! + qi[e]!;
          first = false;
        }
    } else {
      const bit = 31 - Math.clz32(k & -k);
      const qi = q[bit]!;
      const sign = (mask >> bit) & 1 ? 1 : -1;
      for (let e = 0; e < len; e++) u[e] = u[e]! + sign * qi[e]!;
    }
    direct.fill(0);
    let first = true;
    for (let i = 0; i < n; i++)
      if ((mask >> i) & 1) {
        const qi = q[i]!;
        for (let e = 0; e < len; e++) direct[e] = first ? qi[e]! : direct[e]! + qi[e]!;
        first = false;
      }
    for (let e = 0; e < len; e++) {
      worst = Math.max(worst, Math.abs(u[e]! - direct[e]!));
      scale = Math.max(scale, Math.abs(direct[e]!));
    }
  }
  return worst / scale;
}

export async function main(
  argv: readonly string[] = process.argv.slice(2),
): Promise<{ json: { gray: GrayRow[] } }> {
  const players = ints(option(argv, '--players'), '--players', [15, 16, 17, 18], 22);
  const [repeat] = ints(option(argv, '--repeat'), '--repeat', [2], 100);
  await initBackend({ backend: 'wasm' });
  const load = loadBlasKernels();
  const native = coalitionKernel();
  if (!load.ok || native === undefined) throw new Error('bench gray: the native kernels are needed');
  const threads = load.addon.info().threads;
  const spec = mlp({ hidden: [200], inputShape: [28, 28, 1], numClasses: 10 });
  const data = gaussianMixture({ n: 2000, shape: [28, 28, 1], numClasses: 10, seed: 9 });
  const m0 = initParams(spec, 2);
  const restStart = 784 * 200 + 200;
  console.log(
    `\n## Gray-code coalition order against the prefix order (MLP 784-200-10, 2,000 test images; ${threads} native threads; best of ${repeat}, interleaved)\n`,
  );
  console.log(
    '| n | prefix order CPU s (wall) | Gray, anchor every 128: CPU s (wall) | Gray, one anchor: CPU s | prefix ÷ Gray (128), CPU | coalitions differing (128 / one) | max Δ accuracy | max Δ Shapley | U drift (128 / one chain) |',
  );
  console.log('|---:|---:|---:|---:|---:|---|---:|---:|---|');
  const rows: GrayRow[] = [];
  for (const n of players) {
    const updates = Array.from({ length: n }, (_, i) => {
      const u = initParams(spec, 100 + i);
      for (let k = 0; k < u.length; k++) u[k] = u[k]! * 0.05;
      return u;
    });
    const a = Float64Array.from(updates, (_, i) => 100 + 10 * i);
    const ev = nativeCoalitions(native, { spec, data, m0, updates }, a, -1, restStart);
    const accuracy = (counts: Int32Array) => {
      const t = new Float64Array(2 ** n);
      for (let m = 0; m < 2 ** n; m++) {
        let c = 0;
        for (let k = 0; k < 10; k++) c += counts[m * 10 + k]!;
        t[m] = c / data.n;
      }
      return t;
    };
    const times = { prefix: Infinity, g128: Infinity, one: Infinity };
    const walls = { ...times };
    let tables: { prefix: Float64Array; g128: Float64Array; one: Float64Array } | undefined;
    for (let r = 0; r < repeat!; r++) {
      // CPU time of the process (all its threads): on a shared machine the wall time measures
      // the load as much as the kernel; the work done is what the two orders differ in.
      const timed = (f: () => Int32Array): [Float64Array, number, number] => {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        const counts = f();
        const wall = (performance.now() - t0) / 1000;
        const c = process.cpuUsage(c0);
        return [accuracy(counts), (c.user + c.system) / 1e6, wall];
      };
      const [p, tp, wp] = timed(() => ev.all(false).counts);
      const [g, tg, wg] = timed(() => ev.all(false, 128).counts);
      const [o, to, wo] = timed(() => ev.all(false, 2 ** n).counts);
      times.prefix = Math.min(times.prefix, tp);
      times.g128 = Math.min(times.g128, tg);
      times.one = Math.min(times.one, to);
      walls.prefix = Math.min(walls.prefix, wp);
      walls.g128 = Math.min(walls.g128, wg);
      walls.one = Math.min(walls.one, wo);
      tables = { prefix: p, g128: g, one: o };
    }
    const { prefix, g128, one } = tables!;
    const differ = (x: Float64Array) => x.reduce((s, v, m) => s + (v !== prefix[m] ? 1 : 0), 0);
    let maxAcc = 0;
    for (const t of [g128, one])
      for (let m = 0; m < 2 ** n; m++) maxAcc = Math.max(maxAcc, Math.abs(t[m]! - prefix[m]!));
    const phi = exactShapley(n, prefix);
    let maxPhi = 0;
    for (const t of [g128, one]) {
      const other = exactShapley(n, t);
      for (let i = 0; i < n; i++) maxPhi = Math.max(maxPhi, Math.abs(other[i]! - phi[i]!));
    }
    // U drift on rowsU rows: Qᵢ = fround(aᵢ·(X·ΔWᵢ + Δbᵢ)) as the panels hold them.
    const rowsU = Math.max(2, 16 >> Math.max(0, n - 15));
    const x16 = data.x.subarray(0, rowsU * 784);
    const q = updates.map((u, i) => {
      const z = new Float32Array(rowsU * 200);
      load.addon.gemm(1, 0, 0, rowsU, 200, 784, x16, 0, u.subarray(0, 784 * 200), 0, z, 0);
      return z.map((v, e) => Math.fround(a[i]! * Math.fround(v + u[784 * 200 + (e % 200)]!)));
    });
    const row: GrayRow = {
      n,
      threads,
      prefixS: times.prefix,
      gray128S: times.g128,
      grayOneChainS: times.one,
      prefixWallS: walls.prefix,
      gray128WallS: walls.g128,
      speedup: times.prefix / times.g128,
      differingCoalitions128: differ(g128),
      differingCoalitionsOneChain: differ(one),
      maxAccuracyDiff: maxAcc,
      maxShapleyDiff: maxPhi,
      uDrift128: uDrift(q, 128),
      uDriftOneChain: uDrift(q, 2 ** n),
    };
    rows.push(row);
    console.log(
      `| ${n} | ${row.prefixS.toFixed(2)} (${row.prefixWallS.toFixed(2)}) | ${row.gray128S.toFixed(2)} (${row.gray128WallS.toFixed(2)}) | ${row.grayOneChainS.toFixed(2)} | ${row.speedup.toFixed(2)}× | ${row.differingCoalitions128} / ${row.differingCoalitionsOneChain} of ${2 ** n} | ${row.maxAccuracyDiff.toExponential(2)} | ${row.maxShapleyDiff.toExponential(2)} | ${row.uDrift128.toExponential(2)} / ${row.uDriftOneChain.toExponential(2)} |`,
    );
  }
  return { json: { gray: rows } };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
