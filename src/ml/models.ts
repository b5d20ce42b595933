/**
 * Model architectures, their flat parameter vectors, and the forward pass.
 *
 * A model is a `ModelSpec` (plain data: layers and shapes) plus ONE flat `Float32Array` of
 * parameters. Updates Δ = M_local − M0, coalition models M0 + Σ cᵢΔᵢ and secure-aggregation
 * vectors are all arithmetic on that vector, so it is the only model state fedscore passes
 * around.
 *
 * Flat layout: the parametrized layers in order; for each, its weight then its bias.
 *   dense  W: [in, out] row-major (W[i·out + j] connects input i to unit j), then b: [out]
 *   conv   W: [kh, kw, inC, outC] row-major (tfjs HWIO), then b: [outC]
 * Feature maps are NHWC and `flatten` reads them in h → w → c order. (PyTorch stores dense
 * weights as [out, in], conv weights as OIHW and flattens CHW; convert when porting weights.)
 * `paramLayout` lists every tensor's name, offset and shape.
 *
 * Architectures: `mlp` (784-200-10 by default), `cnn003` (papers/003 §5 "Setup": Conv(c,16,3) →
 * Conv(16,32,3) → Linear(·,128) → Linear(128,classes), ReLU, optional 2×2 max pooling),
 * `lenet5` (LeCun et al. 1998, with ReLU and average pooling) for 28×28×1 and 32×32×3 inputs.
 */
import { readFile, writeFile } from 'node:fs/promises';
import * as tf from '@tensorflow/tfjs';
import { createRng } from '../../scoring/random.js';
import { addBiasAct } from './_blas_kernels.js';

/** One layer of a model. Convolutions are stride 1; `pad` zeros are added on every side. */
export type LayerSpec =
  | { readonly kind: 'dense'; readonly inputs: number; readonly units: number; readonly relu: boolean }
  | {
      readonly kind: 'conv';
      readonly kernel: number;
      readonly inChannels: number;
      readonly outChannels: number;
      readonly pad: number;
      readonly relu: boolean;
    }
  | { readonly kind: 'pool'; readonly op: 'max' | 'avg'; readonly size: number }
  | { readonly kind: 'flatten' };

/** Architecture families. */
export type ModelKind = 'mlp' | 'cnn003' | 'lenet5';

/** A model architecture (plain data; see the module comment for the parameter layout). */
export interface ModelSpec {
  readonly kind: ModelKind;
  /** e.g. `mlp-784-200-10`, `cnn003-28x28x1-10`. */
  readonly name: string;
  /** Shape of one example: [height, width, channels]. */
  readonly inputShape: readonly [number, number, number];
  readonly numClasses: number;
  readonly layers: readonly LayerSpec[];
  /** Length of the flat parameter vector. */
  readonly paramCount: number;
}

/** One tensor of the flat vector. */
export interface ParamEntry {
  /** e.g. `layer0.weight`. */
  readonly name: string;
  /** Index of the layer in `spec.layers`. */
  readonly layer: number;
  readonly offset: number;
  readonly shape: readonly number[];
  readonly size: number;
  /** Fan-in of the layer (inputs per output unit), for initialization. */
  readonly fanIn: number;
}

/** Labeled examples as src/data's `Dataset` holds them (x row-major n × h·w·c, HWC order). */
export interface Examples {
  readonly x: Float32Array;
  readonly y: ArrayLike<number>;
  readonly n: number;
  readonly shape: readonly [number, number, number];
  readonly numClasses: number;
}

function checkPositiveInt(field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    throw new RangeError(`${field}: expected a positive integer, got ${String(v)}`);
  return v;
}

function checkShape(field: string, s: unknown): readonly [number, number, number] {
  if (!Array.isArray(s) || s.length !== 3)
    throw new TypeError(`${field}: expected [height, width, channels]`);
  for (const [i, d] of s.entries()) checkPositiveInt(`${field}[${i}]`, d);
  return s as unknown as [number, number, number];
}

