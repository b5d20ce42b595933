/**
 * The trainer process protocol, version 1 (docs/trainer.md; schema docs/trainer.schema.json;
 * vectors test/vectors/trainer/): what a silo and its trainer process say to each other, as pure
 * functions — requests encoded as one JSON line each, answers parsed and checked, parameter
 * vectors read back from `.npy` files with their size checked before a byte is read.
 *
 * The silo writes one request line on the trainer's stdin and reads one answer line from its
 * stdout; parameter vectors and data travel as `.npy` files in a folder only the silo's user can
 * read (0700, ./trainer-process.ts), never on the wire between machines. Operations:
 *
 * | op | request | answer |
 * |---|---|---|
 * | `layout` | — | `protocol`, `layout` (names and shapes), `device` |
 * | `init` | `seed`, `out` | — (the initial parameters written to `out`, float32 [d]) |
 * | `train` | `params`, `data`, `seed`, `out`, optional `steps` | `examples` (the update Δ = M_i − M0 in `out`, float32 [d]) |
 * | `evaluate` | `params` (float32 [k, d]), `data`, `classes` | `results`: k × { accuracy, loss, perClass } |
 *
 * Every answer carries the request's `id` and `ok`; an error is `{ id, ok: false, error }`.
 * Anything else is a protocol error ({@link TrainerProtocolError}), on which the silo kills the
 * trainer.
 */

import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { parseNpy } from '../../data/npy.js';
import { canonicalJson } from '../../schema/canonical-json.js';

/** The protocol version this silo speaks (the `protocol` of the `layout` answer). */
export const TRAINER_PROTOCOL_VERSION = 1;

/** The operations of the protocol. */
export const TRAINER_OPS = ['layout', 'init', 'train', 'evaluate'] as const;
export type TrainerOp = (typeof TRAINER_OPS)[number];

/**
 * Largest |value| of a parameter vector or update read back from a trainer. A trained network's
 * parameters and updates are within a few units; a value beyond this is a diverged or broken
 * trainer (float32 products of 3e38 are ∞), refused before it is quantized or evaluated — the
 * bound the data readers put on features (src/data/limits.ts MAX_FEATURE_MAGNITUDE).
 */
export const MAX_VECTOR_MAGNITUDE = 1e6;

/** Largest answer line accepted (a `layout` of many tensors, `results` of a large batch). */
export const MAX_ANSWER_LINE = 4 * 1024 * 1024;

/** Largest `.npy` header accepted (numpy writes 64–128 bytes). */
export const MAX_NPY_HEADER = 4096;

/** One tensor of the model, in the flat vector's order. */
export interface TensorLayout {
  readonly name: string;
  readonly shape: readonly number[];
}

/** A data set as files: features x.npy (float32 [n, h, w, c]) and labels y.npy (int32 [n]). */
export interface DataFiles {
  readonly x: string;
  readonly y: string;
}

/** A request, without its id. */
export type TrainerRequest =
  | { readonly op: 'layout' }
  | { readonly op: 'init'; readonly seed: number; readonly out: string }
  | {
      readonly op: 'train';
      readonly params: string;
      readonly data: DataFiles;
      readonly seed: number;
      readonly out: string;
      readonly steps?: number;
    }
  | {
      readonly op: 'evaluate';
      readonly params: string;
      readonly data: DataFiles;
      /** The number of classes (the length of each result's perClass). */
      readonly classes: number;
    };

/** Utilities of one parameter vector (perClass: null for a class absent from the data). */
export interface EvaluateResult {
  readonly accuracy: number;
  readonly loss: number;
  readonly perClass: readonly (number | null)[];
}

/** The `layout` answer. */
export interface LayoutAnswer {
  readonly protocol: number;
  readonly layout: readonly TensorLayout[];
  /** Where the trainer runs (`cpu`, `cuda:0`, …), for the logs. */
  readonly device: string;
  /** Its library, e.g. `torch 2.3.0`, for the results' versions. */
  readonly library: string;
}

/**
 * A trainer broke the protocol (no answer, garbage, a wrong id, a missing field, a vector of the
 * wrong size or with a non-finite or huge value, a timeout, an exit). The message names the
 * operation; the silo kills the trainer.
 */
export class TrainerProtocolError extends Error {
  constructor(
    readonly op: string,
    detail: string,
  ) {
    super(`trainer ${op}: ${detail}`);
    this.name = 'TrainerProtocolError';
  }
}

/** The trainer answered an operation with `{ ok: false, error }`: it stays up. */
export class TrainerError extends Error {
  constructor(
    readonly op: string,
    detail: string,
  ) {
    super(`trainer ${op}: the trainer reports: ${detail}`);
    this.name = 'TrainerError';
  }
}

