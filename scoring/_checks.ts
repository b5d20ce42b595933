/** Internal: input checks shared by the estimators (message starts with the parameter name). */
import type { Game } from './game.js';
import type { Rng } from './seeded-rng.js';

export function checkGame(game: Game): void {
  if (typeof game !== 'object' || game === null || typeof game.values !== 'function')
    throw new TypeError('game: expected an object with a values(coalitions) method');
  if (!Number.isInteger(game.n) || game.n < 1)
    throw new RangeError(`game: expected n to be a positive integer, got ${game.n}`);
}

export function checkRng(rng: Rng): void {
  if (typeof rng !== 'object' || rng === null || typeof rng.next !== 'function')
    throw new TypeError('rng: expected an Rng with a next() method (see createRng)');
}

export function checkPositiveInteger(name: string, x: unknown): asserts x is number {
  if (typeof x !== 'number' || !Number.isInteger(x) || x < 1)
    throw new RangeError(`${name}: expected a positive integer, got ${String(x)}`);
}

/** An array, a typed array or any object with a numeric length. */
export function isArrayLike(x: unknown): x is ArrayLike<number> {
  return (
    ArrayBuffer.isView(x) ||
    Array.isArray(x) ||
    (typeof x === 'object' && x !== null && typeof (x as { length?: unknown }).length === 'number')
  );
}

/** An array of finite numbers, of `length` when given (checked in place, not copied). */
export function checkFiniteArray(name: string, a: unknown, length?: number): asserts a is ArrayLike<number> {
  if (!isArrayLike(a)) throw new TypeError(`${name}: expected an array of numbers`);
  if (length !== undefined && a.length !== length)
    throw new RangeError(`${name}: expected length ${length}, got ${a.length}`);
  for (let i = 0; i < a.length; i++)
    if (!Number.isFinite(a[i])) throw new RangeError(`${name}: entry ${i} is not finite (${a[i]})`);
}

export function checkNonNegative(name: string, x: number): void {
  if (typeof x !== 'number' || !Number.isFinite(x) || x < 0)
    throw new RangeError(`${name}: expected a finite number ≥ 0, got ${x}`);
}

/** A finite number; TypeError for a non-number, RangeError otherwise. Messages start with `name`. */
export function checkFiniteNumber(name: string, x: unknown): number {
  if (typeof x !== 'number') throw new TypeError(`${name}: expected a number, got ${typeof x}`);
  if (!Number.isFinite(x)) throw new RangeError(`${name}: expected a finite number, got ${x}`);
  return x;
}

/** An array of finite numbers (of length n when given, one per silo), copied to a Float64Array. */
export function checkFiniteVector(name: string, v: unknown, n: number | undefined): Float64Array {
  if (v === null || typeof v !== 'object' || typeof (v as ArrayLike<number>).length !== 'number')
    throw new TypeError(`${name}: expected an array of numbers`);
  const a = v as ArrayLike<number>;
  if (n !== undefined && a.length !== n)
    throw new RangeError(`${name}: expected ${n} values (one per silo), got ${a.length}`);
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = checkFiniteNumber(`${name}[${i}]`, a[i]);
  return out;
}
