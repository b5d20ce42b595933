import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { readImageFolder } from '../../src/data/image-folder.js';
import { tempDir } from './_files.js';

/** A PNG of the given raw pixels (c channels, row-major HWC). */
function png(px: Uint8Array, w: number, h: number, c: 1 | 3): Promise<Buffer> {
  return sharp(Buffer.from(px), { raw: { width: w, height: h, channels: c } })
    .png()
    .toBuffer();
}

/** Grey w×h image whose pixel k is (seed + 9k) mod 256. */
const grey = (seed: number, w: number, h: number) =>
  Uint8Array.from({ length: w * h }, (_, k) => (seed + 9 * k) % 256);

async function folder(files: Record<string, Buffer | string>): Promise<string> {
  const dir = tempDir('fedscore-images-');
  for (const [rel, bytes] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), bytes);
  }
  return dir;
}

describe('readImageFolder', () => {
  it('reads grey PNGs exactly, labels from numbered folders, ordered by label then path', async () => {
    const dir = await folder({
      '2/b.png': await png(grey(3, 3, 2), 3, 2, 1),
      '0/z.png': await png(grey(1, 3, 2), 3, 2, 1),
      '0/a.png': await png(grey(0, 3, 2), 3, 2, 1),
      '0/sub/c.PNG': await png(grey(5, 3, 2), 3, 2, 1),
      '0/.DS_Store': 'x',
    });
    const ds = await readImageFolder(dir, { inputShape: [2, 3, 1], numClasses: 4 });
    expect(ds.n).toBe(4);
    expect(ds.shape).toEqual([2, 3, 1]);
    expect(Array.from(ds.y)).toEqual([0, 0, 0, 2]);
    const expected = [grey(0, 3, 2), grey(5, 3, 2), grey(1, 3, 2), grey(3, 3, 2)];
    expect(Array.from(ds.x)).toEqual(expected.flatMap((g) => Array.from(g, (v) => Math.fround(v / 255))));
  });

  it('reads RGB JPEGs (lossy: to a tolerance) with class names, and turns RGB into grey for c = 1', async () => {
    const rgb = new Uint8Array(4 * 4 * 3);
    for (let k = 0; k < 16; k++) rgb.set([200, 40, 90], 3 * k);
    const jpeg = await sharp(Buffer.from(rgb), { raw: { width: 4, height: 4, channels: 3 } })
      .jpeg({ quality: 100 })
      .toBuffer();
    const dir = await folder({ 'dog/1.jpg': jpeg, 'cat/2.jpeg': await png(rgb, 4, 4, 3) });
    const ds = await readImageFolder(dir, {
      inputShape: [4, 4, 3],
      numClasses: 3,
      classNames: ['bird', 'cat', 'dog'],
    });
    expect(Array.from(ds.y)).toEqual([1, 2]);
    for (let k = 0; k < ds.x.length; k++)
      expect(Math.abs(ds.x[k]! - rgb[k % 48]! / 255)).toBeLessThan(4 / 255);
    const greyDs = await readImageFolder(dir, {
      inputShape: [4, 4, 1],
      numClasses: 3,
      classNames: ['bird', 'cat', 'dog'],
    });
    expect(greyDs.x.length).toBe(2 * 16);
    // sRGB → luminance: between the darkest and brightest channel.
    expect(greyDs.x[0]!).toBeGreaterThan(40 / 255);
    expect(greyDs.x[0]!).toBeLessThan(200 / 255);
  });

  it('takes sorted folder names as labels when they are exactly numClasses', async () => {
    const one = await png(grey(0, 2, 2), 2, 2, 1);
    const dir = await folder({ 'b/x.png': one, 'a/x.png': one });
    const ds = await readImageFolder(dir, { inputShape: [2, 2, 1], numClasses: 2 });
    expect(Array.from(ds.y)).toEqual([0, 1]);
    await expect(readImageFolder(dir, { inputShape: [2, 2, 1], numClasses: 3 })).rejects.toThrow(
      `${dir}: 2 class folders (a, b) for 3 classes; name the folders 0…2 or pass classNames`,
    );
  });

  it('refuses another size unless resize, and resizes to h×w', async () => {
    const dir = await folder({ '0/big.png': await png(grey(0, 8, 6), 8, 6, 1) });
    await expect(readImageFolder(dir, { inputShape: [3, 4, 1], numClasses: 1 })).rejects.toThrow(
      `${join(dir, '0/big.png')}: image is 8×6, the input shape is 4×3 (pass resize to resize it)`,
    );
    const ds = await readImageFolder(dir, { inputShape: [3, 4, 1], numClasses: 1, resize: true });
    expect(ds.x.length).toBe(12);
    expect(ds.source).toContain('resized');
  });

  it('names the file or folder of every problem', async () => {
    const ok = await png(grey(0, 2, 2), 2, 2, 1);
    const shape = { inputShape: [2, 2, 1] as const, numClasses: 3 };
    const bad = async (
      files: Record<string, Buffer | string>,
      message: (dir: string) => string,
      o = shape,
    ) => {
      const dir = await folder(files);
      await expect(readImageFolder(dir, o)).rejects.toThrow(message(dir));
    };
    await bad(
      { '0/a.png': ok.subarray(0, ok.length - 20) },
      (d) => `${join(d, '0/a.png')}: cannot decode image`,
    );
    await bad({ '0/a.png': 'not an image' }, (d) => `${join(d, '0/a.png')}: cannot decode image`);
    await bad({ '0/notes.txt': 'hello' }, (d) => `${join(d, '0/notes.txt')}: not a PNG or JPEG image`);
    await bad({ '7/a.png': ok }, (d) => `${join(d, '7')}: class 7 is outside [0, 3)`);
    await bad(
      { 'a.png': ok, '0/b.png': ok },
      (d) => `${join(d, 'a.png')}: images must sit in one sub-folder per class`,
    );
    await bad({ 'readme.txt': 'x' }, (d) => `${d}: no class sub-folders`);
    await bad({ '0/.keep': '' }, (d) => `${d}: holds no images`);
    await bad(
      { 'fish/a.png': ok },
      (d) => `${join(d, 'fish')}: 'fish' is not a class name (expected one of x, y, z)`,
      {
        ...shape,
        classNames: ['x', 'y', 'z'],
      } as typeof shape,
    );
    await expect(readImageFolder('/nonexistent/dir', shape)).rejects.toThrow(
      '/nonexistent/dir: cannot read directory (ENOENT)',
    );
    await expect(readImageFolder(tempDir(), { inputShape: [2, 2, 2], numClasses: 1 })).rejects.toThrow(
      'inputShape: image folders give 1 (grey) or 3 (RGB) channels, not 2',
    );
  });
});
