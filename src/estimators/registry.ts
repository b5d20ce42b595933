/**
 * The estimator registry: name → definition (./estimator.ts) of every reference estimator the
 * comparison harness can run. The harness, the configuration schema (`comparison.estimators`), the
 * experiment's folds and comparison rules, the CLI and the benches all read it; an estimator's
 * name is written in its own file and nowhere else (test/arch/registries.test.ts).
 *
 * A new built-in estimator is one file in this folder plus one line in `BUILT_IN_ESTIMATORS`; a
 * user module adds one with `registerEstimator`. Order matters: the harness runs estimators, and
 * records their scores, in registration order.
 *
 * Seed streams: an estimator draws from `deriveSeed(seed, round, ...stream)`, and the registry
 * refuses a stream already taken. The built-ins' streams are historical values, frozen so results
 * stay reproducible; a new estimator takes a new stream of at least two parts (new built-ins:
 * the next `[0xe5, i]`). One-part streams `[s]` are, elsewhere, the engine's per-silo training
 * seeds; Maverick-Shapley's historical `[7]` shares its value with silo 7's.
 */
import Type, { type Static, type TObject, type TOptional, type TSchema } from 'typebox';
import { PRIVATE_METHODS, RAW_METHODS } from '../consortium/private-scoring.js';
import { withDoc } from '../schema/doc.js';
import { banzhaf } from './banzhaf.js';
import { cos } from './cos.js';
import type { EstimatorDefinition } from './estimator.js';
import { gtg } from './gtg.js';
import { maverick } from './maverick.js';
import { mc } from './mc.js';
import { mrsv } from './mrsv.js';
import { owen } from './owen.js';
import { tmr } from './tmr.js';
import { tsv } from './tsv.js';

/** The built-in estimators, in the order the harness runs them. */
export const BUILT_IN_ESTIMATORS = [
  mrsv, // exact per-round Shapley, folded over rounds (MR-SV)
  tmr, // truncated multi-round Shapley (TMR), folds MR-SV's tables
  gtg, // GTG-Shapley
  mc, // Monte Carlo permutations
  owen, // Owen sampling
  banzhaf, // Data Banzhaf (MSR)
  cos, // cosine similarity with the aggregate
  maverick, // Maverick-Shapley (MS-GTG)
  tsv, // Trajectory Shapley
] as const;

/** `comparison.estimators` as configured: estimator name → its options. */
export type EstimatorConfig = Static<typeof BUILT_IN_ESTIMATORS_SCHEMA>;

/**
 * The references that are not estimators (the registry reserves their names): the true
 * Shapley value of the retraining game (papers/003 §3.1; `comparison.trueShapley`), and the exact
 * Shapley value of the compared round's own coalition game — the reference of the authors' code
 * (`games_local.py` `valores_por_rondas`: `shapley(...)` on the scored round's coalition table),
 * read from MR-SV's table of round `comparison.at`.
 */

export const TRUE_SV = 'trueSv';
export const ROUND_SV = 'roundSv';

/** Any registered estimator (its configuration and state types erased). */
type AnyEstimator = EstimatorDefinition<string, TObject, unknown>;

/** Names the round records already use for other things (private scores, the retraining game, timings). */
const RESERVED = new Set<string>([
  ...PRIVATE_METHODS,
  ...RAW_METHODS,
  TRUE_SV,
  ROUND_SV,
  'strategy',
  'training',
  'secureAggregation',
  'privateScoring',
]);

/** Largest silo count for which the true Shapley value of the retraining game is computed by default. */
export const TRUE_SHAPLEY_DEFAULT_MAX_SILOS = 6;

const registry = new Map<string, AnyEstimator>();
let schemaCache: TObject | undefined;

const sameStream = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

function add(definition: AnyEstimator, isBuiltIn: boolean): void {
  if (typeof definition !== 'object' || definition === null)
    throw new TypeError('definition: expected an estimator definition object');
  const { name, schema, stream } = definition;
  if (typeof name !== 'string') throw new TypeError(`name: expected a string, got ${typeof name}`);
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(name))
    throw new RangeError(`name: expected letters and digits, starting with a letter, got '${name}'`);
  if (registry.has(name)) throw new RangeError(`name: estimator '${name}' is already registered`);
  if (RESERVED.has(name)) throw new RangeError(`name: '${name}' is reserved (the results use it already)`);
  if (typeof schema !== 'object' || schema === null || (schema as { type?: unknown }).type !== 'object')
    throw new TypeError(`${name}.schema: expected a TypeBox object schema`);
  if (
    !Array.isArray(stream) ||
    stream.length === 0 ||
    !stream.every((p) => Number.isInteger(p) && p >= 0 && p <= 0xffffffff)
  )
    throw new TypeError(`${name}.stream: expected a non-empty array of 32-bit unsigned integers`);
  if (!isBuiltIn && stream.length < 2)
    throw new RangeError(`${name}.stream: expected at least two parts ([s] are the per-silo training seeds)`);
  for (const other of registry.values())
    if (sameStream(other.stream, stream))
      throw new RangeError(`${name}.stream: [${stream.join(', ')}] is already the stream of '${other.name}'`);
  if (definition.compare !== 'round' && definition.compare !== 'cumulative')
    throw new RangeError(`${name}.compare: expected 'round' or 'cumulative'`);
  if (definition.byDefault && !isBuiltIn)
    throw new RangeError(
      `${name}.byDefault: only built-in estimators run by default (what a configuration means must not depend on which modules were imported)`,
    );
  if (typeof definition.run !== 'function' && typeof definition.fold !== 'function')
    throw new TypeError(`${name}: expected a run or a fold function`);
  for (const needed of definition.needs?.estimators ?? [])
    if (registry.get(needed.name) !== needed)
      throw new RangeError(`${name}.needs.estimators: '${needed.name}' is not registered before it`);
  registry.set(name, definition);
  schemaCache = undefined;
}

