/**
 * Experiment configuration: the JSON schema (TypeBox), defaults, and validation that names the
 * path of every bad field. A run is fully determined by its configuration and seed.
 */
import Type, { type Static, type TSchema } from 'typebox';
import Value from 'typebox/value';

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
const OneOf = <T extends string>(
  values: readonly T[],
  o: string | { description?: string; default?: T } = {},
) => Type.Enum(values as T[], typeof o === 'string' ? (o ? { description: o } : {}) : o);
/**
 * `schema` with documentation added: `description`, and `default` as an annotation only (parseConfig
 * validates with `Value.Errors`, which never fills defaults in). A copy; TypeBox's markers are kept.
 * docs/config.md is generated from these annotations (scripts/gen-config-docs.ts).
 */
const Doc = <T extends TSchema>(schema: T, o: { description?: string; default?: unknown }): T =>
  Object.defineProperties(
    {},
    { ...Object.getOwnPropertyDescriptors(schema), ...Object.getOwnPropertyDescriptors(o) },
  ) as T;

/** Data set and test split. */
export const DataSchema = Obj({
  dataset: Type.Optional(
    OneOf(['fashion-mnist', 'synthetic'] as const, 'real Fashion-MNIST (default) or Gaussian mixtures'),
  ),
  /** Training examples shared out among the silos (default: all available). */
  trainSize: Type.Optional(
    Int({
      minimum: 10,
      description:
        'Training examples shared out among the silos (after the test and validation sets are set aside). Default: all available.',
    }),
  ),
  /** Size of the common, class-balanced test set (default 2000). */
  testSize: Type.Optional(
    Int({ minimum: 10, default: 2000, description: 'Size of the common, class-balanced test set.' }),
  ),
  /** Gaussian-mixture settings when dataset = synthetic. */
  synthetic: Type.Optional(
    Obj(
      {
        features: Type.Optional(Int({ minimum: 1, default: 784, description: 'Features per example.' })),
        classes: Type.Optional(Int({ minimum: 2, default: 10, description: 'Number of classes.' })),
        separation: Type.Optional(
          Num({
            exclusiveMinimum: 0,
            default: 0.6,
            description:
              'Spread of the class means, μ_c = 0.5 + separation·(u_c − 0.5) with u_c uniform in [0, 1]^F.',
          }),
        ),
        examples: Type.Optional(
          Int({
            minimum: 20,
            description:
              'Examples generated in all. Default: (trainSize, else 200 per silo) + (testSize, else 500) + 200.',
          }),
        ),
      },
      'Gaussian-mixture settings when dataset = synthetic.',
    ),
  ),
});

/** How the training pool is shared out; parameters are checked against the kind in `parseConfig`. */
export const PartitionSchema = Obj({
  kind: OneOf(['iid', 'dirichlet', 'quantity-skew', 'mavericks', 'mixed'] as const, {
    description:
      'iid: equal random shares; dirichlet: label skew, Dirichlet(alpha) per class; quantity-skew: IID labels, sizes from Dirichlet(beta); mavericks: the last `mavericks` silos own whole classes; mixed: IID and Dirichlet(alpha) silos together (papers/002 §IV.A).',
  }),
  /** Dirichlet concentration μ over labels (kind = dirichlet, and the non-IID silos of kind = mixed). */
  alpha: Type.Optional(
    Num({
      exclusiveMinimum: 0,
      description:
        'Dirichlet concentration over labels: required for kind = dirichlet and mixed (its non-IID silos); for kind = mavericks it splits the common classes among the other silos (default: equal shares).',
    }),
  ),
  /** Dirichlet concentration of the silo sizes (kind = quantity-skew). */
  beta: Type.Optional(
    Num({
      exclusiveMinimum: 0,
      description: 'Dirichlet concentration of the silo sizes; needed by kind = quantity-skew.',
    }),
  ),
  /** Mavericks (papers/000 Fig. 1, papers/001 Def. 3.1): how many silos (the last ones) own rare classes. */
  mavericks: Type.Optional(
    Int({
      minimum: 1,
      default: 1,
      description:
        'kind = mavericks (papers/000 Fig. 1, papers/001 Def. 3.1): how many silos, the last ones, own rare classes; fewer than `silos`.',
    }),
  ),
  /** 'exclusive' (each Maverick alone owns its classes, default) or 'shared' (Mavericks share them). */
  mode: Type.Optional(
    OneOf(['exclusive', 'shared'] as const, {
      default: 'exclusive',
      description:
        'kind = mavericks: each Maverick alone owns its classes (exclusive) or the Mavericks share them.',
    }),
  ),
  /** Classes each Maverick owns (default 1). */
  classesPerMaverick: Type.Optional(
    Int({ minimum: 1, default: 1, description: 'kind = mavericks: classes each Maverick owns.' }),
  ),
  /**
   * kind = mixed (papers/002 §IV.A: IID and Dirichlet(alpha) silos together): how many silos, the
   * last ones, hold Dirichlet(alpha) data; the others are IID. Each group gets a share of the pool
   * proportional to its number of silos.
   */
  nonIid: Type.Optional(
    Int({
      minimum: 1,
      description:
        'kind = mixed (required): how many silos, the last ones, hold Dirichlet(alpha) data; the others are IID. Each group gets a share of the pool proportional to its number of silos.',
    }),
  ),
});

