/**
 * docs/utilities.schema.json is generated from UtilitiesFileSchema (scripts/gen-utilities-schema.ts);
 * this test renders it in memory and fails when the committed file differs. The example utilities
 * files validate, the schema documents every key of a round, and the example of docs/utilities.md
 * gives the scores the page shows.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderUtilitiesSchema, UTILITIES_SCHEMA_PATH } from '../../scripts/gen-utilities-schema.js';
import {
  parseUtilitiesFile,
  parseUtilitiesText,
  UtilitiesRoundSchema,
} from '../../src/records/utilities-file.js';
import { scoreUtilities } from '../../src/records/utility-scores.js';

describe('docs/utilities.schema.json', () => {
  it('is what scripts/gen-utilities-schema.ts generates from the schema', () => {
    const committed = readFileSync(UTILITIES_SCHEMA_PATH, 'utf8');
    const fresh = renderUtilitiesSchema();
    if (committed !== fresh) {
      const a = committed.split('\n');
      const b = fresh.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      expect.fail(
        `docs/utilities.schema.json is stale: run npm run docs:utilities (first difference at line ${line + 1}:\n  committed: ${a[line] ?? '(end)'}\n  generated: ${b[line] ?? '(end)'})`,
      );
    }
  });

  it('is a draft 2020-12 JSON Schema describing every key of a round', () => {
    const schema = JSON.parse(renderUtilitiesSchema());
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const round = schema.properties.rounds.items;
    expect(Object.keys(round.properties)).toEqual(Object.keys(UtilitiesRoundSchema.properties));
    for (const [key, s] of Object.entries<{ description?: string }>(round.properties))
      expect(s.description, key).toBeTruthy();
    expect(round.properties.withOnly.items).toEqual({ anyOf: [{ type: 'number' }, { type: 'null' }] });
  });

  it('the example utilities files are valid', () => {
    const dir = join(import.meta.dirname, '../../examples/utilities');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files)
      expect(() => parseUtilitiesText(readFileSync(join(dir, f), 'utf8'), f)).not.toThrow();
  });
});

describe('docs/utilities.md', () => {
  it('its example file gives the scores the page shows', async () => {
    const page = readFileSync(join(import.meta.dirname, '../../docs/utilities.md'), 'utf8');
    const [input, shown] = [...page.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => JSON.parse(m[1]!));
    const scores = await scoreUtilities(parseUtilitiesFile(input), {
      source: 'u.json',
      fedscoreVersion: '0',
    });
    const round4 = (x: unknown): unknown =>
      Array.isArray(x)
        ? x.map(round4)
        : typeof x === 'number'
          ? Math.round(x * 1e4) / 1e4 + 0 // + 0: −0 → 0
          : x !== null && typeof x === 'object'
            ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, round4(v)]))
            : x;
    expect(
      round4({
        rounds: scores.rounds.map((r) => ({ round: r.round, scores: r.scores })),
        cumulative: scores.cumulative,
      }),
    ).toEqual(shown);
  });
});
