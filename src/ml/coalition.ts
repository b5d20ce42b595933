/**
 * Batched evaluation of coalition models, exposed as scoring/ games (docs/architecture.md,
 * "Full-visibility mode").
 *
 * Coalition model (FedAvg, the default): M_S = M0 + Σ_{i∈S} wᵢΔᵢ / Σ_{i∈S} wᵢ, M_∅ = M0.
 * Additive convention of the papers (option): M_S = M0 + Σ_{i∈S} Δᵢ / N.
 * Both are M_S = M0 + s(S)·Σ_{i∈S} aᵢΔᵢ with aᵢ = wᵢ, s = 1/Σwᵢ, or aᵢ = 1, s = 1/N.
 *
 * Combined evaluation (models whose first parametrized layer is dense, e.g. the MLP): that
 * layer's pre-activation on the test set X is linear in the parameters,
 *   X·W_S + b_S = P₀ + s(S)·Σ_{i∈S} aᵢPᵢ,  P₀ = X·W₀ + b₀,  Pᵢ = X·ΔWᵢ + Δbᵢ,
 * so Pᵢ is computed once per silo (one N×F×H product each) instead of one product per
 * coalition. The sums U_S = Σ aᵢPᵢ of a batch are built along the prefix tree of the
 * coalitions' sorted member lists, left to right in member order (one N×H addition per tree
 * node; 2ⁿ − 1 additions for all coalitions), and the remaining layers run per coalition with
 * their own parameters.
 *
 * Two implementations of the combined evaluation give the same bits (for the loss: when the
 * labels are an Int32Array, which _reduce.ts sums with the addon, glibc's exp and log; with byte
 * labels the tfjs path sums it in JavaScript, V8's exp and log, and the two agree to rounding):
 *  - native (_coalition_fast.ts, native/coalitions.c): for a dense ReLU first layer followed only
 *    by the dense output layer (the MLP), ≤ 16 classes and ≤ 30 silos, on wasm with the OpenBLAS
 *    addon. Whole batches, and the table of all 2ⁿ coalitions (`table`), are evaluated in one
 *    native call on two threads, cache-blocked over test rows and coalitions: U_S, relu(P₀ +
 *    s·U_S), the logits h·W2_S + b2_S and the arg-max counts (and the loss, when asked) never
 *    leave the core's caches. Each logit is one fused multiply-add chain over the hidden units,
 *    which is how the addon computes the tfjs path's output-layer product (native/narrow.c, not
 *    OpenBLAS, whose kernel depends on the processor), so both give the same logits on every
 *    x86-64 processor (checked bit for bit by the tests).
 *  - GPU (_coalition_gpu.ts), on webgpu: a chunk of coalitions per dispatch, as products with a
 *    coalitions × silos coefficient matrix (for the two-layer MLP one fused shader,
 *    _coalition_wgsl.ts), reduced to counts and losses on the device.
 *  - tfjs, for every other model (deeper MLPs) and backend: per coalition, relu?(P₀ + s·U) by
 *    `nativeAffineRelu` or tfjs kernels, then `forward` over the remaining layers. Only 2-D
 *    products are used: a 3-D batched matMul is ~70× slower than the same work on wasm.
 *
 * Models that do not start with a dense layer (the CNNs) have no combined evaluation. On webgpu
 * they are still batched (`mode: 'auto'`, `gpu` true; _coalition_gpu_conv.ts): a chunk's M_S are
 * formed on the device and run side by side along the batch axis, reduced to counts and losses
 * there.
 *
 * Naive evaluation forms M_S and runs `evaluate` (the oracle the tests compare against). Its
 * first-layer product X·W_S rounds differently from P₀ + s·U_S, so its logits differ in the last
 * bits; accuracies (arg-max counts) agree unless a test example sits on a near-tie between two
 * classes (./near-ties.ts bounds which), which the tests and `npm run bench -- ml` check on every
 * coalition they compare.
 */

import { type Coalition, coalitionKey, maskToCoalition, members } from '../../scoring/coalition.js';
import {
  type Game,
  type MemoGame,
  type MemoVectorGame,
  memoize,
  memoizeVector,
  type VectorGame,
} from '../../scoring/game.js';
import { nativeAffineRelu } from './_blas_kernels.js';
import { type CoalitionCounts, coalitionKernel, nativeCoalitions, nativeShape } from './_coalition_fast.js';
import {
  type GpuCoalitionSetup,
  type GpuCoalitions,
  type GpuTableKernel,
  gpuCoalitions,
  gpuShape,
} from './_coalition_gpu.js';
import { gpuConvCoalitions } from './_coalition_gpu_conv.js';
import { accumulateAsync, summarize } from './_reduce.js';
import { onWebGpu } from './_webgpu.js';
import { type CoalitionSetup, type Coefficients, checkSetup, combine } from './coalition-model.js';
import { type Evaluation, evaluateAsync } from './evaluate.js';
import { forward, paramLayout } from './models.js';
import * as tf from './tf.js';

