/** An image folder: one sub-folder per class of PNG/JPEG images. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { readImageFolder } from '../image-folder.js';
import { checkPixels, type DataFormat, kindOf, pixelBytes } from './format.js';

export const imageFolderFormat: DataFormat = {
  name: 'image-folder',
  // Last: any folder with sub-folders is one.
  detectionRank: 90,
  path: 'a directory of class sub-folders with PNG/JPEG images',
  writes: 'one folder per class (0, 1, …) of PNG images',
  synchronous: false,
  inDirectory(dir, names) {
    // Asked last among the directory formats: any sub-folder makes it one (forced or not).
    return names.some((n) => !n.startsWith('.') && kindOf(join(dir, n)) === 'dir')
      ? { format: 'image-folder', path: dir }
      : undefined;
  },
  inFile(file, forced) {
    if (forced) throw new Error(`${file}: is a file; image folders are directories`);
    return undefined;
  },
  read: (src, o) =>
    readImageFolder(src.path, {
      inputShape: o.inputShape,
      numClasses: o.numClasses,
      name: o.name,
      ...(o.resize !== undefined ? { resize: o.resize } : {}),
      ...(o.classNames ? { classNames: o.classNames } : {}),
      ...(o.maxPixels !== undefined ? { maxPixels: o.maxPixels } : {}),
    }),
  async write(dir, ds) {
    checkPixels('image-folder', ds);
    const [h, w, c] = ds.shape;
    if (c !== 1 && c !== 3)
      throw new RangeError(`--format: image-folder needs 1 or 3 channels, the data have ${c}`);
    mkdirSync(dir, { recursive: true });
    const px = pixelBytes(ds);
    const f = h * w * c;
    for (let i = 0; i < ds.n; i++) {
      const folder = join(dir, String(ds.y[i]));
      mkdirSync(folder, { recursive: true });
      await sharp(Buffer.from(px.subarray(i * f, (i + 1) * f)), { raw: { width: w, height: h, channels: c } })
        .png()
        .toFile(join(folder, `${String(i).padStart(5, '0')}.png`));
    }
    return dir;
  },
};
