/**
 * The consortium file: what a consortium's silos agreed to out of band, which every silo pins
 * (`fedscore client --consortium-file` / `--consortium-digest`) and compares with the server's
 * `GET /v1/consortia/:cid` before it sends anything (trust issue, finding 1: a server serving a
 * roster of keys it controls would otherwise receive t shares of b_u and s_u^SK through fake
 * peers and unmask x_u — Bonawitz et al. 2017 §6 assume the roster is authentic, i.e. a PKI).
 *
 * Version 1 (JSON, `format: 'fedscore-consortium'`): the consortium id; the roster (every silo's
 * Ed25519 public key, silo id = index); the threshold t, n_C and the weak-threshold opt-in; the
 * parameter count d; the data shape (input shape, classes); the model (kind, topology digest and
 * initial-weights digest); the common test set's digest; the private schemes, the coalition
 * convention, v(∅), the declared utility; the encoding (clip, weight range, minimum weight, and the
 * weight floor, the largest share one silo may hold of Σ w and the smallest effective number of
 * participants: weight-floor.ts, issues 27 A1 and 32 W1); the
 * aggregation weights (`examples` or `equal`, and the public scale max_j w_j they are divided
 * by); the strategy `{ name, parameters }`, the public seed of its selection and of every
 * process's training (`seed`), and the number of rounds of the operator's schedule — the service
 * stores the three as registered (`POST /v1/consortia` `strategy`, `seed`, `rounds`) and every silo
 * replays the strategy from them (networked-strategy.ts).
 *
 * Its digest (`consortiumFileDigest`) is the hex SHA-256 of `fedscore/consortium/v1` + LF + the
 * file's canonical JSON (keys sorted at every level, no spaces): whitespace and key order of the
 * file on disk do not change it, any value does.
 *
 * Nesting is bounded (MAX_JSON_DEPTH, src/schema/json-depth.ts): a file nested deeper is refused,
 * naming the file and the limit, before it is parsed (issue 27, A5).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Type, { type Static } from 'typebox';
import Value from 'typebox/value';
import { canonicalJson } from '../schema/canonical-json.js';
import { schemaIssues } from '../schema/issues.js';
import { JsonDepthError, parseBoundedJson } from '../schema/json-depth.js';
import { CONVENTIONS } from './convention.js';
import {
  DEFAULT_EMPTY_COALITION,
  DEFAULT_MIN_WEIGHT,
  DEFAULT_SELECTION_SEED,
  DEFAULT_STRATEGY_NAME,
  DEFAULT_UTILITY,
} from './defaults.js';
import { type Consortium, EmptyCoalition, Scheme, Utility } from './schemas.js';
import {
  DEFAULT_MAX_WEIGHT_SHARE,
  DEFAULT_MIN_EFFECTIVE_SILOS,
  DEFAULT_WEIGHT_FLOOR,
} from './weight-floor.js';

export const CONSORTIUM_FILE_FORMAT = 'fedscore-consortium';
export const CONSORTIUM_FILE_VERSION = 1;
const DIGEST_DOMAIN = 'fedscore/consortium/v1\n';

const Sha256 = (description: string) => Type.String({ pattern: '^[0-9a-f]{64}$', description });
const Dim = Type.Integer({ minimum: 1, maximum: 1 << 20 });

/** The consortium file's schema (version 1). */
export const ConsortiumFile = Type.Object(
  {
    format: Type.Literal(CONSORTIUM_FILE_FORMAT),
    version: Type.Literal(CONSORTIUM_FILE_VERSION),
    id: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$', description: 'the consortium id' }),
    participants: Type.Array(
      Type.Object(
        { publicKey: Sha256("the silo's Ed25519 public key, hex") },
        { additionalProperties: false },
      ),
      { minItems: 2, maxItems: 255, description: 'the roster; silo id = index' },
    ),
    threshold: Type.Integer({ minimum: 2, maximum: 255, description: 'secure-aggregation threshold t' }),
    corruptSilos: Type.Integer({ minimum: 0, maximum: 254, description: 'n_C, corrupted silos tolerated' }),
    weakThreshold: Type.Boolean({ description: 'the explicit opt-in to t below ⌊(n + n_C)/2⌋ + 1' }),
    parameters: Type.Integer({ minimum: 1, maximum: 0x7ffffffe, description: 'd, the model size' }),
    data: Type.Object(
      {
        inputShape: Type.Tuple([Dim, Dim, Dim], { description: '[height, width, channels]' }),
        numClasses: Type.Integer({ minimum: 2, maximum: 1 << 16 }),
      },
      { additionalProperties: false },
    ),
    model: Type.Object(
      {
        kind: Type.String({ minLength: 1, maxLength: 200 }),
        topologyDigest: Sha256("SHA-256 of the model's topology"),
        initialWeightsDigest: Sha256('SHA-256 of the initial flat parameters M0'),
      },
      { additionalProperties: false },
    ),
    testSetDigest: Sha256('SHA-256 of the common test set'),
    // The contract's own schemas (src/consortium/schemas.ts): the file pins what the service is created with.
    schemes: Type.Array(Scheme, { minItems: 1 }),
    convention: Type.Enum(CONVENTIONS),
    emptyCoalition: EmptyCoalition,
    utility: Utility,
    encoding: Type.Object(
      {
        clip: Type.Number({ exclusiveMinimum: 0 }),
        weightRange: Type.Number({ exclusiveMinimum: 0 }),
        minWeight: Type.Number({
          minimum: 0,
          description: 'the smallest normalized weight a silo sends, ≥ weightFloor',
        }),
        weightFloor: Type.Number({
          exclusiveMinimum: 0,
          maximum: 1,
          description: "f: every selected silo's weight is ≥ f·max_j w_j (weight-floor.ts)",
        }),
        maxWeightShare: Type.Number({
          minimum: 0.5,
          exclusiveMaximum: 1,
          description: 'the largest share of Σ w one selected silo may hold',
        }),
        minEffectiveSilos: Type.Number({
          minimum: 1,
          maximum: 255,
          description: "m: a round's effective number of participants (Σw)²/Σw² is ≥ m",
        }),
      },
      { additionalProperties: false },
    ),
    weights: Type.Object(
      {
        kind: Type.Union([Type.Literal('examples'), Type.Literal('equal')]),
        scale: Type.Number({
          exclusiveMinimum: 0,
          description: 'max_j w_j: the public divisor of every weight',
        }),
      },
      { additionalProperties: false },
    ),
    strategy: Type.Object(
      { name: Type.String({ minLength: 1 }), parameters: Type.Record(Type.String(), Type.Unknown()) },
      { additionalProperties: false },
    ),
    seed: Type.Integer({
      minimum: 0,
      maximum: 2 ** 31 - 1,
      description: "the run's public seed: the strategy's selection and weights, local training",
    }),
    rounds: Type.Integer({ minimum: 1, maximum: 100_000, description: "the operator's schedule" }),
  },
  { additionalProperties: false },
);
export type ConsortiumFile = Static<typeof ConsortiumFile>;

