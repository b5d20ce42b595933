/**
 * Update-side attacks (papers/000 §5 (iii) and its free riders, papers/002 §5, papers/003 §5.4): the
 * maths on a silo's update Δ = M_local − M0 (pure on Float32Array; inputs are never modified), and a
 * wrapper of local training that applies them (as in Flower, client-side extras wrap a plain
 * `train` function). The descriptors are src/data/misbehavior.ts's; data-side attacks change a
 * silo's dataset when the consortium is built (./setup.ts) and need no wrapper.
 */
import { checkNumber, checkSeed } from '../data/check.js';
import type { UpdateMisbehavior } from '../data/misbehavior.js';
import { createRandom, mixSeed } from '../data/random.js';
import type { TrainFn } from './trainer.js';

/**
 * `train`, followed by each silo's update-side misbehaviour: silo s sends
 * `applyUpdateMisbehavior(Δ_s, attacks[s])` instead of its honest Δ_s (a new array; the honest one
 * is not modified). Silos without an entry send their honest update; with no attack at all `train`
 * is returned as it is.
 */
export function withUpdateAttacks(
  train: TrainFn,
  attacks: readonly (UpdateMisbehavior | undefined)[],
): TrainFn {
  if (!attacks.some((a) => a !== undefined)) return train;
  return async (base, round, silos) => {
    const honest = await train(base, round, silos);
    return honest.map((u, b) => {
      const attack = attacks[silos[b]!];
      return attack ? applyUpdateMisbehavior(u, attack) : u;
    });
  };
}

/** Root mean square of a vector (0 for an empty one). */
function rms(v: Float32Array): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  return v.length === 0 ? 0 : Math.sqrt(s / v.length);
}

/**
 * A random update of the same length as `honest`: N(0, σ²) per coordinate, σ = `std` or, when
 * omitted, the RMS of `honest` (so ‖random‖ ≈ ‖honest‖). Throws RangeError when std < 0.
 */
export function randomUpdate(honest: Float32Array, seed: number, std?: number): Float32Array {
  const sigma = std === undefined ? rms(honest) : checkNumber('std', std, 0, Number.MAX_VALUE);
  const rng = createRandom(mixSeed(checkSeed('seed', seed), 0x757064));
  const out = new Float32Array(honest.length);
  for (let i = 0; i < out.length; i++) out[i] = sigma * rng.normal();
  return out;
}

/** A free rider's update: it sends M0 back, so Δ = 0 (length of `honest`). */
export function freeRiderUpdate(honest: Float32Array): Float32Array {
  return new Float32Array(honest.length);
}

/** factor · update, as a new array. Throws RangeError when factor is not finite. */
export function scaleUpdate(update: Float32Array, factor: number): Float32Array {
  checkNumber('factor', factor, -Number.MAX_VALUE, Number.MAX_VALUE);
  const out = new Float32Array(update.length);
  for (let i = 0; i < out.length; i++) out[i] = factor * update[i]!;
  return out;
}

/** The update a silo sends after an update-side misbehaviour (a new array; `honest` is not modified). */
export function applyUpdateMisbehavior(honest: Float32Array, m: UpdateMisbehavior): Float32Array {
  switch (m.kind) {
    case 'random-update':
      return randomUpdate(honest, m.seed, m.std);
    case 'free-rider':
      return freeRiderUpdate(honest);
    case 'scale':
      return scaleUpdate(honest, m.factor);
    default:
      throw new RangeError(`m: unknown update misbehaviour ${(m as { kind: string }).kind}`);
  }
}
