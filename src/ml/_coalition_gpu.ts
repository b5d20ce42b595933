/**
 * Combined coalition evaluation on the GPU (webgpu backend; internal to coalition.ts, whose
 * module comment defines M_S = M0 + s(S)·Σ_{i∈S} aᵢΔᵢ and the combined first layer).
 *
 * Many coalition models per dispatch: a chunk of K coalitions is one K×n coefficient matrix
 * C[k,i] = s(S_k)·aᵢ·[i ∈ S_k], and every per-coalition quantity is a product with it:
 *  - first (dense) layer: Z = relu?(P₀ + C·P), P the stack of Pᵢ = X·ΔWᵢ + Δbᵢ (computed once);
 *  - each later dense layer ℓ: W_S = W₀ + C·ΔW (the n × (in·out) stack of the silos' ΔWᵢ) and
 *    b_S likewise;
 *  - the reduction on the device: arg-max per test row (ties to the lower class), correct counts
 *    per class as one [K,N]×[N,C] product with the one-hot labels, and the summed cross-entropy
 *    Σ_r (logsumexp(z_r) − z_r[y_r]).
 * For the two-layer MLP (a dense first layer and one dense output layer: the quickstart's and the
 * device check's model) the first layer, the logits, the arg-max, the loss and their reduction to
 * counts and loss sums are two dispatches per chunk (_coalition_wgsl_reduced.ts: one workgroup per
 * coalition and block of 64 rows, reduced there, then the blocks; the [K, C + 1] results the only
 * buffer read; `kernel: 'fused'` keeps the earlier shader, _coalition_wgsl.ts, whose [2, K, N]
 * row results four more dispatches reduced). Neither stores the [K, N, H] hidden activations;
 * deeper MLPs run the chain of tfjs ops (one [K,n]×[n,N·H] product, then one batched
 * [K,N,in]×[K,in,out] product per layer). Only K·(C + 1) numbers come back per chunk (one
 * buffer from the reduced shaders, two otherwise), read asynchronously (`.data()`), with the next
 * chunk already queued (two in flight). K is chosen so that what a chunk holds at once (the
 * shaders' per-coalition parameters and outputs, else the [K, N, widest layer] activations,
 * float32) fits `maxChunkBytes`; at most 16,384 coalitions per chunk with the reduced shaders,
 * 4,096 otherwise.
 *
 * The sums run in float32 on the device in the GPU's order (coalition.ts's tfjs and native paths
 * sum U_S in float32 along the prefix tree and combine the later layers in float64), so logits
 * differ in the last bits and a test row on a near-tie may flip its arg-max:
 * test/ml/webgpu.test.ts bounds the accuracy and loss differences.
 */

import type { CoalitionCounts } from './_coalition_fast.js';
import { FUSED_MAX_CLASSES, type FusedShape, fusedCoalitionLogits } from './_coalition_wgsl.js';
import { REDUCED_MAX_CLASSES, reducedCoalitionCounts, rowBlocks } from './_coalition_wgsl_reduced.js';
import { onSoftwareAdapter } from './_webgpu.js';
import { settledWgslErrors, wgslErrors } from './_wgsl_program.js';
import type { Examples, ModelSpec } from './models.js';
import { paramLayout } from './models.js';
import * as tf from './tf.js';

/** What coalition.ts hands over (its checked setup and coefficients). */
export interface GpuCoalitionSetup {
  readonly spec: ModelSpec;
  readonly m0: Float32Array;
  readonly updates: readonly Float32Array[];
  readonly data: Examples;
  /** aᵢ per silo. */
  readonly a: Float64Array;
  /** s(S) from the sorted members. */
  readonly scale: (members: readonly number[]) => number;
  /** Index in spec.layers of the first (dense) parametrized layer. */
  readonly first: number;
  /** Bound on the largest intermediate of a chunk, bytes (default 128 MiB). */
  readonly maxChunkBytes?: number;
  /**
   * The two-layer MLP's shaders: `reduced` (_coalition_wgsl_reduced.ts, the reduction in the
   * shader; the default on a hardware adapter) or `fused` (_coalition_wgsl.ts, reduced by tfjs
   * ops; the default on a software adapter, where it measured faster).
   */
  readonly kernel?: GpuTableKernel;
}