export { type CoalitionSetup, coalitionCoefficients, coalitionParams } from './coalition-model.js';

/** Options of `createCoalitionEvaluator`. */
export interface EvaluatorOptions {
  /**
   * `combined` (needs a dense first layer), `naive`, or `auto` (default: combined when
   * possible).
   */
  mode?: 'auto' | 'combined' | 'naive';
  /** Test examples per forward pass in naive mode (default 2000). */
  batchSize?: number;
  /**
   * Combined mode: use the native coalition kernel when it applies (default true; see the
   * module comment). false keeps the tfjs implementation, for comparisons.
   */
  native?: boolean;
  /** webgpu: bound on a chunk's largest intermediate, bytes (default 128 MiB; _coalition_gpu.ts). */
  gpuChunkBytes?: number;
  /**
   * webgpu, the two-layer MLP: `reduced` (default on a hardware adapter) or `fused`, the shader
   * before issue 36 (default on a software adapter; _coalition_gpu.ts). Both give the same
   * counts; the loss sums differ in order.
   */
  gpuKernel?: GpuTableKernel;
  /**
   * webgpu, models that do not start with a dense layer: evaluate many coalition models per
   * dispatch (default true; _coalition_gpu_conv.ts). false evaluates them one at a time, as
   * `mode: 'naive'` does, for comparisons.
   */
  gpuBatch?: boolean;
}

/** The utility a coalition table holds (`CoalitionEvaluator.table`). */
export type TableUtility = 'accuracy' | 'negLoss' | 'perClassAccuracy';

/** Utilities of a batch of coalition models, in batch order. */
export interface CoalitionValues {
  readonly accuracy: Float64Array;
  readonly negLoss: Float64Array;
  /** Row-major batch × numClasses. */
  readonly perClassAccuracy: Float64Array;
}

/** Evaluates coalition models on the test set; call `dispose` to free its tensors. */
export interface CoalitionEvaluator {
  /** Number of silos (players). */
  readonly n: number;
  readonly numClasses: number;
  /** The mode in use (`auto` resolved). */
  readonly mode: 'combined' | 'naive';
  /** Whether combined evaluation runs in the native coalition kernel (see the module comment). */
  readonly native: boolean;
  /** Whether coalition models are evaluated in batched GPU dispatches (webgpu; see the module comment). */
  readonly gpu: boolean;
  /** Distinct coalition models evaluated so far (the evaluator remembers every result). */
  readonly evaluations: number;
  /** Utilities of M_S for each coalition S of the batch. */
  values(coalitions: readonly Coalition[]): Promise<CoalitionValues>;
  /**
   * One utility of all 2ⁿ coalition models, indexed by mask (bit i = player i; per-class
   * accuracies 2ⁿ × numClasses, row-major), the same numbers as `values`. With the native
   * kernel, one call for the whole table (the loss is computed only for `negLoss`); otherwise
   * `values` in batches. Remembered: later tables and batches are read from it. Throws
   * RangeError when n > 30.
   */
  table(utility: TableUtility): Promise<Float64Array>;
  /** Frees the tensors the evaluator holds (combined mode). */
  dispose(): void;
}

function checkCoalitions(coalitions: readonly Coalition[], n: number): number[][] {
  if (!Array.isArray(coalitions)) throw new TypeError('coalitions: expected an array of coalitions');
  return coalitions.map((c, b) => {
    if (!(c instanceof Uint32Array)) throw new TypeError(`coalitions[${b}]: expected a Uint32Array bitset`);
    const ms = members(c);
    if (ms.length > 0 && ms[ms.length - 1]! >= n)
      throw new RangeError(`coalitions[${b}]: player ${ms[ms.length - 1]} is outside [0, ${n})`);
    return ms;
  });
}

/** What the evaluator remembers of each coalition model. */
type Utilities = Pick<Evaluation, 'accuracy' | 'negLoss' | 'perClassAccuracy'>;

