/**
 * Model architectures as plain data, and the model registry: a model kind → its builder (options
 * and data shape → `ModelSpec`) and the TypeBox schema of its options (the keys next to `kind` in
 * a configuration's `model`, e.g. `{ "kind": "mlp", "hidden": [200] }`).
 *
 * The built-in architectures register in one list, `BUILTIN_MODELS`: `mlp` (784-200-10 by
 * default), `cnn003` (papers/003 §5 "Setup": Conv(c,16,3) → Conv(16,32,3) → Linear(·,128) →
 * Linear(128,classes), ReLU, optional 2×2 max pooling), `lenet5` (LeCun et al. 1998, with ReLU
 * and average pooling) for 28×28×1 and 32×32×3 inputs, and `tfjs-layers`, a user-supplied TF.js
 * Layers model read from its files (layers-model.ts), whose initial parameters are the files'
 * weights (`initialParameters`, `fixedInitialParameters`). `registerModel` adds more; `external`
 * (./external-model.ts), a model run by the silo's trainer process, is registered after them.
 *
 * A `ModelSpec` is plain data (layers and shapes), and models.ts trains and evaluates any spec
 * made of dense, conv, pool and flatten layers. The training pool (parallel.ts) sends the spec,
 * not the kind, to its worker threads, so a registered model trains there without being
 * registered in the workers. (A new kind of layer needs code in models.ts `forward`.)
 *
 * This module does not import TensorFlow.js: configurations are checked without loading it.
 */
import Type, { type TObject } from 'typebox';
import Value from 'typebox/value';
import { EXTERNAL_MODEL, type ExternalModelOptions } from './external-model.js';
import { checkLayersModelDigests, loadLayersModel } from './layers-model.js';

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

/** A registered model kind (`modelNames()` lists them). */
export type ModelKind = string;

/** A model architecture (plain data; models.ts describes the parameter layout). */
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

/** Options shared by the architecture builders. */
export interface ArchitectureOptions {
  /** Shape of one example [h, w, c] (default [28, 28, 1]). */
  inputShape?: readonly [number, number, number];
  /** Number of classes (default 10). */
  numClasses?: number;
}

/** The data a model is built for. */
export interface DataShape {
  readonly inputShape: readonly [number, number, number];
  readonly numClasses: number;
}

/** A configuration's choice of model: the kind and that model's options. */
export interface ModelChoice {
  readonly kind: ModelKind;
  readonly [option: string]: unknown;
}

/** A registered model. `O` is the type of its options (what its `options` schema admits). */
export interface ModelDefinition<O = Record<string, unknown>> {
  /** The name configurations use (`model.kind`). */
  readonly kind: string;
  /** One line for documentation and schema descriptions. */
  readonly description: string;
  /**
   * TypeBox object schema of the options. Close it (`additionalProperties: false`) so that a
   * misspelt option is an error; give every property a `description`.
   */
  readonly options: TObject;
  /**
   * The spec for these options (already checked against `options`) and data shape. Build it
   * with `modelSpec(kind, …)`. Throws RangeError/TypeError naming a bad option.
   */
  build(options: O, data: DataShape): ModelSpec;
  /**
   * Fixed initial parameters for these options and the spec `build` returned (e.g. the weights
   * of a model file): the run's M0 whatever its seed. Absent: seeded random initialization
   * (models.ts `initParams`). Must return spec.paramCount values in the flat layout.
   */
  initialParameters?(options: O, spec: ModelSpec): Float32Array;
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

/**
 * A `ModelSpec` from its layers: checks that the layer shapes chain, from `inputShape` to
 * `numClasses` class scores, and counts the parameters. For builders of registered models.
 * Throws RangeError naming the first layer that does not fit.
 */
export function modelSpec(
  kind: ModelKind,
  name: string,
  inputShape: readonly [number, number, number],
  numClasses: number,
  layers: LayerSpec[],
): ModelSpec {
  if (typeof kind !== 'string' || kind === '') throw new TypeError('kind: expected a model kind');
  if (typeof name !== 'string' || name === '') throw new TypeError('name: expected a model name');
  checkShape('inputShape', inputShape);
  checkPositiveInt('numClasses', numClasses);
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
    } else if (l.kind === 'flatten') {
      shape = [shape.reduce((p, d) => p * d, 1)];
      flat = true;
    } else {
      throw new RangeError(
        `layers[${i}].kind: expected 'dense', 'conv', 'pool' or 'flatten', got ${String((l as { kind: unknown }).kind)}`,
      );
    }
  }
  if (!flat || shape[0] !== numClasses)
    throw new RangeError(
      `layers: the last layer must output ${numClasses} class scores, got [${shape.join(', ')}]`,
    );
  return { kind, name, inputShape, numClasses, layers, paramCount: count };
}

