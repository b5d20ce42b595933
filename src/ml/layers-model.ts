/**
 * A user-supplied TF.js Layers model (model.json + weight shards, layers-files.ts) as a fedscore
 * model: its layers as `LayerSpec`s and its weights as the flat parameter vector, which becomes
 * the consortium's initial model M0. The model registry's `tfjs-layers` kind builds on this.
 *
 * Supported (Keras and tfjs share the conventions fedscore uses: dense kernels [in, out],
 * convolution kernels HWIO, NHWC feature maps flattened h → w → c; models.ts documents them):
 *
 * | layer | accepted | becomes |
 * |---|---|---|
 * | InputLayer | [F], [h, w] or [h, w, c] matching the data | the input |
 * | Dense | on a flat input; use_bias; activation linear or relu, softmax on the output | dense |
 * | Conv2D | channels_last, square kernel, strides 1, dilation 1, valid or same (odd kernel); use_bias; linear or relu | conv (same → pad (k−1)/2) |
 * | MaxPooling2D, AveragePooling2D | square pool, strides = pool size, valid (same when the size divides the input) | pool |
 * | Flatten | channels_last | flatten (nothing on a flat input) |
 * | Activation, ReLU | relu after a dense/conv layer (through flatten and max pooling); linear; softmax on the output | the layer's relu |
 * | Softmax | on the output | nothing |
 * | Dropout | any rate | nothing: identity, as at inference |
 *
 * A softmax output is taken as logits: fedscore's loss is the softmax cross-entropy on logits,
 * so training and predictions are those of the Keras model. Dropout is dropped: fedscore trains
 * without it, the same way on every silo, and the model predicts as Keras does at inference.
 * Anything else is refused with the layer named:
 * `model: layer 'batch_normalization_1' (BatchNormalization) is not supported (…)`.
 * Sequential models and functional models that are a single chain are read.
 *
 * Digests for the consortium file (`layersModelDigests`): `topology` is the SHA-256 of
 * `fedscore/layers-topology/v1` + LF + the model's config (modelTopology.model_config, or
 * modelTopology itself, with keys sorted, no spaces); `weights` is `paramsDigest` of the flat
 * initial parameters. This module does not import TensorFlow.js.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../schema/canonical-json.js';
import { type LayersModelFiles, readLayersModelFiles } from './layers-files.js';
import type { DataShape, LayerSpec } from './model-registry.js';

/** A Layers model converted for fedscore. */
export interface LayersModel {
  /** e.g. `layers-3f2a…` (the first 12 hex digits of the topology digest). */
  readonly name: string;
  readonly inputShape: readonly [number, number, number];
  readonly numClasses: number;
  readonly layers: readonly LayerSpec[];
  /** The file's weights in fedscore's flat layout (models.ts `paramLayout`). */
  readonly params: Float32Array;
  readonly digests: LayersModelDigests;
}

/** What the consortium file records so that everyone trains the same model. */
export interface LayersModelDigests {
  /** Hex SHA-256 of the canonical model topology. */
  readonly topology: string;
  /** Hex SHA-256 of the flat initial parameters (`paramsDigest`). */
  readonly weights: string;
}

interface KerasLayer {
  readonly class_name: string;
  readonly config: Record<string, unknown>;
  readonly inbound_nodes?: unknown;
  readonly name?: string;
}

