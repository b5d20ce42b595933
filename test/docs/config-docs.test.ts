/**
 * docs/config.md is generated from ExperimentConfigSchema (scripts/gen-config-docs.ts); this test
 * renders it in memory and fails when the committed page differs. The generator reads the JSON
 * Schema, so it is also tried on a schema built by hand, the way a registry would build one.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_DOCS_PATH,
  keyRows,
  renderConfigDocs,
  type SchemaNode,
} from '../../scripts/gen-config-docs.js';
import { ExperimentConfigSchema, parseConfig } from '../../src/fl/config.js';

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
    for (const p of paths) expect(page).toContain(`| \`${p}\` |`);
    for (const key of Object.keys(ExperimentConfigSchema.properties)) expect(paths).toContain(key);
    expect(paths).toContain('secureAggregation.dropouts[].at');
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
