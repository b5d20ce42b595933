/**
 * Kernels fedscore adds to or wraps on the wasm backend (internal; registered by backend.ts).
 *
 * 1. BatchMatMul with a transposed operand. tfjs-backend-wasm 4.22 runs `transposeA`/`transposeB`
 *    through a slow path: measured here, [64,18432]ᵀ·[64,128] takes ≈450–600 ms against ≈12 ms
 *    for an explicit transpose and a plain product, and every dense-layer gradient uses such
 *    products. The wrapper transposes explicitly and calls the original kernel untransposed.
 *
 * 2. Convolution gradients.
 * tfjs-backend-wasm 4.22 registers no `Conv2DBackpropFilter`, so `tf.grads` through a conv2d
 * fails there, and its `Conv2DBackpropInput` is a naive loop (≈25 ms for a 16→32 3×3 layer at
 * batch 64 here, against ≈4 ms for the forward conv). Both gradients of a stride-1,
 * dilation-1 convolution are themselves convolutions, which the wasm backend runs through
 * XNNPACK:
 *
 *   filter: dW[a,b,i,o] = Σ_{n,p,q} x[n,a+p,b+q,i]·dy[n,p,q,o]
 *           = conv2d(xᵀ = x as [i,H,W,n], dyᵀ = dy as [p,q,n,o], valid), read as [a,b,i,o];
 *   input:  dx = conv2d(dy zero-padded by k−1−pad, W rotated 180° with in/out swapped, valid).
 *
 * Other configurations (strides, dilations, NCHW) keep tfjs's own input kernel and have no
 * filter kernel, as before; models in models.ts only use the supported case.
 */
import * as tf from './tf.js';

type Info = tf.TensorInfo;
type KernelFn = (args: {
  inputs: Record<string, Info>;
  backend: unknown;
  attrs?: Record<string, unknown>;
}) => Info;

export interface ConvAttrs {
  strides: number | [number, number];
  pad: 'valid' | 'same' | number | unknown;
  dataFormat: 'NHWC' | 'NCHW';
  dimRoundingMode?: string;
  dilations?: number | [number, number];
}

let registered = false;
let originalInput: tf.KernelConfig | undefined;
let originalMatMul: tf.KernelConfig | undefined;

function kernel(name: string): KernelFn {
  const k = tf.getKernel(name, 'wasm');
  if (!k) throw new Error(`wasm kernel ${name} is not registered`);
  return k.kernelFunc as unknown as KernelFn;
}

function dispose(backend: unknown, info: Info): void {
  (backend as { disposeData(id: object): void }).disposeData(info.dataId);
}

function isOne(v: number | [number, number] | undefined): boolean {
  return v === undefined || v === 1 || (Array.isArray(v) && v[0] === 1 && v[1] === 1);
}

/** Explicit [top, bottom, left, right] padding of a stride-1 conv, or undefined if unsupported. */
export function convPadding(
  attrs: ConvAttrs,
  kh: number,
  kw: number,
): [number, number, number, number] | undefined {
  if (!isOne(attrs.strides) || !isOne(attrs.dilations) || attrs.dataFormat === 'NCHW') return undefined;
  if (attrs.dimRoundingMode !== undefined && attrs.dimRoundingMode !== null) return undefined;
  if (attrs.pad === 'valid') return [0, 0, 0, 0];
  if (attrs.pad === 'same') {
    const t = Math.floor((kh - 1) / 2);
    const l = Math.floor((kw - 1) / 2);
    return [t, kh - 1 - t, l, kw - 1 - l];
  }
  if (typeof attrs.pad === 'number' && attrs.pad >= 0 && attrs.pad <= Math.min(kh, kw) - 1)
    return [attrs.pad, attrs.pad, attrs.pad, attrs.pad];
  return undefined;
}

const CONV_VALID = { strides: [1, 1], pad: 'valid', dataFormat: 'NHWC', dilations: [1, 1] };

function filterGradient(args: { inputs: Record<string, Info>; backend: unknown; attrs?: unknown }): Info {
  const { backend } = args;
  const attrs = args.attrs as ConvAttrs & { filterShape: [number, number, number, number] };
  const { x, dy } = args.inputs as { x: Info; dy: Info };
  const [kh, kw] = attrs.filterShape;
  const pads = convPadding(attrs, kh, kw);
  if (!pads)
    throw new Error(
      'Conv2DBackpropFilter on wasm: fedscore supports stride 1, dilation 1, NHWC, valid/same/numeric padding',
    );
  const transpose = kernel('Transpose');
  const conv = kernel('Conv2D');
  const temps: Info[] = [];
  let xp = x;
  if (pads.some((p) => p > 0)) {
    xp = kernel('PadV2')({
      inputs: { x },
      backend,
      attrs: {
        paddings: [
          [0, 0],
          [pads[0], pads[1]],
          [pads[2], pads[3]],
          [0, 0],
        ],
        constantValue: 0,
      },
    });
    temps.push(xp);
  }
  const xT = transpose({ inputs: { x: xp }, backend, attrs: { perm: [3, 1, 2, 0] } });
  const dyT = transpose({ inputs: { x: dy }, backend, attrs: { perm: [1, 2, 0, 3] } });
  temps.push(xT, dyT);
  const g = conv({ inputs: { x: xT, filter: dyT }, backend, attrs: CONV_VALID });
  temps.push(g);
  const out = transpose({ inputs: { x: g }, backend, attrs: { perm: [1, 2, 0, 3] } });
  for (const t of temps) dispose(backend, t);
  return out;
}