const fail = (message: string): never => {
  throw new RangeError(`model: ${message}`);
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Hex SHA-256 of `fedscore/params/v1 count=<n>` + LF + the values as float32 little-endian. */
export function paramsDigest(params: Float32Array): string {
  const le = new Uint8Array(params.length * 4);
  const dv = new DataView(le.buffer);
  for (let i = 0; i < params.length; i++) dv.setFloat32(4 * i, params[i]!, true);
  return createHash('sha256').update(`fedscore/params/v1 count=${params.length}\n`).update(le).digest('hex');
}

/** The model config: converter output nests it under `model_config`. */
function modelConfig(topology: Record<string, unknown>): Record<string, unknown> {
  const mc = isObject(topology.model_config) ? topology.model_config : topology;
  if (typeof mc.class_name !== 'string') fail('modelTopology has no class_name (not a Keras model config)');
  return mc;
}

/** Names of the layers feeding a functional layer (tfjs/Keras 2 and Keras 3 node formats). */
function inboundNames(nodes: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) {
      if (typeof v[0] === 'string' && typeof v[1] === 'number') out.push(v[0]);
      else for (const x of v) walk(x);
    } else if (isObject(v)) {
      const history = isObject(v.config) ? v.config.keras_history : undefined;
      if (Array.isArray(history) && typeof history[0] === 'string') out.push(history[0]);
      else for (const x of Object.values(v)) walk(x);
    }
  };
  walk(nodes);
  return out;
}

/** The layers in order: Sequential, or a functional model that is one chain. */
function layerChain(mc: Record<string, unknown>): KerasLayer[] {
  const config = mc.config;
  const raw = Array.isArray(config) ? config : isObject(config) ? config.layers : undefined;
  if (
    !Array.isArray(raw) ||
    !raw.every((l) => isObject(l) && typeof l.class_name === 'string' && isObject(l.config))
  )
    return fail(`the ${String(mc.class_name)} config has no list of layers`);
  const layers = raw as KerasLayer[];
  if (mc.class_name === 'Sequential') return layers;
  if (mc.class_name !== 'Model' && mc.class_name !== 'Functional')
    return fail(
      `'${String(mc.class_name)}' models are not supported (Sequential or a functional chain of layers)`,
    );
  const nameOf = (l: KerasLayer) => String(l.name ?? l.config.name);
  const byInput = new Map<string, KerasLayer[]>();
  let first: KerasLayer | undefined;
  for (const l of layers) {
    const inbound = inboundNames(l.inbound_nodes);
    if (inbound.length === 0) {
      if (first)
        fail(
          `the model has several inputs ('${nameOf(first)}', '${nameOf(l)}'); one chain of layers is supported`,
        );
      first = l;
    } else if (inbound.length > 1)
      fail(
        `layer '${nameOf(l)}' (${l.class_name}) has ${inbound.length} inputs; one chain of layers is supported`,
      );
    else byInput.set(inbound[0]!, [...(byInput.get(inbound[0]!) ?? []), l]);
  }
  if (!first) return fail('the functional model has no input layer');
  const chain = [first];
  for (let next = byInput.get(nameOf(first)); next; next = byInput.get(nameOf(chain[chain.length - 1]!))) {
    if (next.length > 1)
      fail(
        `layer '${nameOf(chain[chain.length - 1]!)}' feeds ${next.length} layers; one chain of layers is supported`,
      );
    chain.push(next[0]!);
  }
  if (chain.length !== layers.length) fail('some layers are not on the chain from the input to the output');
  return chain;
}

/** An integer pair option (`[2, 2]` or `2`) as one size, refused unless square. */
function square(v: unknown, what: string, where: string): number {
  const pair = Array.isArray(v) ? v : [v, v];
  if (pair.length !== 2 || !pair.every((d) => Number.isInteger(d) && d > 0))
    return fail(`${where}: ${what} ${JSON.stringify(v)} is not a size`);
  if (pair[0] !== pair[1]) return fail(`${where}: ${what} ${JSON.stringify(v)} is not square`);
  return pair[0] as number;
}

/** The declared input shape (without the batch dimension). */
function inputShapeOf(layers: readonly KerasLayer[]): number[] {
  const c = layers[0]?.config ?? {};
  const batch = c.batch_input_shape ?? c.batch_shape;
  const shape = Array.isArray(batch) ? batch.slice(1) : c.input_shape;
  if (!Array.isArray(shape) || shape.length === 0 || !shape.every((d) => Number.isInteger(d) && d > 0))
    return fail(
      `the model does not declare a fixed input shape (an InputLayer or batch_input_shape), got ${JSON.stringify(batch ?? shape)}`,
    );
  return shape as number[];
}

