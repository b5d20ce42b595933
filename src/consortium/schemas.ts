/**
 * TypeBox schemas of the service's JSON bodies and responses. Routes declare them per status;
 * the OpenAPI document at /docs/json is generated from them. Types are derived with `Static`.
 */
import Type, { type Static, type TSchema } from 'typebox';
import { EMPTY_COALITIONS } from '../../scoring/empty-coalition.js';
import { CONVENTIONS } from './convention.js';
import { ERRORS, type ErrorCode } from './error-codes.js';
import { PRIVATE_METHODS } from './private-scoring.js';

const Obj = <T extends Record<string, TSchema>>(props: T, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
const Hex = (bytes: number, description: string) =>
  Type.String({ pattern: `^[0-9a-f]{${2 * bytes}}$`, description });
const Ms = (description: string) => Type.Integer({ minimum: 1, maximum: 7 * 24 * 3600 * 1000, description });
const NullableNumbers = Type.Array(Type.Union([Type.Number(), Type.Null()]));

/** Consortium ids double as the protocol session: short, URL- and log-safe. */
export const ConsortiumId = Type.String({
  pattern: '^[a-z0-9][a-z0-9-]{0,62}$',
  description: 'consortium id (lower-case letters, digits, dashes; also the secure-aggregation session)',
});

/** Path parameters. */
export const ConsortiumParams = Obj({ cid: ConsortiumId });
export const RoundParams = Obj({
  cid: ConsortiumId,
  round: Type.Integer({ minimum: 1, maximum: 0xffffffff, description: 'round number, from 1' }),
});
export const ReportParams = Obj({
  cid: ConsortiumId,
  round: Type.Integer({ minimum: 1, maximum: 0xffffffff, description: 'round number, from 1' }),
  silo: Type.Integer({ minimum: 0, maximum: 254, description: 'the silo whose report is released' }),
});
export const VersionParams = Obj({
  cid: ConsortiumId,
  version: Type.Integer({
    minimum: 0,
    maximum: 0xffffffff,
    description: '0 = initial model, r = after round r',
  }),
});

/** Private scoring schemes a consortium may publish (src/consortium/private-scoring.ts). */
export const Scheme = Type.Enum([...PRIVATE_METHODS], { description: 'private scoring scheme' });
export type Scheme = Static<typeof Scheme>;

/** Per-stage deadlines in milliseconds after the stage opened. */
export const Deadlines = Obj({
  advertise: Ms('AdvertiseKeys'),
  share: Ms('ShareKeys'),
  mask: Ms('MaskedInputCollection'),
  consistency: Ms('ConsistencyCheck'),
  unmask: Ms('Unmasking'),
  reporting: Ms('score report submission'),
});
export type Deadlines = Static<typeof Deadlines>;

/** What v(∅) is when the consortium's rounds are scored (scoring/empty-coalition.ts). */
export const EmptyCoalition = Type.Enum(EMPTY_COALITIONS, {
  description:
    "v(∅) in the private scores: 'initialModel' = v(M0) (papers/003's equations, the default) or 'zero' (the authors' code)",
});
/**
 * The utility v the consortium's silos report (src/consortium/private-scoring.ts): accuracy in [0, 1], or
 * negLoss — the negative mean cross-entropy — in [−maxLoss, 0]. Every report and every v(M), v(M0)
 * must lie in that range (FEDSCORE_ERR_UTILITY_OUT_OF_RANGE otherwise).
 */
export const Utility = Type.Union(
  [
    Obj({ name: Type.Literal('accuracy') }, 'accuracy, in [0, 1]'),
    Obj(
      {
        name: Type.Literal('negLoss'),
        maxLoss: Type.Number({
          exclusiveMinimum: 0,
          maximum: 1e6,
          description: 'bound L on the mean cross-entropy: reports lie in [−L, 0]',
        }),
      },
      'the negative mean cross-entropy, in [−maxLoss, 0]',
    ),
  ],
  { description: 'the utility reported, which fixes the range of every report (default accuracy)' },
);

/**
 * The operator's schedule: the service opens round 1 once the initial model is set and round r + 1
 * once round r is over (scored, closed or aborted), up to this many rounds (docs/networked.md).
 */
export const Rounds = Type.Integer({
  minimum: 1,
  maximum: 100_000,
  description:
    'the schedule: the service opens rounds 1 … rounds by itself, each once the previous one is over (scored, closed or aborted)',
});

/**
 * The consortium's selection and aggregation strategy (src/strategies/registry.ts; only those
 * that run under secure aggregation, src/strategies/networked-plan.ts): the server refuses messages
 * from a silo the strategy did not select for the round.
 */
export const Strategy = Obj(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'a registered strategy (docs/config.md)',
    }),
    parameters: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: "the strategy's parameters, as next to `name` in an experiment configuration",
      }),
    ),
  },
  'the strategy { name, parameters } as the consortium file pins it (default: FedAvg over every silo); checked at creation',
);

