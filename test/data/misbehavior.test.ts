import { describe, expect, it } from 'vitest';
import { subset } from '../../src/data/dataset.js';
import {
  applyDataMisbehavior,
  applyUpdateMisbehavior,
  flipMap,
  isDataMisbehavior,
  labelShuffleMap,
  mapLabels,
  randomData,
  randomUpdate,
} from '../../src/data/misbehavior.js';
import { gaussianMixture } from '../../src/data/synthetic.js';

describe('data-side misbehaviour', () => {
  const ds = gaussianMixture({ n: 200, numClasses: 10, features: 8, seed: 1 });

  it('label-flip maps c → K−1−c and shares x', () => {
    const f = applyDataMisbehavior(ds, { kind: 'label-flip' });
    for (let i = 0; i < ds.n; i++) expect(f.y[i]).toBe(9 - ds.y[i]!);
    expect(f.x).toBe(ds.x);
    expect(Array.from(flipMap(4))).toEqual([3, 2, 1, 0]);
    const custom = applyDataMisbehavior(ds, { kind: 'label-flip', map: [1, 0, 2, 3, 4, 5, 6, 7, 8, 9] });
    for (let i = 0; i < ds.n; i++) expect(custom.y[i]).toBe(ds.y[i]! < 2 ? 1 - ds.y[i]! : ds.y[i]);
    expect(() => mapLabels(ds.y, [0, 1], 10)).toThrow(/^map: expected 10 entries/);
  });

  it('label-shuffle is one fixed derangement per seed, applied to every example', () => {
    for (let seed = 0; seed < 50; seed++) {
      const p = labelShuffleMap(10, seed);
      expect(Array.from(p).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(p.every((v, i) => v !== i)).toBe(true);
    }
    expect(labelShuffleMap(10, 3)).toEqual(labelShuffleMap(10, 3));
    expect(labelShuffleMap(10, 3)).not.toEqual(labelShuffleMap(10, 4));
    const s = applyDataMisbehavior(ds, { kind: 'label-shuffle', seed: 3 });
    const map = labelShuffleMap(10, 3);
    for (let i = 0; i < ds.n; i++) expect(s.y[i]).toBe(map[ds.y[i]!]);
    // The same map on a silo's subset: consistent across the silo's examples and rounds.
    const part = applyDataMisbehavior(subset(ds, Int32Array.of(5, 7)), { kind: 'label-shuffle', seed: 3 });
    expect(Array.from(part.y)).toEqual([map[ds.y[5]!], map[ds.y[7]!]]);
  });

  it('random-data keeps count and shape, draws uniform pixels and labels', () => {
    const r = applyDataMisbehavior(ds, { kind: 'random-data', seed: 2 });
    expect([r.n, r.shape, r.numClasses]).toEqual([ds.n, ds.shape, ds.numClasses]);
    const big = randomData(2000, [4, 4, 1], 10, 1);
    let s = 0;
    for (const v of big.x) s += v;
    // Mean of 32,000 U(0,1): sd √(1/12/32000) ≈ 0.0016; 6 sd ≈ 0.01.
    expect(Math.abs(s / big.x.length - 0.5)).toBeLessThan(0.01);
    expect(new Set(big.y).size).toBe(10);
    expect(isDataMisbehavior({ kind: 'random-data', seed: 1 })).toBe(true);
    expect(isDataMisbehavior({ kind: 'free-rider' })).toBe(false);
  });
});

describe('update-side misbehaviour (pure on Float32Array)', () => {
  const honest = Float32Array.from({ length: 10_000 }, (_, i) => Math.sin(i) * 0.01);
  const copy = honest.slice();

  it('free rider sends Δ = 0; scaling multiplies; inputs are not modified', () => {
    expect(applyUpdateMisbehavior(honest, { kind: 'free-rider' }).every((v) => v === 0)).toBe(true);
    const scaled = applyUpdateMisbehavior(honest, { kind: 'scale', factor: -3 });
    for (let i = 0; i < 100; i++) expect(scaled[i]).toBeCloseTo(-3 * honest[i]!, 7);
    expect(honest).toEqual(copy);
    expect(() => applyUpdateMisbehavior(honest, { kind: 'scale', factor: Number.NaN })).toThrow(/^factor: /);
  });

  it('random update matches the honest RMS by default, or a given std; seeded', () => {
    const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    const r = applyUpdateMisbehavior(honest, { kind: 'random-update', seed: 1 });
    // ‖r‖²/σ² ~ χ²(10⁴): relative sd of ‖r‖ ≈ 1/√(2·10⁴) ≈ 0.007.
    expect(Math.abs(norm(r) / norm(honest) - 1)).toBeLessThan(0.05);
    const r2 = randomUpdate(honest, 1, 2);
    expect(Math.abs(norm(r2) / (2 * Math.sqrt(honest.length)) - 1)).toBeLessThan(0.05);
    expect(randomUpdate(honest, 1)).toEqual(r);
    expect(randomUpdate(honest, 2)).not.toEqual(r);
    expect(() => randomUpdate(honest, 1, -1)).toThrow(/^std: /);
  });
});
