/**
 * docs/config.md is generated from ExperimentConfigSchema (scripts/gen-config-docs.ts); this test
 * renders it in memory and fails when the committed page differs. The generator reads the JSON
 * Schema, so it is also tried on a schema built by hand, the way a registry would build one.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  builtInSubsections,
  CONFIG_DOCS_PATH,
  type KeyRow,
  keyRows,
  renderConfigDocs,
  type SchemaNode,
} from '../../scripts/gen-config-docs.js';
import { BUILTIN_DATASETS } from '../../src/data/registry.js';
import { BUILT_IN_ESTIMATORS } from '../../src/estimators/registry.js';
import { BUILTIN_MODELS } from '../../src/ml/model-registry.js';
import { ExperimentConfigSchema, parseConfig } from '../../src/records/config.js';
import { BUILT_IN_STRATEGIES } from '../../src/strategies/registry.js';

describe('docs/config.md', () => {
  it('is what scripts/gen-config-docs.ts generates from the schema', () => {
    const committed = readFileSync(CONFIG_DOCS_PATH, 'utf8');
    const fresh = renderConfigDocs();
    if (committed !== fresh) {
      const a = committed.split('\n');
      const b = fresh.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      expect.fail(
        `docs/config.md is stale: run npm run docs:config (first difference at line ${line + 1}:\n  committed: ${a[line] ?? '(end)'}\n  generated: ${b[line] ?? '(end)'})`,
      );
    }
  });

  it('documents every key of the schema', () => {
    const paths = keyRows(ExperimentConfigSchema as unknown as SchemaNode).map((r) => r.path);
    const page = renderConfigDocs();
    // A built-in's block (`data.synthetic`, `comparison.estimators.gtg`) is its subsection's heading.
    const blocks = new Map(
      builtInSubsections(keyRows(ExperimentConfigSchema as unknown as SchemaNode)).flatMap((x) =>
        x.covers ? [[x.covers, x.heading]] : [],
      ),
    );
    for (const p of paths)
      expect(page).toContain(blocks.has(p) ? `\n### ${blocks.get(p)}\n` : `| \`${p}\` |`);
    for (const key of Object.keys(ExperimentConfigSchema.properties)) expect(paths).toContain(key);
    expect(paths).toContain('secureAggregation.dropouts[].at');
  });
});

describe('the built-ins, from their registry entries', () => {
  const schemaRows = keyRows(ExperimentConfigSchema as unknown as SchemaNode);
  const subsections = builtInSubsections(schemaRows);
  const page = renderConfigDocs();
  const keysOf = (schema: { properties: object }) => Object.keys(schema.properties);
  const section = (heading: string) => {
    const x = subsections.filter((s) => s.heading === heading);
    expect(x, heading).toHaveLength(1);
    expect(page).toContain(`\n### ${heading}\n`);
    return x[0]!;
  };
  const paths = (rows: KeyRow[]) => rows.map((r) => r.path);

  it('each strategy has a section with every parameter its entry declares', () => {
    for (const e of BUILT_IN_STRATEGIES)
      expect(paths(section(`strategy \`${e.name}\``).rows)).toEqual(
        keysOf(e.parameters).map((k) => `strategy.${k}`),
      );
  });

  it('each model kind has a section with its options', () => {
    for (const m of BUILTIN_MODELS)
      expect(paths(section(`model \`${m.kind}\``).rows)).toEqual(keysOf(m.options).map((k) => `model.${k}`));
    expect(page).toContain('| `model.pool` | boolean | no | `true`, `false` | `false` |');
  });

  it('each estimator and data set has a section with its options, and they leave the main tables', () => {
    for (const d of BUILT_IN_ESTIMATORS)
      expect(paths(section(`estimator \`${d.name}\``).rows)).toEqual(
        keysOf(d.schema).map((k) => `comparison.estimators.${d.name}.${k}`),
      );
    for (const d of BUILTIN_DATASETS)
      expect(paths(section(`data set \`${d.name}\``).rows)).toEqual(
        keysOf(d.options ?? { properties: {} }).map((k) => `data.${d.name}.${k}`),
      );
    expect(page.match(/\| `comparison\.estimators\.gtg\.budget` \|/g)).toHaveLength(1);
    expect(page).not.toContain('| `comparison.estimators.gtg` |');
  });

  it('every key has a description and says its default: an annotation, or "Default: …" when it depends on others', () => {
    const rows = [...schemaRows, ...subsections.flatMap((x) => x.rows)];
    for (const r of rows) {
      expect(r.description, r.path).toMatch(/\S/);
      expect(r.description, r.path).not.toMatch(/\(default|Default /);
    }
    const defaulted = (path: string) => rows.find((r) => r.path === path)?.default;
    expect(defaulted('data.dataset')).toBe('`"fashion-mnist"`');
    expect(defaulted('data.testSize')).toBe('`2000`');
    expect(defaulted('data.synthetic.features')).toBe('`784`');
    expect(defaulted('comparison.estimators.maverick.alpha')).toBe('`0.6`');
    expect(defaulted('comparison.estimators.gtg.budget')).toMatch(/^max\(/);
    expect(section('strategy `fedowen`').rows.find((r) => r.path === 'strategy.epsilon')?.default).toBe(
      '`0.1`',
    );
  });
});

describe('default annotations', () => {
  it('do not change validation: parseConfig fills nothing in', () => {
    const schema = ExperimentConfigSchema as unknown as SchemaNode;
    expect(schema.properties?.training?.properties?.learningRate?.default).toBe(0.001);
    const given = { silos: 3, rounds: 2, training: {}, comparison: {} };
    expect(parseConfig(structuredClone(given))).toEqual(given);
  });
});

describe('the generator on a schema built at run time', () => {
  const schema: SchemaNode = {
    type: 'object',
    required: ['kind'],
    properties: {
      kind: { enum: ['a', 'b'], description: 'Which one.' },
      size: { type: 'integer', minimum: 1, maximum: 9, default: 3 },
      when: {
        anyOf: [{ const: 'never' }, { type: 'integer', minimum: 1 }],
        description: 'When. Default: at once.',
      },
      list: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          required: ['x'],
          properties: { x: { type: 'number', exclusiveMinimum: 0 } },
        },
      },
      plugin: {
        anyOf: [
          { type: 'object', properties: { name: { type: 'string' }, p: { type: 'boolean' } } },
          { type: 'object', properties: { name: { type: 'string' }, q: { type: 'string', minLength: 1 } } },
        ],
      },
    },
  };

  it('walks properties, items and anyOf with JSON paths', () => {
    expect(keyRows(schema).map((r) => r.path)).toEqual([
      'kind',
      'size',
      'when',
      'list',
      'list[].x',
      'plugin',
      'plugin.name',
      'plugin.p',
      'plugin.q',
    ]);
  });

  it('reads types, required, allowed values, defaults and descriptions', () => {
    const byPath = Object.fromEntries(keyRows(schema).map((r) => [r.path, r]));
    expect(byPath.kind).toMatchObject({
      type: 'string',
      required: true,
      allowed: '`"a"`, `"b"`',
      default: '',
    });
    expect(byPath.size).toMatchObject({ type: 'integer', required: false, allowed: '1 … 9', default: '`3`' });
    expect(byPath.when).toMatchObject({
      type: 'string or integer',
      allowed: '`"never"`, or ≥ 1',
      default: 'at once',
      description: 'When.',
    });
    expect(byPath.list).toMatchObject({ type: 'array of object', allowed: '≥ 1 items' });
    expect(byPath['list[].x']).toMatchObject({ type: 'number', required: true, allowed: '> 0' });
    expect(byPath['plugin.q']).toMatchObject({ type: 'string', allowed: '≥ 1 characters' });
  });

  it('renders a section per top-level object', () => {
    const page = renderConfigDocs(schema);
    expect(page).toContain('## list\n');
    expect(page).toContain('| `list[].x` | number | yes | > 0 | – | – |');
    expect(page).toContain('Keys: [below](#plugin).');
  });
});