/** The public seed of the strategy's random selection (the experiment's seed). */
export const Seed = Type.Integer({
  minimum: 0,
  maximum: 2 ** 31 - 1,
  description: "public seed of the strategy's selection (the experiment's seed; default 1)",
});

/**
 * Who runs the consortium's secure aggregation: 'fedscore' (the default) runs its masking stages
 * in the service; 'external' makes a reports-only consortium (src/server/service/external.ts):
 * training and secure aggregation run elsewhere, the operator posts each round's v(M) and v(M0)
 * and the silos their signed reports.
 */
export const SecureAggregation = Type.Enum(['fedscore', 'external'] as const, {
  description:
    "'fedscore' (default): the service runs secure aggregation; 'external': a reports-only consortium — no masking stages, the operator posts each round's v(M) and v(M0) (POST …/rounds/:round/utilities) and the silos their signed reports",
});
export type SecureAggregation = Static<typeof SecureAggregation>;

/** What an operator posts to create a consortium. */
/**
 * Whether the score reports the detector flags are quarantined (left out of the round's scores
 * until the operator releases them; docs/networked.md, "Quarantined reports"). Default true.
 */
const Quarantine = Type.Boolean({
  description:
    'quarantine score reports the manipulation audit’s detector flags (robust |z| > 3.5): the round is scored without them until the operator releases them; default true',
});

export const ConsortiumInput = Obj({
  id: ConsortiumId,
  participants: Type.Array(Obj({ publicKey: Hex(32, "the silo's Ed25519 public key, hex") }), {
    minItems: 2,
    maxItems: 255,
    description: 'silo id = index',
  }),
  threshold: Type.Integer({
    minimum: 2,
    maximum: 255,
    description:
      'secure-aggregation threshold t ≤ n; at least ⌊(n + corruptSilos)/2⌋ + 1 unless allowWeakThreshold (then > n/2)',
  }),
  corruptSilos: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 254,
      description:
        'n_C: corrupted silos (colluding with a possibly malicious server) the protocol must tolerate, < n; default ⌈n/3⌉ − 1',
    }),
  ),
  allowWeakThreshold: Type.Optional(
    Type.Boolean({
      description:
        'explicit opt-in to a threshold below ⌊(n + corruptSilos)/2⌋ + 1: rounds are then not private against a malicious server colluding with corruptSilos silos (shown as weakThreshold)',
    }),
  ),
  model: Obj({
    name: Type.String({ minLength: 1, maxLength: 200 }),
    parameters: Type.Integer({
      minimum: 1,
      maximum: 0x7ffffffe,
      description: 'length d of the flat parameter vector',
    }),
  }),
  testSetDigest: Hex(32, 'SHA-256 of the common test set'),
  schemes: Type.Array(Scheme, { minItems: 1, maxItems: PRIVATE_METHODS.length, uniqueItems: true }),
  encoding: Obj({
    clip: Type.Number({ exclusiveMinimum: 0, maximum: 1e6, description: 'clipping bound of w·Δ entries' }),
    weightRange: Type.Number({ exclusiveMinimum: 0, maximum: 1e9, description: 'largest silo weight' }),
    minWeight: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1e9,
        description:
          'smallest silo weight (≤ weightRange, default 0); the total weight of m survivors must be ≥ m·minWeight',
      }),
    ),
    weightFloor: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 1,
        description:
          "f: every selected silo's weight is ≥ f·max_j w_j (src/consortium/weight-floor.ts; absent: 0.1). Public: the silos compare it with their consortium file and apply it themselves",
      }),
    ),
    maxWeightShare: Type.Optional(
      Type.Number({
        minimum: 0.5,
        exclusiveMaximum: 1,
        description: 'the largest share of Σ w one selected silo may hold (absent: 0.5)',
      }),
    ),
    minEffectiveSilos: Type.Optional(
      Type.Number({
        minimum: 1,
        maximum: 255,
        description:
          "m: every round's effective number of participants (Σw)²/Σw² is ≥ m (src/consortium/weight-floor.ts; absent: 3)",
      }),
    ),
  }),
  convention: Type.Optional(Type.Enum(CONVENTIONS)),
  emptyCoalition: Type.Optional(EmptyCoalition),
  quarantine: Type.Optional(Quarantine),
  utility: Type.Optional(Utility),
  deadlines: Type.Optional(Deadlines),
  rounds: Type.Optional(Rounds),
  strategy: Type.Optional(Strategy),
  seed: Type.Optional(Seed),
  secureAggregation: Type.Optional(SecureAggregation),
});
export type ConsortiumInput = Static<typeof ConsortiumInput>;