/** Checks layer shapes chain and returns the spec with its parameter count. */
function build(
  kind: ModelKind,
  name: string,
  inputShape: readonly [number, number, number],
  numClasses: number,
  layers: LayerSpec[],
): ModelSpec {
  let shape: number[] = [...inputShape];
  let flat = false;
  let count = 0;
  for (const [i, l] of layers.entries()) {
    if (l.kind === 'dense') {
      const width = flat ? shape[0]! : shape.reduce((p, d) => p * d, 1);
      if (width !== l.inputs)
        throw new RangeError(`layers[${i}]: dense expects ${l.inputs} inputs, gets ${width}`);
      shape = [l.units];
      flat = true;
      count += l.inputs * l.units + l.units;
    } else if (l.kind === 'conv') {
      if (flat) throw new RangeError(`layers[${i}]: conv after a flat layer`);
      const [h, w, c] = shape as [number, number, number];
      if (c !== l.inChannels)
        throw new RangeError(`layers[${i}]: conv expects ${l.inChannels} channels, gets ${c}`);
      const oh = h + 2 * l.pad - l.kernel + 1;
      const ow = w + 2 * l.pad - l.kernel + 1;
      if (oh < 1 || ow < 1)
        throw new RangeError(`layers[${i}]: input ${h}×${w} too small for a ${l.kernel}×${l.kernel} conv`);
      shape = [oh, ow, l.outChannels];
      count += l.kernel * l.kernel * l.inChannels * l.outChannels + l.outChannels;
    } else if (l.kind === 'pool') {
      if (flat) throw new RangeError(`layers[${i}]: pool after a flat layer`);
      const [h, w, c] = shape as [number, number, number];
      shape = [Math.floor(h / l.size), Math.floor(w / l.size), c];
      if (shape[0]! < 1 || shape[1]! < 1)
        throw new RangeError(`layers[${i}]: input ${h}×${w} too small to pool`);
    } else {
      shape = [shape.reduce((p, d) => p * d, 1)];
      flat = true;
    }
  }
  if (!flat || shape[0] !== numClasses)
    throw new RangeError(
      `layers: the last layer must output ${numClasses} class scores, got [${shape.join(', ')}]`,
    );
  return { kind, name, inputShape, numClasses, layers, paramCount: count };
}

/** Options shared by the architecture builders. */
export interface ArchitectureOptions {
  /** Shape of one example [h, w, c] (default [28, 28, 1]). */
  inputShape?: readonly [number, number, number];
  /** Number of classes (default 10). */
  numClasses?: number;
}

/**
 * A multilayer perceptron on the flattened input: hidden ReLU layers of the given widths
 * (default [200], i.e. 784-200-10 on 28×28×1 inputs), then a linear output layer.
 * Throws RangeError/TypeError naming a bad option.
 */
export function mlp(options: ArchitectureOptions & { hidden?: readonly number[] } = {}): ModelSpec {
  const inputShape = checkShape('inputShape', options.inputShape ?? [28, 28, 1]);
  const numClasses = checkPositiveInt('numClasses', options.numClasses ?? 10);
  const hidden = options.hidden ?? [200];
  if (!Array.isArray(hidden)) throw new TypeError('hidden: expected an array of layer widths');
  for (const [i, h] of hidden.entries()) checkPositiveInt(`hidden[${i}]`, h);
  const widths = [inputShape[0] * inputShape[1] * inputShape[2], ...hidden, numClasses];
  const layers: LayerSpec[] = [{ kind: 'flatten' }];
  for (let i = 0; i + 1 < widths.length; i++)
    layers.push({ kind: 'dense', inputs: widths[i]!, units: widths[i + 1]!, relu: i + 2 < widths.length });
  return build('mlp', `mlp-${widths.join('-')}`, inputShape, numClasses, layers);
}

/**
 * papers/003's CNN: Conv(c,16,3) → ReLU → Conv(16,32,3) → ReLU → Linear(·,hidden=128) → ReLU →
 * Linear(hidden, classes); valid convolutions, 2×2 max pooling after each conv when `pool`
 * (the paper uses it for Brain-MRI, not for CIFAR-10). Throws RangeError on bad options.
 */
