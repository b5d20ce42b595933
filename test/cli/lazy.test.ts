/**
 * Commands load their modules lazily: what every `fedscore` invocation loads (program.ts and the
 * command definitions) imports no command module, and the silo client never loads the report
 * renderer or the service. Checked on the static imports (type-only imports are erased; the
 * dynamic `import()` of a command's action is what makes it lazy).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;

/** Static, value-level import and re-export specifiers of a TypeScript source. */
function staticImports(text: string): string[] {
  const re = /^\s*(?:import|export)\s+(?!type\s)(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]/gm;
  return [...text.matchAll(re)].map((m) => m[1]!);
}

/** Every project file and package a source file loads, transitively (paths relative to the root). */
function closure(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of staticImports(readFileSync(join(root, file), 'utf8'))) {
      if (!spec.startsWith('.')) {
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
        continue;
      }
      const target = relative(root, join(root, dirname(file), spec)).replace(/\.js$/, '.ts');
      expect(existsSync(join(root, target)), `${file} imports ${spec}`).toBe(true);
      visit(target);
    }
  };
  visit(entry);
  return { files, packages };
}

describe('lazy command loading', () => {
  it('the program and the command definitions load no command module', () => {
    const { files, packages } = closure('src/cli/main.ts');
    expect(files.size).toBeGreaterThan(8);
    // src/ml/backend-names.ts: the backend list, a file with no import (TensorFlow.js stays unloaded).
    for (const f of files)
      expect(f).toMatch(/^src\/(cli\/(main|program|_[\w-]+|commands\/\w+)|ml\/backend-names)\.ts$/);
    expect([...files]).not.toContain('src/cli/_config.ts'); // it loads the configuration schema
    expect([...packages].filter((p) => !p.startsWith('node:'))).toEqual(['commander']);
  });

  it('the silo client loads neither the report renderer nor the service', () => {
    const { files, packages } = closure('src/cli/actions/client.ts');
    expect(files).toContain('src/client/silo.ts');
    const heavy = [...files].filter((f) =>
      /^src\/server\/|^src\/report\/(report|outputs|charts|audit)/.test(f),
    );
    expect(heavy).toEqual([]);
    for (const p of ['fastify', 'vega', 'vega-lite', 'better-sqlite3', 'pg', 'kysely'])
      expect(packages.has(p), p).toBe(false);
  });
});