/**
 * An evaluator of coalition models (see the module comment for the two modes). Results are
 * remembered per coalition, so the scalar and class-wise games built on one evaluator share
 * evaluations. Throws RangeError/TypeError naming a bad field.
 */
export function createCoalitionEvaluator(
  setup: CoalitionSetup,
  options: EvaluatorOptions = {},
): CoalitionEvaluator {
  const coef = checkSetup(setup);
  const mode = options.mode ?? 'auto';
  if (mode !== 'auto' && mode !== 'combined' && mode !== 'naive')
    throw new RangeError(`mode: expected auto, combined or naive, got ${String(mode)}`);
  const batchSize = options.batchSize ?? 2000;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError(`batchSize: expected a positive integer, got ${batchSize}`);
  const chunkBytes = options.gpuChunkBytes;
  if (chunkBytes !== undefined && !(Number.isInteger(chunkBytes) && chunkBytes >= 1))
    throw new RangeError(`gpuChunkBytes: expected a positive integer, got ${chunkBytes}`);
  if (options.gpuKernel !== undefined && options.gpuKernel !== 'reduced' && options.gpuKernel !== 'fused')
    throw new RangeError(`gpuKernel: expected reduced or fused, got ${String(options.gpuKernel)}`);
  const { spec, data } = setup;
  const firstParam = spec.layers.findIndex((l) => l.kind === 'dense' || l.kind === 'conv');
  const denseFirst =
    firstParam >= 0 &&
    spec.layers[firstParam]!.kind === 'dense' &&
    spec.layers.slice(0, firstParam).every((l) => l.kind === 'flatten');
  if (mode === 'combined' && !denseFirst)
    throw new RangeError(
      `mode: combined evaluation needs a dense first layer; ${spec.name} starts with a conv`,
    );
  const resolved = mode === 'naive' || !denseFirst ? 'naive' : 'combined';
  const n = setup.updates.length;
  const C = spec.numClasses;
  const memo = new Map<string, Utilities>();
  const inner =
    resolved === 'combined'
      ? combinedEvaluator(setup, coef, firstParam, options.native ?? true, {
          ...(chunkBytes !== undefined ? { maxChunkBytes: chunkBytes } : {}),
          ...(options.gpuKernel !== undefined ? { kernel: options.gpuKernel } : {}),
        })
      : mode === 'auto' && onWebGpu() && (options.gpuBatch ?? true)
        ? countsEvaluator(
            setup.data,
            C,
            gpuConvCoalitions({
              spec,
              m0: setup.m0,
              updates: setup.updates,
              data,
              a: coef.a,
              scale: coef.scale,
              ...(chunkBytes !== undefined ? { maxChunkBytes: chunkBytes } : {}),
            }),
          )
        : undefined;
  const tables: Partial<Record<TableUtility, Float64Array>> = {};
  const complete = () => tables.accuracy && tables.negLoss && tables.perClassAccuracy;

  const naiveOne = (ms: number[]): Promise<Utilities> =>
    evaluateAsync(spec, combine(setup.m0, setup.updates, coef, ms, 0, setup.m0.length), data, { batchSize });

  async function values(coalitions: readonly Coalition[]): Promise<CoalitionValues> {
    const lists = checkCoalitions(coalitions, n);
    const full = complete() && n <= 30;
    const keys = coalitions.map(coalitionKey);
    const todo: { key: string; ms: number[] }[] = [];
    const queued = new Set<string>();
    lists.forEach((ms, b) => {
      const k = keys[b]!;
      if (!full && !memo.has(k) && !queued.has(k)) {
        queued.add(k);
        todo.push({ key: k, ms });
      }
    });
    if (inner) {
      const results = await inner.evaluate(todo.map((t) => t.ms));
      for (const [j, t] of todo.entries()) memo.set(t.key, results[j]!);
    } else {
      for (const t of todo) {
        memo.set(t.key, await naiveOne(t.ms));
        await Promise.resolve();
      }
    }
    const out = {
      accuracy: new Float64Array(coalitions.length),
      negLoss: new Float64Array(coalitions.length),
      perClassAccuracy: new Float64Array(coalitions.length * C),
    };
    keys.forEach((k, b) => {
      if (full) {
        const m = coalitions[b]![0]! >>> 0;
        out.accuracy[b] = tables.accuracy![m]!;
        out.negLoss[b] = tables.negLoss![m]!;
        out.perClassAccuracy.set(tables.perClassAccuracy!.subarray(m * C, (m + 1) * C), b * C);
        return;
      }
      const e = memo.get(k)!;
      out.accuracy[b] = e.accuracy;
      out.negLoss[b] = e.negLoss;
      out.perClassAccuracy.set(e.perClassAccuracy, b * C);
    });
    return out;
  }

  /** Fills the tables: natively in one call, else through `values` in batches. */
  async function fill(withLoss: boolean): Promise<void> {
    const total = 2 ** n;
    const accuracy = new Float64Array(total);
    const perClass = new Float64Array(total * C);
    if (inner?.all) {
      // The GPU computes the losses with the counts: keep them, so that later tables and
      // batches are read from the tables.
      const negLoss = withLoss || inner.gpu ? new Float64Array(total) : undefined;
      inner.utilities(await inner.all(withLoss), { accuracy, negLoss, perClass });
      tables.accuracy = accuracy;
      tables.perClassAccuracy = perClass;
      if (negLoss) tables.negLoss = negLoss;
      memo.clear();
      return;
    }
    const negLoss = new Float64Array(total);
    for (let start = 0; start < total; start += 4096) {
      const batch: Coalition[] = [];
      for (let m = start; m < Math.min(total, start + 4096); m++) batch.push(maskToCoalition(n, m));
      const v = await values(batch);
      accuracy.set(v.accuracy, start);
      negLoss.set(v.negLoss, start);
      perClass.set(v.perClassAccuracy, start * C);
    }
    Object.assign(tables, { accuracy, negLoss, perClassAccuracy: perClass });
    memo.clear();
  }

  return {
    n,
    numClasses: C,
    mode: resolved,
    native: inner?.native === true,
    gpu: inner?.gpu === true,
    get evaluations() {
      return tables.accuracy ? 2 ** n : memo.size;
    },
    values,
    async table(utility) {
      if (utility !== 'accuracy' && utility !== 'negLoss' && utility !== 'perClassAccuracy')
        throw new RangeError(
          `utility: expected accuracy, negLoss or perClassAccuracy, got ${String(utility)}`,
        );
      if (n > 30) throw new RangeError(`n: a coalition table supports at most 30 players, got ${n}`);
      if (!tables[utility]) await fill(utility === 'negLoss');
      return tables[utility]!.slice();
    },
    dispose() {
      inner?.dispose();
    },
  };
}

