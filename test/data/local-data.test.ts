import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { datasetDigest } from '../../src/data/digest.js';
import { DATA_FORMAT_NAMES } from '../../src/data/formats/registry.js';
import { detectLocalFormat, loadLocalData } from '../../src/data/local-data.js';
import { encodeNpy } from '../../src/data/npy.js';
import { imagesAndLabels, tempDir, write } from './_files.js';

const shape = { inputShape: [3, 4, 1] as const, numClasses: 10 };
const { images, labels, px, y } = imagesAndLabels(6, 3, 4);

/** The same 6 examples as IDX (gz), .npy, CSV and an image folder. */
async function allFormats() {
  const root = tempDir('fedscore-local-');
  const idx = join(root, 'idx');
  mkdirSync(idx);
  write(idx, 'train-images-idx3-ubyte.gz', images, true);
  write(idx, 'train-labels-idx1-ubyte.gz', labels, true);
  const npy = join(root, 'npy');
  mkdirSync(npy);
  write(npy, 'x.npy', encodeNpy(px, [6, 3, 4]));
  write(npy, 'y.npy', encodeNpy(Int32Array.from(y), [6]));
  const header = [...Array.from({ length: 12 }, (_, k) => `p${k}`), 'label'].join(',');
  const rows = Array.from({ length: 6 }, (_, i) =>
    [...Array.from(px.subarray(i * 12, (i + 1) * 12), (v) => v / 255), y[i]].join(','),
  );
  const csv = join(root, 'tab.csv');
  writeFileSync(csv, `${header}\n${rows.join('\n')}\n`);
  const img = join(root, 'img');
  for (let i = 0; i < 6; i++) {
    mkdirSync(join(img, String(y[i])), { recursive: true });
    const png = await sharp(Buffer.from(px.subarray(i * 12, (i + 1) * 12)), {
      raw: { width: 4, height: 3, channels: 1 },
    })
      .png()
      .toBuffer();
    writeFileSync(join(img, String(y[i]), `${i}.png`), png);
  }
  return { root, idx, npy, csv, img };
}

describe('detectLocalFormat', () => {
  it('recognizes each layout from the path', async () => {
    const p = await allFormats();
    expect(detectLocalFormat(p.npy)).toEqual({
      format: 'npy',
      path: join(p.npy, 'x.npy'),
      labels: join(p.npy, 'y.npy'),
    });
    expect(detectLocalFormat(join(p.npy, 'x.npy')).format).toBe('npy');
    expect(detectLocalFormat(p.idx)).toEqual({
      format: 'idx',
      path: join(p.idx, 'train-images-idx3-ubyte.gz'),
      labels: join(p.idx, 'train-labels-idx1-ubyte.gz'),
    });
    expect(detectLocalFormat(join(p.idx, 'train-images-idx3-ubyte.gz')).format).toBe('idx');
    expect(detectLocalFormat(p.csv)).toEqual({ format: 'csv', path: p.csv });
    expect(detectLocalFormat(p.img)).toEqual({ format: 'image-folder', path: p.img });
    expect(detectLocalFormat(p.csv, 'csv').format).toBe('csv');
  });

  it('names the path and what is missing or ambiguous', async () => {
    const p = await allFormats();
    expect(() => detectLocalFormat(join(p.root, 'nope'))).toThrow(
      `${join(p.root, 'nope')}: no such file or directory`,
    );
    const other = write(p.root, 'data.parquet', new Uint8Array(4));
    expect(() => detectLocalFormat(other)).toThrow(`${other}: unknown data format`);
    write(p.idx, 't10k-images-idx3-ubyte', images);
    expect(() => detectLocalFormat(p.idx)).toThrow(
      `${p.idx}: several IDX image files (t10k-images-idx3-ubyte, train-images-idx3-ubyte.gz); pass the one to read`,
    );
    expect(() => detectLocalFormat(join(p.idx, 't10k-images-idx3-ubyte'))).toThrow(
      `the IDX labels file ${join(p.idx, 't10k-labels-idx1-ubyte')} is missing`,
    );
    const lone = tempDir();
    write(lone, 'x.npy', encodeNpy(px, [6, 12]));
    expect(() => detectLocalFormat(join(lone, 'x.npy'))).toThrow(
      `the .npy labels file ${join(lone, 'y.npy')} is missing`,
    );
    const empty = tempDir();
    expect(() => detectLocalFormat(empty)).toThrow(`${empty}: no data found`);
    expect(() => detectLocalFormat(p.img, 'npy')).toThrow(`${p.img}: no x.npy and y.npy in this directory`);
    expect(() => detectLocalFormat(p.csv, 'image-folder')).toThrow('image folders are directories');
    expect(() => detectLocalFormat(p.csv, 'xls')).toThrow(
      `format: expected one of ${DATA_FORMAT_NAMES.join(', ')}, got xls`,
    );
  });
});

describe('loadLocalData', () => {
  it('reads the same examples, with the same digest, from IDX, .npy, CSV and an image folder', async () => {
    const p = await allFormats();
    const sets = await Promise.all([p.idx, p.npy, p.csv, p.img].map((path) => loadLocalData(path, shape)));
    const digests = sets.map((ds) => datasetDigest(ds));
    expect(new Set(digests).size).toBe(1);
    for (const ds of sets) {
      expect(ds.n).toBe(6);
      expect(ds.shape).toEqual([3, 4, 1]);
      expect(Array.from(ds.y)).toEqual(Array.from(y));
    }
    // the image folder orders by label: here labels 0…5 are already in order
    expect(sets.map((s) => s.source.split(':')[0])).toEqual(['idx', 'npy', 'csv', 'image-folder']);
  });

  it('checks IDX images against the input shape and the options themselves', async () => {
    const p = await allFormats();
    await expect(loadLocalData(p.idx, { inputShape: [4, 3, 1], numClasses: 10 })).rejects.toThrow(
      `${join(p.idx, 'train-images-idx3-ubyte.gz')}: images of shape 3×4×1 do not fit the input shape 4×3×1`,
    );
    await expect(loadLocalData(p.idx, { inputShape: [3, 4, 1], numClasses: 5 })).rejects.toThrow(
      'label 5 at index 5 is outside [0, 5)',
    );
    await expect(loadLocalData(p.idx, { inputShape: [3, 4] as never, numClasses: 5 })).rejects.toThrow(
      'inputShape: expected [height, width, channels]',
    );
    await expect(loadLocalData(p.idx, { inputShape: [3, 4, 1], numClasses: 0 })).rejects.toThrow(
      'numClasses: expected a positive integer, got 0',
    );
  });

  it('passes the CSV, image and .npy options through', async () => {
    const p = await allFormats();
    const csv = write(p.root, 'semi.csv', new TextEncoder().encode('a;b;c;kind\n1;2;3;dog\n'));
    const ds = await loadLocalData(csv, {
      inputShape: [1, 3, 1],
      numClasses: 2,
      delimiter: ';',
      labelColumn: 'kind',
      classNames: ['cat', 'dog'],
    });
    expect(Array.from(ds.y)).toEqual([1]);
    const resized = await loadLocalData(p.img, { inputShape: [6, 8, 1], numClasses: 10, resize: true });
    expect(resized.x.length).toBe(6 * 48);
    const chw = tempDir();
    write(chw, 'x.npy', encodeNpy(new Float32Array(2 * 12), [2, 3, 2, 2]));
    write(chw, 'y.npy', encodeNpy(Int32Array.of(0, 1), [2]));
    expect((await loadLocalData(chw, { inputShape: [2, 2, 3], numClasses: 2, layout: 'nchw' })).n).toBe(2);
  });
});