/** The two-layer MLP's coalition shaders (see `GpuCoalitionSetup.kernel`). */
export type GpuTableKernel = 'reduced' | 'fused';

/** The GPU evaluator of one setup. */
export interface GpuCoalitions {
  /** Coalitions per dispatch. */
  readonly chunk: number;
  /** The listed coalitions (member lists), in list order. */
  evaluate(lists: readonly (readonly number[])[]): Promise<CoalitionCounts>;
  /** All 2ⁿ coalitions, indexed by mask (bit i = player i). */
  all(): Promise<CoalitionCounts>;
  dispose(): void;
}

/**
 * Whether the GPU evaluator applies: the layers after the first dense one are dense (or
 * flatten, a no-op on a flat input).
 */
export function gpuShape(spec: ModelSpec, first: number): boolean {
  return spec.layers.slice(first + 1).every((l) => l.kind === 'dense' || l.kind === 'flatten');
}

export const DEFAULT_CHUNK_BYTES = 128 * 2 ** 20;

/** Most coalitions per chunk of the reduced shaders (they hold no per-row array). */
const MAX_REDUCED_CHUNK = 16_384;

/**
 * A chunk's results, not yet read: [correct counts per class (K×C), summed loss (K)], or one
 * [K, C + 1] tensor holding both (the reduced shaders', one readback).
 */
export type ChunkResult = [tf.Tensor, tf.Tensor] | tf.Tensor;