/** The consortium file is malformed, or not the pinned one. */
export class ConsortiumFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConsortiumFileError';
  }
}

/** The server's consortium is not the pinned one: `field` is the first that differs. */
export class ConsortiumMismatchError extends Error {
  constructor(
    readonly field: string,
    readonly pinned: unknown,
    readonly served: unknown,
  ) {
    super(
      `consortium file mismatch at ${field}: the pinned consortium file says ${JSON.stringify(pinned)}, the server serves ${JSON.stringify(served)}; refusing to take part (nothing was sent)`,
    );
    this.name = 'ConsortiumMismatchError';
  }
}

/** The digest silos pin: hex SHA-256 of the domain tag and the canonical JSON (module comment). */
export function consortiumFileDigest(file: ConsortiumFile): string {
  return createHash('sha256')
    .update(DIGEST_DOMAIN + canonicalJson(file))
    .digest('hex');
}

/**
 * Checks `value` against the schema and the invariants between fields.
 * @throws ConsortiumFileError naming the field (prefixed by `where`).
 */
export function parseConsortiumFile(value: unknown, where = 'consortium file'): ConsortiumFile {
  try {
    canonicalJson(value);
  } catch (e) {
    if (e instanceof JsonDepthError)
      throw new ConsortiumFileError(
        `${where}: nested deeper than ${e.limit} levels of arrays and objects (the consortium file's depth limit)`,
      );
    // any other problem (a value JSON cannot hold) is the schema's to name
  }
  if (!Value.Check(ConsortiumFile, value)) {
    const [first] = schemaIssues(ConsortiumFile, value, { expectedTypes: true });
    throw new ConsortiumFileError(
      `${where}: ${first ? `${first.path || '(root)'}: ${first.message}` : 'invalid'}`,
    );
  }
  const f = value as ConsortiumFile;
  const n = f.participants.length;
  if (f.threshold > n)
    throw new ConsortiumFileError(`${where}: threshold: t = ${f.threshold} exceeds the ${n} participants`);
  if (f.corruptSilos >= n)
    throw new ConsortiumFileError(
      `${where}: corruptSilos: ${f.corruptSilos} must be below the ${n} participants`,
    );
  // The floor bounds every weight a silo sends from below (weight-floor.ts), so the service's
  // check of the total weight against m·minWeight (protocol/weighted.ts) holds it too.
  if (!(f.encoding.minWeight >= f.encoding.weightFloor && f.encoding.minWeight <= f.encoding.weightRange))
    throw new ConsortiumFileError(
      `${where}: encoding.minWeight: ${f.encoding.minWeight} must lie in [weightFloor = ${f.encoding.weightFloor}, weightRange = ${f.encoding.weightRange}] (every weight is floored)`,
    );
  const keys = new Set(f.participants.map((p) => p.publicKey));
  if (keys.size !== n) throw new ConsortiumFileError(`${where}: participants: a public key appears twice`);
  return f;
}

