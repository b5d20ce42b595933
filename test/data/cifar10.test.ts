import { describe, expect, it } from 'vitest';
import { CIFAR10_RECORD_BYTES, loadCifar10, parseCifar10, readCifar10Batch } from '../../src/data/cifar10.js';
import { checkDataset } from '../../src/data/dataset.js';
import { tempDir, write } from './_files.js';

/** n records; record i has label i mod 10 and channel ch, pixel p = (i + 3·ch + p) mod 256. */
function records(n: number): Uint8Array {
  const b = new Uint8Array(n * CIFAR10_RECORD_BYTES);
  for (let i = 0; i < n; i++) {
    const r = i * CIFAR10_RECORD_BYTES;
    b[r] = i % 10;
    for (let ch = 0; ch < 3; ch++)
      for (let p = 0; p < 1024; p++) b[r + 1 + ch * 1024 + p] = (i + 3 * ch + p) % 256;
  }
  return b;
}

describe('CIFAR-10 binary reader', () => {
  it('decodes labels and converts planar RGB to HWC in [0, 1]', () => {
    const ds = parseCifar10(records(4), 'mem');
    checkDataset(ds, true);
    expect(ds.shape).toEqual([32, 32, 3]);
    expect(Array.from(ds.y)).toEqual([0, 1, 2, 3]);
    // Example 2, row 1, column 5 → plane pixel 37; channel 2 (blue) = (2 + 6 + 37) mod 256.
    expect(ds.x[2 * 3072 + (1 * 32 + 5) * 3 + 2]).toBeCloseTo(45 / 255, 7);
    expect(ds.x[3 * 3072 + (31 * 32 + 31) * 3 + 0]).toBeCloseTo(((3 + 1023) % 256) / 255, 7);
  });

  it('rejects truncated files and bad labels, naming the file', () => {
    const dir = tempDir();
    const short = write(dir, 'short.bin', records(2).subarray(0, 2 * CIFAR10_RECORD_BYTES - 5));
    expect(() => readCifar10Batch(short)).toThrow(
      `${short}: size 6141 bytes is not a positive multiple of 3073`,
    );
    const bad = records(3);
    bad[2 * CIFAR10_RECORD_BYTES] = 10;
    const badPath = write(dir, 'bad.bin', bad);
    expect(() => readCifar10Batch(badPath)).toThrow(
      `${badPath}: record 2 has label 10, outside 0–9 (offset 6146)`,
    );
    expect(() => readCifar10Batch(`${dir}/none.bin`)).toThrow(
      `${dir}/none.bin: cannot read CIFAR-10 batch (ENOENT)`,
    );
    expect(() => parseCifar10(new Uint8Array(0), 'empty')).toThrow('empty: size 0 bytes');
  });

  it('loads a batches directory (5 train batches + test), reporting the missing file', () => {
    const dir = tempDir();
    for (let k = 1; k <= 5; k++) write(dir, `data_batch_${k}.bin`, records(k));
    expect(() => loadCifar10(dir)).toThrow(`${dir}/test_batch.bin: cannot read CIFAR-10 batch`);
    write(dir, 'test_batch.bin', records(2));
    const { train, test } = loadCifar10(dir);
    expect(train.n).toBe(15);
    expect(test.n).toBe(2);
    expect(train.name).toBe('cifar10-train');
    // The 2nd batch starts at example 1; its first record has label 0.
    expect(Array.from(train.y.subarray(0, 4))).toEqual([0, 0, 1, 0]);
    checkDataset(train, true);
  });
});
