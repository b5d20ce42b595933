import { describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/data/dataset.js';
import { subset } from '../../src/data/dataset.js';
import { flipMap, labelShuffleMap, mapLabels, randomData } from '../../src/data/misbehavior.js';
import type { Misbehavior } from '../../src/data/misbehaviors/definition.js';
import { BUILTIN_MISBEHAVIORS, misbehaviorKind } from '../../src/data/misbehaviors/registry.js';

/** The dataset after the data-side kind `m.kind` (the registry's entry). */
function applyDataMisbehavior(ds: Dataset, m: Misbehavior): Dataset {
  const kind = misbehaviorKind(m.kind);
  if (kind.side !== 'data') throw new Error(`${m.kind} is update-side`);
  return kind.apply(ds, m);
}

import { gaussianMixture } from '../../src/data/synthetic.js';

describe('data-side misbehaviour', () => {
  const ds = gaussianMixture({ n: 200, numClasses: 10, features: 8, seed: 1 });

  it('label-flip maps c → K−1−c and shares x', () => {
    const f = applyDataMisbehavior(ds, { kind: 'label-flip', seed: 0 });
    for (let i = 0; i < ds.n; i++) expect(f.y[i]).toBe(9 - ds.y[i]!);
    expect(f.x).toBe(ds.x);
    expect(Array.from(flipMap(4))).toEqual([3, 2, 1, 0]);
    const custom = { ...ds, y: mapLabels(ds.y, [1, 0, 2, 3, 4, 5, 6, 7, 8, 9], 10) };
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
    expect(BUILTIN_MISBEHAVIORS.filter((m) => m.side === 'data').map((m) => m.name)).toEqual([
      'label-flip',
      'label-shuffle',
      'random-data',
    ]);
  });
});