/** A stored consortium. */
export const Consortium = Obj({
  id: ConsortiumId,
  participants: Type.Array(Obj({ publicKey: Type.String() })),
  threshold: Type.Integer(),
  corruptSilos: Type.Integer({ description: 'n_C: corrupted silos tolerated' }),
  minimumThreshold: Type.Integer({
    description: '⌊(n + n_C)/2⌋ + 1, the smallest threshold private against n_C',
  }),
  weakThreshold: Type.Boolean({
    description:
      'true when threshold < minimumThreshold (allowed only by the explicit allowWeakThreshold opt-in): rounds are not private against a malicious server colluding with corruptSilos silos',
  }),
  model: Obj({ name: Type.String(), parameters: Type.Integer() }),
  testSetDigest: Type.String(),
  schemes: Type.Array(Scheme),
  encoding: Obj({
    clip: Type.Number(),
    weightRange: Type.Number(),
    minWeight: Type.Number(),
    /** Absent when the consortium was created without it: the silos apply the defaults. */
    weightFloor: Type.Optional(Type.Number()),
    maxWeightShare: Type.Optional(Type.Number()),
    minEffectiveSilos: Type.Optional(Type.Number()),
  }),
  convention: Type.Enum(CONVENTIONS),
  /** Absent in consortia stored before the setting existed: 'initialModel'. */
  emptyCoalition: Type.Optional(EmptyCoalition),
  /** Absent: true (consortia stored before the setting existed quarantine too). */
  quarantine: Type.Optional(Quarantine),
  utility: Utility,
  deadlines: Deadlines,
  rounds: Type.Optional(Rounds),
  strategy: Type.Optional(Strategy),
  seed: Type.Optional(Seed),
  secureAggregation: SecureAggregation,
  createdAt: Type.Number({ description: 'ms since the epoch' }),
});
export type Consortium = Static<typeof Consortium>;

/** Service stages of a round: the protocol stages, then reporting and the terminal stages. */
const ROUND_STAGES = [
  'advertise',
  'share',
  'mask',
  'consistency',
  'unmask',
  'reporting',
  'scored',
  'closed',
  'aborted',
] as const;
export const RoundStage = Type.Enum(ROUND_STAGES);
export type RoundStage = Static<typeof RoundStage>;

/** The stages in which a round is over: nothing closes it any more, and the next round may open. */
export const TERMINAL_STAGES: readonly RoundStage[] = ['scored', 'closed', 'aborted'];

