/**
 * Models' flat parameter vectors and the forward pass.
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
 * The architectures (`ModelSpec`, the built-in `mlp`, `cnn003`, `lenet5` and the model registry)
 * live in model-registry.ts, which does not load TensorFlow.js; they are re-exported here, where
 * callers have always imported them from.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createRng } from '../../scoring/seeded-rng.js';
import { addBiasAct } from './_blas_kernels.js';
import type { LayerSpec, ModelSpec } from './model-registry.js';
import * as tf from './tf.js';

export {
  type ArchitectureOptions,
  cnn003,
  createModel,
  type LayerSpec,
  lenet5,
  type ModelKind,
  type ModelSpec,
  mlp,
} from './model-registry.js';

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

/** A square pooling layer, strides = its size, valid padding (the forward pass and the GPU coalition path). */
export function poolLayer(h: tf.Tensor4D, l: Extract<LayerSpec, { kind: 'pool' }>): tf.Tensor4D {
  return l.op === 'max' ? tf.maxPool(h, l.size, l.size, 'valid') : tf.avgPool(h, l.size, l.size, 'valid');
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
      h = poolLayer(h as tf.Tensor4D, l);
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
