/**
 * Image-folder data sets: one sub-folder per class holding PNG or JPEG files (the layout of
 * torchvision's `ImageFolder` and Keras's `image_dataset_from_directory`):
 *
 *   silo-data/0/img001.png   silo-data/cat/a.jpg
 *   silo-data/1/img002.png   silo-data/dog/b.jpg
 *
 * Which label a folder is: its index in `classNames` when the consortium lists class names;
 * else its number when every folder is named by a class number (a silo may lack classes);
 * else its rank among the sorted folder names, which then must be exactly numClasses folders.
 * Examples are ordered by label, then by path (code-point order), so the same folder gives
 * the same data set, and the same digest, everywhere the decoder is the same build.
 *
 * Decoding is sharp's (libvips; prebuilt for each platform as the npm packages @img/sharp-*,
 * no download step at install), loaded on first use. Images are auto-oriented (EXIF), an alpha
 * channel is flattened onto black, and they are converted to grey (c = 1) or sRGB (c = 3). An
 * image whose size is not the consortium's h×w is refused, or resized to it (stretched, no
 * crop) with `resize: true`. Pixels are scaled to [0, 1] by 1/255. A truncated or corrupt
 * image is an error naming the file.
 *
 * Bounds (limits.ts; issue 27, A5: nine 16383² PNGs of 784 KB each had taken 3.0 GB): each
 * image's size is read from its header (sharp's metadata, nothing decoded) first; one above
 * `maxPixels` (default MAX_IMAGE_PIXELS, 4096²) is refused, and so, without `resize`, is one of
 * another size than h×w — before any image is decoded. Decoding runs at most IMAGES_IN_FLIGHT
 * images and MAX_PIXELS_IN_FLIGHT pixels at once, with sharp's `limitInputPixels` at `maxPixels`.
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Dataset } from './dataset.js';
import { checkBound, IMAGES_IN_FLIGHT, MAX_IMAGE_PIXELS, MAX_PIXELS_IN_FLIGHT } from './limits.js';

/** Options for {@link readImageFolder}. */
export interface ImageFolderOptions {
  /** The consortium's input shape [h, w, c]; c is 1 (grey) or 3 (RGB). */
  inputShape: readonly [number, number, number];
  numClasses: number;
  /** Resize images of another size to h×w (default false: refuse them). */
  resize?: boolean;
  /** Class names in label order; sub-folders are then named by these. */
  classNames?: readonly string[];
  name?: string;
  /** Largest image, width × height, read from its header before decoding (default 4096²). */
  maxPixels?: number;
}

