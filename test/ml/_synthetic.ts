/** Small seeded datasets for the src/ml tests (Gaussian class means, values clipped to [0, 1]). */

import { createRng } from '../../scoring/seeded-rng.js';
import type { Examples } from '../../src/ml/models.js';

export function gaussianMixture(
  n: number,
  shape: readonly [number, number, number],
  numClasses: number,
  seed: number,
  noise = 0.15,
): Examples & { y: Int32Array } {
  const rng = createRng(seed);
  const f = shape[0] * shape[1] * shape[2];
  const means = Array.from({ length: numClasses }, () => Float32Array.from({ length: f }, () => rng.next()));
  const x = new Float32Array(n * f);
  const y = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const c = Math.floor(rng.next() * numClasses);
    y[i] = c;
    for (let k = 0; k < f; k++) {
      // Irwin–Hall approximation of a normal: cheap and seeded.
      const z = rng.next() + rng.next() + rng.next() - 1.5;
      x[i * f + k] = Math.min(1, Math.max(0, means[c]![k]! + noise * 2 * z));
    }
  }
  return { x, y, n, shape, numClasses };
}

export function randomVector(length: number, seed: number, scale: number): Float32Array {
  const rng = createRng(seed);
  return Float32Array.from({ length }, () => (rng.next() - 0.5) * 2 * scale);
}

export function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]!));
  return m;
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new RangeError('length mismatch');
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

/** Bitwise equality of two float arrays (fast; vitest's deep equality is slow on large arrays). */
export function sameBits(a: Float32Array, b: Float32Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}