/** Where `fromCounts` writes: entry j of each array (per-class accuracies at j·C). */
interface UtilityArrays {
  accuracy: Float64Array;
  negLoss: Float64Array | undefined;
  perClass: Float64Array;
}

/**
 * Utilities from correct counts per class and summed losses (`CoalitionCounts`), as `summarize`
 * computes them from a confusion matrix, for every coalition of `r`; no object per coalition.
 */
function fromCounts(r: CoalitionCounts, rows: number, classTotals: Int32Array, out: UtilityArrays): void {
  const C = classTotals.length;
  for (let j = 0; j < out.accuracy.length; j++) {
    let correct = 0;
    for (let t = 0; t < C; t++) {
      const c = r.counts[j * C + t]!;
      correct += c;
      out.perClass[j * C + t] = classTotals[t] === 0 ? Number.NaN : c / classTotals[t]!;
    }
    out.accuracy[j] = rows === 0 ? Number.NaN : correct / rows;
    if (out.negLoss) out.negLoss[j] = -(rows === 0 ? Number.NaN : r.loss[j]! / rows);
  }
}

/** What a combined evaluator offers `createCoalitionEvaluator`. */
interface CombinedEvaluator {
  /** Whether it is the native kernel. */
  readonly native: boolean;
  /** Whether it runs batched on the GPU (its `all` computes the losses too). */
  readonly gpu: boolean;
  evaluate(lists: number[][]): Utilities[] | Promise<Utilities[]>;
  /** Native and GPU: all 2ⁿ coalitions, indexed by mask (`utilities` turns them into utilities). */
  all?(withLoss: boolean): CoalitionCounts | Promise<CoalitionCounts>;
  utilities(r: CoalitionCounts, out: UtilityArrays): void;
  dispose(): void;
}

/**
 * A batched GPU evaluator (_coalition_gpu.ts, _coalition_gpu_conv.ts) as a `CombinedEvaluator`:
 * its correct counts and summed losses turned into utilities on the test set `data`.
 */
