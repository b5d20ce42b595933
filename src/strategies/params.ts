/**
 * Reading a strategy's plain JSON parameters (`StrategyParams`, ./strategy.ts) with errors that
 * name the field (`strategy.epsilon: expected a number in [0, 1], got 2`): a wrong type throws
 * TypeError, a value out of range or an unknown key RangeError (docs/architecture.md,
 * "Conventions").
 *
 * A strategy entry's `parameters` schema (./strategy.ts) is the one place its parameters are
 * written: type, bounds, default and description of each. Given the schema, `Params` checks the
 * whole configuration against it before the strategy reads anything, and a read returns the
 * declared default for an absent key, so what docs/config.md says is what the strategy gets; a read
 * of a key the schema does not declare throws Error (a bug in the strategy). The built-ins read
 * every parameter with `readParameters`, which derives each read from the schema.
 */

import type { TObject } from 'typebox';
import { type ParameterSchema, propertiesOf } from './_schema.js';
import type { NumberSpec, StrategyParams } from './strategy.js';

function describe(spec: NumberSpec): string {
  const kind = spec.integer ? 'an integer' : 'a number';
  const lo = spec.min === undefined ? '(−∞' : `${spec.minOpen ? '(' : '['}${spec.min}`;
  const hi = spec.max === undefined ? '∞)' : `${spec.max}${spec.maxOpen ? ')' : ']'}`;
  if (spec.min === undefined && spec.max === undefined) return `${kind}`;
  if (spec.max === undefined) return `${kind} ${spec.minOpen ? '>' : '≥'} ${spec.min}`;
  return `${kind} in ${lo}, ${hi}`;
}

/** The bounds a numeric parameter's schema declares, as a reader's spec. */
function specOf(s: ParameterSchema): NumberSpec {
  const spec: NumberSpec = {};
  if (s.exclusiveMinimum !== undefined) Object.assign(spec, { min: s.exclusiveMinimum, minOpen: true });
  else if (s.minimum !== undefined) spec.min = s.minimum;
  if (s.exclusiveMaximum !== undefined) Object.assign(spec, { max: s.exclusiveMaximum, maxOpen: true });
  else if (s.maximum !== undefined) spec.max = s.maximum;
  if (s.type === 'integer') spec.integer = true;
  return spec;
}

/** A strategy's parameters, read once each; `done()` rejects keys nobody read. */
export class Params implements StrategyParams {
  private readonly read = new Set<string>(['name']);
  /**
   * @param schema the strategy entry's `parameters`: when given, the whole configuration is checked
   *   against it here (in the schema's order), every read must be of a key it declares (else Error:
   *   a bug in the strategy, not in the configuration), and an absent key reads as its declared
   *   default.
   */
  constructor(
    private readonly config: Readonly<Record<string, unknown>>,
    private readonly strategy: string,
    private readonly schema?: TObject,
  ) {
    if (schema !== undefined) readParameters(this, schema);
  }

  private field(key: string): string {
    return `strategy.${key}`;
  }

  /**
   * The default the schema declares for `key`, or `fallback` without a schema.
   * @throws Error when the schema does not declare `key`.
   */
  private fallback<T>(key: string, fallback: T): T {
    if (this.schema === undefined) return fallback;
    const s = (this.schema.properties as Record<string, ParameterSchema>)[key];
    if (s === undefined)
      throw new Error(
        `strategy '${this.strategy}' reads parameter '${key}', which its parameters schema does not declare`,
      );
    return s.default === undefined ? fallback : (s.default as T);
  }

  /** A finite number within the spec, or the default when absent. */
  number(key: string, fallback: number, spec: NumberSpec = {}): number {
    const d = this.fallback(key, fallback);
    return this.readNumber(key, spec) ?? d;
  }

  /** A finite number within the spec, or undefined (or the schema's default) when absent. */
  optionalNumber(key: string, spec: NumberSpec = {}): number | undefined {
    const d = this.fallback<number | undefined>(key, undefined);
    return this.readNumber(key, spec) ?? d;
  }

  private readNumber(key: string, spec: NumberSpec): number | undefined {
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
    const d = this.fallback(key, fallback);
    this.read.add(key);
    const x = this.config[key];
    if (x === undefined) return d;
    const expected = `expected one of ${values.map((v) => `'${v}'`).join(', ')}`;
    if (typeof x !== 'string') throw new TypeError(`${this.field(key)}: ${expected}, got ${typeof x}`);
    if (!(values as readonly string[]).includes(x))
      throw new RangeError(`${this.field(key)}: ${expected}, got '${x}'`);
    return x as T;
  }

  /** A non-empty string, or the default when absent. */
  string(key: string, fallback: string): string {
    const d = this.fallback(key, fallback);
    this.read.add(key);
    const x = this.config[key];
    if (x === undefined) return d;
    if (typeof x !== 'string') throw new TypeError(`${this.field(key)}: expected a string, got ${typeof x}`);
    if (x.length === 0) throw new RangeError(`${this.field(key)}: expected a non-empty string`);
    return x;
  }

  /** A boolean, or the default when absent. */
  boolean(key: string, fallback: boolean): boolean {
    const d = this.fallback(key, fallback);
    this.read.add(key);
    const x = this.config[key];
    if (x === undefined) return d;
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

/**
 * Reads every parameter `schema` declares, in its order, with the reader its type calls for and
 * the default and bounds (or values) it declares: an enumeration through `oneOf`, a string through
 * `string`, a boolean through `boolean`, a number or integer through `number` (`optionalNumber`
 * when it has no default; the key is then left out when absent).
 * @throws TypeError for a parameter schema of another kind, or a non-numeric one without a default.
 */
export function readParameters<P>(p: StrategyParams, schema: TObject): P {
  const out: Record<string, unknown> = {};
  for (const [key, s] of propertiesOf(schema)) {
    const numeric = s.type === 'number' || s.type === 'integer';
    if (!numeric && s.default === undefined)
      throw new TypeError(`parameters.${key}: only a number may have no default`);
    let x: unknown;
    if (s.enum) x = p.oneOf(key, s.default as string, s.enum as string[]);
    else if (s.type === 'string') x = p.string(key, s.default as string);
    else if (s.type === 'boolean') x = p.boolean(key, s.default as boolean);
    else if (numeric)
      x =
        s.default === undefined
          ? p.optionalNumber(key, specOf(s))
          : p.number(key, s.default as number, specOf(s));
    else throw new TypeError(`parameters.${key}: expected a number, integer, string, boolean or enumeration`);
    if (x !== undefined) out[key] = x;
  }
  return out as P;
}