/** Options of the `mlp` model. */
export interface MlpOptions {
  /** Hidden layer widths (default [200]). */
  hidden?: readonly number[];
}

/** Options of the `cnn003` model. */
export interface Cnn003Options {
  /** Width of the hidden dense layer (default 128). */
  hidden?: number;
  /** 2×2 max pooling after each convolution (default false). */
  pool?: boolean;
}

/** The options of `mlp` and `cnn003` a configuration leaves out (their schemas document them as defaults). */
const MLP_DEFAULTS = { hidden: [200] } as const;
const CNN003_DEFAULTS = { hidden: 128, pool: false } as const;

const MLP: ModelDefinition<MlpOptions> = {
  kind: 'mlp',
  description: 'multilayer perceptron on the flattened input: hidden ReLU layers, then a linear output layer',
  options: Type.Object(
    {
      hidden: Type.Optional(
        Type.Array(Type.Integer({ minimum: 1 }), {
          minItems: 1,
          default: MLP_DEFAULTS.hidden,
          description:
            'Hidden layer widths, input side first (the default gives 784-200-10 on 28×28×1 inputs).',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  build: (options, data) => mlp({ ...data, ...options }),
};

const CNN003: ModelDefinition<Cnn003Options> = {
  kind: 'cnn003',
  description: "papers/003's CNN: Conv(c,16,3) → Conv(16,32,3) → Linear(·,hidden) → Linear(hidden,classes)",
  options: Type.Object(
    {
      hidden: Type.Optional(
        Type.Integer({
          minimum: 1,
          default: CNN003_DEFAULTS.hidden,
          description: 'Width of the hidden dense layer.',
        }),
      ),
      pool: Type.Optional(
        Type.Boolean({
          default: CNN003_DEFAULTS.pool,
          description:
            '2×2 max pooling after each convolution (papers/003 uses it for Brain-MRI, not for CIFAR-10).',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  build: (options, data) => cnn003({ ...data, ...options }),
};

const LENET5: ModelDefinition<Record<string, never>> = {
  kind: 'lenet5',
  description: 'LeNet-5 with ReLU and average pooling, for 28×28 and 32×32 inputs',
  options: Type.Object({}, { additionalProperties: false }),
  build: (_options, data) => lenet5(data),
};

/** Options of the `tfjs-layers` model. */
export interface LayersOptions {
  /** Path of model.json; its weight files sit beside it. */
  path: string;
  /** The consortium's topology digest (`layersModelDigests`), checked when set. */
  topologyDigest?: string;
  /** The consortium's initial-weights digest, checked when set. */
  weightsDigest?: string;
}

const SHA256_HEX = '^[0-9a-f]{64}$';

/** The Layers model of `options`, its digests checked against the ones given. */
function layersModelOf(o: LayersOptions, data: DataShape) {
  const m = loadLayersModel(o.path, data);
  checkLayersModelDigests(m, { topology: o.topologyDigest, weights: o.weightsDigest }, o.path);
  return m;
}

export const LAYERS_MODEL: ModelDefinition<LayersOptions> = {
  kind: 'tfjs-layers',
  description:
    "a TF.js Layers model from its model.json and weight files (Keras through tensorflowjs_converter, or tfjs's model.save()); the initial model is the files' weights",
  options: Type.Object(
    {
      path: Type.String({
        minLength: 1,
        description: 'path of model.json, relative to the working directory; the weight files sit beside it',
      }),
      topologyDigest: Type.Optional(
        Type.String({
          pattern: SHA256_HEX,
          description: "SHA-256 of the model's topology, checked when set",
        }),
      ),
      weightsDigest: Type.Optional(
        Type.String({ pattern: SHA256_HEX, description: 'SHA-256 of the initial weights, checked when set' }),
      ),
    },
    { additionalProperties: false },
  ),
  build: (options, data) => {
    const m = layersModelOf(options, data);
    return modelSpec(LAYERS_MODEL.kind, m.name, data.inputShape, data.numClasses, [...m.layers]);
  },
  initialParameters: (options, spec) => Float32Array.from(layersModelOf(options, spec).params),
};

/** The built-in models, registered in this order when the module loads. */
export const BUILTIN_MODELS: readonly ModelDefinition[] = [
  MLP,
  CNN003,
  LENET5,
  LAYERS_MODEL,
] as ModelDefinition[];

/** The model of a configuration without `model`. */
export const DEFAULT_MODEL: ModelChoice = Object.freeze({ kind: MLP.kind });

const registry = new Map<string, ModelDefinition>();

const KIND_RE = /^[a-z0-9][a-z0-9._-]*$/i;

/**
 * Adds a model under `definition.kind`.
 * @throws TypeError when the definition is malformed; RangeError when the kind is taken or not
 *   a name of letters, digits, '.', '_' and '-'.
 */
export function registerModel<O>(definition: ModelDefinition<O>): void {
  if (typeof definition !== 'object' || definition === null)
    throw new TypeError('definition: expected { kind, description, options, build }');
  const { kind, description, options, build } = definition;
  if (typeof kind !== 'string') throw new TypeError('kind: expected a string');
  if (!KIND_RE.test(kind))
    throw new RangeError(`kind: expected letters, digits, '.', '_' or '-', got '${kind}'`);
  if (registry.has(kind)) throw new RangeError(`kind: model '${kind}' is already registered`);
  if (typeof description !== 'string') throw new TypeError('description: expected a string');
  if (typeof options !== 'object' || options === null || options.type !== 'object')
    throw new TypeError('options: expected a TypeBox object schema (Type.Object)');
  if (typeof build !== 'function') throw new TypeError('build: expected a function');
  if (definition.initialParameters !== undefined && typeof definition.initialParameters !== 'function')
    throw new TypeError('initialParameters: expected a function');
  registry.set(kind, definition as ModelDefinition);
}

/** The registered model kinds, built-ins first, in registration order. */
export function modelNames(): string[] {
  return [...registry.keys()];
}

/** The model registered as `kind`, or undefined. */
export function findModel(kind: string): ModelDefinition | undefined {
  return registry.get(kind);
}

const quoted = (names: readonly string[]) => names.map((n) => `'${n}'`).join(', ');

/** JSON pointer `/a/0/b` → `a[0].b`. */
function pathOf(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
}

/**
 * The spec of a registered model: `options` holds the data shape (`inputShape`, default
 * [28, 28, 1]; `numClasses`, default 10) and the model's options, which are checked against its
 * schema first.
 * @throws RangeError naming `kind` for an unknown kind, or the first bad option
 *   (`hidden[0]: must be >= 1`, `hidden: not an option of 'lenet5'`).
 */
export function createModel(
  kind: ModelKind,
  options: ArchitectureOptions & Record<string, unknown> = {},
): ModelSpec {
  const definition = typeof kind === 'string' ? registry.get(kind) : undefined;
  if (!definition)
    throw new RangeError(`kind: expected one of ${quoted(modelNames())}, got '${String(kind)}'`);
  const { inputShape = [28, 28, 1], numClasses = 10, ...rest } = options;
  const closed = (definition.options as { additionalProperties?: unknown }).additionalProperties === false;
  for (const key of Object.keys(rest))
    if (closed && !Object.hasOwn(definition.options.properties, key))
      throw new RangeError(`${key}: not an option of '${definition.kind}'`);
  const first = Value.Errors(definition.options, rest)[0] as
    | { instancePath: string; message: string }
    | undefined;
  if (first) throw new RangeError(`${pathOf(first.instancePath) || 'options'}: ${first.message}`);
  const data = { inputShape: checkShape('inputShape', inputShape), numClasses };
  const spec = definition.build(rest, data);
  if (spec?.kind !== definition.kind)
    throw new RangeError(`build: model '${definition.kind}' returned a spec of kind '${String(spec?.kind)}'`);
  return spec;
}

/**
 * The fixed initial parameters of a model (its definition's `initialParameters`; the model
 * options without `kind`), or undefined when it is initialized from the run's seed.
 * @throws RangeError naming `kind` for an unknown kind, or when the vector does not have
 *   spec.paramCount values.
 */
export function fixedInitialParameters(
  kind: ModelKind,
  options: Record<string, unknown>,
  spec: ModelSpec,
): Float32Array | undefined {
  const definition = typeof kind === 'string' ? registry.get(kind) : undefined;
  if (!definition)
    throw new RangeError(`kind: expected one of ${quoted(modelNames())}, got '${String(kind)}'`);
  const params = definition.initialParameters?.(options, spec);
  if (params !== undefined && (!(params instanceof Float32Array) || params.length !== spec.paramCount))
    throw new RangeError(
      `initialParameters: model '${kind}' returned ${params instanceof Float32Array ? params.length : 'no Float32Array of'} values, ${spec.name} has ${spec.paramCount} parameters`,
    );
  return params;
}

/**
 * A multilayer perceptron on the flattened input: hidden ReLU layers of the given widths
 * (default [200], i.e. 784-200-10 on 28×28×1 inputs), then a linear output layer.
 * Throws RangeError/TypeError naming a bad option.
 */
export function mlp(options: ArchitectureOptions & MlpOptions = {}): ModelSpec {
  const inputShape = checkShape('inputShape', options.inputShape ?? [28, 28, 1]);
  const numClasses = checkPositiveInt('numClasses', options.numClasses ?? 10);
  const hidden = options.hidden ?? MLP_DEFAULTS.hidden;
  if (!Array.isArray(hidden)) throw new TypeError('hidden: expected an array of layer widths');
  for (const [i, h] of hidden.entries()) checkPositiveInt(`hidden[${i}]`, h);
  const widths = [inputShape[0] * inputShape[1] * inputShape[2], ...hidden, numClasses];
  const layers: LayerSpec[] = [{ kind: 'flatten' }];
  for (let i = 0; i + 1 < widths.length; i++)
    layers.push({ kind: 'dense', inputs: widths[i]!, units: widths[i + 1]!, relu: i + 2 < widths.length });
  return modelSpec(MLP.kind, `${MLP.kind}-${widths.join('-')}`, inputShape, numClasses, layers);
}

/**
 * papers/003's CNN: Conv(c,16,3) → ReLU → Conv(16,32,3) → ReLU → Linear(·,hidden=128) → ReLU →
 * Linear(hidden, classes); valid convolutions, 2×2 max pooling after each conv when `pool`
 * (the paper uses it for Brain-MRI, not for CIFAR-10). Throws RangeError on bad options.
 */
export function cnn003(options: ArchitectureOptions & Cnn003Options = {}): ModelSpec {
  const inputShape = checkShape('inputShape', options.inputShape ?? [28, 28, 1]);
  const numClasses = checkPositiveInt('numClasses', options.numClasses ?? 10);
  const hidden = checkPositiveInt('hidden', options.hidden ?? CNN003_DEFAULTS.hidden);
  const pool = options.pool ?? CNN003_DEFAULTS.pool;
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
  if (h < 1 || w < 1)
    throw new RangeError(`inputShape: ${inputShape.join('×')} is too small for ${CNN003.kind}`);
  layers.push(
    { kind: 'flatten' },
    { kind: 'dense', inputs: h * w * 32, units: hidden, relu: true },
    { kind: 'dense', inputs: hidden, units: numClasses, relu: false },
  );
  const name = `${CNN003.kind}${pool ? '-pool' : ''}-${inputShape.join('x')}-${numClasses}`;
  return modelSpec(CNN003.kind, name, inputShape, numClasses, layers);
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
    throw new RangeError(`inputShape: ${LENET5.kind} takes 28×28 or 32×32 inputs, got ${h}×${w}`);
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
  const name = `${LENET5.kind}-${inputShape.join('x')}-${numClasses}`;
  return modelSpec(LENET5.kind, name, inputShape, numClasses, layers);
}

for (const definition of BUILTIN_MODELS) registerModel(definition);
// A model in the silo's trainer process (./external-model.ts), after the TF.js models.
registerModel<ExternalModelOptions>(EXTERNAL_MODEL);
