/**
 * Generates docs/config.md from the experiment configuration's schema (`ExperimentConfigSchema` in
 * src/records/config.ts) and the registries: every key with its JSON path, type, whether it is required,
 * allowed values, default and description. Under its top-level section, each built-in data set,
 * model, strategy and estimator gets a subsection with its keys, from its registry entry: a data
 * set's options block (`data.synthetic`), a model's options (`model.hidden`), a strategy's
 * parameters (`strategy.alpha`, from the entry's `parameters` schema) and an estimator's options
 * (`comparison.estimators.gtg.budget`).
 *
 *   npm run docs:config        (npx tsx scripts/gen-config-docs.ts)
 *
 * test/docs/config-docs.test.ts renders the page in memory and fails when docs/config.md differs.
 *
 * The page is rendered from the JSON Schema the TypeBox builders produce, not from the TypeScript
 * source, so parts of the schema assembled at run time (from registries) are documented the same
 * way. Keywords read: `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`,
 * `const`, `anyOf`/`oneOf`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
 * `minLength`, `maxLength`, `minItems`, `maxItems`, `default`, `description`. A default that is not
 * a fixed value (it depends on other keys) is written at the end of the description as
 * "Default: …"; the page shows it in the default column.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BUILTIN_DATASETS } from '../src/data/registry.js';
import { BUILT_IN_ESTIMATORS } from '../src/estimators/registry.js';
import { EXTERNAL_MODEL } from '../src/ml/external-model.js';
import { BUILTIN_MODELS } from '../src/ml/model-registry.js';
import { ExperimentConfigSchema } from '../src/records/config.js';
import { BUILT_IN_STRATEGIES } from '../src/strategies/registry.js';

/** The part of a JSON Schema this generator reads. */
export interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  required?: string[];
  additionalProperties?: boolean | SchemaNode;
  items?: SchemaNode;
  enum?: unknown[];
  const?: unknown;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  description?: string;
}

/** One documented key. */
export interface KeyRow {
  /** JSON path: `data.synthetic.features`, `attacks[].kind`. */
  path: string;
  type: string;
  required: boolean;
  allowed: string;
  default: string;
  description: string;
}