/** Builds the device-resident stacks (see the module comment). Call only when `gpuShape`. */
export function gpuCoalitions(setup: GpuCoalitionSetup): GpuCoalitions {
  const { spec, m0, updates, data, a, scale, first } = setup;
  const n = updates.length;
  const N = data.n;
  const C = spec.numClasses;
  const layout = paramLayout(spec);
  const [wE, bE] = [layout[0]!, layout[1]!];
  const F = wE.shape[0]!;
  const H = wE.shape[1]!;
  const firstRelu = (spec.layers[first] as { relu: boolean }).relu;
  const restLayers = spec.layers.slice(first + 1).filter((l) => l.kind === 'dense') as {
    relu: boolean;
  }[];
  const slice = (p: Float32Array, e: { offset: number; size: number }) =>
    p.subarray(e.offset, e.offset + e.size);
  const rest = restLayers.map((l, j) => {
    const w = layout[2 + 2 * j]!;
    const b = layout[3 + 2 * j]!;
    const [inW, outW] = [w.shape[0]!, w.shape[1]!];
    const stack = (e: typeof w) => {
      const flat = new Float32Array(n * e.size);
      for (const [i, u] of updates.entries()) flat.set(slice(u, e), i * e.size);
      return tf.tensor2d(flat, [n, e.size]);
    };
    return {
      relu: l.relu,
      inW,
      outW,
      w0: tf.tensor2d(slice(m0, w), [inW, outW]),
      b0: tf.tensor1d(slice(m0, b)),
      dw: stack(w),
      db: stack(b),
    };
  });
  // A first dense layer and one dense output layer (the MLP): the reduced shaders (up to 16
  // classes) or the fused one, with Pᵢ stacked as [n, H, N]. Otherwise the chain of tfjs ops below.
  // The default: the reduced shaders on a hardware adapter; the fused one on a software adapter,
  // where the device is the CPU's SIMD units and the fused shader measured faster (lavapipe,
  // docs/performance.md, "The coalition table on the GPU: where the time goes").
  const kernel = setup.kernel ?? (onSoftwareAdapter() ? 'fused' : 'reduced');
  if (kernel !== 'reduced' && kernel !== 'fused')
    throw new RangeError(`kernel: expected reduced or fused, got ${String(kernel)}`);
  const twoLayer = rest.length === 1 && !rest[0]!.relu;
  const fused: FusedShape | undefined =
    twoLayer && C <= FUSED_MAX_CLASSES ? { n, rows: N, hidden: H, classes: C, relu: firstRelu } : undefined;
  const reduced = fused !== undefined && kernel === 'reduced' && C <= REDUCED_MAX_CLASSES;
  const { p0, q, onehot, labels } = tf.tidy(() => {
    const x = tf.tensor2d(data.x, [N, F]);
    const layer = (p: Float32Array): tf.Tensor2D =>
      tf.add(tf.matMul(x, tf.tensor2d(slice(p, wE), [F, H])), tf.tensor1d(slice(p, bE)));
    // The fused shader reads Pᵢ as [H, N] (neighbouring rows at neighbouring addresses).
    const flat = (z: tf.Tensor2D) => (fused ? z.transpose() : z).reshape([N * H]);
    const labels = tf.tensor1d(Int32Array.from(data.y), 'int32');
    return {
      p0: (fused ? flat(layer(m0)) : layer(m0)) as tf.Tensor,
      q: tf.stack(updates.map((u) => flat(layer(u)))) as tf.Tensor2D,
      onehot: tf.oneHot(labels, C).toFloat() as tf.Tensor2D,
      labels,
    };
  });
  // Bytes a coalition holds at once: the reduced shaders' parameters (W_S and the product it is
  // added to) and C + 1 numbers per block of rows and in all; the fused shader's parameters and
  // two numbers per row; else the widest [N, width] activation.
  const widest = Math.max(H, ...rest.map((r) => Math.max(r.outW, r.inW)));
  const head = twoLayer ? rest[0]!.inW * rest[0]!.outW + rest[0]!.outW : 0;
  const perCoalition = reduced
    ? 4 * (2 * head + (rowBlocks(N) + 1) * (C + 1) + n)
    : fused
      ? 4 * (2 * Math.max(1, N) + head)
      : 4 * Math.max(1, N) * widest;
  const budget = setup.maxChunkBytes ?? DEFAULT_CHUNK_BYTES;
  const chunk = Math.max(1, Math.min(reduced ? MAX_REDUCED_CHUNK : 4096, Math.floor(budget / perCoalition)));

  /** Queues one chunk (coefficient rows `coef`, K×n) and returns its result tensors. */
  function dispatch(coef: Float32Array, K: number): ChunkResult {
    return tf.tidy(() => {
      const cm = tf.tensor2d(coef, [K, n]);
      const params = rest.map((r) => ({
        w: tf.add(tf.matMul(cm, r.dw), r.w0.reshape([1, r.inW * r.outW])),
        b: tf.add(tf.matMul(cm, r.db), r.b0),
      }));
      if (reduced) return reducedCoalitionCounts(fused, K, cm, q, p0, params[0]!.w, params[0]!.b, labels);
      let correct: tf.Tensor2D;
      let rowLoss: tf.Tensor2D;
      if (fused) {
        [correct, rowLoss] = fusedCoalitionLogits(fused, K, cm, q, p0, params[0]!.w, params[0]!.b, labels);
      } else {
        let z: tf.Tensor = tf.add(tf.matMul(cm, q).reshape([K, N, H]), p0);
        if (firstRelu) z = tf.relu(z);
        for (const [j, r] of rest.entries()) {
          const w = params[j]!.w.reshape([K, r.inW, r.outW]);
          const b = params[j]!.b.reshape([K, 1, r.outW]);
          z = tf.add(tf.matMul(z as tf.Tensor3D, w as tf.Tensor3D), b);
          if (r.relu) z = tf.relu(z);
        }
        correct = tf.equal(tf.argMax(z, 2), labels).toFloat() as tf.Tensor2D;
        rowLoss = tf.sub(tf.logSumExp(z, 2), tf.sum(tf.mul(z, onehot), 2)) as tf.Tensor2D;
      }
      return [tf.matMul(correct, onehot), tf.sum(rowLoss, 1)] as [tf.Tensor, tf.Tensor];
    });
  }

  return chunkedCoalitions({ n, classes: C, chunk, a, scale, dispatch }, () => {
    tf.dispose([p0, q, onehot, labels]);
    for (const r of rest) tf.dispose([r.w0, r.b0, r.dw, r.db]);
  });
}

