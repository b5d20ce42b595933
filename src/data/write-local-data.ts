/**
 * Writes a data set in one of the formats `fedscore client --data` reads (local-data.ts): an IDX
 * pair, x.npy + y.npy, a CSV file with a `label` column, or an image folder of PNGs (one
 * sub-folder per class). `fedscore init` writes each silo's split this way; what it writes reads
 * back with loadLocalData to the same examples, in order (pixels of IDX and PNG files are bytes:
 * values in [0, 1] are rounded to multiples of 1/255).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import type { Dataset } from './dataset.js';
import type { LocalFormat } from './local-data.js';
import { encodeNpy } from './npy.js';

/** An IDX file: magic (0, 0, type, rank), big-endian dimensions, then the payload. */
export function idxBytes(type: number, dims: readonly number[], payload: Uint8Array): Uint8Array {
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

const pixels = (ds: Dataset) => Uint8Array.from(ds.x, (v) => Math.max(0, Math.min(255, Math.round(v * 255))));

/** The file names a format writes, for a README. */
export const FORMAT_FILES: Record<LocalFormat, string> = {
  idx: 'train-images-idx3-ubyte, train-labels-idx1-ubyte (IDX, as MNIST ships)',
  npy: 'x.npy (float32 [N, h, w, c]) and y.npy (int32 labels)',
  csv: 'silo.csv (one column per feature, then `label`)',
  'image-folder': 'one folder per class (0, 1, …) of PNG images',
};

/**
 * Writes `ds` under `dir` in `format`. IDX and image folders store pixels as bytes, so they need
 * values in [0, 1] (image data).
 * @returns the path to give `--data` (the directory, or the CSV file).
 * @throws RangeError naming the format when the data cannot be stored in it.
 */
export async function writeLocalData(dir: string, ds: Dataset, format: LocalFormat): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const [h, w, c] = ds.shape;
  if ((format === 'idx' || format === 'image-folder') && ds.x.some((v) => v < 0 || v > 1))
    throw new RangeError(
      `--format: ${format} stores pixels in [0, 1]; these data have other values (use npy or csv)`,
    );
  if (format === 'image-folder' && c !== 1 && c !== 3)
    throw new RangeError(`--format: image-folder needs 1 or 3 channels, the data have ${c}`);
  switch (format) {
    case 'idx': {
      const dims = c === 1 ? [ds.n, h, w] : [ds.n, h, w, c];
      writeFileSync(join(dir, 'train-images-idx3-ubyte'), idxBytes(0x08, dims, pixels(ds)));
      writeFileSync(join(dir, 'train-labels-idx1-ubyte'), idxBytes(0x08, [ds.n], Uint8Array.from(ds.y)));
      return dir;
    }
    case 'npy':
      writeFileSync(join(dir, 'x.npy'), encodeNpy(Float32Array.from(ds.x), [ds.n, h, w, c]));
      writeFileSync(join(dir, 'y.npy'), encodeNpy(Int32Array.from(ds.y), [ds.n]));
      return dir;
    case 'csv': {
      const f = h * w * c;
      const header = [...Array.from({ length: f }, (_, k) => `f${k}`), 'label'].join(',');
      const rows = Array.from({ length: ds.n }, (_, i) =>
        [...Array.from(ds.x.subarray(i * f, (i + 1) * f), (v) => String(v)), String(ds.y[i])].join(','),
      );
      const path = join(dir, 'silo.csv');
      writeFileSync(path, `${header}\n${rows.join('\n')}\n`);
      return path;
    }
    case 'image-folder': {
      const px = pixels(ds);
      const f = h * w * c;
      for (let i = 0; i < ds.n; i++) {
        const folder = join(dir, String(ds.y[i]));
        mkdirSync(folder, { recursive: true });
        await sharp(Buffer.from(px.subarray(i * f, (i + 1) * f)), {
          raw: { width: w, height: h, channels: c as 1 | 3 },
        })
          .png()
          .toFile(join(folder, `${String(i).padStart(5, '0')}.png`));
      }
      return dir;
    }
  }
}

/** Writes `ds` as `dir`/x.npy (float32 [n, h, w, c]) and `dir`/y.npy (int32 [n]). */
export function writeNpyDataset(dir: string, ds: Dataset): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'x.npy'), encodeNpy(Float32Array.from(ds.x), [ds.n, ...ds.shape]));
  writeFileSync(join(dir, 'y.npy'), encodeNpy(Int32Array.from(ds.y), [ds.n]));
}
