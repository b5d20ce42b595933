/**
 * Experiment configuration: the JSON schema (TypeBox), defaults, and validation that names the
 * path of every bad field. A run is fully determined by its configuration and seed.
 */
import Type, { type Static, type TSchema } from 'typebox';
import Value from 'typebox/value';
import { BUILT_IN_ESTIMATORS_SCHEMA, estimatorsSchema, referenceEstimators } from './estimators/registry.js';

const Int = (o: { minimum?: number; maximum?: number; default?: number; description?: string } = {}) =>
  Type.Integer(o);
const Num = (
  o: {
    minimum?: number;
    maximum?: number;
    exclusiveMinimum?: number;
    default?: number;
    description?: string;
  } = {},
) => Type.Number(o);
const Obj = <T extends Record<string, TSchema>>(props: T, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
const OneOf = <T extends string>(values: readonly T[], description?: string) =>
  Type.Enum(values as T[], description ? { description } : {});

/** Data set and test split. */
export const DataSchema = Obj({
  dataset: Type.Optional(
    OneOf(['fashion-mnist', 'synthetic'] as const, 'real Fashion-MNIST (default) or Gaussian mixtures'),
  ),
  /** Training examples shared out among the silos (default: all available). */
  trainSize: Type.Optional(Int({ minimum: 10 })),
  /** Size of the common, class-balanced test set (default 2000). */
  testSize: Type.Optional(Int({ minimum: 10 })),
  /** Gaussian-mixture settings when dataset = synthetic. */
  synthetic: Type.Optional(
    Obj({
      features: Type.Optional(Int({ minimum: 1 })),
      classes: Type.Optional(Int({ minimum: 2 })),
      separation: Type.Optional(Num({ exclusiveMinimum: 0 })),
      examples: Type.Optional(Int({ minimum: 20 })),
    }),
  ),
});

/** How the training pool is shared out; parameters are checked against the kind in `parseConfig`. */
export const PartitionSchema = Obj({
  kind: OneOf(['iid', 'dirichlet', 'quantity-skew', 'mavericks', 'mixed'] as const),
  /** Dirichlet concentration μ over labels (kind = dirichlet, and the non-IID silos of kind = mixed). */
  alpha: Type.Optional(Num({ exclusiveMinimum: 0 })),
  /** Dirichlet concentration of the silo sizes (kind = quantity-skew). */
  beta: Type.Optional(Num({ exclusiveMinimum: 0 })),
  /** Mavericks (papers/000 Fig. 1, papers/001 Def. 3.1): how many silos (the last ones) own rare classes. */
  mavericks: Type.Optional(Int({ minimum: 1 })),
  /** 'exclusive' (each Maverick alone owns its classes, default) or 'shared' (Mavericks share them). */
  mode: Type.Optional(OneOf(['exclusive', 'shared'] as const)),
  /** Classes each Maverick owns (default 1). */
  classesPerMaverick: Type.Optional(Int({ minimum: 1 })),
  /**
   * kind = mixed (papers/002 §IV.A: IID and Dirichlet(alpha) silos together): how many silos, the
   * last ones, hold Dirichlet(alpha) data; the others are IID. Each group gets a share of the pool
   * proportional to its number of silos.
   */
  nonIid: Type.Optional(Int({ minimum: 1 })),
});

export const AttackSchema = Obj({
  silo: Int({ minimum: 0 }),
  kind: OneOf([
    'label-flip',
    'label-shuffle',
    'random-data',
    'random-update',
    'free-rider',
    'scale',
  ] as const),
  /** Update scaling factor (kind = scale) or noise scale (kind = random-update). */
  factor: Type.Optional(Num()),
});

/** The model; `hidden` (layer widths) applies to the MLP only. */
export const ModelSchema = Obj({
  kind: OneOf(['mlp', 'cnn003', 'lenet5'] as const),
  hidden: Type.Optional(Type.Array(Int({ minimum: 1 }), { minItems: 1 })),
});

export const TrainingSchema = Obj({
  optimizer: Type.Optional(OneOf(['adam', 'sgd'] as const)),
  learningRate: Type.Optional(Num({ exclusiveMinimum: 0 })),
  weightDecay: Type.Optional(Num({ minimum: 0 })),
  epochs: Type.Optional(Int({ minimum: 1 })),
  batchSize: Type.Optional(Int({ minimum: 1 })),
});

export const SecureAggregationSchema = Obj({
  /** Run the real masked-summation protocol (default true). */
  enabled: Type.Optional(Type.Boolean()),
  /** Shamir threshold t (default ⌊2n/3⌋ + 1). */
  threshold: Type.Optional(Int({ minimum: 2 })),
  /** Each update coordinate is clipped to [−clip, clip] before quantization. */
  clip: Type.Optional(Num({ exclusiveMinimum: 0 })),
  /** Simulated dropouts: silo `silo` vanishes in round `round` at point `at` of the protocol. */
  dropouts: Type.Optional(
    Type.Array(
      Obj({
        round: Int({ minimum: 1 }),
        silo: Int({ minimum: 0 }),
        at: OneOf([
          'before-advertise',
          'after-advertise',
          'after-share',
          'after-mask',
          'after-consistency',
        ] as const),
      }),
    ),
  ),
});

/**
 * Full-visibility estimators, one optional key per estimator, derived from the estimator registry
 * (src/fl/estimators/registry.ts), where each estimator declares its options. This is the schema
 * over the built-ins; `parseConfig` also accepts the estimators user modules registered.
 */
export const EstimatorsSchema = BUILT_IN_ESTIMATORS_SCHEMA;

const comparisonSchema = <E extends TSchema>(estimators: E) =>
  Obj({
    /** Reference for the comparison table: MR-SV (default) or the true Shapley value of the retraining game. */
    reference: Type.Optional(OneOf([...referenceEstimators(), 'trueSv'])),
    /** Compare cumulative scores (default) or the scores of one round. */
    at: Type.Optional(Type.Union([Type.Literal('cumulative'), Int({ minimum: 1 })])),
    /** Full-visibility estimators to run; `{}` runs one with its defaults. Default: the registry's `byDefault` ones (MR-SV, COS). */
    estimators: Type.Optional(estimators),
    /** Compute the true Shapley value of the retraining game (2^n FedAvg runs); default: when n ≤ 6. */
    trueShapley: Type.Optional(Type.Boolean()),
  });

export const ComparisonSchema = comparisonSchema(EstimatorsSchema);

/** The whole experiment configuration. */
export const ExperimentConfigSchema = Obj({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  seed: Type.Optional(Int({ minimum: 0, maximum: 2 ** 31 - 1 })),
  /** Number of seeds (seed, seed+1, …); `--seeds` overrides. */
  seeds: Type.Optional(Int({ minimum: 1, maximum: 100 })),
  silos: Int({ minimum: 2, maximum: 1000 }),
  rounds: Int({ minimum: 1, maximum: 100000 }),
  data: Type.Optional(DataSchema),
  partition: Type.Optional(PartitionSchema),
  /** Per-silo label noise with linearly increasing rates 0 … maxRate (papers/003 §5.4). */
  labelNoise: Type.Optional(Obj({ maxRate: Num({ minimum: 0, maximum: 1 }) })),
  attacks: Type.Optional(Type.Array(AttackSchema)),
  model: Type.Optional(ModelSchema),
  training: Type.Optional(TrainingSchema),
  /**
   * How coalition models are formed: FedAvg M_S = M0 + Σ w_iΔ_i / Σ w_i (default) or the papers'
   * additive M_S = M0 + Σ_{i∈S} w_iΔ_i / Σ_all w (equal weights: Σ_S Δ_i / N). The weights are the
   * strategy's (`strategy.weights` for FedAvg).
   */
  aggregation: Type.Optional(Obj({ convention: Type.Optional(OneOf(['fedavg', 'additive'] as const)) })),
  secureAggregation: Type.Optional(SecureAggregationSchema),
  /** Selection/aggregation strategy, validated by the strategy registry (default fedavg, all silos). */
  strategy: Type.Optional(Type.Object({ name: Type.String() }, { additionalProperties: true })),
  scoring: Type.Optional(Obj({ utility: Type.Optional(OneOf(['accuracy', 'negLoss'] as const)) })),
  comparison: Type.Optional(ComparisonSchema),
});

export type ExperimentConfig = Static<typeof ExperimentConfigSchema>;

/** A configuration problem: the JSON path of the field and what is wrong with it. */
export interface ConfigIssue {
  path: string;
  message: string;
}

/** Thrown by `parseConfig`; `issues` lists every problem, the message the first few. */
export class ConfigError extends Error {
  readonly issues: ConfigIssue[];
  constructor(issues: ConfigIssue[], source = 'config') {
    const shown = issues.slice(0, 8).map((i) => `  ${i.path || '(root)'}: ${i.message}`);
    const more = issues.length > 8 ? [`  … and ${issues.length - 8} more`] : [];
    super(`${source}: invalid configuration\n${[...shown, ...more].join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** What the union-typed fields accept, for their error messages. */
const UNION_HINTS: Record<string, string> = {
  'comparison.at': "expected 'cumulative' or a round number ≥ 1",
};

/** JSON pointer `/a/0/b` → `a[0].b`. */
function toPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
}

/** Human messages from TypeBox's errors, one per field (the most specific first). */
function issuesOf(schema: TSchema, value: unknown): ConfigIssue[] {
  const byPath = new Map<string, string>();
  for (const e of Value.Errors(schema, value)) {
    const err = e as {
      keyword: string;
      instancePath: string;
      params: Record<string, unknown>;
      message: string;
    };
    if (err.keyword === 'boolean') continue; // reported as additionalProperties on the parent
    if (err.keyword === 'additionalProperties') {
      for (const key of (err.params.additionalProperties as string[]) ?? [])
        byPath.set(toPath(`${err.instancePath}/${key}`), 'unknown key');
      continue;
    }
    const path = toPath(err.instancePath);
    if (err.keyword === 'anyOf') {
      byPath.set(path, UNION_HINTS[path] ?? 'does not match any allowed form');
      continue;
    }
    if (byPath.has(path)) continue;
    let message = err.message;
    if (err.keyword === 'enum')
      message = `expected one of ${(err.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    if (err.keyword === 'required') {
      const missing = (err.params.requiredProperties as string[]) ?? [];
      for (const key of missing) byPath.set(toPath(`${err.instancePath}/${key}`), 'required');
      continue;
    }
    byPath.set(path, message);
  }
  return [...byPath].map(([path, message]) => ({ path, message }));
}

let extended: { estimators: TSchema; schema: TSchema } | undefined;

/** The configuration schema over every registered estimator (rebuilt after a registration). */
function currentSchema(): TSchema {
  const estimators = estimatorsSchema();
  if (estimators === EstimatorsSchema) return ExperimentConfigSchema;
  if (extended?.estimators !== estimators) {
    const comparison = Type.Optional(comparisonSchema(estimators));
    extended = { estimators, schema: Obj({ ...ExperimentConfigSchema.properties, comparison }) };
  }
  return extended.schema;
}

/**
 * Validates a parsed JSON configuration. Unknown keys and bad values are rejected with the path
 * of the field (`comparison.estimators.gtg.budget: must be >= 1`).
 * @throws ConfigError listing every problem.
 */
export function parseConfig(value: unknown, source = 'config'): ExperimentConfig {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ConfigError([{ path: '', message: 'expected a JSON object' }], source);
  const issues = issuesOf(currentSchema(), value);
  if (issues.length > 0) throw new ConfigError(issues, source);
  const cfg = value as ExperimentConfig;
  const extra: ConfigIssue[] = [];
  for (const [k, a] of (cfg.attacks ?? []).entries())
    if (a.silo >= cfg.silos)
      extra.push({ path: `attacks[${k}].silo`, message: `must be < silos (${cfg.silos})` });
  for (const [k, d] of (cfg.secureAggregation?.dropouts ?? []).entries()) {
    if (d.silo >= cfg.silos)
      extra.push({
        path: `secureAggregation.dropouts[${k}].silo`,
        message: `must be < silos (${cfg.silos})`,
      });
    if (d.round > cfg.rounds)
      extra.push({
        path: `secureAggregation.dropouts[${k}].round`,
        message: `must be ≤ rounds (${cfg.rounds})`,
      });
  }
  const p = cfg.partition;
  const allowed: Record<string, string[]> = {
    alpha: ['dirichlet', 'mavericks', 'mixed'],
    beta: ['quantity-skew'],
    mavericks: ['mavericks'],
    mode: ['mavericks'],
    classesPerMaverick: ['mavericks'],
    nonIid: ['mixed'],
  };
  if (p) {
    if ((p.kind === 'dirichlet' || p.kind === 'mixed') && p.alpha === undefined)
      extra.push({ path: 'partition.alpha', message: `required for kind '${p.kind}'` });
    if (p.kind === 'mixed') {
      if (p.nonIid === undefined)
        extra.push({ path: 'partition.nonIid', message: "required for kind 'mixed'" });
      else if (p.nonIid >= cfg.silos)
        extra.push({ path: 'partition.nonIid', message: `must be < silos (${cfg.silos})` });
    }
    for (const [key, kinds] of Object.entries(allowed))
      if ((p as Record<string, unknown>)[key] !== undefined && !kinds.includes(p.kind))
        extra.push({
          path: `partition.${key}`,
          message: `applies only to kind ${kinds.map((k) => `'${k}'`).join(' or ')}`,
        });
    if (p.kind === 'mavericks' && (p.mavericks ?? 1) >= cfg.silos)
      extra.push({ path: 'partition.mavericks', message: `must be < silos (${cfg.silos})` });
  }
  if (cfg.model?.hidden !== undefined && cfg.model.kind !== 'mlp')
    extra.push({ path: 'model.hidden', message: "applies only to kind 'mlp'" });
  const t = cfg.secureAggregation?.threshold;
  if (t !== undefined && t > cfg.silos)
    extra.push({ path: 'secureAggregation.threshold', message: `must be ≤ silos (${cfg.silos})` });
  const at = cfg.comparison?.at;
  if (typeof at === 'number' && at > cfg.rounds)
    extra.push({ path: 'comparison.at', message: `must be ≤ rounds (${cfg.rounds})` });
  if (extra.length > 0) throw new ConfigError(extra, source);
  return cfg;
}