export function cnn003(options: ArchitectureOptions & { hidden?: number; pool?: boolean } = {}): ModelSpec {
  const inputShape = checkShape('inputShape', options.inputShape ?? [28, 28, 1]);
  const numClasses = checkPositiveInt('numClasses', options.numClasses ?? 10);
  const hidden = checkPositiveInt('hidden', options.hidden ?? 128);
  const pool = options.pool ?? false;
  let [h, w] = inputShape;
  const layers: LayerSpec[] = [];
  for (const [inC, outC] of [
    [inputShape[2], 16],
    [16, 32],
  ] as const) {
    layers.push({ kind: 'conv', kernel: 3, inChannels: inC, outChannels: outC, pad: 0, relu: true });
    h -= 2;
    w -= 2;
    if (pool) {
      layers.push({ kind: 'pool', op: 'max', size: 2 });
      h = Math.floor(h / 2);
      w = Math.floor(w / 2);
    }
  }
  if (h < 1 || w < 1) throw new RangeError(`inputShape: ${inputShape.join('×')} is too small for cnn003`);
  layers.push(
    { kind: 'flatten' },
    { kind: 'dense', inputs: h * w * 32, units: hidden, relu: true },
    { kind: 'dense', inputs: hidden, units: numClasses, relu: false },
  );
  const name = `cnn003${pool ? '-pool' : ''}-${inputShape.join('x')}-${numClasses}`;
  return build('cnn003', name, inputShape, numClasses, layers);
}

/**
 * LeNet-5 (LeCun et al. 1998) with ReLU: Conv(c,6,5) → AvgPool 2 → Conv(6,16,5) → AvgPool 2 →
 * Linear(400,120) → Linear(120,84) → Linear(84,classes). 28×28 inputs are zero-padded by 2 so
 * both input sizes reach the 5×5×16 map of the original. Throws RangeError on other sizes.
 */
export function lenet5(options: ArchitectureOptions = {}): ModelSpec {
  const inputShape = checkShape('inputShape', options.inputShape ?? [28, 28, 1]);
  const numClasses = checkPositiveInt('numClasses', options.numClasses ?? 10);
  const [h, w, c] = inputShape;
  if (h !== w || (h !== 28 && h !== 32))
    throw new RangeError(`inputShape: lenet5 takes 28×28 or 32×32 inputs, got ${h}×${w}`);
  const layers: LayerSpec[] = [
    { kind: 'conv', kernel: 5, inChannels: c, outChannels: 6, pad: h === 28 ? 2 : 0, relu: true },
    { kind: 'pool', op: 'avg', size: 2 },
    { kind: 'conv', kernel: 5, inChannels: 6, outChannels: 16, pad: 0, relu: true },
    { kind: 'pool', op: 'avg', size: 2 },
    { kind: 'flatten' },
    { kind: 'dense', inputs: 400, units: 120, relu: true },
    { kind: 'dense', inputs: 120, units: 84, relu: true },
    { kind: 'dense', inputs: 84, units: numClasses, relu: false },
  ];
  return build('lenet5', `lenet5-${inputShape.join('x')}-${numClasses}`, inputShape, numClasses, layers);
}

/**
 * An architecture by name (`mlp`, `cnn003`, `lenet5`), for CLIs and configs.
 * Throws RangeError on an unknown name.
 */
export function createModel(
  kind: ModelKind,
  options: ArchitectureOptions & { hidden?: readonly number[] | number; pool?: boolean } = {},
): ModelSpec {
  const { hidden, pool, ...arch } = options;
  if (kind === 'mlp')
    return mlp({
      ...arch,
      ...(hidden !== undefined ? { hidden: typeof hidden === 'number' ? [hidden] : hidden } : {}),
    });
  if (kind === 'cnn003') {
    if (Array.isArray(hidden) && hidden.length !== 1)
      throw new RangeError('hidden: cnn003 has one hidden width');
    const h = typeof hidden === 'number' ? hidden : hidden?.[0];
    return cnn003({
      ...arch,
      ...(h !== undefined ? { hidden: h } : {}),
      ...(pool !== undefined ? { pool } : {}),
    });
  }
  if (kind === 'lenet5') return lenet5(arch);
  throw new RangeError(`kind: expected mlp, cnn003 or lenet5, got '${String(kind)}'`);
}