/**
 * Reads the consortium file at `path`, checks it and, when `pinnedDigest` is given, that its
 * digest is that one. @returns the file and its digest.
 * @throws ConsortiumFileError: unreadable, not JSON, malformed, or another digest.
 */
export function readConsortiumFile(
  path: string,
  pinnedDigest?: string,
): { file: ConsortiumFile; digest: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConsortiumFileError(`${path}: cannot be read (${(e as NodeJS.ErrnoException).code ?? e})`);
  }
  let json: unknown;
  try {
    json = parseBoundedJson(text, path);
  } catch (e) {
    if (e instanceof JsonDepthError)
      throw new ConsortiumFileError(
        `${path}: nested deeper than ${e.limit} levels of arrays and objects (the consortium file's depth limit); refused before reading it`,
      );
    throw new ConsortiumFileError((e as Error).message);
  }
  const file = parseConsortiumFile(json, path);
  const digest = consortiumFileDigest(file);
  if (pinnedDigest !== undefined && digest !== pinnedDigest.toLowerCase())
    throw new ConsortiumFileError(
      `${path}: its digest is ${digest}, not the pinned ${pinnedDigest.toLowerCase()} (--consortium-digest): this is not the consortium file you agreed to`,
    );
  return { file, digest };
}

/** Every field optional, at every depth. */
type DeepPartial<T> = T extends readonly (infer U)[]
  ? readonly DeepPartial<U>[]
  : T extends object
    ? { readonly [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/**
 * `GET /v1/consortia/:cid` as the contract declares it (src/consortium/schemas.ts), read as the server's
 * word: any field may be missing, so the comparison reads it defensively and a missing field is a
 * mismatch (or the contract's default, src/consortium/defaults.ts, where older services omit it).
 */
export type ServedConsortium = DeepPartial<Consortium>;

/** The strategy a service without one runs (FedAvg over every silo), as the file writes it. */
const SERVED_DEFAULT_STRATEGY = { name: DEFAULT_STRATEGY_NAME, parameters: {} };

/**
 * Compares the server's consortium with the pinned file, field by field in the file's order.
 * @throws ConsortiumMismatchError naming the first field that differs.
 */
export function compareWithServed(file: ConsortiumFile, served: ServedConsortium): void {
  const same = (field: string, pinned: unknown, got: unknown) => {
    if (canonicalJson(pinned) !== canonicalJson(got)) throw new ConsortiumMismatchError(field, pinned, got);
  };
  same('id', file.id, served.id);
  const roster = Array.isArray(served.participants) ? served.participants : [];
  same('participants.length', file.participants.length, roster.length);
  file.participants.forEach((p, i) => {
    same(`participants[${i}].publicKey`, p.publicKey, roster[i]?.publicKey?.toLowerCase());
  });
  same('threshold', file.threshold, served.threshold);
  same('corruptSilos', file.corruptSilos, served.corruptSilos);
  same('weakThreshold', file.weakThreshold, served.weakThreshold ?? false);
  same('model.parameters', file.parameters, served.model?.parameters);
  same('model.kind', file.model.kind, served.model?.name);
  same('testSetDigest', file.testSetDigest, served.testSetDigest);
  same('schemes', file.schemes, served.schemes);
  same('convention', file.convention, served.convention);
  same('emptyCoalition', file.emptyCoalition, served.emptyCoalition ?? DEFAULT_EMPTY_COALITION);
  same('utility', file.utility, served.utility ?? DEFAULT_UTILITY);
  same('encoding.clip', file.encoding.clip, served.encoding?.clip);
  same('encoding.weightRange', file.encoding.weightRange, served.encoding?.weightRange);
  same('encoding.minWeight', file.encoding.minWeight, served.encoding?.minWeight ?? DEFAULT_MIN_WEIGHT);
  same(
    'encoding.weightFloor',
    file.encoding.weightFloor,
    served.encoding?.weightFloor ?? DEFAULT_WEIGHT_FLOOR,
  );
  same(
    'encoding.maxWeightShare',
    file.encoding.maxWeightShare,
    served.encoding?.maxWeightShare ?? DEFAULT_MAX_WEIGHT_SHARE,
  );
  same(
    'encoding.minEffectiveSilos',
    file.encoding.minEffectiveSilos,
    served.encoding?.minEffectiveSilos ?? DEFAULT_MIN_EFFECTIVE_SILOS,
  );
  // The strategy the service selects by (none: FedAvg over every silo) and its public seed: a
  // silo replays the file's, so a service that runs another would refuse it every round — or,
  // worse, select silos the file's strategy does not.
  const strategy = served.strategy;
  same(
    'strategy',
    file.strategy,
    strategy === undefined
      ? SERVED_DEFAULT_STRATEGY
      : { name: strategy.name, parameters: strategy.parameters ?? {} },
  );
  if (strategy !== undefined) same('seed', file.seed, served.seed ?? DEFAULT_SELECTION_SEED);
  // The schedule: a service without one leaves the rounds to the operator (`fedscore rounds open`).
  if (served.rounds !== undefined) same('rounds', file.rounds, served.rounds);
}
