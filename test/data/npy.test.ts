import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeNpy, parseNpy, readNpy, readNpyDataset } from '../../src/data/npy.js';
import { tempDir, write } from './_files.js';

/** .npy bytes with a hand-written header (version, dict text) and raw data. */
function rawNpy(major: number, dict: string, data: Uint8Array): Uint8Array {
  const head = new TextEncoder().encode(`${dict}\n`);
  const prefix = major === 1 ? 10 : 12;
  const out = new Uint8Array(prefix + head.length + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, major, 0]);
  const dv = new DataView(out.buffer);
  if (major === 1) dv.setUint16(8, head.length, true);
  else dv.setUint32(8, head.length, true);
  out.set(head, prefix);
  out.set(data, prefix + head.length);
  return out;
}

const hasNumpy = spawnSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' }).status === 0;

describe('parseNpy / encodeNpy', () => {
  it('round-trips every dtype the writer has, with the shape', () => {
    const cases = [
      [Float32Array.of(1.5, -2, 3.25, 0, 7, 8), [2, 3]],
      [Float64Array.of(1e-300, 2), [2]],
      [Uint8Array.of(0, 255, 7), [3, 1]],
      [Int32Array.of(-5, 6), [2]],
      [BigInt64Array.of(-9n, 2n ** 40n), [2]],
      [Int16Array.of(-300, 300), [1, 2]],
      [Uint16Array.of(65535, 1), [2]],
    ] as const;
    for (const [data, shape] of cases) {
      const bytes = encodeNpy(data, shape);
      expect((10 + new DataView(bytes.buffer).getUint16(8, true)) % 64).toBe(0);
      const a = parseNpy(bytes);
      expect(a.shape).toEqual(shape);
      expect(a.data.constructor).toBe(data.constructor);
      expect(Array.from(a.data as ArrayLike<number | bigint>)).toEqual(
        Array.from(data as ArrayLike<number | bigint>),
      );
    }
  });

  it('reads format versions 2.0 and 3.0, big-endian data, Python 2 long sizes and a scalar', () => {
    const be = new Uint8Array(8);
    new DataView(be.buffer).setFloat32(0, 1.5, false);
    new DataView(be.buffer).setFloat32(4, -3, false);
    const v2 = parseNpy(rawNpy(2, "{'descr': '>f4', 'fortran_order': False, 'shape': (2L,), }", be));
    expect(Array.from(v2.data as Float32Array)).toEqual([1.5, -3]);
    const v3 = parseNpy(
      rawNpy(3, "{'descr': '<i2', 'fortran_order': False, 'shape': (1, 1), }", Uint8Array.of(2, 1)),
    );
    expect(v3.shape).toEqual([1, 1]);
    expect(Array.from(v3.data as Int16Array)).toEqual([258]);
    const scalar = parseNpy(
      rawNpy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (), }", Uint8Array.of(9)),
    );
    expect(scalar.shape).toEqual([]);
    expect(Array.from(scalar.data as Uint8Array)).toEqual([9]);
  });

  it('names the file and the problem on bad input', () => {
    const ok = encodeNpy(Float32Array.of(1, 2, 3, 4), [2, 2]);
    const dict = (d: string) => `{'descr': '${d}', 'fortran_order': False, 'shape': (2,), }`;
    expect(() => parseNpy(Uint8Array.of(1, 2, 3), 'a.npy')).toThrow('a.npy: not a .npy file');
    expect(() => parseNpy(ok.subarray(0, 40), 'a.npy')).toThrow('a.npy: truncated .npy header');
    expect(() => parseNpy(ok.subarray(0, ok.length - 3), 'a.npy')).toThrow(
      'a.npy: truncated .npy data: shape (2, 2) of float32 needs 16 bytes, the file has 13',
    );
    const longer = new Uint8Array(ok.length + 4);
    longer.set(ok);
    expect(() => parseNpy(longer, 'a.npy')).toThrow('a.npy: 4 unexpected trailing bytes');
    expect(() =>
      parseNpy(
        rawNpy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", new Uint8Array(4)),
        'f.npy',
      ),
    ).toThrow('f.npy: Fortran-ordered array (fortran_order: True)');
    expect(() => parseNpy(rawNpy(1, dict('<f2'), new Uint8Array(4)), 'h.npy')).toThrow(
      "h.npy: unsupported dtype '<f2'",
    );
    expect(() => parseNpy(rawNpy(1, dict('<U3'), new Uint8Array(24)), 's.npy')).toThrow(
      "s.npy: unsupported dtype '<U3'",
    );
    expect(() =>
      parseNpy(
        rawNpy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", new Uint8Array(4)),
        'r.npy',
      ),
    ).toThrow('r.npy: structured dtypes');
    expect(() => parseNpy(rawNpy(4, dict('<f4'), new Uint8Array(8)), 'v.npy')).toThrow(
      'v.npy: unsupported .npy format version 4.0',
    );
    expect(() => parseNpy(rawNpy(1, "{'descr': '<f4'}", new Uint8Array(8)), 'm.npy')).toThrow(
      'm.npy: malformed .npy header',
    );
    expect(() => readNpy('/nonexistent/x.npy')).toThrow('/nonexistent/x.npy: cannot read .npy file (ENOENT)');
  });

  it.skipIf(!hasNumpy)('reads what numpy writes and numpy reads what encodeNpy writes', () => {
    const dir = tempDir();
    const script = `
import numpy as np, sys
d = sys.argv[1]
np.save(d + '/f4.npy', np.arange(12, dtype=np.float32).reshape(2, 3, 2) / 4)
np.save(d + '/f8.npy', np.array([[0.1, -2.5]], dtype=np.float64))
np.save(d + '/i8.npy', np.array([0, 3, 9], dtype=np.int64))
np.save(d + '/u1.npy', np.array([[1, 200]], dtype=np.uint8))
np.save(d + '/be.npy', np.array([1.25, 2], dtype='>f8'))
a = np.load(d + '/mine.npy')
assert a.dtype == np.float32 and a.shape == (2, 2) and a.tolist() == [[1.0, 2.5], [-3.0, 4.0]], a
`;
    write(dir, 'mine.npy', encodeNpy(Float32Array.of(1, 2.5, -3, 4), [2, 2]));
    const r = spawnSync('python3', ['-c', script, dir], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const f4 = readNpy(join(dir, 'f4.npy'));
    expect(f4.shape).toEqual([2, 3, 2]);
    expect(Array.from(f4.data as Float32Array)).toEqual(Array.from({ length: 12 }, (_, i) => i / 4));
    expect(Array.from(readNpy(join(dir, 'f8.npy')).data as Float64Array)).toEqual([0.1, -2.5]);
    expect(Array.from(readNpy(join(dir, 'i8.npy')).data as BigInt64Array)).toEqual([0n, 3n, 9n]);
    expect(Array.from(readNpy(join(dir, 'u1.npy')).data as Uint8Array)).toEqual([1, 200]);
    expect(Array.from(readNpy(join(dir, 'be.npy')).data as Float64Array)).toEqual([1.25, 2]);
    expect(readFileSync(join(dir, 'mine.npy')).length % 16).toBe(0);
  });
});

