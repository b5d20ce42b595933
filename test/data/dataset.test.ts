import { describe, expect, it } from 'vitest';
import {
  checkDataset,
  classCounts,
  type Dataset,
  indicesByClass,
  slice,
  subset,
  take,
  withLabels,
} from '../../src/data/dataset.js';

/** 5 examples of shape [1, 2, 1]: x = [i/10, i/10 + 0.05], y = i mod 3. */
function tiny(): Dataset {
  const x = new Float32Array(10);
  for (let i = 0; i < 5; i++) {
    x[2 * i] = i / 10;
    x[2 * i + 1] = i / 10 + 0.05;
  }
  return {
    x,
    y: Uint8Array.of(0, 1, 2, 0, 1),
    n: 5,
    shape: [1, 2, 1],
    numClasses: 3,
    name: 't',
    source: 'test',
  };
}

describe('Dataset helpers', () => {
  it('subset copies the rows at the indices, in order, repeats allowed', () => {
    const ds = tiny();
    const s = subset(ds, Int32Array.of(4, 1, 1));
    expect(s.n).toBe(3);
    expect(Array.from(s.x)).toEqual(Array.from(Float32Array.of(0.4, 0.45, 0.1, 0.15, 0.1, 0.15)));
    expect(Array.from(s.y)).toEqual([1, 1, 1]);
    expect(s.y).toBeInstanceOf(Uint8Array);
    s.x[0] = 1;
    expect(ds.x[8]).toBeCloseTo(0.4, 6); // a copy
    expect(() => subset(ds, Int32Array.of(5))).toThrow('indices: index 5 at position 0 is outside [0, 5)');
  });

  it('slice and take are views on the same memory', () => {
    const ds = tiny();
    const v = slice(ds, 1, 2);
    expect(v.n).toBe(2);
    expect(Array.from(v.y)).toEqual([1, 2]);
    v.x[0] = 0.9;
    expect(ds.x[2]).toBeCloseTo(0.9, 6); // shared
    expect(take(ds, 10).n).toBe(5);
    expect(take(ds, 2).x.buffer).toBe(ds.x.buffer);
    expect(() => slice(ds, 4, 2)).toThrow(/^count: /);
  });

  it('withLabels shares x and checks the labels', () => {
    const ds = tiny();
    const w = withLabels(ds, Int32Array.of(2, 2, 2, 2, 2));
    expect(w.x).toBe(ds.x);
    expect(() => withLabels(ds, Int32Array.of(0, 0, 0, 0, 3))).toThrow(
      'y: label 3 at index 4 is outside [0, 3)',
    );
    expect(() => withLabels(ds, Int32Array.of(0))).toThrow('y: expected 5 labels, got 1');
  });

  it('counts and groups by class, over a pool', () => {
    const ds = tiny();
    expect(Array.from(classCounts(ds.y, 3))).toEqual([2, 2, 1]);
    expect(Array.from(classCounts(ds.y, 3, Int32Array.of(0, 3, 4)))).toEqual([2, 1, 0]);
    expect(indicesByClass(ds.y, 3).map((a) => Array.from(a))).toEqual([[0, 3], [1, 4], [2]]);
  });

  it('checkDataset reports the broken field', () => {
    const ds = tiny();
    expect(checkDataset(ds, true)).toBe(ds);
    expect(() => checkDataset({ ...ds, n: 4 })).toThrow('x: expected n·features = 4·2 = 8 values, got 10');
    expect(() => checkDataset({ ...ds, shape: [1, 0, 1] })).toThrow(/^shape\[1\]: /);
    const bad = tiny();
    bad.x[3] = 1.5;
    expect(() => checkDataset(bad, true)).toThrow('x: value 1.5 at 3 is outside [0, 1]');
    expect(() => checkDataset(bad)).not.toThrow();
  });
});
