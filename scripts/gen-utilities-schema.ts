/**
 * Generates docs/utilities.schema.json, the JSON Schema of the utilities file that
 * `fedscore score --utilities` and `fedscore audit --utilities` read (docs/utilities.md), from its
 * TypeBox schema (`UtilitiesFileSchema` in src/records/utilities-file.ts).
 *
 *   npm run docs:utilities        (npx tsx scripts/gen-utilities-schema.ts)
 *
 * test/docs/utilities-schema.test.ts renders it in memory and fails when the committed file differs.
 * The schema says what a JSON validator can check; `parseUtilitiesFile` also checks what it cannot
 * (one entry per silo in every round, both reports of a silo null or neither, increasing round
 * numbers, tables of 2^n values that agree with the utilities).
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { UtilitiesFileSchema } from '../src/records/utilities-file.js';

/**
 * JSON with two-space indentation, as the repository's formatter (Biome, line width 110) writes
 * it: an array of strings and numbers on one line when that line fits.
 */
function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    /^( *)("[^"\n]*": )?\[\n((?: *(?:"[^"\n]*"|-?[\d.eE+-]+|true|false|null),?\n)+) *\]/gm,
    (whole, indent: string, key: string | undefined, items: string) => {
      const line = `${indent}${key ?? ''}[${items
        .split('\n')
        .map((item) => item.trim().replace(/,$/, ''))
        .filter((item) => item !== '')
        .join(', ')}]`;
      return line.length + 1 <= 110 ? line : whole; // + 1: a comma may follow
    },
  );
}

/** The file's text: draft 2020-12, the TypeBox schema's keywords in their order. */
export function renderUtilitiesSchema(): string {
  return `${formatJson({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...UtilitiesFileSchema })}\n`;
}

/** Where the file lives. */
export const UTILITIES_SCHEMA_PATH = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  'docs',
  'utilities.schema.json',
);

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(UTILITIES_SCHEMA_PATH, renderUtilitiesSchema());
  process.stdout.write(`wrote ${UTILITIES_SCHEMA_PATH}\n`);
}