/** Whether a round in `stage` is over. */
export const isTerminal = (stage: string): boolean => TERMINAL_STAGES.includes(stage as RoundStage);

const Ids = Type.Array(Type.Integer());

/** A round as the API shows it. */
export const Round = Obj({
  consortium: Type.String(),
  round: Type.Integer(),
  stage: RoundStage,
  deadline: Type.Number({ description: 'when the current stage closes, ms since the epoch' }),
  baseModel: Type.Integer({ description: 'model version the round starts from' }),
  resultModel: Type.Union([Type.Integer(), Type.Null()]),
  sets: Type.Array(Ids, { description: 'U_1 … U_k of the closed protocol stages' }),
  survivors: Type.Union([Ids, Type.Null()]),
  dropped: Type.Union([Ids, Type.Null()]),
  totalWeight: Type.Union([Type.Number(), Type.Null()]),
  utilities: Type.Union([Obj({ full: Type.Number(), empty: Type.Number() }), Type.Null()]),
  error: Type.Union([Obj({ code: Type.String(), detail: Type.String() }), Type.Null()]),
  selected: Type.Union([Ids, Type.Null()], {
    description: "the silos the consortium's strategy selected for this round (null: every silo)",
  }),
  faults: Type.Array(Obj({ silo: Type.Integer(), code: Type.String(), detail: Type.String() }), {
    description:
      'misbehaviour the secure-aggregation server detected in this round and survived or aborted on (protocol/reconstruct.ts): BAD_SHARE, BAD_DEALING, BAD_CORRECTION, each naming a silo',
  }),
  openedAt: Type.Number(),
});
export type Round = Static<typeof Round>;

export const RoundList = Obj({ rounds: Type.Array(Round) });

/** Who a round's current stage waits for (empty lists once the round is over). */
export const StageProgress = Obj({
  round: Type.Integer(),
  stage: RoundStage,
  deadline: Type.Number({ description: 'when the stage closes, ms since the epoch' }),
  expected: Type.Array(Type.Integer(), {
    description:
      'silos the stage waits for: the selected (or every) silo at advertise, the previous set after it, the survivors while reporting',
  }),
  received: Type.Array(Type.Integer(), { description: 'silos whose message or report is in' }),
  missing: Type.Array(Type.Integer(), { description: 'expected silos still missing' }),
});
export type StageProgress = Static<typeof StageProgress>;

/** Accepted secure-aggregation message. */
export const Accepted = Obj({ accepted: Type.Literal(true), stage: RoundStage });

/** What the operator posts when the service has no evaluator: v(M) and v(M0). */
export const UtilitiesInput = Obj({ full: Type.Number(), empty: Type.Number() });

/**
 * What the operator's `POST …/advance` closes: the stage it expects the round to be in. A round in
 * another stage (the deadline or the last message closed the expected one first) is refused with
 * FEDSCORE_ERR_STAGE_MISMATCH naming the current stage, so a late request never closes the next one.
 */
export const AdvanceInput = Obj(
  {
    stage: Type.Enum(ROUND_STAGES, {
      description: 'the stage to close (the round’s current stage as the operator last saw it)',
    }),
  },
  'the stage the operator expects to close',
);

/** What the operator posts to open a round of a reports-only consortium: v(M) and v(M0). */
export const ExternalUtilitiesInput = Obj(
  {
    full: Type.Number({ description: 'v(M): utility of the round’s aggregated model' }),
    empty: Type.Number({ description: 'v(M0): utility of the round’s starting model' }),
  },
  'the round’s utilities, measured by the operator on the common test set (in the consortium’s utility range)',
);

/** Result of a report submission. */
export const ReportAccepted = Obj({
  silo: Type.Integer(),
  duplicate: Type.Boolean({ description: 'the same report was already stored (idempotent retry)' }),
  stage: RoundStage,
});

/** A round's published scores (silo-indexed; null for silos without a report). */
/**
 * A report the detector flagged (scoring/manipulation/quarantine.ts; issue 27, A4): the round was
 * scored without it unless the operator released it.
 */
