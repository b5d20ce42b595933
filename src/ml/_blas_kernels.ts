/**
 * OpenBLAS kernels on the wasm backend (internal; registered by backend.ts).
 *
 * The wasm backend runs single-threaded in Node on 128-bit SIMD, which caps dense and
 * convolution layers at a fraction of what a native BLAS gets from the same core (AVX2/AVX-512
 * FMA) and leaves the second core idle. When fedscore's optional addon (`native/`, built at
 * install by scripts/build-native.mjs against Debian's libopenblas-dev) is present, the
 * heavy kernels — BatchMatMul, Conv2D and both convolution gradients — are replaced by
 * OpenBLAS sgemm calls that read and write the wasm heap in place, and the pooling gradients
 * (naive loops in tfjs-backend-wasm 4.22: 18 ms for a max-pool gradient at batch 64) by direct
 * C loops. The module also offers one-pass native versions of what a training step does around
 * them, used by models.ts, train.ts, coalition.ts and _reduce.ts while the kernels are active:
 * a layer's bias and ReLU (`addBiasAct`), the loss and its gradient (`softmaxCrossEntropy`),
 * the Adam step (`nativeAdamStep`, same bits as the JavaScript loop), the coalition evaluator's
 * first-layer combination (`nativeAffineRelu`) and the logits reduction (`nativeReduceLogits`).
 * Everything else stays on wasm. PyTorch's CPU path for dense layers is the same sgemm on the
 * BLAS it was linked with.
 *
 * Only stride-1, dilation-1, NHWC convolutions (the models of models.ts) and float32 products
 * with equal or broadcast-of-one batch dimensions go native; anything else falls through to
 * the kernel that was registered before (tfjs's, or fedscore's wasm kernels).
 *
 * `FEDSCORE_NATIVE_KERNELS=0` keeps the wasm kernels. OpenBLAS itself runs single-threaded:
 * a product's bits depend on its thread count, and a model must come out the same whichever
 * thread or process trains it (the engine's worker pool, a silo's `fedscore client`). Large
 * products are cut instead into fixed blocks, each one single-threaded sgemm, that up to
 * `FEDSCORE_BLAS_THREADS` threads (default: the cores this process may run on,
 * `os.availableParallelism()`) take from a queue in the main thread; a pool worker takes its
 * share of the cores (parallel.ts: one thread when there is a worker per core). The coalition
 * kernel drains its queue of coalition chunks with as many threads. native/products.c has the
 * details and figures.
 *
 * `FEDSCORE_NATIVE_ISA=avx2` (or `scalar`, `avx512`, `auto`) caps the instruction set of the
 * kernels that choose their own (native/isa.c: the coalition kernel and the narrow products),
 * so that a processor with AVX-512 runs the path of one without; they give the same bits with
 * each. OpenBLAS picks its own kernels per processor; `OPENBLAS_CORETYPE` (Haswell, Zen,
 * SkylakeX, …) forces one. docs/performance.md says which results depend on which.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { type Addon, NATIVE_ISAS } from './_native_addon.js';
import { convPadding } from './_wasm_kernels.js';
import * as tf from './tf.js';

type Info = tf.TensorInfo;
interface KernelArgs {
  inputs: Record<string, Info>;
  backend: unknown;
  attrs?: Record<string, unknown>;
}
type KernelFn = (args: KernelArgs) => Info;

interface WasmBackend {
  makeOutput(shape: number[], dtype: tf.DataType): Info;
  typedArrayFromHeap(info: Info): tf.TypedArray;
}

export type { Addon } from './_native_addon.js';
export { NATIVE_ISAS } from './_native_addon.js';

/** What `loadBlasKernels` found: the addon, or why it is not used. */
export type BlasLoad = { ok: true; addon: Addon; description: string } | { ok: false; why: string };

/** Candidate locations of the built addon: from src/ml (tsx) and from dist/src/ml (compiled). */
function addonPaths(): string[] {
  return ['../../native/build/fedscore_kernels.node', '../../../native/build/fedscore_kernels.node'].map(
    (p) => fileURLToPath(new URL(p, import.meta.url)),
  );
}

let loaded: BlasLoad | undefined;