/** The request line (JSON and LF) of request `id`. */
export function encodeRequest(id: number, r: TrainerRequest): string {
  return `${JSON.stringify({ id, ...r })}\n`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses one answer line to request `id` of operation `op`: the fields of a successful answer,
 * or throws.
 * @throws TrainerProtocolError naming `op` for anything but `{ id, ok: true, … }` or
 *   `{ id, ok: false, error: string }`; TrainerError for the latter.
 */
export function parseAnswer(op: TrainerOp, id: number, line: string): Record<string, unknown> {
  const shown = line.length > 120 ? `${line.slice(0, 120)}…` : line;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    throw new TrainerProtocolError(
      op,
      `the trainer printed a line that is not JSON: ${JSON.stringify(shown)} (a trainer prints only protocol lines on stdout; logs go to stderr)`,
    );
  }
  if (!isObject(v))
    throw new TrainerProtocolError(op, `expected a JSON object, got ${JSON.stringify(shown)}`);
  if (v.id !== id) throw new TrainerProtocolError(op, `answer id ${JSON.stringify(v.id)}, expected ${id}`);
  if (v.ok === false) {
    if (typeof v.error !== 'string')
      throw new TrainerProtocolError(op, 'an error answer without an error message (error: string)');
    throw new TrainerError(op, v.error.slice(0, 2000));
  }
  if (v.ok !== true)
    throw new TrainerProtocolError(op, `ok: expected true or false, got ${JSON.stringify(v.ok)}`);
  return v;
}

/** Checks a `layout` answer. @throws TrainerProtocolError naming the field. */
export function checkLayoutAnswer(v: Record<string, unknown>): LayoutAnswer {
  const fail = (detail: string): never => {
    throw new TrainerProtocolError('layout', detail);
  };
  if (v.protocol !== TRAINER_PROTOCOL_VERSION)
    fail(
      `protocol: this silo speaks version ${TRAINER_PROTOCOL_VERSION}, the trainer ${JSON.stringify(v.protocol)}`,
    );
  if (!Array.isArray(v.layout) || v.layout.length === 0)
    fail('layout: expected a non-empty array of { name, shape }');
  const names = new Set<string>();
  const layout = (v.layout as unknown[]).map((t, i) => {
    if (!isObject(t) || typeof t.name !== 'string' || t.name === '')
      fail(`layout[${i}].name: expected a non-empty string`);
    const { name, shape } = t as { name: string; shape: unknown };
    if (names.has(name)) fail(`layout[${i}].name: '${name}' appears twice`);
    names.add(name);
    if (!Array.isArray(shape) || !shape.every((s) => Number.isSafeInteger(s) && s >= 1))
      fail(`layout[${i}].shape: expected an array of positive integers, got ${JSON.stringify(shape)}`);
    return { name, shape: [...(shape as number[])] };
  });
  const d = parameterCountOf(layout);
  if (!Number.isSafeInteger(d) || d > 2 ** 31 - 1) fail(`layout: ${d} parameters is too many`);
  return {
    protocol: TRAINER_PROTOCOL_VERSION,
    layout,
    device: typeof v.device === 'string' ? v.device.slice(0, 100) : 'unknown',
    library: typeof v.library === 'string' ? v.library.slice(0, 100) : 'unknown',
  };
}

/** Number of parameters of a layout: Σ of the tensors' sizes. */
export function parameterCountOf(layout: readonly TensorLayout[]): number {
  return layout.reduce((sum, t) => sum + t.shape.reduce((p, s) => p * s, 1), 0);
}

/**
 * SHA-256 of a layout and the data shape it is for: the consortium file's `model.topologyDigest`
 * of an external model. Hex of SHA-256(`fedscore/trainer-layout/v1` LF canonical JSON of
 * { layout, inputShape, numClasses }).
 */
export function layoutDigest(
  layout: readonly TensorLayout[],
  data: { inputShape: readonly number[]; numClasses: number },
): string {
  return createHash('sha256')
    .update(
      `fedscore/trainer-layout/v1\n${canonicalJson({ layout: layout.map((t) => ({ name: t.name, shape: t.shape })), inputShape: data.inputShape, numClasses: data.numClasses })}`,
    )
    .digest('hex');
}

/** Checks a `train` answer's example count. @throws TrainerProtocolError. */
export function checkTrainAnswer(v: Record<string, unknown>): { examples: number } {
  if (!Number.isSafeInteger(v.examples) || (v.examples as number) < 0)
    throw new TrainerProtocolError(
      'train',
      `examples: expected an integer ≥ 0, got ${JSON.stringify(v.examples)}`,
    );
  return { examples: v.examples as number };
}

/**
 * Checks an `evaluate` answer: `k` results of finite accuracy in [0, 1], finite loss ≥ 0, and
 * `classes` per-class accuracies in [0, 1] or null. @throws TrainerProtocolError naming the field.
 */
