/**
 * The experiment configuration's JSON schema (TypeBox), with a description and default for every
 * key (docs/config.md is generated from it: scripts/gen-config-docs.ts). Data sets, models and
 * estimators come from their registries; parseConfig (./config.ts) validates against this schema
 * and the registries.
 */

import Type, { type Static, type TSchema } from 'typebox';
import { DEFAULT_EMPTY_COALITION, EMPTY_COALITIONS } from '../../scoring/empty-coalition.js';
import { CONVENTIONS, DEFAULT_CONVENTION } from '../consortium/convention.js';
import { DEFAULT_BATCH_SIZE, DEFAULT_EPOCHS, DEFAULT_TEST_SIZE } from '../consortium/defaults.js';
import {
  DEFAULT_MAX_WEIGHT_SHARE,
  DEFAULT_MIN_EFFECTIVE_SILOS,
  DEFAULT_WEIGHT_FLOOR,
} from '../consortium/weight-floor.js';
import { BUILTIN_MISBEHAVIORS, MISBEHAVIOR_NAMES } from '../data/misbehaviors/registry.js';
import { BUILTIN_DATASETS, DEFAULT_DATASET } from '../data/registry.js';
import { DATA_SPLITS, DEFAULT_SPLIT, SPLIT_NAMES } from '../data/split-registry.js';
import {
  BUILT_IN_ESTIMATORS,
  BUILT_IN_ESTIMATORS_SCHEMA,
  defaultReferenceEstimator,
  referenceNames,
  TRUE_SHAPLEY_DEFAULT_MAX_SILOS,
} from '../estimators/registry.js';
import { BUILTIN_MODELS, DEFAULT_MODEL } from '../ml/model-registry.js';
import { withDoc } from '../schema/doc.js';
import { DEFAULT_STRATEGY, networkedSupport, STRATEGY_NAMES } from '../strategies/registry.js';
import { ROUND_SV, TRUE_SV } from './compare.js';

const Int = (o: { minimum?: number; maximum?: number; default?: number; description?: string } = {}) =>
  Type.Integer(o);