const IMAGE = /\.(png|jpe?g)$/i;

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch (e) {
    throw new Error(
      `${dir}: cannot read directory (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
}

const isDir = (p: string) => statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;

/** Image files under `dir`, recursively, sorted by path; other files are refused by name. */
function imagesUnder(dir: string, root: string): string[] {
  const out: string[] = [];
  for (const name of listDir(dir)) {
    if (name.startsWith('.')) continue;
    const p = join(dir, name);
    if (isDir(p)) out.push(...imagesUnder(p, root));
    else if (IMAGE.test(name)) out.push(p);
    else
      throw new Error(
        `${p}: not a PNG or JPEG image (class folders of ${root} may hold only .png, .jpg, .jpeg)`,
      );
  }
  return out;
}

/** The class folders of `dir` and their labels (see the module comment). */
export function classFolders(
  dir: string,
  numClasses: number,
  classNames?: readonly string[],
): { folder: string; label: number }[] {
  const names = listDir(dir).filter((n) => !n.startsWith('.') && isDir(join(dir, n)));
  const stray = listDir(dir).find((n) => IMAGE.test(n) && !isDir(join(dir, n)));
  if (stray)
    throw new Error(`${join(dir, stray)}: images must sit in one sub-folder per class, not in ${dir} itself`);
  if (names.length === 0)
    throw new Error(`${dir}: no class sub-folders (expected one folder of images per class)`);
  if (classNames) {
    if (classNames.length !== numClasses)
      throw new RangeError(`classNames: expected ${numClasses} names, got ${classNames.length}`);
    return names.map((folder) => {
      const label = classNames.indexOf(folder);
      if (label < 0)
        throw new Error(
          `${join(dir, folder)}: '${folder}' is not a class name (expected one of ${classNames.join(', ')})`,
        );
      return { folder, label };
    });
  }
  if (names.every((n) => /^\d+$/.test(n)))
    return names
      .map((folder) => {
        const label = Number(folder);
        if (label >= numClasses)
          throw new Error(`${join(dir, folder)}: class ${label} is outside [0, ${numClasses})`);
        return { folder, label };
      })
      .sort((a, b) => a.label - b.label);
  if (names.length !== numClasses)
    throw new Error(
      `${dir}: ${names.length} class folders (${names.join(', ')}) for ${numClasses} classes; name the folders 0…${numClasses - 1} or pass classNames`,
    );
  return names.map((folder, label) => ({ folder, label }));
}

type Sharp = typeof import('sharp').default;

async function loadSharp(): Promise<Sharp> {
  try {
    return (await import('sharp')).default;
  } catch (e) {
    throw new Error(
      `image folders need the package sharp, which did not load on this platform (${(e as Error).message}); convert the images to .npy instead`,
    );
  }
}

/**
 * A data set from an image folder (see the module comment). Throws Error naming the file or
 * folder: no class folders, an unknown class folder, a file that is not an image, an image
 * that does not decode, or one of another size without `resize`, no images.
 */
export async function readImageFolder(dir: string, options: ImageFolderOptions): Promise<Dataset> {
  const { inputShape, numClasses } = options;
  const [h, w, c] = inputShape;
  if (c !== 1 && c !== 3)
    throw new RangeError(`inputShape: image folders give 1 (grey) or 3 (RGB) channels, not ${c}`);
  const files: { path: string; label: number }[] = [];
  for (const { folder, label } of classFolders(dir, numClasses, options.classNames))
    for (const path of imagesUnder(join(dir, folder), dir)) files.push({ path, label });
  if (files.length === 0) throw new Error(`${dir}: holds no images (.png, .jpg, .jpeg) in its class folders`);
  const maxPixels = checkBound('maxPixels', options.maxPixels ?? MAX_IMAGE_PIXELS);
  const sharp = await loadSharp();
  const f = h * w * c;
  const n = files.length;
  // 1. Every image's size from its header (nothing decoded), checked before any decoding.
  const pixels = new Float64Array(n);
  for (let start = 0; start < n; start += IMAGES_IN_FLIGHT) {
    const batch: Promise<void>[] = [];
    for (let i = start; i < Math.min(n, start + IMAGES_IN_FLIGHT); i++)
      batch.push(
        (async () => {
          const { path } = files[i]!;
          let meta: { width?: number | undefined; height?: number | undefined };
          try {
            meta = await sharp(path, { limitInputPixels: false }).metadata();
          } catch (e) {
            throw new Error(`${path}: cannot decode image (${(e as Error).message})`);
          }
          const { width = 0, height = 0 } = meta;
          if (width * height > maxPixels)
            throw new Error(
              `${path}: image is ${width}×${height} = ${width * height} pixels, above the limit of ${maxPixels} (maxPixels, ${Math.round(Math.sqrt(maxPixels))}²); refused before decoding`,
            );
          if (!options.resize && (width !== w || height !== h))
            throw new Error(
              `${path}: image is ${width}×${height}, the input shape is ${w}×${h} (pass resize to resize it)`,
            );
          pixels[i] = Math.max(1, width * height);
        })(),
      );
    await firstInOrder(batch);
  }
  // 2. Decoding, a bounded number of images and pixels at once.
  const x = new Float32Array(n * f);
  const y = new Int32Array(n);
  const decode = async (i: number) => {
    const { path, label } = files[i]!;
    let pipeline = sharp(path, { failOn: 'warning', limitInputPixels: maxPixels }).autoOrient().flatten();
    if (options.resize) pipeline = pipeline.resize(w, h, { fit: 'fill' });
    pipeline = c === 1 ? pipeline.grayscale() : pipeline.toColourspace('srgb');
    let out: { data: Buffer; info: { width: number; height: number; channels: number } };
    try {
      out = await pipeline.raw().toBuffer({ resolveWithObject: true });
    } catch (e) {
      throw new Error(`${path}: cannot decode image (${(e as Error).message})`);
    }
    const { width, height, channels } = out.info;
    if (width !== w || height !== h)
      throw new Error(
        `${path}: image is ${width}×${height}, the input shape is ${w}×${h} (pass resize to resize it)`,
      );
    if (channels !== c) throw new Error(`${path}: decoded to ${channels} channels, expected ${c}`);
    for (let k = 0; k < f; k++) x[i * f + k] = out.data[k]! / 255;
    y[i] = label;
  };
  for (let start = 0; start < n; ) {
    const batch: Promise<void>[] = [];
    let budget = 0;
    let i = start;
    while (
      i < n &&
      batch.length < IMAGES_IN_FLIGHT &&
      (batch.length === 0 || budget + pixels[i]! <= MAX_PIXELS_IN_FLIGHT)
    ) {
      budget += pixels[i]!;
      batch.push(decode(i++));
    }
    await firstInOrder(batch);
    start = i;
  }
  return {
    x,
    y,
    n,
    shape: [h, w, c],
    numClasses,
    name: options.name ?? basename(dir),
    source: `image-folder:${dir} (${n} images${options.resize ? ', resized' : ''})`,
  };
}

/**
 * Waits for every promise of a batch and throws the first failure in file order, so the error
 * names the same image whichever decode finished first.
 */
async function firstInOrder(batch: readonly Promise<void>[]): Promise<void> {
  const settled = await Promise.allSettled(batch);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
