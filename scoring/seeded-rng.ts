/**
 * The project's one seeded pseudo-random generator (not for keys: crypto/random-bytes.ts holds the
 * operating system's CSPRNG and the protocol's seeded byte sources). Core code never calls
 * Math.random: every sampler takes an `Rng`, so the same seed gives the same output
 * (docs/architecture.md, "Conventions": no hidden randomness). src/data's distributions
 * (src/data/seeded-draws.ts), the strategies, the simulation and src/ml draw from this stream.
 *
 * Generator: xoshiro128** (Blackman & Vigna 2018), state seeded by splitmix32 from a 32-bit seed.
 */

/** A source of uniform numbers in [0, 1). */
export interface Rng {
  /** Uniform in [0, 1) with 32 bits of resolution. */
  next(): number;
}

/**
 * The raw xoshiro128** stream of 32-bit words (Blackman & Vigna 2018), its state seeded by
 * splitmix32 from `seed ^ salt`. `salt` lets two users of one seed draw independent streams.
 * Throws RangeError when seed is not a finite number.
 */
export function xoshiro128ss(seed: number, salt: number): () => number {
  if (!Number.isFinite(seed)) throw new RangeError(`seed: expected a finite number, got ${seed}`);
  let x = (Math.trunc(seed) ^ salt) >>> 0;
  const splitmix32 = () => {
    x = (x + 0x9e3779b9) >>> 0;
    let z = x;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix32();
  let b = splitmix32();
  let c = splitmix32();
  let d = splitmix32();
  if ((a | b | c | d) === 0) a = 1;
  return () => {
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result;
  };
}

/** A seeded xoshiro128** generator. Throws RangeError when seed is not a finite number. */
export function createRng(seed: number): Rng {
  const uint32 = xoshiro128ss(seed, 0x9e3779b9);
  return { next: () => uint32() / 4294967296 };
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** Uniform integer in [0, n). */
export function randomInt(rng: Rng, n: number): number {
  return Math.floor(rng.next() * n);
}

/** A uniformly random permutation of 0..n−1 (Fisher–Yates). */
export function randomPermutation(rng: Rng, n: number): Int32Array {
  const p = new Int32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  shuffleInPlace(rng, p);
  return p;
}

/** Shuffles an array in place (Fisher–Yates) and returns it. */
export function shuffleInPlace<T extends { length: number; [i: number]: number }>(rng: Rng, a: T): T {
  for (let i = a.length - 1; i > 0; i--) {
    const j = randomInt(rng, i + 1);
    const t = a[i]!;
    a[i] = a[j]!;
    a[j] = t;
  }
  return a;
}
