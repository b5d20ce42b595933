import { describe, expect, it } from 'vitest';
import { randomUpdate } from '../../src/data/misbehaviors/random-update.js';
import type { TrainFn } from '../../src/fl/trainer.js';
import { applyUpdateMisbehavior, withUpdateAttacks } from '../../src/fl/update-attacks.js';

/** A fake `train`: silo s sends (s + 1, round) whatever the base. */
const honest: TrainFn = async (_base, round, silos) => silos.map((s) => Float32Array.of(s + 1, round));

describe('withUpdateAttacks', () => {
  it('applies each silo its own attack, by global id, whatever its position in the round', async () => {
    const attacks = [undefined, { kind: 'scale', seed: 0, factor: -2 }, { kind: 'free-rider', seed: 0 }];
    const train = withUpdateAttacks(honest, attacks);
    const got = await train(new Float32Array(2), 3, [2, 0, 1]);
    expect(got.map((u) => Array.from(u))).toEqual([
      [0, 0], // silo 2: free rider
      [1, 3], // silo 0: honest
      [-4, -6], // silo 1: scaled by −2
    ]);
  });

  it('matches applyUpdateMisbehavior for a seeded random update', async () => {
    const attack = { kind: 'random-update', seed: 9 } as const;
    const [u] = await withUpdateAttacks(honest, [attack])(new Float32Array(2), 1, [0]);
    const [h] = await honest(new Float32Array(2), 1, [0]);
    expect(Array.from(u!)).toEqual(Array.from(applyUpdateMisbehavior(h!, attack)));
  });

  it('returns train itself when no silo misbehaves, and leaves honest updates untouched', async () => {
    expect(withUpdateAttacks(honest, [undefined, undefined])).toBe(honest);
    const kept = Float32Array.of(5, 6);
    const train = withUpdateAttacks(async () => [kept], [{ kind: 'scale', seed: 0, factor: 3 }]);
    const [u] = await train(new Float32Array(2), 1, [0]);
    expect(Array.from(u!)).toEqual([15, 18]);
    expect(Array.from(kept)).toEqual([5, 6]);
  });
});

describe('update-side misbehaviour (pure on Float32Array)', () => {
  const honest = Float32Array.from({ length: 10_000 }, (_, i) => Math.sin(i) * 0.01);
  const copy = honest.slice();

  it('free rider sends Δ = 0; scaling multiplies; inputs are not modified', () => {
    expect(applyUpdateMisbehavior(honest, { kind: 'free-rider', seed: 0 }).every((v) => v === 0)).toBe(true);
    const scaled = applyUpdateMisbehavior(honest, { kind: 'scale', seed: 0, factor: -3 });
    for (let i = 0; i < 100; i++) expect(scaled[i]).toBeCloseTo(-3 * honest[i]!, 7);
    expect(honest).toEqual(copy);
    expect(() => applyUpdateMisbehavior(honest, { kind: 'scale', seed: 0, factor: Number.NaN })).toThrow(
      /^factor: /,
    );
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

  it('refuses a data-side or unknown kind', () => {
    expect(() => applyUpdateMisbehavior(honest, { kind: 'label-flip', seed: 0 })).toThrow(/changes data/);
    expect(() => applyUpdateMisbehavior(honest, { kind: 'nope', seed: 0 })).toThrow(
      /unknown misbehaviour 'nope'/,
    );
  });
});
