/**
 * protocol/round-context.ts: the two digests each silo signs (issue 27) change with every byte of
 * the model, with the order, ids and exact bits of the weights, and are domain-separated from each
 * other and from a plain SHA-256.
 */
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../crypto/digest.js';
import { modelContextDigest, roundContext, weightsContextDigest } from '../../protocol/round-context.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('round context digests', () => {
  it('the model digest covers every parameter bit and the length', () => {
    const m = Float32Array.from([0.5, -1, 3]);
    const d = hex(modelContextDigest(m));
    expect(hex(modelContextDigest(m.slice()))).toBe(d);
    expect(hex(modelContextDigest(Float32Array.from([0.5, -1, 3.0000002])))).not.toBe(d);
    expect(hex(modelContextDigest(Float32Array.from([0.5, -1, 3, 0])))).not.toBe(d);
    expect(hex(modelContextDigest(Float32Array.from([-0])))).not.toBe(
      hex(modelContextDigest(Float32Array.from([0]))),
    );
    expect(hex(modelContextDigest(m))).not.toBe(hex(sha256(new Uint8Array(m.buffer))));
  });

  it('the weights digest covers the ids, their order and the Float64 weights', () => {
    const d = hex(weightsContextDigest([0, 2], [1, 0.25]));
    expect(hex(weightsContextDigest([0, 2], [1, 0.25]))).toBe(d);
    expect(hex(weightsContextDigest([2, 0], [0.25, 1]))).not.toBe(d);
    expect(hex(weightsContextDigest([0, 1], [1, 0.25]))).not.toBe(d);
    expect(hex(weightsContextDigest([0, 2], [1, 0.25 + 2 ** -54]))).not.toBe(d);
  });

  it('the two digests are domain-separated', () => {
    // 8 zero bytes read as 2 Float32 zeros or as a Float64 zero: the tags keep them apart.
    const c = roundContext(new Float32Array(0), [], []);
    expect(hex(c.model)).not.toBe(hex(c.weights));
  });

  it('refuses mismatched lengths, non-byte ids and non-finite weights, naming the field', () => {
    expect(() => weightsContextDigest([0, 1], [1])).toThrow(/^weights: 1 weights for 2 selected silos$/);
    expect(() => weightsContextDigest([256], [1])).toThrow(/^selected\[0\]: expected a silo id in 0\.\.255/);
    expect(() => weightsContextDigest([0], [Number.NaN])).toThrow(/^weights\[0\]: expected a finite number/);
    expect(() => modelContextDigest([1] as unknown as Float32Array)).toThrow(TypeError);
  });
});
