/**
 * The trainer protocol's known-answer vectors (test/vectors/trainer/protocol.json): each request
 * is valid under docs/trainer.schema.json and encodes to one JSON line; each answer line gives the
 * silo the vector's value or exactly its error. Plus the vector checks (length, NaN, ±∞, 1e30)
 * as properties, and a vector file's size refused before it is read.
 */
import {
  closeSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import Value from 'typebox/value';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeNpy } from '../../../src/data/npy.js';
import {
  checkEvaluateAnswer,
  checkLayoutAnswer,
  checkTrainAnswer,
  checkVector,
  encodeRequest,
  MAX_VECTOR_MAGNITUDE,
  parameterCountOf,
  parseAnswer,
  readVector,
  type TrainerOp,
  type TrainerRequest,
} from '../../../src/fl/learner/trainer-protocol.js';

const root = new URL('../../../', import.meta.url);
const schema = JSON.parse(readFileSync(new URL('docs/trainer.schema.json', root), 'utf8'));
const vectors = JSON.parse(readFileSync(new URL('test/vectors/trainer/protocol.json', root), 'utf8')) as {
  cases: {
    name: string;
    id: number;
    k?: number;
    request: TrainerRequest;
    answer: string;
    expect: { value?: unknown; parameters?: number; error?: string; message?: string };
  }[];
};
/** '' when `v` is valid under the schema's definition `def`, else the errors. */
const valid = (def: string, v: unknown) => {
  const sub = { ...schema, $ref: `#/definitions/${def}` };
  return [...Value.Errors(sub, v)].map((e) => `${e.instancePath} ${e.message}`).join('; ');
};

const dir = mkdtempSync(join(tmpdir(), 'fedscore-trainer-protocol-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the silo makes of an answer line: parseAnswer, then the operation's check. */
function silo(op: TrainerOp, id: number, line: string, k: number): unknown {
  const v = parseAnswer(op, id, line);
  if (op === 'layout') {
    const { protocol, layout, device, library } = checkLayoutAnswer(v);
    return { protocol, layout, device, library };
  }
  if (op === 'train') return checkTrainAnswer(v);
  if (op === 'evaluate') return checkEvaluateAnswer(v, k, 3);
  return {};
}

describe('trainer protocol vectors', () => {
  expect(vectors.cases.length).toBeGreaterThanOrEqual(10);
  it.each(vectors.cases)('$name', (c) => {
    const line = encodeRequest(c.id, c.request);
    expect(line.endsWith('\n') && !line.slice(0, -1).includes('\n')).toBe(true);
    const sent = JSON.parse(line);
    expect(sent).toEqual({ id: c.id, ...c.request });
    expect(valid(`${c.request.op}Request`, sent)).toBe('');
    if (c.expect.error === undefined) {
      expect(silo(c.request.op, c.id, c.answer, c.k ?? 1)).toEqual(c.expect.value);
      expect(valid(`${c.request.op}Answer`, JSON.parse(c.answer))).toBe('');
      if (c.expect.parameters !== undefined)
        expect(parameterCountOf((c.expect.value as { layout: [] }).layout)).toBe(c.expect.parameters);
    } else {
      let err: Error | undefined;
      try {
        silo(c.request.op, c.id, c.answer, c.k ?? 1);
      } catch (e) {
        err = e as Error;
      }
      expect(err?.name).toBe(c.expect.error);
      expect(err?.message).toBe(c.expect.message);
      if (c.expect.error === 'TrainerError') expect(valid('error', JSON.parse(c.answer))).toBe('');
    }
  });
});

describe('vector checks (the same before quantization as before evaluation)', () => {
  it('a vector passes iff it has length d and every value is finite with |v| ≤ the bound', () => {
    fc.assert(
      fc.property(
        fc.array(fc.float({ noDefaultInfinity: false, noNaN: false }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 20 }),
        (xs, d) => {
          const v = Float32Array.from(xs);
          const ok =
            v.length === d && v.every((x) => Number.isFinite(x) && Math.abs(x) <= MAX_VECTOR_MAGNITUDE);
          let passed = true;
          try {
            checkVector('train', 'the update', v, d);
          } catch (e) {
            passed = false;
            expect((e as Error).message).toMatch(/^trainer train: the update/);
          }
          expect(passed).toBe(ok);
        },
      ),
    );
  });

  it('reads a vector file back, and refuses a file larger than d values by its size, unread', () => {
    const good = join(dir, 'good.npy');
    writeFileSync(good, encodeNpy(Float32Array.from([1, -2, 3]), [3]));
    expect(Array.from(readVector('train', 'the update', good, 3))).toEqual([1, -2, 3]);
    expect(() => readVector('train', 'the update', good, 4)).toThrow(
      "trainer train: the update has 3 values, the model's layout 4",
    );
    const f64 = join(dir, 'f64.npy');
    writeFileSync(f64, encodeNpy(Float64Array.from([1, 2, 3]), [3]));
    expect(() => readVector('train', 'the update', f64, 3)).toThrow(
      'trainer train: the update file: expected float32 of shape (3,), got <f8 of shape (3)',
    );
    // A sparse 2 GiB file: refused by its size (reading it would allocate 2 GiB).
    const big = join(dir, 'big.npy');
    const fd = openSync(big, 'w');
    ftruncateSync(fd, 2 * 1024 ** 3);
    closeSync(fd);
    expect(() => readVector('train', 'the update', big, 3)).toThrow(
      'trainer train: the update file is 2147483648 bytes; 3 float32 values and a header take at most 4108: refused unread',
    );
    expect(() => readVector('train', 'the update', join(dir, 'none.npy'), 3)).toThrow(
      /^trainer train: the update: the trainer wrote no file \(.*ENOENT\)$/,
    );
  });
});