const code = (s: string) => `\`${s}\``;
/** JSON on one line with a space after `:` and `,`: `{ "kind": "iid" }`, `[200]`. */
function json(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(json).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${json(x)}`);
    return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
  }
  return JSON.stringify(v);
}
const alternatives = (s: SchemaNode) => s.anyOf ?? s.oneOf;

/** The type of a value set, for `enum` and `const`. */
function typeOfValues(values: unknown[]): string {
  const types = [...new Set(values.map((v) => (v === null ? 'null' : typeof v)))];
  return types.join(' or ');
}

/** A readable type: `integer`, `array of object`, `string or integer`. */
export function typeOf(s: SchemaNode): string {
  const alts = alternatives(s);
  if (alts) return [...new Set(alts.map(typeOf))].join(' or ');
  if (s.enum) return typeOfValues(s.enum);
  if (s.const !== undefined) return typeOfValues([s.const]);
  if (Array.isArray(s.type)) return s.type.join(' or ');
  if (s.type === 'array') return s.items ? `array of ${typeOf(s.items)}` : 'array';
  if (s.type) return s.type;
  if (s.properties) return 'object';
  return 'any';
}

function range(lo: string | undefined, hi: string | undefined, unit = ''): string {
  if (lo !== undefined && hi !== undefined) return `${lo} … ${hi}${unit}`;
  if (lo !== undefined) return `≥ ${lo}${unit}`;
  if (hi !== undefined) return `≤ ${hi}${unit}`;
  return '';
}

/** What values a key accepts beyond its type: enumerations, ranges, lengths. */
export function allowedOf(s: SchemaNode): string {
  const alts = alternatives(s);
  if (alts)
    return alts
      .map((a) => {
        const allowed = allowedOf(a);
        return allowed ? allowed : `any ${typeOf(a)}`;
      })
      .join(', or ');
  if (s.enum) return s.enum.map((v) => code(json(v))).join(', ');
  if (s.const !== undefined) return code(json(s.const));
  const parts: string[] = [];
  if (s.type === 'integer' || s.type === 'number') {
    const lo = s.minimum !== undefined ? String(s.minimum) : undefined;
    const hi = s.maximum !== undefined ? String(s.maximum) : undefined;
    const r = range(lo, hi);
    if (r) parts.push(r);
    // An open end beside a closed one: the lower bound first (`> 0, ≤ 1`).
    if (s.exclusiveMinimum !== undefined) parts.splice(0, 0, `> ${s.exclusiveMinimum}`);
    if (s.exclusiveMaximum !== undefined) parts.push(`< ${s.exclusiveMaximum}`);
  }
  if (s.type === 'string') {
    const r = range(
      s.minLength !== undefined ? String(s.minLength) : undefined,
      s.maxLength !== undefined ? String(s.maxLength) : undefined,
      ' characters',
    );
    if (r) parts.push(r);
  }
  if (s.type === 'boolean') parts.push('`true`, `false`');
  if (s.type === 'array') {
    const items = s.items ? allowedOf(s.items) : '';
    if (items && s.items?.type !== 'object') parts.push(`each ${items}`);
    const r = range(
      s.minItems !== undefined ? String(s.minItems) : undefined,
      s.maxItems !== undefined ? String(s.maxItems) : undefined,
      ' items',
    );
    if (r) parts.push(r);
  }
  if ((s.type === 'object' || s.properties) && s.additionalProperties !== false)
    parts.push(s.properties && Object.keys(s.properties).length > 0 ? 'these keys and others' : 'any keys');
  return parts.join(', ');
}

/** Splits a trailing "Default: …" off a description. */
function splitDefault(description: string | undefined): { text: string; computed?: string } {
  const d = (description ?? '').replace(/\s+/g, ' ').trim();
  const m = /^(.*?)\s*Default: (.+?)\.?$/.exec(d);
  return m ? { text: m[1]!, computed: m[2]! } : { text: d };
}

/** Every key under `s`, depth first in schema order; `prefix` is the JSON path of `s`. */
export function keyRows(s: SchemaNode, prefix = ''): KeyRow[] {
  const rows: KeyRow[] = [];
  const seen = new Set<string>();
  const visit = (node: SchemaNode, path: string) => {
    const objects = [node, ...(alternatives(node) ?? [])].filter((n) => n.properties);
    for (const obj of objects)
      for (const [key, child] of Object.entries(obj.properties!)) {
        const childPath = path ? `${path}.${key}` : key;
        if (seen.has(childPath)) continue;
        seen.add(childPath);
        const { text, computed } = splitDefault(child.description);
        rows.push({
          path: childPath,
          type: typeOf(child),
          required: obj.required?.includes(key) ?? false,
          allowed: allowedOf(child),
          default: child.default !== undefined ? code(json(child.default)) : (computed ?? ''),
          description: text,
        });
        visit(child, childPath);
        if (child.type === 'array' && child.items) visit(child.items, `${childPath}[]`);
      }
  };
  visit(s, prefix);
  return rows;
}

const cell = (s: string) => (s === '' ? '–' : s.replace(/\|/g, '\\|'));

function table(rows: KeyRow[]): string[] {
  return [
    '| key | type | required | allowed values | default | description |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) =>
      [code(r.path), r.type, r.required ? 'yes' : 'no', r.allowed, r.default, r.description]
        .map(cell)
        .join(' | ')
        .replace(/^/, '| ')
        .concat(' |'),
    ),
  ];
}

/** One built-in's keys, in a subsection of a top-level section. */
export interface Subsection {
  /** The top-level key it belongs under: `model`. */
  section: string;
  /** Its heading: ``model `mlp` ``. */
  heading: string;
  /** What it is, one paragraph. */
  text: string;
  /** Its keys; rows whose JSON path is `covers` or under it also leave the section's own table. */
  rows: KeyRow[];
  /** The JSON path of the block of the schema it documents (`data.synthetic`), if any. */
  covers?: string;
}

const under = (path: string, prefix: string) =>
  path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[]`);

/**
 * The subsections of the built-ins, from the registries: per data set (its options block), per
 * model kind (its options), per strategy (its parameters) and per estimator (its options). Blocks
 * that are part of the schema (data sets', estimators') take their rows from `rows`, the schema's,
 * so the page documents what parseConfig validates.
 */
