/** Builders for small IDX and CIFAR-10 files used by the reader tests. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** IDX bytes: magic 0x0000, type, ndim, big-endian dims, then `payload` as given. */
export function idxBytes(type: number, dims: number[], payload: Uint8Array): Uint8Array {
  const head = new Uint8Array(4 + 4 * dims.length);
  const v = new DataView(head.buffer);
  head[2] = type;
  head[3] = dims.length;
  dims.forEach((d, k) => {
    v.setUint32(4 + 4 * k, d, false);
  });
  const out = new Uint8Array(head.length + payload.length);
  out.set(head);
  out.set(payload, head.length);
  return out;
}

/** n images h×w with pixel (i, r, c) = (i·7 + r·3 + c) mod 256, and labels i mod numClasses. */
export function imagesAndLabels(n: number, h: number, w: number, numClasses = 10) {
  const px = new Uint8Array(n * h * w);
  for (let i = 0; i < n; i++)
    for (let r = 0; r < h; r++)
      for (let c = 0; c < w; c++) px[(i * h + r) * w + c] = (i * 7 + r * 3 + c) % 256;
  const labels = new Uint8Array(n);
  for (let i = 0; i < n; i++) labels[i] = i % numClasses;
  return { images: idxBytes(0x08, [n, h, w], px), labels: idxBytes(0x08, [n], labels), px, y: labels };
}

export function tempDir(prefix = 'fedscore-data-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function write(dir: string, name: string, bytes: Uint8Array, gzip = false): string {
  const p = join(dir, name);
  writeFileSync(p, gzip ? gzipSync(bytes) : bytes);
  return p;
}

/** n CIFAR-10 binary records: record i has label i mod 10 and every pixel byte (i + channel) mod 256. */
export function cifar10Records(n: number): Uint8Array {
  const b = new Uint8Array(n * 3073);
  for (let i = 0; i < n; i++) {
    b[i * 3073] = i % 10;
    for (let ch = 0; ch < 3; ch++)
      b.fill((i + ch) % 256, i * 3073 + 1 + ch * 1024, i * 3073 + 1 + (ch + 1) * 1024);
  }
  return b;
}

/** A `cifar-10-batches-bin` directory: five training batches of `perBatch` records and a test batch. */
export function cifar10Dir(dir: string, perBatch: number, testRecords: number): string {
  for (let k = 1; k <= 5; k++) write(dir, `data_batch_${k}.bin`, cifar10Records(perBatch));
  write(dir, 'test_batch.bin', cifar10Records(testRecords));
  return dir;
}
