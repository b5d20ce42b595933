/**
 * TF.js Layers model files on the file system: `model.json` and its binary weight shards, as
 * `tensorflowjs_converter --output_format tfjs_layers_model` (from Keras) and tfjs's
 * `model.save()` write them.
 *
 * model.json: `{ modelTopology, format: 'layers-model', generatedBy, convertedBy,
 * weightsManifest: [{ paths: ['group1-shard1of2.bin', …], weights: [{ name, shape, dtype }] }] }`.
 * A group's shards, concatenated in order, hold its weights one after the other, row-major,
 * little-endian. Shard paths are relative to model.json and must stay in its directory — after
 * symbolic links are resolved (realpath of both): a `weights.bin` linking to a file elsewhere is
 * refused (issue 27, A7), as is a shard that is not a regular file. model.json's nesting is
 * bounded (MAX_JSON_DEPTH, json-depth.ts).
 *
 * `readLayersModelFiles` reads and checks the files without TensorFlow.js (the model registry
 * loads models without it); `layersModelLoadHandler` and `layersModelSaveHandler` are
 * `tf.io.IOHandler`s on the same files, for `tf.loadLayersModel` and `model.save`. Only float32
 * weights are read: quantized exports are refused. Every error starts with `model:` and names
 * the file.
 */
import { mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { JsonDepthError, parseBoundedJson } from '../schema/json-depth.js';
import type * as tf from './tf.js';

/** One weight of the manifest. */
export interface WeightEntry {
  readonly name: string;
  readonly shape: readonly number[];
  readonly dtype: 'float32';
}

/** A Layers model read from its files. */
export interface LayersModelFiles {
  /** The model.json file. */
  readonly path: string;
  /** `modelTopology` as written (converter output nests the model under `model_config`). */
  readonly modelTopology: Record<string, unknown>;
  readonly format?: string;
  readonly generatedBy?: string;
  readonly convertedBy?: string | null;
  /** Every weight of the manifest in file order. */
  readonly weightSpecs: readonly WeightEntry[];
  /** Each weight's values by name. */
  readonly weights: ReadonlyMap<string, Float32Array>;
  /** All weights' bytes concatenated in manifest order (what tfjs's loaders expect). */
  readonly weightData: ArrayBuffer;
}

const fail = (message: string): never => {
  throw new RangeError(`model: ${message}`);
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The bytes of `file`; `what` names it in the error (`model file /m/model.json`). */
function readBytes(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    return fail(`${what} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/** The real path of `p` (symbolic links resolved), or undefined when it does not exist. */
function realPath(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * A shard path of the manifest as a file inside the model's directory: lexically (no URL, no
 * absolute path, no `..` out of it) and once symbolic links are resolved, a regular file.
 */
function shardFile(dir: string, p: unknown, path: string): string {
  if (typeof p !== 'string' || p === '') return fail(`${path}: a weightsManifest path is not a file name`);
  const file = resolve(dir, p);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(p) || isAbsolute(p) || !file.startsWith(dir + sep))
    return fail(
      `${path}: weight file '${p}' is outside the model's directory (only relative paths are read)`,
    );
  const real = realPath(file);
  if (real === undefined) return file; // missing: readBytes names it
  const realDir = realPath(dir) ?? dir;
  if (!real.startsWith(realDir + sep))
    return fail(
      `${path}: weight file '${p}' resolves to ${real}, outside the model's directory ${realDir} (a symbolic link out of it is refused)`,
    );
  if (!statSync(real).isFile()) return fail(`${path}: weight file '${p}' is not a regular file`);
  return real;
}

/**
 * Reads model.json at `path` and its weight shards. Throws RangeError (`model: …`) naming the
 * file: unreadable or not JSON, not a Layers model, a missing shard, shards shorter or longer
 * than the manifest says, a weight that is not float32 or is quantized.
 */
export function readLayersModelFiles(path: string): LayersModelFiles {
  if (typeof path !== 'string' || path === '') throw new TypeError('path: expected the path of model.json');
  const file = resolve(path);
  let json: unknown;
  try {
    json = parseBoundedJson(readBytes(file, `model file ${path}`).toString('utf8'), path);
  } catch (e) {
    if (e instanceof JsonDepthError)
      return fail(`${path}: nested deeper than ${e.limit} levels of arrays and objects (the limit)`);
    if (e instanceof RangeError) throw e;
    return fail((e as Error).message);
  }
  if (!isObject(json)) return fail(`${path}: expected a JSON object (a TF.js model.json)`);
  if (json.format === 'graph-model' || (isObject(json.modelTopology) && 'node' in json.modelTopology))
    return fail(
      `${path} is a TF.js graph model; fedscore needs a Layers model (tensorflowjs_converter --output_format tfjs_layers_model)`,
    );
  if (!isObject(json.modelTopology)) return fail(`${path}: no modelTopology (not a TF.js Layers model.json)`);
  if (!Array.isArray(json.weightsManifest))
    return fail(`${path}: no weightsManifest (the weights are missing)`);
  const dir = dirname(file);
  const weightSpecs: WeightEntry[] = [];
  const weights = new Map<string, Float32Array>();
  const chunks: Uint8Array[] = [];
  for (const [g, group] of (json.weightsManifest as unknown[]).entries()) {
    if (!isObject(group) || !Array.isArray(group.paths) || !Array.isArray(group.weights))
      return fail(`${path}: weightsManifest[${g}] needs paths and weights`);
    const entries = (group.weights as unknown[]).map((w, k) =>
      checkEntry(w, `${path}: weightsManifest[${g}].weights[${k}]`),
    );
    const need = entries.reduce((s, e) => s + 4 * e.shape.reduce((p, d) => p * d, 1), 0);
    const files = (group.paths as unknown[]).map((p) => shardFile(dir, p, path));
    const shards = files.map((f) => readBytes(f, `weight file ${f} (listed in ${path})`));
    const have = shards.reduce((s, b) => s + b.length, 0);
    if (have !== need)
      fail(
        `the weight files ${files.join(', ')} hold ${have} bytes, ${path} describes ${need} (${have < need ? 'truncated' : 'too long'})`,
      );
    const bytes = new Uint8Array(need);
    let at = 0;
    for (const b of shards) {
      bytes.set(b, at);
      at += b.length;
    }
    chunks.push(bytes);
    let offset = 0;
    for (const e of entries) {
      const count = e.shape.reduce((p, d) => p * d, 1);
      if (weights.has(e.name)) fail(`${path}: weight '${e.name}' appears twice in the manifest`);
      weights.set(e.name, new Float32Array(bytes.buffer.slice(offset, offset + 4 * count)));
      weightSpecs.push(e);
      offset += 4 * count;
    }
  }
  const total = chunks.reduce((s, c) => s + c.length, 0);
  const weightData = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    weightData.set(c, at);
    at += c.length;
  }
  return {
    path,
    modelTopology: json.modelTopology,
    ...(typeof json.format === 'string' ? { format: json.format } : {}),
    ...(typeof json.generatedBy === 'string' ? { generatedBy: json.generatedBy } : {}),
    ...(typeof json.convertedBy === 'string' || json.convertedBy === null
      ? { convertedBy: json.convertedBy }
      : {}),
    weightSpecs,
    weights,
    weightData: weightData.buffer,
  };
}

function checkEntry(w: unknown, where: string): WeightEntry {
  if (!isObject(w) || typeof w.name !== 'string' || !Array.isArray(w.shape))
    return fail(`${where}: expected { name, shape, dtype }`);
  if (!w.shape.every((d) => Number.isInteger(d) && d >= 0))
    return fail(`${where}: weight '${w.name}' has a bad shape ${JSON.stringify(w.shape)}`);
  if (w.quantization !== undefined)
    return fail(
      `${where}: weight '${w.name}' is quantized; export the model without quantization (float32 weights)`,
    );
  if (w.dtype !== 'float32')
    return fail(`${where}: weight '${w.name}' is ${String(w.dtype)}; only float32 weights are read`);
  return { name: w.name, shape: w.shape as number[], dtype: 'float32' };
}

/** A `tf.io.IOHandler` that loads model.json and its shards from the file system. */
export function layersModelLoadHandler(path: string): tf.io.IOHandler {
  return {
    load: async () => {
      const m = readLayersModelFiles(path);
      return {
        modelTopology: m.modelTopology,
        weightSpecs: m.weightSpecs.map((w) => ({ name: w.name, shape: [...w.shape], dtype: w.dtype })),
        weightData: m.weightData,
        ...(m.format !== undefined ? { format: m.format } : {}),
        ...(m.generatedBy !== undefined ? { generatedBy: m.generatedBy } : {}),
        ...(m.convertedBy !== undefined ? { convertedBy: m.convertedBy } : {}),
      };
    },
  };
}

/**
 * A `tf.io.IOHandler` for `model.save(handler)` that writes `dir/model.json` and its weights
 * in shards of at most `shardBytes` (default 4 MiB, tensorflowjs_converter's), named
 * `group1-shard<i>of<n>.bin` as the converter names them.
 */
export function layersModelSaveHandler(dir: string, options: { shardBytes?: number } = {}): tf.io.IOHandler {
  const shardBytes = options.shardBytes ?? 4 * 1024 * 1024;
  if (!Number.isInteger(shardBytes) || shardBytes < 4)
    throw new RangeError(`shardBytes: expected an integer ≥ 4, got ${shardBytes}`);
  return {
    save: async (artifacts) => {
      const data = artifacts.weightData;
      const parts = data === undefined ? [] : Array.isArray(data) ? data : [data];
      const bytes = new Uint8Array(parts.reduce((s, b) => s + b.byteLength, 0));
      let at = 0;
      for (const b of parts) {
        bytes.set(new Uint8Array(b), at);
        at += b.byteLength;
      }
      const count = Math.max(1, Math.ceil(bytes.length / shardBytes));
      const paths = Array.from({ length: count }, (_, i) => `group1-shard${i + 1}of${count}.bin`);
      mkdirSync(dir, { recursive: true });
      paths.forEach((p, i) => {
        writeFileSync(join(dir, p), bytes.subarray(i * shardBytes, (i + 1) * shardBytes));
      });
      const json = {
        modelTopology: artifacts.modelTopology,
        format: artifacts.format ?? 'layers-model',
        generatedBy: artifacts.generatedBy,
        convertedBy: artifacts.convertedBy ?? null,
        weightsManifest: [{ paths, weights: artifacts.weightSpecs ?? [] }],
      };
      writeFileSync(join(dir, 'model.json'), JSON.stringify(json));
      return {
        modelArtifactsInfo: {
          dateSaved: new Date(),
          modelTopologyType: 'JSON',
          modelTopologyBytes: JSON.stringify(artifacts.modelTopology).length,
          weightSpecsBytes: JSON.stringify(artifacts.weightSpecs ?? []).length,
          weightDataBytes: bytes.length,
        },
      };
    },
  };
}
