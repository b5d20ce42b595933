/**
 * Generates docs/config.md from the experiment configuration's schema (`ExperimentConfigSchema` in
 * src/fl/config.ts): every key with its JSON path, type, whether it is required, allowed values,
 * default and description.
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
import { ExperimentConfigSchema } from '../src/fl/config.js';

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
    if (s.exclusiveMinimum !== undefined) parts.push(`> ${s.exclusiveMinimum}`);
    if (s.exclusiveMaximum !== undefined) parts.push(`< ${s.exclusiveMaximum}`);
    const r = range(lo, hi);
    if (r) parts.unshift(r);
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

/** The whole page for a configuration schema (docs/config.md for ExperimentConfigSchema). */
export function renderConfigDocs(
  schema: SchemaNode = ExperimentConfigSchema as unknown as SchemaNode,
): string {
  const rows = keyRows(schema);
  const top = rows.filter((r) => !r.path.includes('.') && !r.path.includes('['));
  const sections = top.filter((t) =>
    rows.some((r) => r.path.startsWith(`${t.path}.`) || r.path.startsWith(`${t.path}[]`)),
  );
  const out = [
    '# Experiment configuration',
    '',
    '<!-- Generated by scripts/gen-config-docs.ts from ExperimentConfigSchema (src/fl/config.ts). Do not edit: run `npm run docs:config`. -->',
    '',
    'An experiment is one JSON object, given to `fedscore experiment --config <file.json>` (and to',
    '`serve`, `client` and `consortium` for networked runs). `parseConfig` in `src/fl/config.ts`',
    'validates it: unknown keys and bad values are rejected with the path of the field',
    '(`comparison.estimators.gtg.budget: must be >= 1`), and checks that involve several keys',
    '(`partition.alpha` required for `kind` dirichlet, a silo id below `silos`, …) follow the schema.',
    'Defaults are applied where the value is used, never written into the configuration: `results.json`',
    'records the configuration as given ([results.md](results.md)). `examples/` holds working',
    'configurations; [reproductions.md](reproductions.md) says what each reproduces.',
    '',
    'A key is a JSON path: `data.synthetic.features` is `{ "data": { "synthetic": { "features": … } } }`,',
    'and `attacks[].kind` is the `kind` of every element of the `attacks` array. "required" is within',
    'the enclosing object. A default in words depends on other keys.',
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
    out.push(
      '',
      `## ${t.path}`,
      '',
      ...table(rows.filter((r) => r.path.startsWith(`${t.path}.`) || r.path.startsWith(`${t.path}[]`))),
    );
  }
  return `${out.join('\n')}\n`;
}

/** Where the page lives. */
export const CONFIG_DOCS_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'config.md');

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(CONFIG_DOCS_PATH, renderConfigDocs());
  process.stdout.write(`wrote ${CONFIG_DOCS_PATH}\n`);
}
