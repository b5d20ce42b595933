/**
 * Experiment configuration: validation that names the path of every bad field (the schema is
 * ./config-schema.ts). A run is fully determined by its configuration and seed.
 */
import Type, { type TSchema } from 'typebox';
import {
  defaultCorruptTolerated,
  MAX_PARTICIPANTS,
  minimumThreshold,
  weakThresholdMessage,
} from '../../protocol/config.js';
import { misbehaviorKind } from '../data/misbehaviors/registry.js';
import { DEFAULT_PARTITION, partitionProblems } from '../data/partition-registry.js';
import { DEFAULT_DATASET, datasetNames, findDataset } from '../data/registry.js';
import { DEFAULT_SPLIT, dataSplit } from '../data/split-registry.js';
import { estimatorsSchema } from '../estimators/registry.js';
import { findModel, modelNames } from '../ml/model-registry.js';
import { didYouMean } from '../schema/did-you-mean.js';
import { type SchemaIssue, schemaIssues } from '../schema/issues.js';
import { configuredReferences, referenceProblem } from './comparison-config.js';
import {
  builtinDatasetBlocks,
  comparisonSchema,
  DataKeys,
  DEFAULT_TEST_SIZE,
  EstimatorsSchema,
  type ExperimentConfig,
  ExperimentConfigSchema,
  Obj,
  quoted,
} from './config-schema.js';

export * from './config-schema.js';

/** A configuration problem: the JSON path of the field and what is wrong with it. */
export type ConfigIssue = SchemaIssue;

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

const issuesOf = (schema: TSchema, value: unknown) => schemaIssues(schema, value, { unions: UNION_HINTS });

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `sub` (a path inside the value at `path`) as a path of the whole configuration. */
const under = (path: string, sub: string) =>
  sub === '' ? path : sub.startsWith('[') ? path + sub : `${path}.${sub}`;

/**
 * What the dataset and model registries say about `data` and `model` (the schema checks their
 * shape only): an unregistered data set or model kind, a data set's options block checked against
 * its schema (built-in blocks are in `DataSchema` already), a block for another data set than the
 * one chosen, and the model's options checked against its schema.
 */
function registryIssues(config: Record<string, unknown>): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const { data, model } = config;
  if (isObject(data)) {
    const chosen = data.dataset ?? DEFAULT_DATASET;
    if (typeof chosen === 'string' && !findDataset(chosen))
      out.push({ path: 'data.dataset', message: `expected one of ${quoted(datasetNames())}` });
    for (const key of Object.keys(data)) {
      if (Object.hasOwn(DataKeys, key)) continue;
      const options = findDataset(key)?.options;
      if (!options) {
        const known = [...Object.keys(DataKeys), ...datasetNames().filter((n) => findDataset(n)?.options)];
        out.push({ path: `data.${key}`, message: `unknown key${didYouMean(key, known)}` });
        continue;
      }
      if (key !== chosen) out.push({ path: `data.${key}`, message: `applies only to data.dataset '${key}'` });
      if (!Object.hasOwn(builtinDatasetBlocks, key))
        for (const i of issuesOf(options, data[key])) out.push({ ...i, path: under(`data.${key}`, i.path) });
    }
    // A data set whose options have required keys needs its block (`data.files` for 'files').
    const required = typeof chosen === 'string' ? (findDataset(chosen)?.options?.required ?? []) : [];
    if (required.length > 0 && !Object.hasOwn(data, chosen as string))
      out.push({
        path: `data.${chosen as string}`,
        message: `required for data.dataset '${chosen as string}' (with ${required.join(', ')})`,
      });
  }
  if (isObject(model) && typeof model.kind === 'string') {
    const definition = findModel(model.kind);
    if (!definition) out.push({ path: 'model.kind', message: `expected one of ${quoted(modelNames())}` });
    else {
      const { kind: _, ...options } = model;
      for (const i of issuesOf(definition.options, options)) {
        // An option of other models: say which (`hidden` on lenet5 applies to mlp and cnn003).
        const owners = i.message.startsWith('unknown key')
          ? modelNames().filter((k) => Object.hasOwn(findModel(k)?.options.properties ?? {}, i.path))
          : [];
        out.push({
          path: under('model', i.path),
          message:
            owners.length > 0
              ? `applies only to kind ${owners.map((k) => `'${k}'`).join(' or ')}`
              : i.message,
        });
      }
    }
  }
  return out;
}

/**
 * The schema's issues with the registries' (all under `data` or `model`) inserted where the
 * schema would report them: before the first issue of a later top-level key.
 */
