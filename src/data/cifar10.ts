/**
 * CIFAR-10, binary version (Krizhevsky 2009, "cifar-10-batches-bin"): each record is one label
 * byte (0–9) and 3072 pixel bytes — 1024 red, then 1024 green, then 1024 blue, each a 32×32
 * image in row-major order. Five training batches `data_batch_1.bin` … `data_batch_5.bin`
 * (10,000 records each) and `test_batch.bin`. Records are converted to the HWC layout of
 * {@link Dataset} (pixel (r, c) channel k at (r·32 + c)·3 + k) and scaled by /255.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Dataset } from './dataset.js';

const SIDE = 32;
const PIXELS = SIDE * SIDE;
/** Bytes per record: 1 label + 3·32·32 pixels. */
export const CIFAR10_RECORD_BYTES = 1 + 3 * PIXELS;

/**
 * Decodes CIFAR-10 binary records. `file` names the source in errors. Throws Error when the size
 * is not a positive multiple of 3073 bytes or a label is outside 0–9.
 */
export function parseCifar10(
  bytes: Uint8Array,
  file = '<bytes>',
  name = 'cifar10',
  source = `file:${file}`,
): Dataset {
  if (bytes.length === 0 || bytes.length % CIFAR10_RECORD_BYTES !== 0)
    throw new Error(
      `${file}: size ${bytes.length} bytes is not a positive multiple of ${CIFAR10_RECORD_BYTES} (1 label + 3072 pixel bytes per record); truncated or not a CIFAR-10 binary batch`,
    );
  const n = bytes.length / CIFAR10_RECORD_BYTES;
  const y = new Uint8Array(n);
  const x = new Float32Array(n * 3 * PIXELS);
  for (let i = 0; i < n; i++) {
    const rec = i * CIFAR10_RECORD_BYTES;
    const label = bytes[rec]!;
    if (label > 9) throw new Error(`${file}: record ${i} has label ${label}, outside 0–9 (offset ${rec})`);
    y[i] = label;
    const out = i * 3 * PIXELS;
    for (let ch = 0; ch < 3; ch++) {
      const plane = rec + 1 + ch * PIXELS;
      for (let p = 0; p < PIXELS; p++) x[out + p * 3 + ch] = bytes[plane + p]! / 255;
    }
  }
  return { x, y, n, shape: [SIDE, SIDE, 3], numClasses: 10, name, source };
}

/** Reads one CIFAR-10 binary batch file. Throws Error naming the file when it is missing or malformed. */
export function readCifar10Batch(path: string, name = 'cifar10', source = `file:${path}`): Dataset {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new Error(
      `${path}: cannot read CIFAR-10 batch (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  return parseCifar10(bytes, path, name, source);
}

/**
 * Loads CIFAR-10 from a `cifar-10-batches-bin` directory: train = data_batch_1..5 concatenated,
 * test = test_batch. Throws Error naming the first missing or malformed file.
 */
export function loadCifar10(dir: string): { train: Dataset; test: Dataset } {
  const parts = [1, 2, 3, 4, 5].map((k) => readCifar10Batch(join(dir, `data_batch_${k}.bin`)));
  const n = parts.reduce((s, p) => s + p.n, 0);
  const x = new Float32Array(n * 3 * PIXELS);
  const y = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    x.set(p.x, o * 3 * PIXELS);
    y.set(p.y, o);
    o += p.n;
  }
  const source = `file:${dir}`;
  return {
    train: { x, y, n, shape: [SIDE, SIDE, 3], numClasses: 10, name: 'cifar10-train', source },
    test: readCifar10Batch(join(dir, 'test_batch.bin'), 'cifar10-test', source),
  };
}