describe('readNpyDataset', () => {
  const shape = [2, 2, 1] as const;
  const pair = (x: Uint8Array, y: Uint8Array) => {
    const dir = tempDir();
    return { xPath: write(dir, 'x.npy', x), yPath: write(dir, 'y.npy', y), dir };
  };

  it('scales uint8 by 1/255, keeps floats as they are and accepts [N,h,w,c], [N,h,w] and [N,F]', () => {
    const px = Uint8Array.of(0, 51, 102, 255, 255, 0, 0, 0);
    const labels = encodeNpy(BigInt64Array.of(2n, 0n), [2]);
    for (const s of [
      [2, 2, 2, 1],
      [2, 2, 2],
      [2, 4],
    ]) {
      const { xPath, yPath } = pair(encodeNpy(px, s), labels);
      const ds = readNpyDataset(xPath, yPath, { inputShape: shape, numClasses: 3 });
      expect(ds.shape).toEqual([2, 2, 1]);
      expect(Array.from(ds.x)).toEqual(Array.from(px, (v) => Math.fround(v / 255)));
      expect(Array.from(ds.y)).toEqual([2, 0]);
      expect(ds.source).toBe(`npy:${xPath}+${yPath}`);
    }
    const f = Float32Array.of(-1, 0.5, 2, 3);
    const { xPath, yPath } = pair(encodeNpy(f, [1, 4]), encodeNpy(Int32Array.of(1), [1, 1]));
    expect(Array.from(readNpyDataset(xPath, yPath, { inputShape: [1, 4, 1], numClasses: 2 }).x)).toEqual([
      -1, 0.5, 2, 3,
    ]);
  });

  it("transposes PyTorch's NCHW with layout 'nchw' and says so when it is missing", () => {
    // One 2×2 image of 3 channels, channel-major: channel ch holds 10·ch + pixel.
    const chw = Float32Array.from({ length: 12 }, (_, k) => 10 * Math.floor(k / 4) + (k % 4));
    const { xPath, yPath } = pair(encodeNpy(chw, [1, 3, 2, 2]), encodeNpy(Uint8Array.of(0), [1]));
    const ds = readNpyDataset(xPath, yPath, { inputShape: [2, 2, 3], numClasses: 1, layout: 'nchw' });
    expect(Array.from(ds.x)).toEqual([0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23]);
    expect(() => readNpyDataset(xPath, yPath, { inputShape: [2, 2, 3], numClasses: 1 })).toThrow(
      `${xPath}: examples of shape (3, 2, 2) do not fit the input shape 2×2×3 (12 features); it looks channels-first (PyTorch's NCHW): pass layout 'nchw'`,
    );
  });

  it('names the file and the problem: shape, dtype, labels, sizes, empty, non-finite, truncated', () => {
    const x = encodeNpy(new Float32Array(8), [2, 2, 2]);
    const y = encodeNpy(Int32Array.of(0, 1), [2]);
    const opts = { inputShape: shape, numClasses: 2 };
    const check = (
      xb: Uint8Array,
      yb: Uint8Array,
      message: (p: { xPath: string; yPath: string }) => string,
    ) => {
      const p = pair(xb, yb);
      expect(() => readNpyDataset(p.xPath, p.yPath, opts)).toThrow(message(p));
    };
    check(
      encodeNpy(new Float32Array(6), [2, 3]),
      y,
      (p) => `${p.xPath}: examples of shape (3,) do not fit the input shape 2×2×1`,
    );
    check(
      encodeNpy(new Int32Array(8), [2, 4]),
      y,
      (p) => `${p.xPath}: expected float32, float64 or uint8 features, got int32`,
    );
    check(
      x,
      encodeNpy(Float32Array.of(0, 1), [2]),
      (p) => `${p.yPath}: expected integer class labels, got float32 ('<f4')`,
    );
    check(
      x,
      encodeNpy(Int32Array.of(1, 0, 0, 1), [2, 2]),
      (p) =>
        `${p.yPath}: expected labels of shape (N,) or (N, 1), got (2, 2) (one-hot labels: save y.argmax(1))`,
    );
    check(x, encodeNpy(Int32Array.of(0, 2), [2]), (p) => `${p.yPath}: label 2 at index 1 is outside [0, 2)`);
    check(
      x,
      encodeNpy(BigInt64Array.of(0n, -1n), [2]),
      (p) => `${p.yPath}: label -1 at index 1 is outside [0, 2)`,
    );
    check(
      x,
      encodeNpy(Int32Array.of(0, 1, 1), [3]),
      (p) => `${p.yPath}: has 3 labels but ${p.xPath} has 2 examples`,
    );
    check(
      encodeNpy(new Float32Array(0), [0, 4]),
      encodeNpy(new Int32Array(0), [0]),
      (p) => `${p.xPath}: holds no examples`,
    );
    check(
      encodeNpy(Float32Array.of(0, 0, 0, 0, 0, Number.NaN, 0, 0), [2, 4]),
      y,
      (p) => `${p.xPath}: feature value NaN at index 5 (example 1, feature 1) is not finite`,
    );
    check(x.subarray(0, x.length - 1), y, (p) => `${p.xPath}: truncated .npy data`);
    expect(() => readNpyDataset('/nonexistent/x.npy', '/nonexistent/y.npy', opts)).toThrow(
      '/nonexistent/x.npy: cannot read .npy file (ENOENT)',
    );
  });
});