function mergeIssues(schema: ConfigIssue[], registry: ConfigIssue[]): ConfigIssue[] {
  const keys = Object.keys(ExperimentConfigSchema.properties);
  const rank = (i: ConfigIssue) => keys.indexOf(i.path.split(/[.[]/)[0] ?? '');
  const out: ConfigIssue[] = [];
  let r = 0;
  for (const issue of schema) {
    while (r < registry.length && rank(issue) > rank(registry[r]!)) out.push(registry[r++]!);
    out.push(issue);
  }
  return [...out, ...registry.slice(r)];
}

/** Keys that configurations once had and that now live elsewhere: what to write instead. */
const MOVED_KEYS: Readonly<Record<string, string>> = {
  'scoring.schemes':
    'no longer a configuration key: it only chose what the report shows; pass --schemes <list> to fedscore experiment or score',
};

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
  const issues = mergeIssues(
    issuesOf(currentSchema(), value),
    registryIssues(value as Record<string, unknown>),
  ).map((i) =>
    i.message.startsWith('unknown key') && MOVED_KEYS[i.path] ? { ...i, message: MOVED_KEYS[i.path]! } : i,
  );
  if (issues.length > 0) throw new ConfigError(issues, source);
  const cfg = value as ExperimentConfig;
  const extra: ConfigIssue[] = [];
  const noise = cfg.labelNoise;
  if (noise && (noise.maxRate === undefined) === (noise.silos === undefined))
    extra.push({
      path: 'labelNoise',
      message: 'expected exactly one of maxRate (linear rates) or silos (explicit rates per silo)',
    });
  for (const key of Object.keys(noise?.silos ?? {}))
    if (Number(key) >= cfg.silos)
      extra.push({ path: `labelNoise.silos.${key}`, message: `must be a silo index < silos (${cfg.silos})` });
  for (const [k, a] of (cfg.attacks ?? []).entries()) {
    if (a.silo >= cfg.silos)
      extra.push({ path: `attacks[${k}].silo`, message: `must be < silos (${cfg.silos})` });
    const kind = misbehaviorKind(a.kind);
    if (a.factor !== undefined && !kind.factor)
      extra.push({ path: `attacks[${k}].factor`, message: `kind ${a.kind} takes no factor` });
    else if (a.factor !== undefined)
      try {
        kind.checkFactor?.(a.factor);
      } catch (e) {
        extra.push({ path: `attacks[${k}].factor`, message: (e as Error).message.replace(/^factor: /, '') });
      }
  }
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
  // Each partition kind declares the options it reads and needs (src/data/partition-registry.ts).
  if (cfg.partition) extra.push(...partitionProblems(cfg.partition, cfg.silos));
  // Each data split declares what it refuses (src/data/split-registry.ts).
  extra.push(
    ...(dataSplit(cfg.data?.split ?? DEFAULT_SPLIT).problems?.({
      partitionKind: cfg.partition?.kind ?? DEFAULT_PARTITION,
      testSize: cfg.data?.testSize ?? DEFAULT_TEST_SIZE,
      trainSize: cfg.data?.trainSize,
      longTail: cfg.data?.longTail,
    }) ?? []),
  );
  const sa = cfg.secureAggregation;
  const t = sa?.threshold;
  if (t !== undefined && t > cfg.silos)
    extra.push({ path: 'secureAggregation.threshold', message: `must be ≤ silos (${cfg.silos})` });
  if (sa?.corruptSilos !== undefined && sa.corruptSilos >= cfg.silos)
    extra.push({ path: 'secureAggregation.corruptSilos', message: `must be < silos (${cfg.silos})` });
  else if (t !== undefined && t <= cfg.silos && sa?.weakThreshold !== true && cfg.silos <= MAX_PARTICIPANTS) {
    const corrupt = sa?.corruptSilos ?? defaultCorruptTolerated(cfg.silos);
    if (t < minimumThreshold(cfg.silos, corrupt))
      extra.push({
        path: 'secureAggregation.threshold',
        message: weakThresholdMessage('secureAggregation.threshold', t, cfg.silos, corrupt).replace(
          /^secureAggregation\.threshold: /,
          '',
        ),
      });
  }
  const at = cfg.comparison?.at;
  if (typeof at === 'number' && at > cfg.rounds)
    extra.push({ path: 'comparison.at', message: `must be ≤ rounds (${cfg.rounds})` });
  // A reference that would not be computed is an error now, not after the run.
  const named: [string, string][] = [
    ...(cfg.comparison?.reference !== undefined
      ? [['comparison.reference', cfg.comparison.reference] as [string, string]]
      : []),
    ...(cfg.comparison?.references ?? []).map((r, k): [string, string] => [`comparison.references[${k}]`, r]),
  ];
  for (const [path, reference] of named) {
    const problem = referenceProblem(cfg, reference);
    if (problem !== undefined) extra.push({ path, message: problem });
  }
  // With none named, the default reference (trueSv up to 6 silos, else MR-SV) must run too.
  if (named.length === 0) {
    const [fallback] = configuredReferences(cfg);
    const problem = fallback === undefined ? undefined : referenceProblem(cfg, fallback);
    if (problem !== undefined)
      extra.push({
        path: 'comparison.estimators',
        message: `the default reference '${fallback}' would not be computed: ${problem}`,
      });
  }
  if (extra.length > 0) throw new ConfigError(extra, source);
  return cfg;
}