const Num = (
  o: {
    minimum?: number;
    maximum?: number;
    exclusiveMinimum?: number;
    exclusiveMaximum?: number;
    default?: number;
    description?: string;
  } = {},
) => Type.Number(o);
export const Obj = <T extends Record<string, TSchema>>(props: T, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
const OneOf = <T extends string>(
  values: readonly T[],
  o: string | { description?: string; default?: T } = {},
) => Type.Enum(values as T[], typeof o === 'string' ? (o ? { description: o } : {}) : o);
export const quoted = (names: readonly string[]) => names.map((n) => `'${n}'`).join(', ');

export { DEFAULT_BATCH_SIZE, DEFAULT_EPOCHS, DEFAULT_TEST_SIZE } from '../consortium/defaults.js';

/** The keys of `data` besides the data sets' option blocks. */
export const DataKeys = {
  dataset: Type.Optional(
    Type.String({
      default: DEFAULT_DATASET,
      description: `Data set, a name from the dataset registry (src/data/registry.ts), checked in parseConfig. Built-in: ${quoted(BUILTIN_DATASETS.map((d) => d.name))} (each with its options below).`,
    }),
  ),
  trainSize: Type.Optional(
    Int({
      minimum: 10,
      description:
        "Training examples shared out among the silos, before the long-tailed transform (under data.split 'paper003-code' each silo trains on a random 80 % of its share). Default: all available.",
    }),
  ),
  testSize: Type.Optional(
    Int({
      minimum: 10,
      default: DEFAULT_TEST_SIZE,
      description:
        "Size of the common test set (class-balanced under data.split 'balanced'; at most ⌈trainSize/4⌉ under 'paper003-code').",
    }),
  ),
  split: Type.Optional(
    OneOf(SPLIT_NAMES, {
      default: DEFAULT_SPLIT,
      description: `How the data set becomes the common test set, the validation set and the pool the partition shares out (the split registry, src/data/split-registry.ts): ${DATA_SPLITS.map((d) => `'${d.name}': ${d.description}`).join('; ')}.`,
    }),
  ),
  longTail: Type.Optional(
    Obj(
      {
        imbalance: Num({
          exclusiveMinimum: 0,
          maximum: 1,
          description:
            'Imbalance factor IF = n_min/n_max in (0, 1]; papers/004 §4.1 uses 0.01 and 0.05. 1 keeps the pool unchanged.',
        }),
        order: Type.Optional(
          OneOf(['index', 'random'] as const, {
            default: 'index',
            description:
              "Which class gets which rank: 'index' (class 0 is the head, as in papers/004 Fig. 5) or a seeded 'random' order.",
          }),
        ),
      },
      'Long-tailed transform of the training pool before partitioning (papers/004 §4.1 and App. A, after Cao et al. 2019): the class of rank r keeps ⌊n_max·IF^(r/(C−1))⌋ of its examples, n_max the largest class count of the pool. The test and validation sets stay balanced.',
    ),
  ),
};

/** A configuration's `data`: the keys above and data sets' option blocks (`data.synthetic`). */
export type DataConfig = Static<ReturnType<typeof Obj<typeof DataKeys>>> & { [dataset: string]: unknown };

/** The option blocks of the built-in data sets that take options, keyed by name. */
export const builtinDatasetBlocks = Object.fromEntries(
  BUILTIN_DATASETS.flatMap((d) =>
    d.options
      ? [
          [
            d.name,
            Type.Optional({
              ...d.options,
              description: `Options of data.dataset '${d.name}': ${String((d.options as { description?: string }).description ?? d.description)}.`,
            }),
          ],
        ]
      : [],
  ),
);

/**
 * Data set, its options and the test split. The options of data set X are the block `data.X`,
 * checked against X's schema in `parseConfig` (the built-ins' blocks are listed here too, for the
 * documentation).
 */
export const DataSchema = Type.Unsafe<DataConfig>(
  Type.Object(
    {
      ...DataKeys,
      ...builtinDatasetBlocks,
    },
    {
      additionalProperties: true,
      description:
        'Data set and test split. Any other key is the options block of the data set of that name, checked against its schema (e.g. data.synthetic); a block for a data set other than data.dataset is an error.',
    },
  ),
);

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
        'Dirichlet concentration over labels: required for kind = dirichlet and mixed (its non-IID silos); for kind = mavericks it splits the common classes among the other silos. Default: equal shares (kind = mavericks).',
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
  kind: OneOf(MISBEHAVIOR_NAMES, BUILTIN_MISBEHAVIORS.map((m) => `${m.name}: ${m.description}`).join('; ')),
  /** What `factor` means is the kind's (src/data/misbehaviors/); parseConfig checks it against the kind. */
  factor: Type.Optional(
    Num({
      description: `Only for the kinds that take one: ${BUILTIN_MISBEHAVIORS.filter((m) => m.factor)
        .map((m) => `kind = ${m.name}: ${m.factor}`)
        .join('; ')}.`,
    }),
  ),
});

/**
 * The model: `kind` from the model registry and that model's options next to it, checked
 * against the model's option schema in `parseConfig`.
 */
export const ModelSchema = Type.Unsafe<{ kind: string; [option: string]: unknown }>(
  Type.Object(
    {
      kind: Type.String({
        description: `Model, a kind from the model registry (src/ml/model-registry.ts), checked in parseConfig. Built-in: ${quoted(BUILTIN_MODELS.map((m) => m.kind))} (each with its options below).`,
      }),
    },
    {
      additionalProperties: true,
      description:
        "The model: kind and that model's options next to it (e.g. { kind: 'mlp', hidden: [200] }), checked against the model's option schema.",
    },
  ),
);

