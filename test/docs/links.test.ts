/**
 * The documentation stays inside the repository. For README.md and every docs/**.md:
 * - every Markdown link (inline, image, reference definition, autolink) is relative and resolves
 *   to an existing file or directory of the repository; a `#fragment` names a heading of the
 *   target file (GitHub's anchors);
 * - no link is absolute (`/…`, `C:\…`) or escapes the root with `../consortium/`, and no link has a scheme:
 *   links to other sites (http, https, mailto, …) are not allowed at all — cite a paper by its
 *   title (docs/papers.md), not by a URL;
 * - nothing, code blocks included, refers to the design files outside the repository, and any
 *   http(s) URL in the text names only a local host (`127.0.0.1`, `localhost`, `HOST`) as in
 *   the command examples.
 * Source files must not point outside the repository either.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const self = relative(root, fileURLToPath(import.meta.url))
  .split(sep)
  .join('/');

function walk(dir: string, keep: (name: string) => boolean, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, keep, out);
    else if (keep(name)) out.push(p);
  }
  return out;
}

const docs = [join(root, 'README.md'), ...walk(join(root, 'docs'), (n) => n.endsWith('.md'))];
const rel = (abs: string) => relative(root, abs).split(sep).join('/');

/** The text without fenced code blocks and inline code spans (neither holds links). */
function prose(text: string): string {
  return text
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
    .replace(/(`+)[\s\S]*?\1/g, (m) => m.replace(/[^\n]/g, ' '));
}

/** Link targets of a Markdown text: inline links and images, reference definitions, autolinks. */
function linkTargets(text: string): string[] {
  const p = prose(text);
  const out: string[] = [];
  for (const m of p.matchAll(/!?\[(?:[^\][]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g))
    out.push(m[1]!);
  for (const m of p.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) out.push(m[1]!);
  for (const m of p.matchAll(/<([a-z][a-z0-9+.-]*:[^\s>]+)>/gi)) out.push(m[1]!);
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]!);
    const k = seen.get(base) ?? 0;
    seen.set(base, k + 1);
    out.add(k === 0 ? base : `${base}-${k}`);
  }
  return out;
}

/** What is wrong with one link of `file`, or undefined when it resolves inside the repository. */
function problemOf(file: string, target: string): string | undefined {
  if (target === '') return 'empty link';
  if (/^[a-z][a-z0-9+.-]*:/i.test(target))
    return 'links to another site are not allowed (cite papers by title, docs/papers.md)';
  if (isAbsolute(target) || target.startsWith('/') || /^[a-z]:[\\/]/i.test(target))
    return 'absolute paths are not allowed';
  const [rawPath = '', fragment] = target.split('#', 2);
  const path = decodeURIComponent(rawPath);
  const abs = path === '' ? file : resolve(dirname(file), path);
  const inside = relative(root, abs);
  if (inside.startsWith('..') || isAbsolute(inside)) return 'leaves the repository';
  if (!existsSync(abs)) return `no such file: ${rel(abs)}`;
  if (fragment !== undefined && abs.endsWith('.md')) {
    const anchor = decodeURIComponent(fragment);
    if (!anchorsOf(readFileSync(abs, 'utf8')).has(anchor)) return `no heading #${anchor} in ${rel(abs)}`;
  }
  return undefined;
}

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', 'host', '[::1]']);
const OUTSIDE = ['../shared', 'shared/design', 'shared/papers', '/work/'];

describe('documentation links', () => {
  it('finds the documents', () => {
    expect(docs.map(rel)).toContain('README.md');
    expect(docs.length).toBeGreaterThan(5);
  });

  for (const file of docs) {
    it(`${rel(file)}: every link resolves inside the repository`, () => {
      const text = readFileSync(file, 'utf8');
      const bad = linkTargets(text)
        .map((t) => ({ t, why: problemOf(file, t) }))
        .filter((x) => x.why !== undefined)
        .map((x) => `${x.t}: ${x.why}`);
      expect(bad).toEqual([]);
    });

    it(`${rel(file)}: no reference outside the repository, no URL of another site`, () => {
      const text = readFileSync(file, 'utf8');
      const bad = [
        ...OUTSIDE.filter((s) => text.includes(s)).map((s) => `mentions ${s}`),
        ...[...text.matchAll(/https?:\/\/([^/\s:)`'"<>]+)/gi)]
          .filter((m) => !LOCAL_HOSTS.has(m[1]!.toLowerCase()))
          .map((m) => `URL ${m[0]}`),
      ];
      expect(bad).toEqual([]);
    });
  }

  it('source files do not point outside the repository', () => {
    const sources = ['src', 'protocol', 'crypto', 'scoring', 'test', 'bench', 'scripts', 'examples']
      .map((d) => join(root, d))
      .filter((d) => existsSync(d))
      .flatMap((d) => walk(d, (n) => /\.(ts|mts|js|mjs|json|py|sh)$/.test(n)))
      .filter((f) => rel(f) !== self);
    const bad = sources.flatMap((f) => {
      const text = readFileSync(f, 'utf8');
      return OUTSIDE.filter((s) => text.includes(s)).map((s) => `${rel(f)} mentions ${s}`);
    });
    expect(bad).toEqual([]);
  });
});

describe('link helpers', () => {
  it('extracts inline, image, reference and autolinks but not code', () => {
    const text = [
      'See [a](docs/a.md#x) and ![i](img.png "t"), `[no](code.md)` <https://example.org>.',
      '```sh',
      '[not](a-link.md)',
      '```',
      '[ref]: docs/b.md',
    ].join('\n');
    expect(linkTargets(text)).toEqual(['docs/a.md#x', 'img.png', 'docs/b.md', 'https://example.org']);
  });

  it('makes GitHub anchors', () => {
    expect(slug('FP inverts when Σα < 0')).toBe('fp-inverts-when-σα--0');
    expect(slug('papers/003 Table 4: single-round scores')).toBe('papers003-table-4-single-round-scores');
    expect(slug('`results.json` (schema version 1)')).toBe('resultsjson-schema-version-1');
  });

  it('rejects links that leave the repository', () => {
    const readme = join(root, 'README.md');
    expect(problemOf(readme, 'https://example.org')).toMatch(/another site/);
    expect(problemOf(readme, '/etc/passwd')).toMatch(/absolute/);
    expect(problemOf(readme, '../outside.md')).toMatch(/leaves the repository/);
    expect(problemOf(readme, 'docs/none.md')).toMatch(/no such file/);
    expect(problemOf(readme, 'docs/findings.md#no-such-heading')).toMatch(/no heading/);
    expect(problemOf(readme, 'docs/findings.md')).toBeUndefined();
  });
});