/** Every tensor of the flat vector with its offset and shape (see the module comment). */
export function paramLayout(spec: ModelSpec): ParamEntry[] {
  const out: ParamEntry[] = [];
  let offset = 0;
  const push = (name: string, layer: number, shape: number[], fanIn: number) => {
    const size = shape.reduce((p, d) => p * d, 1);
    out.push({ name, layer, offset, shape, size, fanIn });
    offset += size;
  };
  spec.layers.forEach((l, i) => {
    if (l.kind === 'dense') {
      push(`layer${i}.weight`, i, [l.inputs, l.units], l.inputs);
      push(`layer${i}.bias`, i, [l.units], l.inputs);
    } else if (l.kind === 'conv') {
      const fanIn = l.kernel * l.kernel * l.inChannels;
      push(`layer${i}.weight`, i, [l.kernel, l.kernel, l.inChannels, l.outChannels], fanIn);
      push(`layer${i}.bias`, i, [l.outChannels], fanIn);
    }
  });
  return out;
}

/** Throws RangeError naming `field` unless `params` is a Float32Array of spec.paramCount values. */
export function checkParams(spec: ModelSpec, params: Float32Array, field = 'params'): Float32Array {
  if (!(params instanceof Float32Array)) throw new TypeError(`${field}: expected a Float32Array`);
  if (params.length !== spec.paramCount)
    throw new RangeError(`${field}: ${spec.name} has ${spec.paramCount} parameters, got ${params.length}`);
  return params;
}

/**
 * Deterministic initialization from a seed, PyTorch's default for Linear and Conv2d: weights and
 * biases uniform in ±1/√fan_in. Same seed → same vector on every platform (xoshiro128**).
 */
export function initParams(spec: ModelSpec, seed: number): Float32Array {
  if (!Number.isFinite(seed)) throw new RangeError(`seed: expected a finite number, got ${seed}`);
  const rng = createRng(seed);
  const out = new Float32Array(spec.paramCount);
  for (const e of paramLayout(spec)) {
    const bound = 1 / Math.sqrt(e.fanIn);
    for (let k = 0; k < e.size; k++) out[e.offset + k] = (2 * rng.next() - 1) * bound;
  }
  return out;
}

/** The flat vector as one tensor per layout entry (the caller disposes them, or runs in tf.tidy). */
export function paramTensors(spec: ModelSpec, params: Float32Array): tf.Tensor[] {
  checkParams(spec, params);
  return paramLayout(spec).map((e) => tf.tensor(params.subarray(e.offset, e.offset + e.size), [...e.shape]));
}

/**
 * Logits [batch, classes] of the model with parameter tensors `weights` (in layout order) on
 * `x` given flat as [batch, h·w·c]. Pure tfjs ops, differentiable; call inside tf.tidy.
 *
 * With `fromLayer` = k, `x` is the output of layer k−1 and `weights` holds the tensors of
 * layers k, k+1, … only (coalition.ts evaluates the layers after the first dense one so).
 * No input checks (hot path): `paramTensors` and the callers check shapes.
 */
export function forward(
  spec: ModelSpec,
  weights: readonly tf.Tensor[],
  x: tf.Tensor,
  fromLayer = 0,
): tf.Tensor2D {
  const batch = x.shape[0]!;
  let h: tf.Tensor =
    fromLayer === 0 && spec.layers[0]?.kind === 'conv' ? x.reshape([batch, ...spec.inputShape]) : x;
  let w = 0;
  for (const l of spec.layers.slice(fromLayer)) {
    if (l.kind === 'dense') {
      h = addBiasAct(tf.matMul(h as tf.Tensor2D, weights[w]! as tf.Tensor2D), weights[w + 1]!, l.relu);
      w += 2;
    } else if (l.kind === 'conv') {
      // Zero padding inside the convolution (no padded copy of the input).
      const pad = l.pad > 0 ? l.pad : 'valid';
      h = addBiasAct(
        tf.conv2d(h as tf.Tensor4D, weights[w]! as tf.Tensor4D, 1, pad),
        weights[w + 1]!,
        l.relu,
      );
      w += 2;
    } else if (l.kind === 'pool') {
      h =
        l.op === 'max'
          ? tf.maxPool(h as tf.Tensor4D, l.size, l.size, 'valid')
          : tf.avgPool(h as tf.Tensor4D, l.size, l.size, 'valid');
    } else {
      h = h.reshape([batch, -1]);
    }
  }
  return h as tf.Tensor2D;
}

const MAGIC = 'FEDSCORE-PARAMS1';