/** A Dense or Conv2D layer: its Keras name and the shapes of its kernel and bias. */
interface Parametrized {
  readonly keras: string;
  readonly className: string;
  readonly shapes: readonly (readonly number[])[];
}

/**
 * Converts a Layers model's topology and weights (see the module comment). With `data`, the
 * model must take its input shape and output its class count. Throws RangeError (`model: …`)
 * naming the layer, the weight or the shape that does not fit.
 */
export function convertLayersModel(files: LayersModelFiles, data?: DataShape): LayersModel {
  const mc = modelConfig(files.modelTopology);
  const keras = layerChain(mc);
  const declared = inputShapeOf(keras);
  let inputShape: [number, number, number];
  let shape: number[];
  if (declared.length === 1) {
    const f = declared[0]!;
    inputShape =
      data && data.inputShape[0] * data.inputShape[1] * data.inputShape[2] === f
        ? [...data.inputShape]
        : [1, f, 1];
    shape = [f];
  } else if (declared.length === 2 || declared.length === 3) {
    inputShape = [declared[0]!, declared[1]!, declared[2] ?? 1];
    shape = [...inputShape];
  } else return fail(`input shape [${declared.join(', ')}] is not [features], [h, w] or [h, w, c]`);
  if (data && inputShape.join('×') !== data.inputShape.join('×'))
    fail(
      `the model takes inputs of shape [${declared.join(', ')}], the data has shape ${data.inputShape.join('×')} (${data.inputShape[0] * data.inputShape[1] * data.inputShape[2]} features)`,
    );
  const layers: LayerSpec[] = [];
  const params: Parametrized[] = [];
  /** Whether a layer after index k only passes values through (Dropout, linear Activation). */
  const passThrough = (l: KerasLayer) =>
    l.class_name === 'Dropout' || (l.class_name === 'Activation' && l.config.activation === 'linear');
  const isOutput = (k: number) => keras.slice(k + 1).every(passThrough);

  const relu = (where: string) => {
    for (let j = layers.length - 1; j >= 0; j--) {
      const l = layers[j]!;
      if (l.kind === 'dense' || l.kind === 'conv') {
        layers[j] = { ...l, relu: true };
        return;
      }
      if (l.kind === 'pool' && l.op === 'avg')
        fail(`${where}: a ReLU after average pooling is not supported (put it before the pooling)`);
    }
    fail(`${where}: a ReLU before any Dense or Conv2D layer is not supported`);
  };
  const activation = (act: unknown, where: string, k: number, ownLayer: boolean) => {
    if (act === 'linear' || act === null || act === undefined) return false;
    if (act === 'relu') return true;
    if (act === 'softmax' && isOutput(k) && (ownLayer || layers[layers.length - 1]?.kind === 'dense'))
      return false;
    return fail(
      `${where} has activation ${JSON.stringify(act)}, which is not supported (relu or linear; softmax on the output only)`,
    );
  };
  const useBias = (c: Record<string, unknown>, where: string) => {
    if (c.use_bias === false)
      fail(`${where}: use_bias false is not supported (fedscore's layers have a bias)`);
  };
  const channelsLast = (c: Record<string, unknown>, where: string) => {
    if (c.data_format !== undefined && c.data_format !== null && c.data_format !== 'channels_last')
      fail(`${where}: data_format '${String(c.data_format)}' is not supported (channels_last)`);
  };
  const image = (where: string) => {
    if (shape.length !== 3) fail(`${where} needs an image input [h, w, c], gets [${shape.join(', ')}]`);
    return shape as [number, number, number];
  };

  for (const [k, l] of keras.entries()) {
    const c = l.config;
    const where = `layer '${String(c.name ?? l.name ?? k)}' (${l.class_name})`;
    switch (l.class_name) {
      case 'InputLayer':
        if (k !== 0) fail(`${where} is not the first layer`);
        break;
      case 'Dense': {
        useBias(c, where);
        if (shape.length !== 1)
          fail(
            `${where} on an input of shape [${shape.join(', ')}] (Keras applies it to the last axis); add a Flatten layer before it`,
          );
        const units = c.units;
        if (!Number.isInteger(units) || (units as number) < 1)
          fail(`${where}: units ${String(units)} is not a size`);
        const inputs = shape[0]!;
        const r = activation(c.activation, where, k, true);
        params.push({
          keras: String(c.name),
          className: l.class_name,
          shapes: [[inputs, units as number], [units as number]],
        });
        layers.push({ kind: 'dense', inputs, units: units as number, relu: r });
        shape = [units as number];
        break;
      }
      case 'Conv2D': {
        useBias(c, where);
        channelsLast(c, where);
        const [h, w, inC] = image(where);
        const kernel = square(c.kernel_size, 'kernel_size', where);
        if (square(c.strides ?? 1, 'strides', where) !== 1)
          fail(`${where}: strides ${JSON.stringify(c.strides)} are not supported (1 only)`);
        if (square(c.dilation_rate ?? 1, 'dilation_rate', where) !== 1)
          fail(`${where}: dilation_rate ${JSON.stringify(c.dilation_rate)} is not supported (1 only)`);
        if (c.groups !== undefined && c.groups !== 1)
          fail(`${where}: groups ${String(c.groups)} is not supported (1 only)`);
        if (c.padding !== 'valid' && c.padding !== 'same')
          fail(`${where}: padding '${String(c.padding)}' is not supported (valid or same)`);
        if (c.padding === 'same' && kernel % 2 === 0)
          fail(
            `${where}: padding 'same' with an even kernel (${kernel}) pads unevenly, which is not supported`,
          );
        const filters = c.filters;
        if (!Number.isInteger(filters) || (filters as number) < 1)
          fail(`${where}: filters ${String(filters)} is not a size`);
        const pad = c.padding === 'same' ? (kernel - 1) / 2 : 0;
        const oh = h + 2 * pad - kernel + 1;
        const ow = w + 2 * pad - kernel + 1;
        if (oh < 1 || ow < 1) fail(`${where}: a ${kernel}×${kernel} kernel does not fit the ${h}×${w} input`);
        const r = activation(c.activation, where, k, true);
        params.push({
          keras: String(c.name),
          className: l.class_name,
          shapes: [[kernel, kernel, inC, filters as number], [filters as number]],
        });
        layers.push({ kind: 'conv', kernel, inChannels: inC, outChannels: filters as number, pad, relu: r });
        shape = [oh, ow, filters as number];
        break;
      }
      case 'MaxPooling2D':
      case 'AveragePooling2D': {
        channelsLast(c, where);
        const [h, w, ch] = image(where);
        const size = square(c.pool_size ?? 2, 'pool_size', where);
        const stride =
          c.strides === null || c.strides === undefined ? size : square(c.strides, 'strides', where);
        if (stride !== size)
          fail(
            `${where}: strides ${JSON.stringify(c.strides)} differ from pool_size ${size} (not supported)`,
          );
        const padding = c.padding ?? 'valid';
        if (padding !== 'valid' && !(padding === 'same' && h % size === 0 && w % size === 0))
          fail(
            `${where}: padding '${String(padding)}' is not supported here (valid; same only when ${size} divides ${h}×${w})`,
          );
        if (h < size || w < size) fail(`${where}: a ${size}×${size} pool does not fit the ${h}×${w} input`);
        layers.push({ kind: 'pool', op: l.class_name === 'MaxPooling2D' ? 'max' : 'avg', size });
        shape = [Math.floor(h / size), Math.floor(w / size), ch];
        break;
      }
      case 'Flatten':
        channelsLast(c, where);
        if (shape.length > 1) {
          layers.push({ kind: 'flatten' });
          shape = [shape.reduce((p, d) => p * d, 1)];
        }
        break;
      case 'Dropout':
        break;
      case 'Activation':
        if (activation(c.activation, where, k, false)) relu(where);
        break;
      case 'ReLU':
        if ((c.max_value ?? null) !== null || (c.negative_slope ?? 0) !== 0 || (c.threshold ?? 0) !== 0)
          fail(`${where}: max_value, negative_slope and threshold are not supported (a plain ReLU only)`);
        relu(where);
        break;
      case 'Softmax':
        if (!isOutput(k)) fail(`${where} is supported on the output only`);
        break;
      default:
        fail(
          `${where} is not supported (supported: InputLayer, Dense, Conv2D, MaxPooling2D, AveragePooling2D, Flatten, Activation, ReLU, Softmax, Dropout)`,
        );
    }
  }
  if (shape.length !== 1 || params.length === 0 || layers[layers.length - 1]?.kind !== 'dense')
    fail(`the model must end in a Dense layer giving the class scores, it outputs [${shape.join(', ')}]`);
  const numClasses = shape[0]!;
  if (data && numClasses !== data.numClasses)
    fail(`the model outputs ${numClasses} class scores, the data has ${data.numClasses} classes`);
  const parameters = flatParameters(files, params);
  const topology = createHash('sha256')
    .update(`fedscore/layers-topology/v1\n${canonicalJson(mc)}`)
    .digest('hex');
  return {
    name: `layers-${topology.slice(0, 12)}`,
    inputShape,
    numClasses,
    layers,
    params: parameters,
    digests: { topology, weights: paramsDigest(parameters) },
  };
}