export const TrainingSchema = Obj({
  optimizer: Type.Optional(
    OneOf(['adam', 'sgd'] as const, { default: 'adam', description: 'Local optimizer.' }),
  ),
  learningRate: Type.Optional(
    Num({ exclusiveMinimum: 0, default: 0.001, description: 'Learning rate (for either optimizer).' }),
  ),
  weightDecay: Type.Optional(Num({ minimum: 0, default: 0.001, description: 'Weight decay.' })),
  epochs: Type.Optional(Int({ minimum: 1, default: DEFAULT_EPOCHS, description: 'Local epochs per round.' })),
  batchSize: Type.Optional(Int({ minimum: 1, default: DEFAULT_BATCH_SIZE, description: 'Minibatch size.' })),
  validationSteps: Type.Optional(
    Int({
      minimum: 1,
      description:
        "K, the optimizer steps of the server's validation reference update Δ_val (FedTSV and the tsv estimator; papers/002 Eq. 10: \"the same number of SGD steps\" as the clients, Alg. 2 lines 7–10 and 15–18 share one K), taken on minibatches of the validation set with the silos' optimizer. Default: the mean local steps of the round's selected silos, epochs·⌈n_i/batchSize⌉, rounded.",
    }),
  ),
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
        'Shamir threshold t (≤ silos). Must be ≥ ⌊(silos + corruptSilos)/2⌋ + 1 (Bonawitz et al. 2017 §6, active security) unless weakThreshold is set. A round of k selected silos runs with t raised to ⌊(k + min(corruptSilos, k − 1))/2⌋ + 1 (with weakThreshold: to a strict majority) and capped at k. Default: ⌊2k/3⌋ + 1.',
    }),
  ),
  /** n_C: corrupted silos the protocol must tolerate (default ⌈silos/3⌉ − 1). */
  corruptSilos: Type.Optional(
    Int({
      minimum: 0,
      description:
        'n_C, the number of corrupted silos (colluding with a possibly malicious server) the secure aggregation must tolerate; < silos. It sets the smallest safe threshold ⌊(n + n_C)/2⌋ + 1. Default: ⌈silos/3⌉ − 1, the largest n_C < silos/3.',
    }),
  ),
  /** Explicit opt-in to a threshold below the active-security bound. */
  weakThreshold: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        'Explicit opt-in to a threshold below ⌊(silos + corruptSilos)/2⌋ + 1: such rounds are not private against a malicious server colluding with corruptSilos silos. Recorded in results.json (secureAggregation.weakThreshold) and in the report.',
    }),
  ),
  /** What survivors do with their masks with dropped silos in Unmasking (protocol/config.ts CorrectionMode). */
  corrections: Type.Optional(
    OneOf(['off', 'recompute', 'fallback'] as const, {
      default: 'off',
      description:
        "Unmasking corrections: 'off' (the server rebuilds the survivors' masks with dropped silos), 'recompute' (survivors send them, the server recomputes and names wrong ones) or 'fallback' (the server trusts them and rebuilds only when the aggregate check fails; a forged correction that keeps the aggregate in range goes undetected).",
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
  /** The weight floor f (src/consortium/weight-floor.ts, issue 27 A1). */
  weightFloor: Type.Optional(
    Num({
      exclusiveMinimum: 0,
      maximum: 1,
      default: DEFAULT_WEIGHT_FLOOR,
      description:
        "Floor f of every selected silo's normalized aggregation weight ŵ_i = w_i / max_j w_j: a round of k selected silos lifts every weight below f_k·max_j w_j to it, f_k = max(f, (1 − s)/(s·(k − 1))) with s = maxWeightShare, so a weight of 0 (score-weighted's lowest silo, FedMS, FedTSV) never leaves one silo's update alone in the sum the server unmasks. Applied by the engine under secure aggregation and by every networked silo's plan; a networked consortium pins it (consortium file encoding.weightFloor).",
    }),
  ),
  /** The largest share s one silo may hold of Σ w (src/consortium/weight-floor.ts). */
  maxWeightShare: Type.Optional(
    Num({
      minimum: 0.5,
      exclusiveMaximum: 1,
      default: DEFAULT_MAX_WEIGHT_SHARE,
      description:
        "Largest share w_i / Σ_j w_j one selected silo may hold (in [0.5, 1)); the floor of a round of k silos is raised to (1 − s)/(s·(k − 1)) when that is above weightFloor. Weights above it are capped by the public water-filling rule (capWeights, src/consortium/weight-floor.ts); a networked silo refuses a plan that still breaks it. Pinned as the consortium file's encoding.maxWeightShare.",
    }),
  ),
  /** The smallest effective number of participants m (src/consortium/weight-floor.ts, issue 32 W1). */
  minEffectiveSilos: Type.Optional(
    Num({
      minimum: 1,
      maximum: 255,
      default: DEFAULT_MIN_EFFECTIVE_SILOS,
      description:
        "Smallest effective number of participants (Σ_j w_j)² / Σ_j w_j² of a round under secure aggregation: weights below it (FedAvg by example counts with one large silo, a score-weighted round) are capped from above by the public water-filling rule (capWeights, src/consortium/weight-floor.ts) that the engine, the server's plan and every silo apply identically; a networked silo refuses a plan that still breaks it, and any round of fewer than 3 selected silos. Pinned as the consortium file's encoding.minEffectiveSilos.",
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

/**
 * Full-visibility estimators, one optional key per estimator, derived from the estimator registry
 * (src/estimators/registry.ts), where each estimator declares its options. This is the schema
 * over the built-ins; `parseConfig` also accepts the estimators user modules registered.
 */
export const EstimatorsSchema = BUILT_IN_ESTIMATORS_SCHEMA;

export const comparisonSchema = <E extends TSchema>(estimators: E) =>
  Obj({
    reference: Type.Optional(
      OneOf(referenceNames(), {
        description: `Reference of the comparison table (the primary one when \`references\` names more): an estimator that can serve as one (accumulated to \`at\`), ${TRUE_SV} — the true Shapley value of the retraining game —, or ${ROUND_SV} — the exact Shapley value of round \`at\`'s own coalition game, the reference of the authors' code (needs \`at\` to be a round and MR-SV's tables). Default: ${TRUE_SV} when the true Shapley value is computed (see trueShapley), else ${defaultReferenceEstimator()}.`,
      }),
    ),
    references: Type.Optional(
      Type.Array(OneOf(referenceNames()), {
        minItems: 1,
        uniqueItems: true,
        description:
          'Further references, each with its own agreement table in results.json (`comparison.byReference`); the first is the primary one when `reference` is not given. Names as for `reference`.',
      }),
    ),
    at: Type.Optional(
      Type.Union([Type.Literal('cumulative'), Int({ minimum: 1 })], {
        default: 'cumulative',
        description:
          'Compare scores summed over all rounds, or the single-round scores of round r (≤ rounds) against the reference accumulated to round r.',
      }),
    ),
    estimators: Type.Optional(
      withDoc(estimators, {
        default: Object.fromEntries(BUILT_IN_ESTIMATORS.filter((e) => e.byDefault).map((e) => [e.name, {}])),
        description:
          "Full-visibility estimators to run, by name (the estimator registry, src/estimators/registry.ts); `{}` runs one with its defaults. Default: the registry's default ones.",
      }),
    ),
    trueShapley: Type.Optional(
      Type.Boolean({
        description: `Compute the true Shapley value of the retraining game (2^n FedAvg runs; at most 16 silos). Default: when silos ≤ ${TRUE_SHAPLEY_DEFAULT_MAX_SILOS}.`,
      }),
    ),
  });

export const ComparisonSchema = comparisonSchema(EstimatorsSchema);

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
  data: Type.Optional(withDoc(DataSchema, { description: 'Data set and test split.' })),
  partition: Type.Optional(
    withDoc(PartitionSchema, {
      default: { kind: 'iid' },
      description:
        'How the training pool is shared out among the silos; parameters are checked against the kind.',
    }),
  ),
  /**
   * Per-silo label noise (papers/003 §5.4): linearly increasing rates 0 … maxRate, or explicit
   * silos and rates (`{ silos: { "4": 0.8 } }`). Exactly one of the two forms.
   */
  labelNoise: Type.Optional(
    Obj(
      {
        maxRate: Type.Optional(
          Num({
            minimum: 0,
            maximum: 1,
            description: 'Linear form: noise rate of the last silo; silo i of n gets maxRate·i/(n − 1).',
          }),
        ),
        silos: Type.Optional(
          Type.Record(Type.String({ pattern: '^(0|[1-9][0-9]*)$' }), Num({ minimum: 0, maximum: 1 }), {
            description:
              'Explicit form: silo index (a string key, "4") → its label-noise rate in [0, 1]; the other silos are clean.',
          }),
        ),
      },
      'Per-silo label noise (papers/003 §5.4): `maxRate` (rates 0 … maxRate, linear over the silos) or `silos` (explicit rates of chosen silos), not both.',
    ),
  ),
  attacks: Type.Optional(Type.Array(AttackSchema, { description: 'Misbehaving silos to simulate.' })),
  model: Type.Optional(
    withDoc(ModelSchema, {
      default: DEFAULT_MODEL,
      description:
        "The model: `kind` and that model's options next to it, checked against the model's option schema.",
    }),
  ),
  training: Type.Optional(withDoc(TrainingSchema, { description: 'Local training of every silo.' })),
  /**
   * How coalition models are formed: FedAvg M_S = M0 + Σ w_iΔ_i / Σ w_i (default) or the papers'
   * additive M_S = M0 + Σ_{i∈S} w_iΔ_i / Σ_all w (equal weights: Σ_S Δ_i / N). The weights are the
   * strategy's (`strategy.weights` for FedAvg).
   */
  aggregation: Type.Optional(
    Obj(
      {
        convention: Type.Optional(
          OneOf(CONVENTIONS, {
            default: DEFAULT_CONVENTION,
            description:
              "How coalition models are formed: FedAvg M_S = M0 + Σ_S w_iΔ_i / Σ_S w_i (also what papers/003's published code does, weighting by examples), or additive M_S = M0 + Σ_S w_iΔ_i / Σ_all w (equal weights: Σ_S Δ_i / N), the literal reading of papers/003's M0 + U_i and M − U_i. The weights are the strategy's.",
          }),
        ),
      },
      'How coalition models are formed.',
    ),
  ),
  secureAggregation: Type.Optional(
    withDoc(SecureAggregationSchema, { description: "Secure aggregation of each round's updates." }),
  ),
  /** Selection/aggregation strategy, validated by the strategy registry (default fedavg, all silos). */
  strategy: Type.Optional(
    Type.Object(
      {
        name: Type.String({
          description: `Strategy, a name from the strategy registry (src/strategies/registry.ts), checked when the run builds it. Built-in: ${quoted(STRATEGY_NAMES)} (each with its parameters below); networked runs (secure aggregation alone) take ${quoted(STRATEGY_NAMES.filter((n) => typeof networkedSupport(n) === 'string'))}; the others need individual updates.`,
        }),
      },
      {
        additionalProperties: true,
        default: DEFAULT_STRATEGY,
        description:
          "Selection/aggregation strategy `{ name, ...parameters }`; the other keys are the strategy's parameters, checked against its entry in the strategy registry.",
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
        emptyCoalition: Type.Optional(
          OneOf(EMPTY_COALITIONS, {
            default: DEFAULT_EMPTY_COALITION,
            description:
              "What the empty coalition is worth in the private scores and in the scalar coalition games of the references (MR-SV, TMR, GTG, MC, Owen, Banzhaf, roundSv, trueSv): 'initialModel' v(∅) = v(M0), the reading of papers/003 Eq. 2–5; 'zero' v(∅) = 0, the convention of the authors' code (utils.py pri_ce, games_local.py d[()] = 0). Maverick-Shapley's class-wise game and TSV's trajectory utility keep their papers' v(∅). v(M0) is evaluated and recorded either way.",
          }),
        ),
        quarantine: Type.Optional(
          Type.Boolean({
            default: true,
            description:
              "Quarantine the score reports the manipulation audit's detector flags (z > 3.5 of a silo's reported IOI or LOO above the other silos' reports, robust to two colluders; docs/audit.md): the private schemes score the round without them and results.json lists them per round (`quarantined`). About 0.1 % of honest silo-rounds of the example configurations are flagged, no Maverick (docs/audit.md, \"False flags\"): set false to score every report, as papers/003 does.",
          }),
        ),
        raw: Type.Optional(
          Type.Boolean({
            default: false,
            description:
              "Also record FP, EE and EE-median before the rescaling of papers/003 Eq. 2 and 4 (score_i = w_i, not w_i/Σ_j w_j · v(M)) as fpRaw, eeRaw and eeMedianRaw: α(i) and (β(i) + γ(i))/2, the numbers the authors' code reports (its Eq. 2/4 normalisation lines are commented out). They are compared with the references like any method.",
          }),
        ),
      },
      'How models are valued and scored.',
    ),
  ),
  comparison: Type.Optional(
    withDoc(ComparisonSchema, {
      description: 'The full-visibility comparison with Shapley-family references.',
    }),
  ),
});

export type ExperimentConfig = Static<typeof ExperimentConfigSchema>;
