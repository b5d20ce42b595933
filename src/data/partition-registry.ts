/**
 * The partition kinds of a configuration's `partition` (docs/config.md), one entry each: the
 * options a kind reads, the ones it needs, its checks against the consortium's size, how it splits
 * the pool, and the roles it gives silos (the report's "Outcomes by silo role"). The configuration
 * check (src/records/config.ts) and the run's setup (src/fl/consortium-data.ts) both read this table, so a
 * kind's options are declared once and no code reads an option another kind owns.
 */
import type { Labels } from './dataset.js';
import { partitionMavericks } from './mavericks.js';
import {
  type Partition,
  partitionDirichlet,
  partitionIid,
  partitionMixed,
  partitionQuantitySkew,
} from './partition.js';

/** A configuration's `partition` options (every kind's; each kind reads its own). */
export interface PartitionOptions {
  readonly alpha?: number;
  readonly beta?: number;
  readonly mavericks?: number;
  readonly mode?: 'exclusive' | 'shared';
  readonly classesPerMaverick?: number;
  readonly nonIid?: number;
}

/** An option's name. */
export type PartitionOption = keyof PartitionOptions;

/** Every option, in the order the configuration reference lists them. */
export const PARTITION_OPTIONS: readonly PartitionOption[] = [
  'alpha',
  'beta',
  'mavericks',
  'mode',
  'classesPerMaverick',
  'nonIid',
];

/** What every kind is given: the silos, the draw's seed and the pool of indices to split. */
export interface PartitionBase {
  readonly numSilos: number;
  readonly seed: number;
  readonly indices: Int32Array;
}

/** A problem of a configuration's partition, with the path of the field. */
export interface PartitionProblem {
  readonly path: string;
  readonly message: string;
}

/** One partition kind. */
export interface PartitionKind {
  readonly kind: string;
  /** The options it reads; any other is refused by the configuration check. */
  readonly options: readonly PartitionOption[];
  /** The options it cannot do without. */
  readonly required: readonly PartitionOption[];
  /** Its checks against the number of silos (beyond each option's own range). */
  problems?(o: PartitionOptions, silos: number): PartitionProblem[];
  /** Splits the pool among the silos. Call only on options the configuration check accepted. */
  split(labels: Labels, base: PartitionBase, o: PartitionOptions, numClasses: number): Partition;
  /** The roles it gives silos, by index (undefined: no role of its own). */
  roles?(o: PartitionOptions, silos: number): (string | undefined)[];
}

/**
 * The value of a required option. The configuration check refuses a configuration without it, so
 * this throws only when a caller skipped that check.
 * @throws RangeError naming `partition.<option>`.
 */
function need<K extends PartitionOption>(
  o: PartitionOptions,
  option: K,
  kind: string,
): NonNullable<PartitionOptions[K]> {
  const v = o[option];
  if (v === undefined) throw new RangeError(`partition.${option}: required for kind '${kind}'`);
  return v as NonNullable<PartitionOptions[K]>;
}

/** The last `count` silos get `role`. */
function lastSilos(silos: number, count: number, role: string): (string | undefined)[] {
  return Array.from({ length: silos }, (_, i) => (i >= silos - count ? role : undefined));
}

const belowSilos = (option: PartitionOption, value: number | undefined, silos: number): PartitionProblem[] =>
  value !== undefined && value >= silos
    ? [{ path: `partition.${option}`, message: `must be < silos (${silos})` }]
    : [];

const IID: PartitionKind = {
  kind: 'iid',
  options: [],
  required: [],
  split: (labels, base) => partitionIid(labels, base),
};

const DIRICHLET: PartitionKind = {
  kind: 'dirichlet',
  options: ['alpha'],
  required: ['alpha'],
  split: (labels, base, o, numClasses) =>
    partitionDirichlet(labels, { ...base, alpha: need(o, 'alpha', 'dirichlet'), numClasses }),
};

const QUANTITY_SKEW: PartitionKind = {
  kind: 'quantity-skew',
  options: ['beta'],
  required: ['beta'],
  split: (labels, base, o) =>
    partitionQuantitySkew(labels, { ...base, ...(o.beta !== undefined ? { beta: o.beta } : {}) }),
};

/** Defaults of kind 'mavericks' (papers/000 Fig. 1: one Maverick owning its classes alone). */
const MAVERICK_DEFAULTS = { mavericks: 1, mode: 'exclusive' } as const;

const MAVERICKS: PartitionKind = {
  kind: 'mavericks',
  options: ['alpha', 'mavericks', 'mode', 'classesPerMaverick'],
  required: [],
  problems: (o, silos) => belowSilos('mavericks', o.mavericks ?? MAVERICK_DEFAULTS.mavericks, silos),
  split: (labels, base, o, numClasses) =>
    partitionMavericks(labels, {
      ...base,
      numClasses,
      numMavericks: o.mavericks ?? MAVERICK_DEFAULTS.mavericks,
      mode: o.mode ?? MAVERICK_DEFAULTS.mode,
      ...(o.classesPerMaverick !== undefined ? { classesPerMaverick: o.classesPerMaverick } : {}),
      ...(o.alpha !== undefined ? { alpha: o.alpha } : {}),
    }),
  roles: (o, silos) => lastSilos(silos, o.mavericks ?? MAVERICK_DEFAULTS.mavericks, 'maverick'),
};

const MIXED: PartitionKind = {
  kind: 'mixed',
  options: ['alpha', 'nonIid'],
  required: ['alpha', 'nonIid'],
  problems: (o, silos) => belowSilos('nonIid', o.nonIid, silos),
  split: (labels, base, o, numClasses) =>
    partitionMixed(labels, {
      ...base,
      nonIid: need(o, 'nonIid', 'mixed'),
      alpha: need(o, 'alpha', 'mixed'),
      numClasses,
    }),
  roles: (o, silos) => lastSilos(silos, need(o, 'nonIid', 'mixed'), 'non-iid'),
};

/** The partition kinds, the default first. */
export const PARTITION_KINDS: readonly PartitionKind[] = [IID, DIRICHLET, QUANTITY_SKEW, MAVERICKS, MIXED];

/** The kind of a configuration without `partition`. */
export const DEFAULT_PARTITION = IID.kind;

/** The entry of `kind`. @throws RangeError naming `partition.kind` for an unknown kind. */
export function partitionKind(kind: string): PartitionKind {
  const k = PARTITION_KINDS.find((p) => p.kind === kind);
  if (!k)
    throw new RangeError(
      `partition.kind: expected one of ${PARTITION_KINDS.map((p) => p.kind).join(', ')}, got '${kind}'`,
    );
  return k;
}

/**
 * The problems of a configuration's partition, in this order: required options missing, the kind's
 * checks against the number of silos, options that belong to other kinds.
 */
export function partitionProblems(
  p: PartitionOptions & { readonly kind: string },
  silos: number,
): PartitionProblem[] {
  const k = partitionKind(p.kind);
  const out: PartitionProblem[] = k.required
    .filter((o) => p[o] === undefined)
    .map((o) => ({ path: `partition.${o}`, message: `required for kind '${k.kind}'` }));
  out.push(...(k.problems?.(p, silos) ?? []));
  for (const option of PARTITION_OPTIONS)
    if (p[option] !== undefined && !k.options.includes(option)) {
      const owners = PARTITION_KINDS.filter((x) => x.options.includes(option)).map((x) => `'${x.kind}'`);
      out.push({ path: `partition.${option}`, message: `applies only to kind ${owners.join(' or ')}` });
    }
  return out;
}