/**
 * Loads the addon once (see the module comment for the environment variables).
 * @throws RangeError when FEDSCORE_BLAS_THREADS is set but not an integer in [1, 256], or
 * FEDSCORE_NATIVE_ISA is set but not a name of NATIVE_ISAS or not supported by this processor.
 */
export function loadBlasKernels(env: Record<string, string | undefined> = process.env): BlasLoad {
  if (env.FEDSCORE_NATIVE_KERNELS === '0') return { ok: false, why: 'disabled by FEDSCORE_NATIVE_KERNELS=0' };
  const threads = env.FEDSCORE_BLAS_THREADS;
  const k = threads === undefined || threads === '' ? undefined : Number(threads);
  if (k !== undefined && (!Number.isInteger(k) || k < 1 || k > 256))
    throw new RangeError(`FEDSCORE_BLAS_THREADS: expected an integer in [1, 256], got '${threads}'`);
  const isaName = env.FEDSCORE_NATIVE_ISA;
  const isa = isaName === undefined || isaName === '' ? undefined : NATIVE_ISAS[isaName];
  if (isaName !== undefined && isaName !== '' && (isa === undefined || !Object.hasOwn(NATIVE_ISAS, isaName)))
    throw new RangeError(
      `FEDSCORE_NATIVE_ISA: expected one of ${Object.keys(NATIVE_ISAS).join(', ')}, got '${isaName}'`,
    );
  if (!loaded) {
    const path = addonPaths().find((p) => existsSync(p));
    if (!path) loaded = { ok: false, why: 'not built (install libopenblas-dev, then npm run build:native)' };
    else
      try {
        const addon = createRequire(import.meta.url)(path) as Addon;
        // The default: every core this process may run on (taskset/cgroups included).
        if (k === undefined) addon.setThreads(Math.min(256, Math.max(1, availableParallelism())));
        loaded = { ok: true, addon, description: '' };
      } catch (e) {
        loaded = { ok: false, why: `failed to load ${path} (${(e as Error).message.split('\n')[0]})` };
      }
  }
  if (!loaded.ok) return loaded;
  if (k !== undefined) loaded.addon.setThreads(k);
  if (isa !== undefined)
    try {
      loaded.addon.setIsa(isa);
    } catch {
      throw new RangeError(`FEDSCORE_NATIVE_ISA: '${isaName}' is not supported by this processor`);
    }
  const i = loaded.addon.info();
  const version = /OpenBLAS [\d.]+/.exec(i.config)?.[0] ?? i.library;
  loaded = { ...loaded, description: `${version} (${i.threads} thread${i.threads === 1 ? '' : 's'})` };
  return loaded;
}

/**
 * The loaded addon, unless it is missing or switched off (`useBlasKernels(false)`). Called on
 * hot paths (once per coalition, per step): after the first load it only reads the cache.
 */
function addonInUse(): Addon | undefined {
  if (switchedOff) return undefined;
  const load = loaded ?? loadBlasKernels();
  return load.ok ? load.addon : undefined;
}

/** Whether the native kernels are active and the wasm backend runs, so tensors live on its heap. */
function nativeOnWasm(): boolean {
  return active && !switchedOff && tf.getBackend() === 'wasm';
}

/** The addon while its kernels are active on wasm (for _native_train.ts's fused step), else undefined. */
export function activeAddon(): object | undefined {
  return nativeOnWasm() ? addonInUse() : undefined;
}

/**
 * The addon's Adam step (same float32 bits as train.ts's JavaScript loop, ≈10× faster), or
 * undefined when the addon is not loaded.
 */
export function nativeAdamStep(): Addon['adamStep'] | undefined {
  return addonInUse()?.adamStep;
}

/**
 * Runs the calling thread's large products, coalition tables and training steps on `threads`
 * threads, whatever FEDSCORE_BLAS_THREADS says (training workers: parallel.ts gives each worker
 * its share of the cores, so workers × threads ≤ cores); 0 goes back to the process's setting.
 * The bits do not depend on it (native/products.c, "Threads"). No-op without the addon.
 * @throws RangeError when threads is not an integer in [0, 256].
 */
export function blasThreadsHere(threads: number): void {
  if (!Number.isInteger(threads) || threads < 0 || threads > 256)
    throw new RangeError(`threads: expected an integer in [0, 256], got ${threads}`);
  const load = loadBlasKernels();
  if (load.ok) load.addon.setLocalThreads(threads);
}