/**
 * The vector as bytes: `FEDSCORE-PARAMS1`, a u32 (LE) header length, a JSON header
 * `{ model, paramCount }` padded with spaces to a multiple of 4, then paramCount float32 LE.
 */
export function encodeParams(spec: ModelSpec, params: Float32Array): Uint8Array {
  checkParams(spec, params);
  let header = JSON.stringify({ model: spec.name, paramCount: spec.paramCount });
  while ((MAGIC.length + 4 + header.length) % 4 !== 0) header += ' ';
  const head = new TextEncoder().encode(header);
  const out = new Uint8Array(MAGIC.length + 4 + head.length + params.length * 4);
  out.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(out.buffer).setUint32(MAGIC.length, head.length, true);
  out.set(head, MAGIC.length + 4);
  const view = new DataView(out.buffer, MAGIC.length + 4 + head.length);
  for (let i = 0; i < params.length; i++) view.setFloat32(i * 4, params[i]!, true);
  return out;
}

/**
 * Reads `encodeParams` bytes for `spec`. Throws RangeError when the bytes are not a parameter
 * file, are truncated, or hold another model (the message says which).
 */
export function decodeParams(spec: ModelSpec, bytes: Uint8Array, what = 'bytes'): Float32Array {
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`${what}: expected a Uint8Array`);
  if (bytes.length < MAGIC.length + 4 || new TextDecoder().decode(bytes.subarray(0, MAGIC.length)) !== MAGIC)
    throw new RangeError(`${what}: not a fedscore parameter file (no ${MAGIC} header)`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headLen = dv.getUint32(MAGIC.length, true);
  const start = MAGIC.length + 4 + headLen;
  if (start > bytes.length) throw new RangeError(`${what}: truncated header`);
  let header: { model?: unknown; paramCount?: unknown };
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(MAGIC.length + 4, start)));
  } catch {
    throw new RangeError(`${what}: unreadable header`);
  }
  if (header.model !== spec.name)
    throw new RangeError(`${what}: holds parameters of ${String(header.model)}, expected ${spec.name}`);
  if (header.paramCount !== spec.paramCount || bytes.length - start !== spec.paramCount * 4)
    throw new RangeError(
      `${what}: expected ${spec.paramCount} float32 values, found ${Math.floor((bytes.length - start) / 4)}`,
    );
  const out = new Float32Array(spec.paramCount);
  for (let i = 0; i < out.length; i++) out[i] = dv.getFloat32(start + i * 4, true);
  return out;
}

/** Writes the vector to `path` (format of `encodeParams`). */
export async function saveParams(path: string, spec: ModelSpec, params: Float32Array): Promise<void> {
  if (typeof path !== 'string' || path === '') throw new TypeError('path: expected a file path');
  await writeFile(path, encodeParams(spec, params));
}

/** Reads a vector saved by `saveParams` for `spec`; errors name the file and the problem. */
export async function loadParams(path: string, spec: ModelSpec): Promise<Float32Array> {
  if (typeof path !== 'string' || path === '') throw new TypeError('path: expected a file path');
  return decodeParams(spec, new Uint8Array(await readFile(path)), path);
}

/** Checks that examples fit a model (feature count and classes). Throws RangeError naming `field`. */
export function checkExamples(spec: ModelSpec, data: Examples, field = 'data'): Examples {
  if (!data || !(data.x instanceof Float32Array)) throw new TypeError(`${field}.x: expected a Float32Array`);
  const f = spec.inputShape[0] * spec.inputShape[1] * spec.inputShape[2];
  if (!Number.isInteger(data.n) || data.n < 0)
    throw new RangeError(`${field}.n: expected a count, got ${data.n}`);
  if (data.x.length !== data.n * f)
    throw new RangeError(
      `${field}.x: ${spec.name} needs n·${f} = ${data.n * f} values, got ${data.x.length}`,
    );
  if (data.y.length !== data.n)
    throw new RangeError(`${field}.y: expected ${data.n} labels, got ${data.y.length}`);
  if (data.numClasses !== spec.numClasses)
    throw new RangeError(
      `${field}.numClasses: ${spec.name} has ${spec.numClasses} classes, data has ${data.numClasses}`,
    );
  return data;
}
