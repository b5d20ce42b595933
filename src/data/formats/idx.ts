/** IDX files as MNIST ships them: an images file and a labels file (gzipped or not). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readIdx, readIdxDataset } from '../idx.js';
import { checkPixels, type DataFormat, exampleShapeOf, kindOf, pairSource, pixelBytes } from './format.js';

const IDX_IMAGES = /images.*idx|idx.*images/i;

/** The labels file beside an IDX images file: images → labels, idx3 → idx1. */
function idxLabelsFor(images: string): string {
  const name = basename(images).replace(/images/i, (m) => (m === 'IMAGES' ? 'LABELS' : 'labels'));
  return join(dirname(images), name.replace(/idx3/i, 'idx1'));
}

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

export const idxFormat: DataFormat = {
  name: 'idx',
  detectionRank: 20,
  path: 'a directory with one `*images*idx*` / `*labels*idx*` pair (gz or not), or the images file',
  writes: 'train-images-idx3-ubyte, train-labels-idx1-ubyte (IDX, as MNIST ships)',
  synchronous: true,
  inDirectory(dir, names, forced) {
    const images = names.filter((n) => IDX_IMAGES.test(n) && kindOf(join(dir, n)) === 'file');
    if (images.length > 1)
      throw new Error(`${dir}: several IDX image files (${images.join(', ')}); pass the one to read`);
    if (images.length === 1) {
      const file = join(dir, images[0]!);
      return pairSource('idx', 'IDX', file, idxLabelsFor(file));
    }
    if (forced) throw new Error(`${dir}: no IDX images file (a name with 'images' and 'idx')`);
    return undefined;
  },
  inFile(file, forced) {
    if (!forced && !IDX_IMAGES.test(basename(file))) return undefined;
    const labels = idxLabelsFor(file);
    if (labels === file) throw new Error(`${file}: expected the IDX images file (a name with 'images')`);
    return pairSource('idx', 'IDX', file, labels);
  },
  read(src, o) {
    const ds = readIdxDataset(src.path, src.labels!, {
      name: o.name,
      source: `idx:${src.path}`,
      numClasses: o.numClasses,
      ...(o.maxBytes !== undefined ? { maxBytes: o.maxBytes } : {}),
    });
    const [h, w, c] = ds.shape;
    const want = o.inputShape;
    if (h !== want[0] || w !== want[1] || c !== want[2])
      throw new Error(
        `${src.path}: images of shape ${h}×${w}×${c} do not fit the input shape ${want.join('×')}`,
      );
    if (ds.n === 0) throw new Error(`${src.path}: holds no examples`);
    return ds;
  },
  exampleShape: (src) => exampleShapeOf(src.path, readIdx(src.path).dims),
  async write(dir, ds) {
    checkPixels('idx', ds);
    mkdirSync(dir, { recursive: true });
    const [h, w, c] = ds.shape;
    const dims = c === 1 ? [ds.n, h, w] : [ds.n, h, w, c];
    writeFileSync(join(dir, 'train-images-idx3-ubyte'), idxBytes(0x08, dims, pixelBytes(ds)));
    writeFileSync(join(dir, 'train-labels-idx1-ubyte'), idxBytes(0x08, [ds.n], Uint8Array.from(ds.y)));
    return dir;
  },
};