export function builtInSubsections(rows: KeyRow[]): Subsection[] {
  const block = (path: string) => rows.filter((r) => under(r.path, path));
  const nothing = (keys: KeyRow[], none: string) => (keys.length === 0 ? ` ${none}` : '');
  return [
    ...BUILTIN_DATASETS.map((d) => {
      const keys = block(`data.${d.name}`);
      return {
        section: 'data',
        heading: `data set ${code(d.name)}`,
        text: `${code(`"dataset": "${d.name}"`)}: ${d.description}.${keys.length > 0 ? ` Options: the block ${code(`data.${d.name}`)}:` : ' No options.'}`,
        rows: keys,
        covers: `data.${d.name}`,
      };
    }),
    // The TF.js models, then the trainer process's (src/ml/external-model.ts, docs/trainer.md).
    ...[...BUILTIN_MODELS, EXTERNAL_MODEL].map((m) => {
      const keys = keyRows(m.options as unknown as SchemaNode, 'model');
      return {
        section: 'model',
        heading: `model ${code(m.kind)}`,
        text: `${code(`"kind": "${m.kind}"`)}: ${m.description}.${keys.length > 0 ? ' Options, next to `kind`:' : ''}${nothing(keys, 'No options.')}`,
        rows: keys,
      };
    }),
    ...BUILT_IN_STRATEGIES.map((e) => {
      const keys = keyRows(e.parameters as unknown as SchemaNode, 'strategy');
      return {
        section: 'strategy',
        heading: `strategy ${code(e.name)}`,
        text: `${code(`"name": "${e.name}"`)}: ${e.description}.${keys.length > 0 ? ' Parameters, next to `name`:' : ''}${nothing(keys, 'No parameters.')}`,
        rows: keys,
      };
    }),
    ...BUILT_IN_ESTIMATORS.map((d) => {
      const path = `comparison.estimators.${d.name}`;
      const keys = block(path);
      const traits = [
        d.compare === 'round' ? 'compared per round' : 'compared cumulatively',
        ...(d.byDefault ? ['runs by default'] : []),
        ...(d.reference ? ['may be `comparison.reference`'] : []),
        ...(d.needs?.referenceUpdate ? ['needs the validation reference update'] : []),
        ...(d.needs?.estimators?.length
          ? [`runs ${d.needs.estimators.map((n) => code(n.name)).join(', ')} too`]
          : []),
      ];
      return {
        section: 'comparison',
        heading: `estimator ${code(d.name)}`,
        text: `${code(path)}: ${d.title}; ${traits.join(', ')}.${nothing(keys, 'No options.')}`,
        rows: keys,
        covers: path,
      };
    }),
  ];
}

/**
 * The whole page for a configuration schema (docs/config.md for ExperimentConfigSchema, with the
 * built-ins' subsections).
 */
export function renderConfigDocs(
  schema: SchemaNode = ExperimentConfigSchema as unknown as SchemaNode,
  subsections: Subsection[] = schema === (ExperimentConfigSchema as unknown as SchemaNode)
    ? builtInSubsections(keyRows(schema))
    : [],
): string {
  const rows = keyRows(schema);
  const covered = (r: KeyRow) =>
    subsections.some((x) => x.covers !== undefined && (r.path === x.covers || under(r.path, x.covers)));
  const top = rows.filter((r) => !r.path.includes('.') && !r.path.includes('['));
  const sections = top.filter(
    (t) => rows.some((r) => under(r.path, t.path)) || subsections.some((x) => x.section === t.path),
  );
  const out = [
    '# Experiment configuration',
    '',
    '<!-- Generated by scripts/gen-config-docs.ts from ExperimentConfigSchema (src/records/config.ts) and the registries. Do not edit: run `npm run docs:config`. -->',
    '',
    'An experiment is one JSON object, given to `fedscore experiment --config <file.json>` (and to',
    '`serve`, `client` and `consortium` for networked runs). `parseConfig` in `src/records/config.ts`',
    'validates it: unknown keys and bad values are rejected with the path of the field',
    '(`comparison.estimators.gtg.budget: must be >= 1`), and checks that involve several keys',
    '(`partition.alpha` required for `kind` dirichlet, a silo id below `silos`, …) follow the schema.',
    'Defaults are applied where the value is used, never written into the configuration: `results.json`',
    'records the configuration as given ([results.md](results.md)). `examples/` holds working',
    'configurations; [reproductions.md](reproductions.md) says what each reproduces.',
    '',
    'A key is a JSON path: `data.synthetic.features` is `{ "data": { "synthetic": { "features": … } } }`,',
    'and `attacks[].kind` is the `kind` of every element of the `attacks` array. "required" is within',
    'the enclosing object. A default in words depends on other keys. Data sets, models, strategies and',
    'estimators come from registries: each built-in has a subsection with its own keys, from its entry',
    '(a `--plugin` module may register more).',
    '',
    '## Top level',
    '',
    ...table(
      top.map((t) =>
        sections.includes(t)
          ? {
              ...t,
              description: `${t.description}${t.description ? ' ' : ''}Keys: [below](#${t.path.toLowerCase()}).`,
            }
          : t,
      ),
    ),
  ];
  for (const t of sections) {
    const own = rows.filter((r) => under(r.path, t.path) && !covered(r));
    out.push('', `## ${t.path}`);
    if (own.length > 0) out.push('', ...table(own));
    for (const x of subsections.filter((x) => x.section === t.path)) {
      out.push('', `### ${x.heading}`, '', x.text);
      if (x.rows.length > 0) out.push('', ...table(x.rows));
    }
  }
  return `${out.join('\n')}\n`;
}

/** Where the page lives. */
export const CONFIG_DOCS_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'config.md');

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(CONFIG_DOCS_PATH, renderConfigDocs());
  process.stdout.write(`wrote ${CONFIG_DOCS_PATH}\n`);
}
