/** src/data/digest.ts: the digest covers features, labels, shape and classes, not names. */
import { describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/data/dataset.js';
import { datasetDigest } from '../../src/data/digest.js';

const ds: Dataset = {
  x: Float32Array.from([0, 0.25, 0.5, 1, 0.75, 0.125]),
  y: Int32Array.from([0, 2, 1]),
  n: 3,
  shape: [1, 2, 1],
  numClasses: 3,
  name: 'a',
  source: 'test',
};

describe('datasetDigest', () => {
  it('is the SHA-256 of the canonical encoding (recomputed independently)', async () => {
    const { createHash } = await import('node:crypto');
    const expected = createHash('sha256')
      .update('fedscore/dataset/v1 n=3 shape=1x2x1 classes=3\n')
      .update(Buffer.from(ds.x.buffer))
      .update(Buffer.from(Int32Array.from([0, 2, 1]).buffer))
      .digest('hex');
    expect(datasetDigest(ds)).toBe(expected);
    expect(datasetDigest(ds)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores name and source and the label array type, but not any value, shape or class count', () => {
    const d = datasetDigest(ds);
    expect(datasetDigest({ ...ds, name: 'b', source: 'elsewhere' })).toBe(d);
    expect(datasetDigest({ ...ds, y: Uint8Array.from([0, 2, 1]) })).toBe(d);
    const x = ds.x.slice();
    x[5] = 0.25;
    expect(datasetDigest({ ...ds, x })).not.toBe(d);
    expect(datasetDigest({ ...ds, y: Int32Array.from([0, 2, 2]) })).not.toBe(d);
    expect(datasetDigest({ ...ds, shape: [2, 1, 1] })).not.toBe(d);
    expect(datasetDigest({ ...ds, numClasses: 4 })).not.toBe(d);
  });

  it('refuses an inconsistent dataset, naming the field', () => {
    expect(() => datasetDigest({ ...ds, n: 4 })).toThrow(/^x: /);
  });
});
