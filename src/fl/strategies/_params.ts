/**
 * Internal: reading a strategy's plain JSON parameters with errors that name the field
 * (`strategy.epsilon: expected a number in [0, 1], got 2`). A wrong type throws TypeError, a value
 * out of range or an unknown key RangeError (docs/architecture.md, "Conventions"). Never re-exported.
 *
 * A strategy entry's `parameters` schema (./strategy.ts) is where its parameters are written: type,
 * bounds, default and description of each. The built-ins read them with `readParameters`, which
 * derives every reader call from the schema; a `Params` given the schema also checks any other read
 * against it (the key is declared, with the same default, bounds or values), so what
 * docs/config.md says is what the strategy reads.
 */

import Type, { type TObject, type TSchema } from 'typebox';
import type { NumberSpec, StrategyParams } from './strategy.js';

/** The part of a parameter's JSON schema the readers use. */
interface ParameterSchema {
  type?: string;
  enum?: readonly unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}

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

const show = (v: unknown) => (v === undefined ? 'no default' : JSON.stringify(v));

/** A strategy's parameters, read once each; `done()` rejects keys nobody read. */
export class Params implements StrategyParams {
  private readonly read = new Set<string>(['name']);
  /**
   * @param schema the strategy entry's `parameters`: when given, every read must be of a key it
   *   declares, with its default and bounds (or values); a read that is not throws Error (a bug
   *   in the strategy, not in the configuration).
   */
  constructor(
    private readonly config: Readonly<Record<string, unknown>>,
    private readonly strategy: string,
    private readonly schema?: TObject,
  ) {}

  private field(key: string): string {
    return `strategy.${key}`;
  }

  /** The schema of `key` (undefined without a schema). @throws Error when the schema lacks it. */
  private declared(key: string): ParameterSchema | undefined {
    if (this.schema === undefined) return undefined;
    const s = (this.schema.properties as Record<string, ParameterSchema>)[key];
    if (s === undefined)
      throw new Error(
        `strategy '${this.strategy}' reads parameter '${key}', which its parameters schema does not declare`,
      );
    return s;
  }

  /** @throws Error naming what the read and the schema disagree on. */
  private agree(key: string, what: string, read: string, declared: string): void {
    if (read !== declared)
      throw new Error(
        `strategy '${this.strategy}' reads parameter '${key}' with ${what} ${read}, its parameters schema declares ${declared}`,
      );
  }

  private checkNumber(key: string, fallback: number | undefined, spec: NumberSpec): void {
    const s = this.declared(key);
    if (s === undefined) return;
    this.agree(
      key,
      'type',
      'number',
      s.type === 'number' || s.type === 'integer' ? 'number' : String(s.type),
    );
    this.agree(key, 'default', show(fallback), show(s.default));
    this.agree(key, 'bounds', describe(spec), describe(specOf(s))); // describe() shows every bound
  }

  private checkOther(key: string, type: string, fallback: unknown, values?: readonly string[]): void {
    const s = this.declared(key);
    if (s === undefined) return;
    this.agree(key, 'type', type, s.enum ? 'enumeration' : String(s.type));
    if (values) this.agree(key, 'values', JSON.stringify(values), JSON.stringify(s.enum));
    this.agree(key, 'default', show(fallback), show(s.default));
  }

  /** A finite number within the spec, or the default when absent. */
  number(key: string, fallback: number, spec: NumberSpec = {}): number {
    this.checkNumber(key, fallback, spec);
    const x = this.readNumber(key, spec);
    return x === undefined ? fallback : x;
  }

  /** A finite number within the spec, or undefined when absent. */
  optionalNumber(key: string, spec: NumberSpec = {}): number | undefined {
    this.checkNumber(key, undefined, spec);
    return this.readNumber(key, spec);
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
    this.checkOther(key, 'enumeration', fallback, values);
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
    this.checkOther(key, 'string', fallback);
    this.read.add(key);
    const x = this.config[key];
    if (x === undefined) return fallback;
    if (typeof x !== 'string') throw new TypeError(`${this.field(key)}: expected a string, got ${typeof x}`);
    if (x.length === 0) throw new RangeError(`${this.field(key)}: expected a non-empty string`);
    return x;
  }

  /** A boolean, or the default when absent. */
  boolean(key: string, fallback: boolean): boolean {
    this.checkOther(key, 'boolean', fallback);
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

/**
 * A strategy's parameters object schema: every parameter optional (a configuration may leave it
 * out), none other allowed. Give each a `description` and, unless absence means something, a
 * `default`; numbers may have bounds, strings an `enum`.
 */
export const parameters = <P extends Record<string, TSchema>>(properties: P): TObject =>
  Type.Object(Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, Type.Optional(s)])), {
    additionalProperties: false,
  });

/**
 * `fraction` (default `fraction`) and `clientsPerRound`: how many silos a round takes
 * (`roundSize` in ./_sampling.ts).
 */
export function roundSizeParameters(fraction: number) {
  return {
    fraction: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1,
      default: fraction,
      description:
        'Fraction of the silos per round: k = round(fraction·n), at least min(2, n) (the private scores need two survivors).',
    }),
    clientsPerRound: Type.Integer({
      minimum: 1,
      description: 'Silos per round k, capped at n; overrides `fraction`. Default: from `fraction`.',
    }),
  };
}

/** The defaults a parameters schema declares, by key (keys without a default are left out). */
export function defaultsOf<P>(schema: TObject): P {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(schema.properties as Record<string, ParameterSchema>))
    if (s.default !== undefined) out[key] = s.default;
  return out as P;
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
  for (const [key, s] of Object.entries(schema.properties as Record<string, ParameterSchema>)) {
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