export const QuarantinedReport = Obj({
  silo: Type.Integer({ minimum: 0 }),
  withOnly: Type.Number({ description: 'the reported v(M0 + U_i)' }),
  without: Type.Number({ description: 'the reported v(M − U_i)' }),
  zWithOnly: Type.Number({
    description: 'robust z of IOI_i = v(M0 + U_i) − v(M0) among the round’s reports',
  }),
  zWithout: Type.Number({ description: 'robust z of LOO_i = v(M) − v(M − U_i) among the round’s reports' }),
  flagged: Type.Array(Type.Union([Type.Literal('withOnly'), Type.Literal('without')]), {
    description: 'the report(s) whose |z| exceeds the threshold',
  }),
  threshold: Type.Number({ description: 'the detector’s bound on |z|' }),
  released: Type.Boolean({ description: 'released by the operator: the round is scored with it' }),
});
export type QuarantinedReport = Static<typeof QuarantinedReport>;

export const RoundScores = Obj({
  round: Type.Integer(),
  /** The silos scored (quarantined reports not released are left out). */
  silos: Ids,
  utilities: Obj({ full: Type.Number(), empty: Type.Number() }),
  withOnly: NullableNumbers,
  without: NullableNumbers,
  schemes: Type.Record(Type.String(), NullableNumbers),
  quarantined: Type.Array(QuarantinedReport, {
    description: 'reports the detector flagged: their silos are not scored unless released',
  }),
  selected: Type.Union([Ids, Type.Null()], {
    description:
      "the silos the consortium's strategy selected for this round (null: every silo); a silo not selected owes no report",
  }),
});
export type RoundScores = Static<typeof RoundScores>;

/** Scores of every scored round and their per-silo sums. */
export const CumulativeScores = Obj({
  consortium: Type.String(),
  rounds: Type.Array(RoundScores),
  cumulative: Type.Record(Type.String(), Type.Array(Type.Number())),
});
export type CumulativeScores = Static<typeof CumulativeScores>;

/**
 * The manipulation audit (`audit.json`, docs/audit.md): a large nested document whose schema is
 * documented there and typed in src/audit/manipulation-audit.ts; only its top-level keys are fixed here.
 */
export const AuditBody = Type.Object(
  {
    auditSchemaVersion: Type.Integer(),
    source: Type.Object({}, { additionalProperties: true }),
    options: Type.Object({}, { additionalProperties: true }),
    schemes: Type.Array(Type.String()),
    runs: Type.Array(Type.Object({}, { additionalProperties: true })),
    summary: Type.Object({}, { additionalProperties: true }),
    detectionRates: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: false },
);

/** The published aggregate of a round (the sum itself is at …/aggregate/sum). */
export const Aggregate = Obj({
  round: Type.Integer(),
  survivors: Ids,
  dropped: Ids,
  totalWeight: Type.Number({ description: 'Σ w_i over the survivors' }),
  baseModel: Type.Integer(),
  resultModel: Type.Integer(),
});
export type Aggregate = Static<typeof Aggregate>;

/** Every error body. */
export const ErrorBody = Obj(
  {
    code: Type.Enum(Object.keys(ERRORS) as ErrorCode[]),
    message: Type.String(),
  },
  'an error from the catalogue (docs/errors.md)',
);

/** Response schemas for the given error statuses. */
export function errors(...statuses: number[]): Record<number, typeof ErrorBody> {
  return Object.fromEntries(statuses.map((s) => [s, ErrorBody]));
}

/** OpenAPI security of the reads the dashboard makes: a member silo, the operator or the viewer token. */
export const READERS: { [scheme: string]: string[] }[] = [{ silo: [] }, { admin: [] }, { viewer: [] }];
/** OpenAPI security of the reads for members and the operator only (models, the aggregate). */
export const MEMBERS: { [scheme: string]: string[] }[] = [{ silo: [] }, { admin: [] }];

/** Raw bytes (application/octet-stream), documented for OpenAPI. */
export const Binary = Type.Unsafe<Buffer>({ type: 'string', format: 'binary' });