/** `blasThreadsHere(1)`, or with `false` `blasThreadsHere(0)` (the process's setting again). */
export function oneBlasThreadHere(on = true): void {
  blasThreadsHere(on ? 1 : 0);
}

const XENT = 'FedscoreSoftmaxXent';

/** The loss kernel: outputs [mean loss (scalar), gradient with respect to the logits]. */
function xentKernel(addon: Addon): KernelFn {
  return ((args: KernelArgs) => {
    const { logits, labels } = args.inputs as { logits: Info; labels: Info };
    const backend = args.backend as WasmBackend;
    const [rows, cols] = logits.shape as [number, number];
    const grad = backend.makeOutput([rows, cols], 'float32');
    const loss = backend.makeOutput([], 'float32');
    const value = addon.softmaxXent(
      rows,
      cols,
      f32(backend, logits),
      f32(backend, labels),
      f32(backend, grad),
    );
    f32(backend, loss)[0] = value;
    return [loss, grad];
  }) as unknown as KernelFn;
}

const xentGrad = tf.customGrad(((logits: tf.Tensor, labels: tf.Tensor, save: tf.GradSaveFunc) => {
  const [value, grad] = tf.engine().runKernel(XENT, { logits, labels }) as tf.Tensor[];
  save([grad!]);
  return {
    value: value!,
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => [tf.mul(saved[0]!, dy), tf.zerosLike(labels)],
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]);

const BIAS_ACT = 'FedscoreBiasAct';
const BIAS_ACT_GRAD = 'FedscoreBiasActGrad';

function biasActKernel(addon: Addon): KernelFn {
  return (args) => {
    const { z, bias } = args.inputs as { z: Info; bias: Info };
    const relu = (args.attrs as { relu: boolean }).relu;
    const backend = args.backend as WasmBackend;
    const cols = bias.shape[0]!;
    const y = backend.makeOutput([...z.shape], 'float32');
    addon.biasAct(
      size(z.shape) / cols,
      cols,
      f32(backend, z),
      f32(backend, bias),
      relu ? 1 : 0,
      f32(backend, y),
    );
    return y;
  };
}

function biasActGradKernel(addon: Addon): KernelFn {
  return ((args: KernelArgs) => {
    const { dy, y } = args.inputs as { dy: Info; y: Info };
    const relu = (args.attrs as { relu: boolean }).relu;
    const backend = args.backend as WasmBackend;
    const cols = y.shape.at(-1)!;
    const dz = backend.makeOutput([...y.shape], 'float32');
    const db = backend.makeOutput([cols], 'float32');
    const rows = size(y.shape) / cols;
    addon.biasActGrad(
      rows,
      cols,
      f32(backend, dy),
      f32(backend, y),
      relu ? 1 : 0,
      f32(backend, dz),
      f32(backend, db),
    );
    return [dz, db];
  }) as unknown as KernelFn;
}

const biasActGrad = (relu: boolean) =>
  tf.customGrad(((z: tf.Tensor, bias: tf.Tensor, save: tf.GradSaveFunc) => {
    const y = tf.engine().runKernel(BIAS_ACT, { z, bias }, { relu }) as tf.Tensor;
    save([y]);
    return {
      value: y,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        tf.engine().runKernel(BIAS_ACT_GRAD, { dy, y: saved[0]! }, { relu }) as tf.Tensor[],
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
const biasRelu = biasActGrad(true);
const biasOnly = biasActGrad(false);

/**
 * relu?(z + bias) with the bias over the last axis: a layer's epilogue. One native pass forward
 * and one backward (the relu mask and the bias gradient together) when the kernels are active
 * on wasm, else tfjs's add and relu, whose bits are unchanged.
 */
export function addBiasAct(z: tf.Tensor, bias: tf.Tensor, relu: boolean): tf.Tensor {
  const fits = bias.rank === 1 && z.shape.at(-1) === bias.shape[0] && z.dtype === 'float32';
  if (fits && nativeOnWasm()) return (relu ? biasRelu : biasOnly)(z, bias);
  const y = tf.add(z, bias);
  return relu ? tf.relu(y) : y;
}

/**
 * The mean softmax cross-entropy of `logits` [b, C] against targets `labels` [b, C], as one
 * native pass (forward and gradient) when the kernels are active on wasm, else tfjs's ops
 * (−mean Σ labels·logSoftmax(logits)). Differentiable with respect to the logits.
 */
export function softmaxCrossEntropy(logits: tf.Tensor2D, labels: tf.Tensor2D): tf.Scalar {
  if (logits.dtype === 'float32' && nativeOnWasm()) return xentGrad(logits, labels) as tf.Scalar;
  return tf.neg(tf.mean(tf.sum(tf.mul(labels, tf.logSoftmax(logits)), 1))) as tf.Scalar;
}

/**
 * A float32 tensor's values as a view of the wasm heap (no copy), or undefined on other
 * backends. Valid until the next tfjs allocation (a heap growth detaches it): use at once.
 */
export function heapView(t: tf.Tensor): Float32Array | undefined {
  if (t.dtype !== 'float32' || tf.getBackend() !== 'wasm') return undefined;
  const backend = tf.backend() as unknown as Partial<WasmBackend>;
  return typeof backend.typedArrayFromHeap === 'function'
    ? (backend.typedArrayFromHeap(t) as Float32Array)
    : undefined;
}

/**
 * relu?(p0 + s·u) computed natively on the wasm heap (one pass instead of tfjs's mul, add and
 * relu kernels; the same float32 operations, so the same bits), or undefined when the native
 * kernels are not active. Tracked like any tensor (dispose it, or call inside tf.tidy).
 */
export function nativeAffineRelu(
  p0: tf.Tensor,
  u: tf.Tensor,
  s: number,
  relu: boolean,
): tf.Tensor | undefined {
  const addon = addonInUse();
  if (!addon || !nativeOnWasm()) return undefined;
  if (p0.dtype !== 'float32' || u.dtype !== 'float32' || p0.size !== u.size) return undefined;
  const backend = tf.backend() as unknown as WasmBackend;
  const out = backend.makeOutput([...p0.shape], 'float32');
  addon.affineRelu(p0.size, f32(backend, p0), f32(backend, u), s, relu ? 1 : 0, f32(backend, out));
  return tf.engine().makeTensorFromTensorInfo(out);
}

/** The addon while the native kernels are active on wasm (for _coalition_fast.ts), else undefined. */
export function nativeAddonOnWasm(): object | undefined {
  return nativeOnWasm() ? addonInUse() : undefined;
}

/**
 * The addon's version of _reduce.ts's logits reduction (arg-max into the confusion matrix,
 * summed cross-entropy in double), or undefined when the addon is not in use.
 */
export function nativeReduceLogits(): Addon['reduceLogits'] | undefined {
  return addonInUse()?.reduceLogits;
}

const f32 = (backend: WasmBackend, t: Info) => backend.typedArrayFromHeap(t) as Float32Array;
const size = (shape: readonly number[]) => shape.reduce((p, d) => p * d, 1);

/** a·b natively, or undefined when the operands are not supported (see the module comment). */
function nativeMatMul(addon: Addon, args: KernelArgs): Info | undefined {
  const { a, b } = args.inputs as { a: Info; b: Info };
  const { transposeA, transposeB } = args.attrs as { transposeA: boolean; transposeB: boolean };
  if (a.dtype !== 'float32' || b.dtype !== 'float32') return undefined;
  const ra = a.shape.length;
  const rb = b.shape.length;
  const m = transposeA ? a.shape[ra - 1]! : a.shape[ra - 2]!;
  const k = transposeA ? a.shape[ra - 2]! : a.shape[ra - 1]!;
  const kb = transposeB ? b.shape[rb - 1]! : b.shape[rb - 2]!;
  const n = transposeB ? b.shape[rb - 2]! : b.shape[rb - 1]!;
  const outerA = a.shape.slice(0, -2);
  const outerB = b.shape.slice(0, -2);
  const batchA = size(outerA);
  const batchB = size(outerB);
  // Same batch, or one operand shared by every batch; other broadcasts go to the fallback.
  if (k !== kb || (batchA !== batchB && batchA !== 1 && batchB !== 1)) return undefined;
  const outer = tf.backend_util.assertAndGetBroadcastShape(outerA, outerB);
  const batch = Math.max(batchA, batchB);
  if (size(outer) !== batch) return undefined;
  const backend = args.backend as WasmBackend;
  const out = backend.makeOutput([...outer, m, n], 'float32');
  // Views after makeOutput: a heap growth there would detach earlier ones.
  addon.gemm(
    batch,
    transposeA ? 1 : 0,
    transposeB ? 1 : 0,
    m,
    n,
    k,
    f32(backend, a),
    batchA === 1 ? 0 : m * k,
    f32(backend, b),
    batchB === 1 ? 0 : k * n,
    f32(backend, out),
    m * n,
  );
  return out;
}

function matMulKernel(addon: Addon, fallback: KernelFn): KernelFn {
  return (args) => nativeMatMul(addon, args) ?? fallback(args);
}

interface ConvAttrs {
  strides: number | [number, number];
  pad: unknown;
  dataFormat: 'NHWC' | 'NCHW';
  dimRoundingMode?: string;
  dilations?: number | [number, number];
}

/** The addon's 11 geometry arguments, or undefined when the convolution is not supported. */
function geometry(
  attrs: ConvAttrs,
  xShape: readonly number[],
  filterShape: readonly number[],
): number[] | undefined {
  const [n, h, w, c] = xShape as [number, number, number, number];
  const [kh, kw, fc, o] = filterShape as [number, number, number, number];
  const pads = convPadding(attrs, kh, kw);
  if (!pads || fc !== c || xShape.length !== 4) return undefined;
  const oh = h + pads[0] + pads[1] - kh + 1;
  const ow = w + pads[2] + pads[3] - kw + 1;
  if (oh < 0 || ow < 0) return undefined;
  return [n, h, w, c, kh, kw, o, pads[0], pads[2], oh, ow];
}

function nativeConv(addon: Addon, args: KernelArgs): Info | undefined {
  const { x, filter } = args.inputs as { x: Info; filter: Info };
  const g = geometry(args.attrs as unknown as ConvAttrs, x.shape, filter.shape);
  if (!g || x.dtype !== 'float32' || filter.dtype !== 'float32') return undefined;
  const backend = args.backend as WasmBackend;
  const out = backend.makeOutput([g[0]!, g[9]!, g[10]!, g[6]!], 'float32');
  addon.conv2dForward(...g, f32(backend, x), f32(backend, filter), f32(backend, out));
  return out;
}

function convKernel(addon: Addon, fallback: KernelFn): KernelFn {
  return (args) => nativeConv(addon, args) ?? fallback(args);
}

/** Conv2DBackpropFilter / Conv2DBackpropInput: the geometry comes from the attributed shape. */
function convGradKernel(which: 'filter' | 'input') {
  return (addon: Addon, fallback: KernelFn): KernelFn =>
    (args) => {
      const { x, dy, filter } = args.inputs as { x?: Info; dy: Info; filter?: Info };
      const attrs = args.attrs as unknown as ConvAttrs & { filterShape?: number[]; inputShape?: number[] };
      const shape = which === 'filter' ? attrs.filterShape! : attrs.inputShape!;
      const g = which === 'filter' ? geometry(attrs, x!.shape, shape) : geometry(attrs, shape, filter!.shape);
      if (!g || g[9] !== dy.shape[1] || g[10] !== dy.shape[2] || dy.dtype !== 'float32')
        return fallback(args);
      const backend = args.backend as WasmBackend;
      const out = backend.makeOutput([...shape], 'float32');
      if (which === 'filter')
        addon.conv2dFilterGrad(...g, f32(backend, x!), f32(backend, dy), f32(backend, out));
      else addon.conv2dInputGrad(...g, f32(backend, dy), f32(backend, filter!), f32(backend, out));
      return out;
    };
}

/** One size from a tfjs `n | [n, n]` attribute, or undefined when the two differ. */
const square = (v: unknown): number | undefined =>
  typeof v === 'number'
    ? v
    : Array.isArray(v) && v.length === 2 && v[0] === v[1]
      ? (v[0] as number)
      : undefined;

/** AvgPoolGrad / MaxPoolGrad of a valid pooling with a square window (the pools of models.ts). */
function poolGradKernel(max: boolean) {
  return (addon: Addon, fallback: KernelFn): KernelFn =>
    (args) => {
      const { dy, input } = args.inputs as { dy: Info; input: Info };
      const attrs = args.attrs as {
        filterSize: unknown;
        strides: unknown;
        pad: unknown;
        dimRoundingMode?: unknown;
      };
      const f = square(attrs.filterSize);
      const st = square(attrs.strides);
      const valid = attrs.pad === 'valid' || attrs.pad === 0;
      if (!f || !st || !valid || attrs.dimRoundingMode != null || input.shape.length !== 4)
        return fallback(args);
      if (dy.dtype !== 'float32' || input.dtype !== 'float32') return fallback(args);
      const [n, h, w, c] = input.shape as [number, number, number, number];
      const oh = Math.floor((h - f) / st) + 1;
      const ow = Math.floor((w - f) / st) + 1;
      if (dy.shape[1] !== oh || dy.shape[2] !== ow) return fallback(args);
      const backend = args.backend as WasmBackend;
      const out = backend.makeOutput([...input.shape], 'float32');
      addon.poolGrad(
        max ? 1 : 0,
        n,
        h,
        w,
        c,
        f,
        st,
        oh,
        ow,
        f32(backend, dy),
        f32(backend, input),
        f32(backend, out),
      );
      return out;
    };
}

const NATIVE_KERNELS: [string, (addon: Addon, fallback: KernelFn) => KernelFn][] = [
  ['BatchMatMul', matMulKernel],
  ['Conv2D', convKernel],
  ['Conv2DBackpropFilter', convGradKernel('filter')],
  ['Conv2DBackpropInput', convGradKernel('input')],
  ['AvgPoolGrad', poolGradKernel(false)],
  ['MaxPoolGrad', poolGradKernel(true)],
];

/** The wasm kernels and the native ones that replace them, once registered. */
let swapped: { wasm: tf.KernelConfig[]; native: tf.KernelConfig[]; description: string } | undefined;
let active = false;
/** Set by `useBlasKernels(false)`: the Adam step goes back to JavaScript as well. */
let switchedOff = false;

function install(configs: readonly tf.KernelConfig[]): void {
  for (const c of configs) {
    if (tf.getKernel(c.kernelName, 'wasm')) tf.unregisterKernel(c.kernelName, 'wasm');
    tf.registerKernel(c);
  }
}

/**
 * Replaces the wasm backend's product and convolution kernels by the addon's (idempotent).
 * Call after `registerWasmKernels`, whose kernels become the fallbacks. Returns a description
 * of the kernels in use (`OpenBLAS 0.3.21 (2 threads)`), or why the wasm kernels stay.
 */
export function registerBlasKernels(env: Record<string, string | undefined> = process.env): {
  native: boolean;
  description: string;
} {
  if (swapped) return { native: active, description: active ? swapped.description : 'wasm kernels' };
  const load = loadBlasKernels(env);
  if (!load.ok) return { native: false, description: `wasm kernels (OpenBLAS ${load.why})` };
  const wasm = NATIVE_KERNELS.map(([name]) => {
    const k = tf.getKernel(name, 'wasm');
    if (!k) throw new Error(`wasm kernel ${name} is not registered`);
    return k;
  });
  const native = NATIVE_KERNELS.map(([name, make], i) => ({
    kernelName: name,
    backendName: 'wasm',
    kernelFunc: make(load.addon, wasm[i]!.kernelFunc as unknown as KernelFn) as unknown as tf.KernelFunc,
  }));
  swapped = { wasm, native, description: load.description };
  // fedscore's own kernels, called by softmaxCrossEntropy and addBiasAct only while active.
  for (const [name, make] of [
    [XENT, xentKernel],
    [BIAS_ACT, biasActKernel],
    [BIAS_ACT_GRAD, biasActGradKernel],
  ] as const)
    if (!tf.getKernel(name, 'wasm'))
      tf.registerKernel({
        kernelName: name,
        backendName: 'wasm',
        kernelFunc: make(load.addon) as unknown as tf.KernelFunc,
      });
  install(native);
  active = true;
  return { native: true, description: load.description };
}

/**
 * Switches between the native kernels and the wasm ones they replaced, and between the native
 * and the JavaScript Adam step (for tests and benchmarks that compare both in one process).
 * Returns whether the native kernels are active afterwards: false when they were never
 * registered.
 */
export function useBlasKernels(on: boolean): boolean {
  switchedOff = !on;
  if (!swapped) return false;
  if (on !== active) install(on ? swapped.native : swapped.wasm);
  active = on;
  return active;
}
