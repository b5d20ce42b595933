/** NumPy arrays: x.npy (features) and y.npy (labels), in a directory or as the `…x.npy` file. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Dataset } from '../dataset.js';
import { encodeNpy, readNpy, readNpyDataset } from '../npy.js';
import { type DataFormat, exampleShapeOf, kindOf, pairSource } from './format.js';

/** The labels file beside `…x.npy` (`…y.npy`) or `…images.npy` (`…labels.npy`). */
function npyLabelsFor(x: string): string | undefined {
  const m = /^(.*?)(x|X|images)\.npy$/.exec(basename(x));
  if (!m) return undefined;
  const y = m[2] === 'images' ? 'labels' : m[2] === 'X' ? 'Y' : 'y';
  return join(dirname(x), `${m[1]}${y}.npy`);
}

/** Writes `ds` as `dir`/x.npy (float32 [n, h, w, c]) and `dir`/y.npy (int32 [n]). */
export function writeNpyDataset(dir: string, ds: Dataset): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'x.npy'), encodeNpy(Float32Array.from(ds.x), [ds.n, ...ds.shape]));
  writeFileSync(join(dir, 'y.npy'), encodeNpy(Int32Array.from(ds.y), [ds.n]));
}

export const npyFormat: DataFormat = {
  name: 'npy',
  detectionRank: 10,
  path: 'a directory with `x.npy` and `y.npy`, or the `…x.npy` file (`…y.npy` beside it)',
  writes: 'x.npy (float32 [N, h, w, c]) and y.npy (int32 labels)',
  synchronous: true,
  inDirectory(dir, names, forced) {
    const has = (n: string) => names.includes(n) && kindOf(join(dir, n)) === 'file';
    if (has('x.npy') || has('y.npy')) {
      if (!has('x.npy')) throw new Error(`${dir}: has y.npy but no x.npy`);
      return pairSource('npy', '.npy', join(dir, 'x.npy'), join(dir, 'y.npy'));
    }
    if (forced) throw new Error(`${dir}: no x.npy and y.npy in this directory`);
    return undefined;
  },
  inFile(file, forced) {
    if (!forced && !/\.npy$/i.test(basename(file))) return undefined;
    const labels = npyLabelsFor(file);
    if (!labels)
      throw new Error(
        `${file}: expected the features file x.npy (labels in y.npy beside it), or their directory`,
      );
    return pairSource('npy', '.npy', file, labels);
  },
  read: (src, o) =>
    readNpyDataset(src.path, src.labels!, {
      inputShape: o.inputShape,
      numClasses: o.numClasses,
      name: o.name,
      ...(o.layout ? { layout: o.layout } : {}),
    }),
  exampleShape: (src) => exampleShapeOf(src.path, readNpy(src.path).shape),
  async write(dir, ds) {
    writeNpyDataset(dir, ds);
    return dir;
  },
};
