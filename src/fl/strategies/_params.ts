/**
 * Internal: reading a strategy's plain JSON parameters with errors that name the field
 * (`strategy.epsilon: expected a number in [0, 1], got 2`). A wrong type throws TypeError, a value
 * out of range or an unknown key RangeError (docs/architecture.md, "Conventions"). Never re-exported.
 */

import type { NumberSpec, StrategyParams } from './strategy.js';

function describe(spec: NumberSpec): string {
  const kind = spec.integer ? 'an integer' : 'a number';
  const lo = spec.min === undefined ? '(−∞' : `${spec.minOpen ? '(' : '['}${spec.min}`;
  const hi = spec.max === undefined ? '∞)' : `${spec.max}${spec.maxOpen ? ')' : ']'}`;
  if (spec.min === undefined && spec.max === undefined) return `${kind}`;
  if (spec.max === undefined) return `${kind} ${spec.minOpen ? '>' : '≥'} ${spec.min}`;
  return `${kind} in ${lo}, ${hi}`;
}

/** A strategy's parameters, read once each; `done()` rejects keys nobody read. */
export class Params implements StrategyParams {
  private readonly read = new Set<string>(['name']);
  constructor(
    private readonly config: Readonly<Record<string, unknown>>,
    private readonly strategy: string,
  ) {}

  private field(key: string): string {
    return `strategy.${key}`;
  }

  /** A finite number within the spec, or the default when absent. */
  number(key: string, fallback: number, spec: NumberSpec = {}): number {
    const x = this.optionalNumber(key, spec);
    return x === undefined ? fallback : x;
  }

  /** A finite number within the spec, or undefined when absent. */
  optionalNumber(key: string, spec: NumberSpec = {}): number | undefined {
    this.read.add(key);
    const x = this.config[key];
    if (x === undefined) return undefined;
    const expected = `expected ${describe(spec)}`;
    if (typeof x !== 'number') throw new TypeError(`${this.field(key)}: ${expected}, got ${typeof x}`);
    const bad =
      !Number.isFinite(x) ||
      (spec.integer === true && !Number.isInteger(x)) ||
      (spec.min !== undefined && (spec.minOpen ? x <= spec.min : x < spec.min)) ||
      (spec.max !== undefined && (spec.maxOpen ? x >= spec.max : x > spec.max));
    if (bad) throw new RangeError(`${this.field(key)}: ${expected}, got ${x}`);
    return x;
  }

  /** One of the listed strings, or the default when absent. */
  oneOf<T extends string>(key: string, fallback: T, values: readonly T[]): T {
    this.read.add(key);
    const x = this.config[key];
    if (x === undefined) return fallback;
    const expected = `expected one of ${values.map((v) => `'${v}'`).join(', ')}`;
    if (typeof x !== 'string') throw new TypeError(`${this.field(key)}: ${expected}, got ${typeof x}`);
    if (!(values as readonly string[]).includes(x))
      throw new RangeError(`${this.field(key)}: ${expected}, got '${x}'`);
    return x as T;
  }

  /** A non-empty string, or the default when absent. */
  string(key: string, fallback: string): string {
    this.read.add(key);
    const x = this.config[key];
    if (x === undefined) return fallback;
    if (typeof x !== 'string') throw new TypeError(`${this.field(key)}: expected a string, got ${typeof x}`);
    if (x.length === 0) throw new RangeError(`${this.field(key)}: expected a non-empty string`);
    return x;
  }

  /** A boolean, or the default when absent. */
  boolean(key: string, fallback: boolean): boolean {
    this.read.add(key);
    const x = this.config[key];
    if (x === undefined) return fallback;
    if (typeof x !== 'boolean')
      throw new TypeError(`${this.field(key)}: expected true or false, got ${typeof x}`);
    return x;
  }

  /** Throws RangeError naming the first key that no reader asked for. */
  done(): void {
    for (const key of Object.keys(this.config))
      if (!this.read.has(key))
        throw new RangeError(
          `${this.field(key)}: unknown parameter of '${this.strategy}' (known: ${[...this.read]
            .filter((k) => k !== 'name')
            .join(', ')})`,
        );
  }
}