export const AttackSchema = Obj({
  silo: Int({ minimum: 0, description: 'The misbehaving silo (< silos).' }),
  kind: OneOf(
    ['label-flip', 'label-shuffle', 'random-data', 'random-update', 'free-rider', 'scale'] as const,
    'label-flip: label c becomes K − 1 − c; label-shuffle: a fixed permutation of the classes; random-data: noise images with random labels; random-update: Δ replaced by Gaussian noise; free-rider: Δ = 0; scale: Δ multiplied by `factor`.',
  ),
  /** Update scaling factor (kind = scale) or noise scale (kind = random-update). */
  factor: Type.Optional(
    Num({
      description:
        "Update scaling factor (kind = scale, default −1) or the noise's standard deviation (kind = random-update, default: the RMS of the honest update).",
    }),
  ),
});

/** The model; `hidden` (layer widths) applies to the MLP only. */
export const ModelSchema = Obj({
  kind: OneOf(['mlp', 'cnn003', 'lenet5'] as const),
  hidden: Type.Optional(Type.Array(Int({ minimum: 1 }), { minItems: 1 })),
});

export const TrainingSchema = Obj({
  optimizer: Type.Optional(
    OneOf(['adam', 'sgd'] as const, { default: 'adam', description: 'Local optimizer.' }),
  ),
  learningRate: Type.Optional(
    Num({ exclusiveMinimum: 0, default: 0.001, description: 'Learning rate (for either optimizer).' }),
  ),
  weightDecay: Type.Optional(Num({ minimum: 0, default: 0.001, description: 'Weight decay.' })),
  epochs: Type.Optional(Int({ minimum: 1, default: 1, description: 'Local epochs per round.' })),
  batchSize: Type.Optional(Int({ minimum: 1, default: 64, description: 'Minibatch size.' })),
});

export const SecureAggregationSchema = Obj({
  /** Run the real masked-summation protocol (default true). */
  enabled: Type.Optional(
    Type.Boolean({
      default: true,
      description:
        'Run the real masked-summation protocol; false sums the updates in the clear (networked runs always use the protocol).',
    }),
  ),
  /** Shamir threshold t (default ⌊2k/3⌋ + 1 for a round of k participants). */
  threshold: Type.Optional(
    Int({
      minimum: 2,
      description:
        "Shamir threshold t (≤ silos), raised to a strict majority of the round's participants and capped at their number. Default: ⌊2k/3⌋ + 1 for a round of k participants.",
    }),
  ),
  /** Each update coordinate is clipped to [−clip, clip] before quantization. */
  clip: Type.Optional(
    Num({
      exclusiveMinimum: 0,
      default: 1,
      description: 'Each update coordinate is clipped to [−clip, clip] before quantization.',
    }),
  ),
  /** Simulated dropouts: silo `silo` vanishes in round `round` at point `at` of the protocol. */
  dropouts: Type.Optional(
    Type.Array(
      Obj({
        round: Int({ minimum: 1, description: 'Round of the dropout (≤ rounds).' }),
        silo: Int({ minimum: 0, description: 'The silo that vanishes (< silos).' }),
        at: OneOf(
          ['before-advertise', 'after-advertise', 'after-share', 'after-mask', 'after-consistency'] as const,
          'The last stage message the silo sends: none (before-advertise), AdvertiseKeys, ShareKeys, MaskedInputCollection or ConsistencyCheck.',
        ),
      }),
      {
        description:
          'Simulated dropouts: silo `silo` vanishes in round `round` after point `at` of the protocol.',
      },
    ),
  ),
});