/** The weight of `layer` named `part`: `<layer>/<part>`, possibly under a model prefix. */
function findWeight(
  files: LayersModelFiles,
  layer: string,
  part: string,
): [string, Float32Array] | undefined {
  const exact = files.weights.get(`${layer}/${part}`);
  if (exact) return [`${layer}/${part}`, exact];
  const hits = [...files.weights.entries()].filter(([n]) => n.endsWith(`/${layer}/${part}`));
  if (hits.length > 1)
    fail(`${files.path}: several weights end in '${layer}/${part}' (${hits.map(([n]) => n).join(', ')})`);
  return hits[0];
}

/** The weights of the parametrized layers in fedscore's order (kernel, then bias, per layer). */
function flatParameters(files: LayersModelFiles, params: readonly Parametrized[]): Float32Array {
  const total = params.reduce(
    (s, p) => s + p.shapes.reduce((t, sh) => t + sh.reduce((a, d) => a * d, 1), 0),
    0,
  );
  const out = new Float32Array(total);
  let offset = 0;
  for (const p of params)
    for (const [j, part] of ['kernel', 'bias'].entries()) {
      const want = p.shapes[j]!;
      const hit = findWeight(files, p.keras, part);
      if (!hit)
        return fail(
          `${files.path}: layer '${p.keras}' (${p.className}) has no weight '${p.keras}/${part}' in the weights manifest`,
        );
      const [name, values] = hit;
      const spec = files.weightSpecs.find((w) => w.name === name)!;
      if (spec.shape.join(',') !== want.join(','))
        fail(
          `${files.path}: weight '${name}' has shape [${spec.shape.join(', ')}], layer '${p.keras}' (${p.className}) needs [${want.join(', ')}]`,
        );
      out.set(values, offset);
      offset += values.length;
    }
  return out;
}

/**
 * Loads the Layers model at `path` (model.json) and converts it (see `convertLayersModel`).
 * Throws RangeError (`model: …`) naming the file, the layer or the weight.
 */
export function loadLayersModel(path: string, data?: DataShape): LayersModel {
  return convertLayersModel(readLayersModelFiles(path), data);
}

/** The consortium file's digests of the model at `path` (see the module comment). */
export function layersModelDigests(path: string): LayersModelDigests {
  return loadLayersModel(path).digests;
}

/**
 * Throws RangeError (`model: …`) when the model's digests are not the expected ones (the
 * consortium file's): a silo would otherwise train another model than the others.
 */
export function checkLayersModelDigests(
  model: LayersModel,
  expected: Partial<LayersModelDigests>,
  path: string,
): void {
  for (const key of ['topology', 'weights'] as const) {
    const want = expected[key];
    if (want !== undefined && want !== model.digests[key])
      fail(
        `the ${key} digest of ${path} is ${model.digests[key]}, the consortium's is ${want} (not the agreed model)`,
      );
  }
}
