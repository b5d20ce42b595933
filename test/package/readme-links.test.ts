/**
 * Issue 23: the packed README's links resolve. Every relative link of README.md names a file that
 * `npm pack` puts in the tarball (package.json `files`: the docs it links, LICENSE), as
 * `npm pack --dry-run --json` lists them; and docs/api.md's plain JavaScript examples ship too.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** The paths `npm pack` would put in the tarball (without building: dist/ does not matter here). */
function packedFiles(): Set<string> {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(0);
  const [pack] = JSON.parse(r.stdout) as { files: { path: string }[] }[];
  return new Set(pack!.files.map((f) => f.path));
}

/** The relative link targets of a Markdown file, without their #anchors. */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!.split('#')[0]!)
    .filter((t) => t !== '' && !/^[a-z][a-z+.-]*:/i.test(t));
}

describe('the packed README', () => {
  const files = packedFiles();

  it('ships every file the README links to, and the LICENSE', () => {
    const links = relativeLinks(readFileSync(join(root, 'README.md'), 'utf8'));
    expect(links.length).toBeGreaterThan(15);
    const missing = [...new Set(links)].filter((t) => !files.has(t.replace(/^\.\//, '')));
    expect(missing).toEqual([]);
    expect(files.has('LICENSE')).toBe(true);
    expect(files.has('README.md')).toBe(true);
  });

  it('ships the plain JavaScript examples docs/api.md names', () => {
    const api = readFileSync(join(root, 'docs', 'api.md'), 'utf8');
    const named = [...api.matchAll(/`(examples\/api\/[a-z]+\.mjs)`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(0);
    for (const name of ['scoring', 'protocol', 'crypto', 'client'])
      expect(files.has(`examples/api/${name}.mjs`)).toBe(true);
    for (const f of named) expect(files.has(f), f).toBe(true);
  });
});