export function checkEvaluateAnswer(
  v: Record<string, unknown>,
  k: number,
  classes: number,
): EvaluateResult[] {
  const fail = (detail: string): never => {
    throw new TrainerProtocolError('evaluate', detail);
  };
  if (!Array.isArray(v.results) || v.results.length !== k)
    fail(
      `results: expected ${k} result(s), one per parameter vector, got ${Array.isArray(v.results) ? v.results.length : JSON.stringify(v.results)}`,
    );
  const unit = (x: unknown) => typeof x === 'number' && x >= 0 && x <= 1;
  return (v.results as unknown[]).map((r, i) => {
    if (!isObject(r)) return fail(`results[${i}]: expected { accuracy, loss, perClass }`);
    if (!unit(r.accuracy))
      fail(`results[${i}].accuracy: expected a number in [0, 1], got ${JSON.stringify(r.accuracy)}`);
    if (!(typeof r.loss === 'number' && Number.isFinite(r.loss) && r.loss >= 0))
      fail(`results[${i}].loss: expected a finite number ≥ 0, got ${JSON.stringify(r.loss)}`);
    if (!Array.isArray(r.perClass) || r.perClass.length !== classes)
      fail(
        `results[${i}].perClass: expected ${classes} values (one per class), got ${JSON.stringify(r.perClass)?.slice(0, 80)}`,
      );
    (r.perClass as unknown[]).forEach((x, c) => {
      if (x !== null && !unit(x))
        fail(`results[${i}].perClass[${c}]: expected a number in [0, 1] or null, got ${JSON.stringify(x)}`);
    });
    return {
      accuracy: r.accuracy as number,
      loss: r.loss as number,
      perClass: r.perClass as (number | null)[],
    };
  });
}

/**
 * Checks a parameter vector or update before the silo uses it (quantizes, evaluates or sends a
 * sum containing it): length d, every value finite with |v| ≤ MAX_VECTOR_MAGNITUDE.
 * @throws TrainerProtocolError naming `op`, `what` and the first bad index.
 */
export function checkVector(op: string, what: string, v: Float32Array, d: number): Float32Array {
  if (v.length !== d)
    throw new TrainerProtocolError(op, `${what} has ${v.length} values, the model's layout ${d}`);
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    if (!(x >= -MAX_VECTOR_MAGNITUDE && x <= MAX_VECTOR_MAGNITUDE))
      throw new TrainerProtocolError(
        op,
        `${what}[${i}] is ${x}: ${Number.isNaN(x) ? 'NaN' : Number.isFinite(x) ? `beyond ±${MAX_VECTOR_MAGNITUDE.toExponential()}` : 'not finite'} (a diverged or broken trainer); values must be finite with |v| ≤ ${MAX_VECTOR_MAGNITUDE.toExponential()}`,
      );
  }
  return v;
}

/**
 * Reads the float32 vector of length `d` a trainer wrote to `path`: its size is checked against
 * d before anything is read (a 2 GiB file is refused by its size), then its header (`<f4`,
 * C order, shape [d] or [1, d]) and {@link checkVector}.
 * @throws TrainerProtocolError naming `op` and the problem.
 */
export function readVector(op: string, what: string, path: string, d: number): Float32Array {
  return readFloat32(op, what, path, d);
}

/** Largest parameter vector file read without a known d (an initial model): 2 GiB. */
export const MAX_VECTOR_FILE = 2 * 1024 ** 3;

/**
 * Reads a float32 vector file of any length up to {@link MAX_VECTOR_FILE} (an initial model
 * written by `fedscore init`), checked as {@link checkVector} checks.
 * @throws TrainerProtocolError naming `init`.
 */
export function readVectorFile(path: string): Float32Array {
  return readFloat32('init', path, path, undefined);
}

function readFloat32(op: string, what: string, path: string, d: number | undefined): Float32Array {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new TrainerProtocolError(
      op,
      `${what}: the trainer wrote no file (${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new TrainerProtocolError(op, `${what} file ${path} is not a regular file`);
    const most = d === undefined ? MAX_VECTOR_FILE : 4 * d + MAX_NPY_HEADER;
    if (st.size > most)
      throw new TrainerProtocolError(
        op,
        `${what} file is ${st.size} bytes; ${d === undefined ? 'a parameter vector file' : `${d} float32 values and a header`} take${d === undefined ? 's' : ''} at most ${most}: refused unread`,
      );
    const bytes = Buffer.alloc(st.size);
    let got = 0;
    while (got < st.size) {
      const n = readSync(fd, bytes, got, st.size - got, got);
      if (n === 0) break;
      got += n;
    }
    let arr: ReturnType<typeof parseNpy>;
    try {
      arr = parseNpy(bytes.subarray(0, got), `${what} file`);
    } catch (e) {
      throw new TrainerProtocolError(op, (e as Error).message);
    }
    const shapeOk = arr.shape.length === 1 || (arr.shape.length === 2 && arr.shape[0] === 1);
    if (arr.dtype !== 'float32' || !shapeOk)
      throw new TrainerProtocolError(
        op,
        `${what} file: expected float32 of shape (${d ?? 'd'},), got ${arr.descr} of shape (${arr.shape.join(', ')})`,
      );
    const v = arr.data as Float32Array;
    return checkVector(op, what, v, d ?? v.length);
  } finally {
    closeSync(fd);
  }
}
