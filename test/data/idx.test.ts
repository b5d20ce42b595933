import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkDataset } from '../../src/data/dataset.js';
import { parseIdx, readIdx, readIdxDataset } from '../../src/data/idx.js';
import { idxBytes, imagesAndLabels, tempDir, write } from './_files.js';

describe('parseIdx / readIdx', () => {
  it('decodes uint8 images, plain and gzipped, to the same array', () => {
    const dir = tempDir();
    const { images, px } = imagesAndLabels(5, 3, 4);
    const plain = readIdx(write(dir, 'img', images));
    const gz = readIdx(write(dir, 'img.gz', images, true));
    expect(plain.type).toBe('uint8');
    expect(plain.dims).toEqual([5, 3, 4]);
    expect(Array.from(plain.data)).toEqual(Array.from(px));
    expect(gz.dims).toEqual([5, 3, 4]);
    expect(Array.from(gz.data)).toEqual(Array.from(px));
  });

  it('decodes big-endian int16, int32, float32 and float64', () => {
    const be = (
      n: number,
      set: (v: DataView, o: number, x: number) => void,
      size: number,
      vals: number[],
    ) => {
      const b = new Uint8Array(n * size);
      const v = new DataView(b.buffer);
      vals.forEach((x, i) => {
        set(v, i * size, x);
      });
      return b;
    };
    const vals = [-3, 0, 258, 1000];
    const i16 = parseIdx(
      idxBytes(
        0x0b,
        [4],
        be(4, (v, o, x) => v.setInt16(o, x, false), 2, vals),
      ),
    );
    const i32 = parseIdx(
      idxBytes(
        0x0c,
        [2, 2],
        be(4, (v, o, x) => v.setInt32(o, x, false), 4, vals),
      ),
    );
    const f32 = parseIdx(
      idxBytes(
        0x0d,
        [4],
        be(4, (v, o, x) => v.setFloat32(o, x + 0.5, false), 4, vals),
      ),
    );
    const f64 = parseIdx(
      idxBytes(
        0x0e,
        [4],
        be(4, (v, o, x) => v.setFloat64(o, x / 3, false), 8, vals),
      ),
    );
    expect(Array.from(i16.data)).toEqual(vals);
    expect(i32.dims).toEqual([2, 2]);
    expect(Array.from(i32.data)).toEqual(vals);
    expect(Array.from(f32.data)).toEqual(vals.map((x) => x + 0.5));
    expect(Array.from(f64.data)).toEqual(vals.map((x) => x / 3));
  });

  it('rejects malformed files with the file name and the problem', () => {
    const dir = tempDir();
    const { images } = imagesAndLabels(5, 3, 4);
    const truncated = write(dir, 'trunc.idx', images.subarray(0, images.length - 1));
    expect(() => readIdx(truncated)).toThrow(
      `${truncated}: truncated IDX data: dimensions [5, 3, 4] of uint8 need 76 bytes, file has 75`,
    );
    const trailing = write(dir, 'trail.idx', new Uint8Array([...images, 0, 0]));
    expect(() => readIdx(trailing)).toThrow(`${trailing}: 2 unexpected trailing bytes`);
    const magic = write(dir, 'magic.idx', new Uint8Array([1, 0, 8, 1, 0, 0, 0, 0]));
    expect(() => readIdx(magic)).toThrow(`${magic}: not an IDX file (magic starts with 0x0100`);
    const type = write(dir, 'type.idx', new Uint8Array([0, 0, 0x07, 1, 0, 0, 0, 0]));
    expect(() => readIdx(type)).toThrow(`${type}: unknown IDX element type 0x07`);
    const header = write(dir, 'header.idx', new Uint8Array([0, 0, 8, 3, 0, 0, 0, 5]));
    expect(() => readIdx(header)).toThrow(
      `${header}: truncated IDX header (8 bytes, need 16 for 3 dimensions)`,
    );
    const tiny = write(dir, 'tiny.idx', new Uint8Array([0, 0]));
    expect(() => readIdx(tiny)).toThrow(`${tiny}: truncated IDX header (2 bytes, need at least 4)`);
    const gz = write(dir, 'cut.gz', images, true);
    const cut = write(dir, 'cut2.gz', readFileSync(gz).subarray(0, 20));
    expect(() => readIdx(cut)).toThrow(`${cut}: corrupt or truncated gzip data`);
    expect(() => readIdx(`${dir}/missing`)).toThrow(`${dir}/missing: cannot read IDX file (ENOENT)`);
  });
});

describe('readIdxDataset', () => {
  it('scales pixels to [0, 1] and keeps labels and shape', () => {
    const dir = tempDir();
    const { images, labels, px, y } = imagesAndLabels(12, 4, 5, 3);
    const ds = readIdxDataset(write(dir, 'i.gz', images, true), write(dir, 'l', labels), {
      name: 'toy',
      source: 'file:test',
      numClasses: 3,
    });
    checkDataset(ds, true);
    expect(ds.n).toBe(12);
    expect(ds.shape).toEqual([4, 5, 1]);
    expect(Array.from(ds.y)).toEqual(Array.from(y));
    for (let i = 0; i < px.length; i++) expect(ds.x[i]).toBeCloseTo(px[i]! / 255, 7);
    const lim = readIdxDataset(`${dir}/i.gz`, `${dir}/l`, {
      name: 't',
      source: 's',
      numClasses: 3,
      limit: 5,
    });
    expect(lim.n).toBe(5);
    expect(Array.from(lim.x)).toEqual(Array.from(ds.x.subarray(0, 5 * 20)));
  });

  it('rejects mismatched counts, wrong ranks and out-of-range labels, naming the file', () => {
    const dir = tempDir();
    const a = imagesAndLabels(6, 2, 2);
    const b = imagesAndLabels(7, 2, 2);
    const img = write(dir, 'img', a.images);
    const lab7 = write(dir, 'lab7', b.labels);
    expect(() => readIdxDataset(img, lab7, { name: 'x', source: 's' })).toThrow(
      `${lab7}: has 7 labels but ${img} has 6 images`,
    );
    const lab = write(dir, 'lab', a.labels);
    expect(() => readIdxDataset(img, lab, { name: 'x', source: 's', numClasses: 4 })).toThrow(
      `${lab}: label 4 at index 4 is outside [0, 4)`,
    );
    expect(() => readIdxDataset(lab, lab, { name: 'x', source: 's' })).toThrow(
      `${lab}: expected image dimensions [n, h, w] or [n, h, w, c], got [6]`,
    );
    expect(() => readIdxDataset(img, img, { name: 'x', source: 's' })).toThrow(
      `${img}: expected label dimensions [n], got [6, 2, 2]`,
    );
  });
});
