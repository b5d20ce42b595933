/**
 * Random update: Δ replaced by N(0, σ²) noise, σ given by `factor` or matched to the honest
 * update's root mean square, so the norms are alike (papers/000 §5 (iii): "random generated model
 * updates").
 */
import { checkNumber, checkSeed } from '../check.js';
import { createRandom, mixSeed } from '../seeded-draws.js';
import type { UpdateMisbehaviorDefinition } from './definition.js';

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

export const randomUpdateAttack: UpdateMisbehaviorDefinition = {
  name: 'random-update',
  description: 'Δ replaced by Gaussian noise',
  factor: "the noise's standard deviation; default: the RMS of the honest update",
  checkFactor: (f) => void checkNumber('factor', f, 0, Number.MAX_VALUE),
  side: 'update',
  apply: (honest, m) => randomUpdate(honest, m.seed, m.factor),
};