function inputGradient(args: { inputs: Record<string, Info>; backend: unknown; attrs?: unknown }): Info {
  const { backend } = args;
  const attrs = args.attrs as ConvAttrs;
  const { dy, filter } = args.inputs as { dy: Info; filter: Info };
  const [kh, kw] = filter.shape as [number, number, number, number];
  const pads = convPadding(attrs, kh, kw);
  if (!pads) return (originalInput!.kernelFunc as unknown as KernelFn)(args as Parameters<KernelFn>[0]);
  const temps: Info[] = [];
  const dyP = kernel('PadV2')({
    inputs: { x: dy },
    backend,
    attrs: {
      paddings: [
        [0, 0],
        [kh - 1 - pads[0], kh - 1 - pads[1]],
        [kw - 1 - pads[2], kw - 1 - pads[3]],
        [0, 0],
      ],
      constantValue: 0,
    },
  });
  const rotated = kernel('Reverse')({ inputs: { x: filter }, backend, attrs: { dims: [0, 1] } });
  const flipped = kernel('Transpose')({ inputs: { x: rotated }, backend, attrs: { perm: [0, 1, 3, 2] } });
  temps.push(dyP, rotated, flipped);
  const out = kernel('Conv2D')({ inputs: { x: dyP, filter: flipped }, backend, attrs: CONV_VALID });
  for (const t of temps) dispose(backend, t);
  return out;
}

function swapLast(backend: unknown, t: Info): Info {
  const r = t.shape.length;
  const perm = Array.from({ length: r }, (_, i) => i);
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  return kernel('Transpose')({ inputs: { x: t }, backend, attrs: { perm } });
}

const numel = (t: Info) => t.shape.reduce((p, d) => p * d, 1);

/**
 * a·b with transposes done explicitly. For 2-D operands it picks the cheaper of transposing the
 * flagged operand or computing the transposed product: aᵀ·b = (bᵀ·a)ᵀ, a·bᵀ = (b·aᵀ)ᵀ,
 * aᵀ·bᵀ = (b·a)ᵀ. (dy·Wᵀ of a wide dense layer transposes dy and the output, not W.)
 */
function matMul(args: { inputs: Record<string, Info>; backend: unknown; attrs?: unknown }): Info {
  const { backend } = args;
  const attrs = args.attrs as { transposeA: boolean; transposeB: boolean };
  const original = originalMatMul!.kernelFunc as unknown as KernelFn;
  const { transposeA: tA, transposeB: tB } = attrs;
  if (!tA && !tB) return original(args as Parameters<KernelFn>[0]);
  const { a, b } = args.inputs as { a: Info; b: Info };
  const plain = (x: Info, y: Info) =>
    original({ inputs: { a: x, b: y }, backend, attrs: { transposeA: false, transposeB: false } });
  const temps: Info[] = [];
  const t = (x: Info) => {
    const y = swapLast(backend, x);
    temps.push(y);
    return y;
  };
  let out: Info;
  if (a.shape.length === 2 && b.shape.length === 2) {
    const m = tA ? a.shape[1]! : a.shape[0]!;
    const n = tB ? b.shape[0]! : b.shape[1]!;
    const direct = (tA ? numel(a) : 0) + (tB ? numel(b) : 0);
    const flipped = (tA ? 0 : numel(a)) + (tB ? 0 : numel(b)) + m * n;
    if (flipped < direct) {
      // (op(a)·op(b))ᵀ = op(b)ᵀ·op(a)ᵀ, where op(b)ᵀ is b itself when tB, else bᵀ.
      const inner = plain(tB ? b : t(b), tA ? a : t(a));
      temps.push(inner);
      out = swapLast(backend, inner);
    } else out = plain(tA ? t(a) : a, tB ? t(b) : b);
  } else out = plain(tA ? t(a) : a, tB ? t(b) : b);
  for (const x of temps) dispose(backend, x);
  return out;
}

function replace(name: string, kernelFunc: unknown): tf.KernelConfig | undefined {
  const original = tf.getKernel(name, 'wasm');
  if (original) tf.unregisterKernel(name, 'wasm');
  tf.registerKernel({ kernelName: name, backendName: 'wasm', kernelFunc: kernelFunc as tf.KernelFunc });
  return original;
}

/**
 * Registers the kernels on the wasm backend (idempotent). Call after the wasm backend has
 * initialized (its own kernels' setup has run by then).
 */
export function registerWasmKernels(): void {
  if (registered) return;
  originalMatMul = replace('BatchMatMul', matMul);
  originalInput = replace('Conv2DBackpropInput', inputGradient);
  if (!tf.getKernel('Conv2DBackpropFilter', 'wasm'))
    tf.registerKernel({
      kernelName: 'Conv2DBackpropFilter',
      backendName: 'wasm',
      kernelFunc: filterGradient as unknown as tf.KernelFunc,
    });
  registered = true;
}