for (const definition of BUILT_IN_ESTIMATORS) add(definition, true);

/**
 * Adds an estimator (from a user module) after the built-ins; configurations may then name it
 * under `comparison.estimators`. It never runs by default.
 * @throws TypeError for a malformed definition; RangeError naming the field for a name or stream
 *   already taken, a reserved or malformed name, a one-part stream, `byDefault`, or a needed
 *   estimator that is not registered.
 */
export function registerEstimator<T extends TObject, S>(definition: EstimatorDefinition<string, T, S>): void {
  add(definition as AnyEstimator, false);
}

/** Every registered estimator, in run order. */
export function estimatorDefinitions(): readonly EstimatorDefinition[] {
  return [...registry.values()];
}

/** The registered estimator of that name, or undefined. */
export function estimatorOf(name: string): EstimatorDefinition | undefined {
  return registry.get(name);
}

type EstimatorsSchemaOf<D extends readonly EstimatorDefinition[]> = TObject<{
  [E in D[number] as E['name']]: TOptional<E['schema']>;
}>;

function estimatorsSchemaOf<const D extends readonly EstimatorDefinition[]>(definitions: D) {
  const properties: Record<string, TSchema> = {};
  for (const d of definitions)
    properties[d.name] = Type.Optional(withDoc(d.schema, { description: `${d.title}.` }));
  return Type.Object(properties, { additionalProperties: false }) as unknown as EstimatorsSchemaOf<D>;
}

/** The schema of `comparison.estimators` over the built-ins (typed; the static configuration type). */
export const BUILT_IN_ESTIMATORS_SCHEMA = estimatorsSchemaOf(BUILT_IN_ESTIMATORS);

/**
 * The schema of `comparison.estimators` over every registered estimator (what `parseConfig`
 * validates); the same object until the next registration.
 */
export function estimatorsSchema(): TObject {
  schemaCache ??=
    registry.size === BUILT_IN_ESTIMATORS.length
      ? BUILT_IN_ESTIMATORS_SCHEMA
      : estimatorsSchemaOf(estimatorDefinitions());
  return schemaCache;
}

/** The estimators that run when the configuration names none (`byDefault`), each with `{}`. */
export function defaultEstimators(): EstimatorConfig {
  const out: Record<string, object> = {};
  for (const d of registry.values()) if (d.byDefault) out[d.name] = {};
  return out as EstimatorConfig;
}

/** An estimator with the options it runs with. */
export interface EstimatorUse {
  definition: EstimatorDefinition;
  config: Record<string, unknown>;
}

function configsOf(estimators: EstimatorConfig): [EstimatorDefinition, Record<string, unknown>][] {
  const out: [EstimatorDefinition, Record<string, unknown>][] = [];
  for (const [name, config] of Object.entries(estimators as Record<string, unknown>)) {
    if (config === undefined) continue;
    const definition = registry.get(name);
    if (!definition)
      throw new RangeError(
        `comparison.estimators.${name}: unknown estimator (expected one of ${[...registry.keys()].join(', ')})`,
      );
    out.push([definition, config as Record<string, unknown>]);
  }
  return out;
}

/**
 * What runs each round: the configured estimators and, with `{}`, the ones they need, in run
 * order. @throws RangeError naming the key of an unknown estimator.
 */
export function estimatorsToRun(estimators: EstimatorConfig): EstimatorUse[] {
  const configured = new Map(configsOf(estimators).map(([d, c]) => [d.name, c]));
  const wanted = new Set<string>();
  const visit = (d: EstimatorDefinition) => {
    if (wanted.has(d.name)) return;
    wanted.add(d.name);
    for (const needed of d.needs?.estimators ?? []) visit(needed);
  };
  for (const name of configured.keys()) visit(registry.get(name)!);
  return [...registry.values()]
    .filter((d) => wanted.has(d.name))
    .map((definition) => ({ definition, config: configured.get(definition.name) ?? {} }));
}

/** Whether an estimator that runs needs the validation reference update (Trajectory Shapley does). */
export function needsReferenceUpdate(estimators: EstimatorConfig): boolean {
  return estimatorsToRun(estimators).some((u) => u.definition.needs?.referenceUpdate === true);
}

/** The configured estimators that fold the rounds' tables after the run (MR-SV, TMR), in run order. */
export function estimatorFolds(estimators: EstimatorConfig): EstimatorUse[] {
  const configured = new Map(configsOf(estimators).map(([d, c]) => [d.name, c]));
  return [...registry.values()]
    .filter((d) => d.fold && configured.has(d.name))
    .map((definition) => ({ definition, config: configured.get(definition.name)! }));
}

/** Whether `comparison.at = r` compares a method's round-r scores as they are (not accumulated). */
export function comparedPerRound(method: string): boolean {
  return registry.get(method)?.compare === 'round';
}

/** Estimators that may be `comparison.reference`. */
export function referenceEstimators(): string[] {
  return [...registry.values()].filter((d) => d.reference).map((d) => d.name);
}

/** The default reference when the true Shapley value is not computed: the first reference estimator. */
export function defaultReferenceEstimator(): string {
  return referenceEstimators()[0]!;
}

/** Every name `comparison.reference(s)` may take: the reference estimators, trueSv and roundSv. */
export function referenceNames(): string[] {
  return [...referenceEstimators(), TRUE_SV, ROUND_SV];
}

/** The estimator whose per-round exact tables roundSv reads (MR-SV; it runs when configured or needed). */
export const ROUND_TABLES_ESTIMATOR: EstimatorDefinition = mrsv;