/** What `chunkedCoalitions` runs: one chunk's dispatch, given its coefficient rows. */
export interface ChunkDispatcher {
  readonly n: number;
  readonly classes: number;
  /** Coalitions per dispatch. */
  readonly chunk: number;
  /** aᵢ per silo. */
  readonly a: Float64Array;
  /** s(S) from the sorted members. */
  readonly scale: (members: readonly number[]) => number;
  /**
   * Queues the chunk whose coefficient rows C[k,i] = s(S_k)·aᵢ·[i ∈ S_k] are `coef` (K×n) and
   * returns its results (`ChunkResult`) without reading them.
   */
  dispatch(coef: Float32Array, K: number): ChunkResult;
}

/**
 * The coalition lists and the table of all 2ⁿ coalitions, `chunk` coalitions per dispatch, two
 * chunks in flight, K·(C + 1) numbers read back per chunk (asynchronously). Shared by the
 * dense-first evaluator above and the conv one (_coalition_gpu_conv.ts).
 */
export function chunkedCoalitions(d: ChunkDispatcher, dispose: () => void): GpuCoalitions {
  const { n, classes: C, chunk, a, scale } = d;
  /** Runs `total` coalitions whose coefficient rows `fill` writes, `chunk` at a time. */
  async function run(total: number, fill: (row: number, out: Float32Array, at: number) => void) {
    const counts = new Int32Array(total * C);
    const loss = new Float64Array(total);
    const inFlight: { start: number; K: number; t: ChunkResult }[] = [];
    const drain = async () => {
      const job = inFlight.shift()!;
      try {
        if (Array.isArray(job.t)) {
          const [c, l] = await Promise.all([job.t[0].data(), job.t[1].data()]);
          for (let j = 0; j < job.K * C; j++) counts[job.start * C + j] = Math.round(c[j]!);
          for (let j = 0; j < job.K; j++) loss[job.start + j] = l[j]!;
        } else {
          const both = await job.t.data();
          wgslErrors();
          for (let j = 0; j < job.K; j++) {
            for (let c = 0; c < C; c++) counts[(job.start + j) * C + c] = Math.round(both[j * (C + 1) + c]!);
            loss[job.start + j] = both[j * (C + 1) + C]!;
          }
        }
      } finally {
        tf.dispose(job.t);
      }
    };
    try {
      for (let start = 0; start < total; start += chunk) {
        const K = Math.min(chunk, total - start);
        const coef = new Float32Array(K * n);
        for (let k = 0; k < K; k++) fill(start + k, coef, k * n);
        inFlight.push({ start, K, t: d.dispatch(coef, K) });
        if (inFlight.length >= 2) await drain();
      }
      while (inFlight.length > 0) await drain();
      // A hand-written shader (the reduced ones) that failed to compile: its error, not its zeros.
      await settledWgslErrors();
    } finally {
      for (const job of inFlight) tf.dispose(job.t);
    }
    return { counts, loss };
  }

  const row = (ms: readonly number[], out: Float32Array, at: number) => {
    const s = scale(ms);
    for (const i of ms) out[at + i] = s * a[i]!;
  };

  return {
    chunk,
    evaluate: (lists) => run(lists.length, (k, out, at) => row(lists[k]!, out, at)),
    all() {
      if (n > 30) throw new RangeError(`n: a coalition table supports at most 30 players, got ${n}`);
      const ms: number[] = [];
      return run(2 ** n, (mask, out, at) => {
        ms.length = 0;
        for (let i = 0; i < n; i++) if ((mask >>> i) & 1) ms.push(i);
        row(ms, out, at);
      });
    },
    dispose,
  };
}