function countsEvaluator(data: CoalitionSetup['data'], C: number, gpu: GpuCoalitions): CombinedEvaluator {
  const N = data.n;
  const classTotals = new Int32Array(C);
  for (let r = 0; r < N; r++) classTotals[data.y[r]!]!++;
  const utilities = (r: CoalitionCounts, out: UtilityArrays) => fromCounts(r, N, classTotals, out);
  return {
    native: false,
    gpu: true,
    async evaluate(lists) {
      const u = {
        accuracy: new Float64Array(lists.length),
        negLoss: new Float64Array(lists.length),
        perClass: new Float64Array(lists.length * C),
      };
      utilities(await gpu.evaluate(lists), u);
      return lists.map((_, j) => ({
        accuracy: u.accuracy[j]!,
        negLoss: u.negLoss[j]!,
        perClassAccuracy: u.perClass.slice(j * C, (j + 1) * C),
      }));
    },
    all: () => gpu.all(),
    utilities,
    dispose: () => gpu.dispose(),
  };
}

/** The combined evaluator of a model whose first parametrized layer (index `first`) is dense. */
function combinedEvaluator(
  setup: CoalitionSetup,
  coef: Coefficients,
  first: number,
  allowNative: boolean,
  gpuOptions: Pick<GpuCoalitionSetup, 'maxChunkBytes' | 'kernel'>,
): CombinedEvaluator {
  const { spec, data, m0, updates } = setup;
  const layout = paramLayout(spec);
  const [wE, bE] = [layout[0]!, layout[1]!];
  const restStart = bE.offset + bE.size;
  const rest = layout.slice(2);
  const C = spec.numClasses;
  const N = data.n;
  const F = wE.shape[0]!;
  const H = wE.shape[1]!;
  // P₀ and aᵢPᵢ, computed once. X is only needed while building them.
  const firstLayer = (p: Float32Array, scale: number): tf.Tensor2D =>
    tf.tidy(() => {
      const x = tf.tensor2d(data.x, [N, F]);
      const w = tf.tensor2d(p.subarray(wE.offset, wE.offset + wE.size), [F, H]);
      const b = tf.tensor1d(p.subarray(bE.offset, bE.offset + bE.size));
      const z: tf.Tensor2D = tf.add(tf.matMul(x, w), b);
      return scale === 1 ? z : tf.mul(z, scale);
    });
  const classTotals = new Int32Array(C);
  for (let r = 0; r < N; r++) classTotals[data.y[r]!]!++;
  const utilities = (r: CoalitionCounts, out: UtilityArrays) => fromCounts(r, N, classTotals, out);

  /** Utilities of `lists` from counts `r` whose entry j is coalition order[j]. */
  const unpack = (lists: number[][], order: readonly number[], r: CoalitionCounts): Utilities[] => {
    const u = {
      accuracy: new Float64Array(lists.length),
      negLoss: new Float64Array(lists.length),
      perClass: new Float64Array(lists.length * C),
    };
    utilities(r, u);
    const out: Utilities[] = new Array(lists.length);
    order.forEach((b, j) => {
      out[b] = {
        accuracy: u.accuracy[j]!,
        negLoss: u.negLoss[j]!,
        perClassAccuracy: u.perClass.slice(j * C, (j + 1) * C),
      };
    });
    return out;
  };
  if (onWebGpu() && gpuShape(spec, first))
    return countsEvaluator(
      data,
      C,
      gpuCoalitions({
        spec,
        m0,
        updates,
        data,
        a: coef.a,
        scale: coef.scale,
        first,
        ...gpuOptions,
      }),
    );
  const kernel =
    allowNative && !(coef.zeroWeight && !coef.fixedScale) && nativeShape(spec, first, updates.length)
      ? coalitionKernel()
      : undefined;
  if (kernel) {
    const native = nativeCoalitions(kernel, setup, coef.a, coef.fixedScale ? coef.scale([]) : -1, restStart);
    return {
      native: true,
      evaluate(lists) {
        // Lexicographic order, so that neighbours share their prefix sums.
        const order = lists.map((_, b) => b).sort((x, y) => lexCompare(lists[x]!, lists[y]!));
        return unpack(lists, order, native.evaluate(order.map((b) => lists[b]!)));
      },
      all: (withLoss) => native.all(withLoss),
      utilities,
      gpu: false,
      dispose() {},
    };
  }

  const p0 = firstLayer(m0, 1);
  const q = updates.map((u, i) => firstLayer(u, coef.a[i]!));
  const relu = (spec.layers[first] as { relu: boolean }).relu;

  async function evaluateBatch(lists: number[][]): Promise<Evaluation[]> {
    const results: Evaluation[] = new Array(lists.length);
    // Visit coalitions in lexicographic order of their member lists so that consecutive ones
    // share prefixes; the stack holds U = Σ aᵢPᵢ for each prefix of the current list.
    const order = lists.map((_, b) => b).sort((x, y) => lexCompare(lists[x]!, lists[y]!));
    const prefix: number[] = [];
    const stack: tf.Tensor2D[] = [];
    try {
      for (const b of order) {
        const ms = lists[b]!;
        let common = 0;
        while (common < prefix.length && common < ms.length && prefix[common] === ms[common]) common++;
        while (prefix.length > common) {
          prefix.pop();
          stack.pop()!.dispose();
        }
        for (let d = common; d < ms.length; d++) {
          const i = ms[d]!;
          const sum: tf.Tensor2D = d === 0 ? tf.clone(q[i]!) : tf.add(stack[d - 1]!, q[i]!);
          prefix.push(i);
          stack.push(sum);
        }
        results[b] = await evaluateCoalition(ms, ms.length === 0 ? undefined : stack[ms.length - 1]);
      }
    } finally {
      for (const t of stack) t.dispose();
    }
    return results;
  }

  async function evaluateCoalition(ms: number[], u: tf.Tensor2D | undefined): Promise<Evaluation> {
    const s = coef.scale(ms);
    const restParams = combine(m0, updates, coef, ms, restStart, m0.length);
    const logits = tf.tidy(() => {
      // relu?(P₀ + s·U): one native pass when the OpenBLAS addon is active, else tfjs kernels.
      let z = u === undefined ? undefined : nativeAffineRelu(p0, u, s, relu);
      if (z === undefined) {
        z = u === undefined ? p0 : tf.add(p0, tf.mul(u, s));
        if (relu) z = tf.relu(z);
      }
      const ws = rest.map((e) =>
        tf.tensor(restParams.subarray(e.offset - restStart, e.offset - restStart + e.size), [...e.shape]),
      );
      return forward(spec, ws, z, first + 1);
    });
    const confusion = new Int32Array(C * C);
    try {
      return summarize(confusion, await accumulateAsync(logits, data.y, 0, confusion, C), C);
    } finally {
      logits.dispose();
    }
  }

  return {
    native: false,
    gpu: false,
    evaluate: evaluateBatch,
    utilities,
    dispose() {
      p0.dispose();
      for (const t of q) t.dispose();
    },
  };
}