const Budget = Obj({ budget: Type.Optional(Int({ minimum: 1 })) });

export const EstimatorsSchema = Obj({
  mrsv: Type.Optional(Obj({})),
  tmr: Type.Optional(
    Obj({
      threshold: Type.Optional(Num({ minimum: 0 })),
      decay: Type.Optional(Num({ minimum: 0, maximum: 1 })),
    }),
  ),
  gtg: Type.Optional(Budget),
  mc: Type.Optional(Budget),
  owen: Type.Optional(Budget),
  banzhaf: Type.Optional(Budget),
  cos: Type.Optional(Obj({})),
  maverick: Type.Optional(
    Obj({
      temperature: Type.Optional(Num({ exclusiveMinimum: 0 })),
      alpha: Type.Optional(Num({ minimum: 0, maximum: 1 })),
    }),
  ),
  tsv: Type.Optional(Obj({ budget: Type.Optional(Int({ minimum: 1 })) })),
});

export const ComparisonSchema = Obj({
  /** Reference for the comparison table: MR-SV or the true Shapley value of the retraining game. */
  reference: Type.Optional(
    OneOf(['mrsv', 'trueSv'] as const, {
      description:
        'Reference of the comparison table: MR-SV or the true Shapley value of the retraining game. Default: trueSv when the true Shapley value is computed (see trueShapley), else mrsv.',
    }),
  ),
  /** Compare cumulative scores (default) or the scores of one round. */
  at: Type.Optional(
    Type.Union([Type.Literal('cumulative'), Int({ minimum: 1 })], {
      default: 'cumulative',
      description:
        'Compare scores summed over all rounds, or the single-round scores of round r (≤ rounds) against the reference accumulated to round r.',
    }),
  ),
  /** Full-visibility estimators to run; `{}` runs one with its defaults. Default: { mrsv: {}, cos: {} }. */
  estimators: Type.Optional(
    Doc(EstimatorsSchema, {
      default: { mrsv: {}, cos: {} },
      description:
        'Full-visibility estimators to run, by name; `{}` runs one with its defaults: mrsv (exact Shapley per round, summed), tmr (threshold 0.001, decay 1), gtg, mc, owen, banzhaf and tsv (budget: 32 coalition evaluations per participant per round), cos, maverick (temperature 0.01, alpha 0.7).',
    }),
  ),
  /** Compute the true Shapley value of the retraining game (2^n FedAvg runs); default: when n ≤ 6. */
  trueShapley: Type.Optional(
    Type.Boolean({
      description:
        'Compute the true Shapley value of the retraining game (2^n FedAvg runs; at most 16 silos). Default: when silos ≤ 6.',
    }),
  ),
});

