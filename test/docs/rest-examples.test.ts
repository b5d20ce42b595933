/**
 * Docs that cannot drift (issue 34): every REST request the docs and the README name — `POST
 * /v1/consortia`, `PUT …/rounds/:round/utilities`, in prose, code and tables — is a route of the
 * service's OpenAPI document with that method. A path may be written in full or from `…/` (a
 * suffix of a route); `:name`, `<name>` and concrete values (`hospitals`, `c1`) stand for a
 * route's parameters.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, harness } from '../server/_harness.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;

interface Mention {
  where: string;
  method: string;
  path: string;
}

/** Every `METHOD /path` or `METHOD …/path` in the docs; a table row `| `GET …/a`, `…/b` |` names both. */
function mentions(): Mention[] {
  const docs = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const out: Mention[] = [];
  const path = String.raw`(?:\/|…\/)[\w:<>{}.\-/…]*`;
  for (const doc of docs) {
    readFileSync(join(ROOT, doc), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const m of line.matchAll(
          new RegExp(String.raw`\b(${METHODS.join('|')}) (${path})((?:\`?,\s*\`(?:${path})\`?)*)`, 'g'),
        )) {
          const more = [...(m[3] ?? '').matchAll(new RegExp(`\`(${path})`, 'g'))].map((x) => x[1] as string);
          for (const p of [m[2] as string, ...more])
            out.push({ where: `${doc}:${i + 1}`, method: m[1] as string, path: p.replace(/[.…]+$/, '') });
        }
      });
  }
  return out;
}

const segments = (p: string) => p.split('/').filter((s) => s !== '');
const isParam = (s: string) => /^(\{.+\}|:.+|<.+>)$/.test(s);

/** Whether the doc's path names the route: the same segments (a `…/` path: the route's last ones). */
function names(doc: string, route: string): boolean {
  const d = segments(doc.replace(/^…\//, ''));
  const r = segments(route);
  if (d.length === 0) return false;
  const tail = doc.startsWith('…/') ? r.slice(-d.length) : r;
  if (tail.length !== d.length) return false;
  return d.every((s, k) => {
    const want = tail[k] as string;
    if (isParam(want)) return true; // a parameter takes a placeholder or a concrete value
    return !isParam(s) && s === want;
  });
}

let h: Harness;
let routes: { path: string; methods: string[] }[];
beforeAll(async () => {
  h = await harness();
  const doc = (await h.app.inject({ method: 'GET', url: '/docs/json' })).json() as {
    paths: Record<string, Record<string, unknown>>;
  };
  routes = Object.entries(doc.paths).map(([path, ops]) => ({
    path,
    methods: Object.keys(ops).map((m) => m.toUpperCase()),
  }));
});
afterAll(() => h.close());

describe('REST examples in the docs', () => {
  it('find the requests the docs name (the scan itself works)', () => {
    const found = mentions();
    expect(found.length).toBeGreaterThan(20);
    expect(found).toContainEqual(expect.objectContaining({ method: 'POST', path: '/v1/consortia' }));
    expect(
      names('/v1/consortia/:cid/rounds/:round/utilities', '/v1/consortia/{cid}/rounds/{round}/utilities'),
    ).toBe(true);
    expect(names('…/rounds/:r/utilities', '/v1/consortia/{cid}/rounds/{round}/utilities')).toBe(true);
    expect(names('/v1/consortia/hospitals/scores', '/v1/consortia/{cid}/scores')).toBe(true);
    expect(names('…/rounds/:r/utility', '/v1/consortia/{cid}/rounds/{round}/utilities')).toBe(false);
    expect(names('/v1/consortia/:cid/round', '/v1/consortia/{cid}/rounds')).toBe(false);
  });

  it('each is a route of the OpenAPI document with that method', () => {
    const wrong = mentions()
      .filter((m) => !/^\/(docs|dashboard)\b/.test(m.path) || m.path.startsWith('/dashboard/:cid/charts'))
      .filter((m) => !routes.some((r) => names(m.path, r.path) && r.methods.includes(m.method)))
      .map((m) => {
        const other = routes.filter((r) => names(m.path, r.path)).flatMap((r) => r.methods);
        return `${m.where}: ${m.method} ${m.path}${other.length ? ` (the route takes ${[...new Set(other)].join(', ')})` : ' (no such route)'}`;
      });
    expect(wrong).toEqual([]);
  });
});