function lexCompare(x: readonly number[], y: readonly number[]): number {
  const m = Math.min(x.length, y.length);
  for (let k = 0; k < m; k++) if (x[k] !== y[k]) return x[k]! - y[k]!;
  return x.length - y.length;
}

/** Which scalar utility a coalition game reports. */
export type Utility = 'accuracy' | 'negLoss';

/**
 * The scalar game v(S) = utility of M_S on the test set, memoized (scoring/'s `memoize`:
 * `evaluations` counts distinct coalitions computed).
 */
export function coalitionGame(evaluator: CoalitionEvaluator, utility: Utility = 'accuracy'): MemoGame {
  if (!evaluator || typeof evaluator.values !== 'function')
    throw new TypeError('evaluator: expected a CoalitionEvaluator (createCoalitionEvaluator)');
  if (utility !== 'accuracy' && utility !== 'negLoss')
    throw new RangeError(`utility: expected accuracy or negLoss, got ${String(utility)}`);
  const game: Game = {
    n: evaluator.n,
    async values(coalitions) {
      return (await evaluator.values(coalitions))[utility];
    },
  };
  if (evaluator.n <= 30 && typeof evaluator.table === 'function') game.table = () => evaluator.table(utility);
  return memoize(game);
}

/**
 * The vector game v(S) = per-class accuracies of M_S (papers/000 Eq. 7), memoized. A class
 * absent from the test set gives NaN.
 */
export function classwiseGame(evaluator: CoalitionEvaluator): MemoVectorGame {
  if (!evaluator || typeof evaluator.values !== 'function')
    throw new TypeError('evaluator: expected a CoalitionEvaluator (createCoalitionEvaluator)');
  const game: VectorGame = {
    n: evaluator.n,
    dims: evaluator.numClasses,
    async values(coalitions) {
      return (await evaluator.values(coalitions)).perClassAccuracy;
    },
  };
  if (evaluator.n <= 30 && typeof evaluator.table === 'function')
    game.table = () => evaluator.table('perClassAccuracy');
  return memoizeVector(game);
}