/** The whole experiment configuration. */
export const ExperimentConfigSchema = Obj({
  name: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Name of the run, shown in logs and the report.',
    }),
  ),
  seed: Type.Optional(
    Int({
      minimum: 0,
      maximum: 2 ** 31 - 1,
      default: 1,
      description:
        "First seed; a run is fully determined by its configuration and seed. The networked commands' `--seed` overrides.",
    }),
  ),
  /** Number of seeds (seed, seed+1, …); `--seeds` overrides. */
  seeds: Type.Optional(
    Int({
      minimum: 1,
      maximum: 100,
      default: 1,
      description: 'Number of seeds run by `fedscore experiment` (seed, seed+1, …); `--seeds` overrides.',
    }),
  ),
  silos: Int({ minimum: 2, maximum: 1000, description: 'Number of silos n.' }),
  rounds: Int({ minimum: 1, maximum: 100000, description: 'Number of federated rounds.' }),
  data: Type.Optional(Doc(DataSchema, { description: 'Data set and test split.' })),
  partition: Type.Optional(
    Doc(PartitionSchema, {
      default: { kind: 'iid' },
      description:
        'How the training pool is shared out among the silos; parameters are checked against the kind.',
    }),
  ),
  /** Per-silo label noise with linearly increasing rates 0 … maxRate (papers/003 §5.4). */
  labelNoise: Type.Optional(
    Obj(
      {
        maxRate: Num({
          minimum: 0,
          maximum: 1,
          description: 'Noise rate of the last silo; silo i of n gets maxRate·i/(n − 1).',
        }),
      },
      'Per-silo label noise with linearly increasing rates 0 … maxRate (papers/003 §5.4).',
    ),
  ),
  attacks: Type.Optional(Type.Array(AttackSchema, { description: 'Misbehaving silos to simulate.' })),
  model: Type.Optional(
    Doc(ModelSchema, {
      default: { kind: 'mlp' },
      description: 'The model; `hidden` (layer widths, default [200]) applies to the MLP only.',
    }),
  ),
  training: Type.Optional(Doc(TrainingSchema, { description: 'Local training of every silo.' })),
  /**
   * How coalition models are formed: FedAvg M_S = M0 + Σ w_iΔ_i / Σ w_i (default) or the papers'
   * additive M_S = M0 + Σ_{i∈S} w_iΔ_i / Σ_all w (equal weights: Σ_S Δ_i / N). The weights are the
   * strategy's (`strategy.weights` for FedAvg).
   */
  aggregation: Type.Optional(
    Obj(
      {
        convention: Type.Optional(
          OneOf(['fedavg', 'additive'] as const, {
            default: 'fedavg',
            description:
              "How coalition models are formed: FedAvg M_S = M0 + Σ_S w_iΔ_i / Σ_S w_i, or the papers' additive M_S = M0 + Σ_S w_iΔ_i / Σ_all w (equal weights: Σ_S Δ_i / N). The weights are the strategy's.",
          }),
        ),
      },
      'How coalition models are formed.',
    ),
  ),
  secureAggregation: Type.Optional(
    Doc(SecureAggregationSchema, { description: "Secure aggregation of each round's updates." }),
  ),
  /** Selection/aggregation strategy, validated by the strategy registry (default fedavg, all silos). */
  strategy: Type.Optional(
    Type.Object(
      {
        name: Type.String({
          description:
            'fedavg, score-weighted, fedemd, fedowen, fedtsv, fedms, s-fedavg or greedyfed; networked runs take fedavg only.',
        }),
      },
      {
        additionalProperties: true,
        default: { name: 'fedavg' },
        description:
          "Selection/aggregation strategy `{ name, ...parameters }`; the other keys are the strategy's parameters, validated by the strategy registry (src/fl/strategies/registry.ts lists them with their defaults).",
      },
    ),
  ),
  scoring: Type.Optional(
    Obj(
      {
        utility: Type.Optional(
          OneOf(['accuracy', 'negLoss'] as const, {
            default: 'accuracy',
            description: 'Utility v of a model on the common test set: accuracy or the negative loss.',
          }),
        ),
      },
      'How models are valued.',
    ),
  ),
  comparison: Type.Optional(
    Doc(ComparisonSchema, {
      description: 'The full-visibility comparison with Shapley-family references.',
    }),
  ),
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

/**
 * Validates a parsed JSON configuration. Unknown keys and bad values are rejected with the path
 * of the field (`comparison.estimators.gtg.budget: must be >= 1`).
 * @throws ConfigError listing every problem.
 */
export function parseConfig(value: unknown, source = 'config'): ExperimentConfig {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ConfigError([{ path: '', message: 'expected a JSON object' }], source);
  const issues = issuesOf(ExperimentConfigSchema, value);
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
