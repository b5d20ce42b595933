/**
 * The contract below everything it serves (issue 33): src/consortium — the wire's schemas and
 * types, error codes, defaults, signing, the consortium file, weight bounds, the coalition
 * convention — imports only the rooms below it that describe nothing of a run: the pure
 * math (scoring/), the protocol (protocol/, crypto/) and the generic schema helpers (src/schema),
 * type imports included. What replays a strategy over the network (src/strategies/networked-plan.ts)
 * sits above it with the registry it needs; models, strategies and seed streams are not its.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importsOf, type SourceFile } from './layers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

const ALLOWED_ROOMS = ['src/consortium/', 'src/schema/', 'scoring/', 'protocol/', 'crypto/'];
const ALLOWED_PACKAGES = [/^typebox(\/|$)/, /^node:/];

/** Every import of a contract file outside the allowed rooms and packages: `file → target`. */
function contractViolations(files: readonly SourceFile[]): string[] {
  return files.flatMap((f) =>
    importsOf(f.text).flatMap((spec) => {
      if (!spec.startsWith('.'))
        return ALLOWED_PACKAGES.some((re) => re.test(spec)) ? [] : [`${f.path} → ${spec} (a package)`];
      const target = posix.normalize(posix.join(posix.dirname(f.path), spec));
      return ALLOWED_ROOMS.some((room) => target.startsWith(room)) ? [] : [`${f.path} → ${target}`];
    }),
  );
}

describe('the contract (src/consortium) imports only from the low rooms', () => {
  const files: SourceFile[] = readdirSync(`${root}/src/consortium`, { recursive: true, encoding: 'utf8' })
    .filter((n) => n.endsWith('.ts'))
    .map((n) => ({ path: `src/consortium/${n}`, text: readFileSync(`${root}/src/consortium/${n}`, 'utf8') }));

  it('scoring/, protocol/, crypto/, src/schema and typebox only, type imports included', () => {
    expect(files.length).toBeGreaterThan(5);
    expect(contractViolations(files)).toEqual([]);
  });

  it('flags an arrow to a room it describes (the checker works)', () => {
    expect(
      contractViolations([
        { path: 'src/consortium/a.ts', text: "import type { X } from '../strategies/registry.js';" },
        { path: 'src/consortium/b.ts', text: "import { canonicalJson } from '../ml/layers-model.js';" },
        {
          path: 'src/consortium/c.ts',
          text: "import { deriveSeed } from '../data/seed.js';\nimport Type from 'typebox';",
        },
        {
          path: 'src/consortium/d.ts',
          text: "import { x } from './defaults.js';\nimport { y } from '../../scoring/private.js';",
        },
        { path: 'src/consortium/e.ts', text: "import fastify from 'fastify';" },
      ]),
    ).toEqual([
      'src/consortium/a.ts → src/strategies/registry.js',
      'src/consortium/b.ts → src/ml/layers-model.js',
      'src/consortium/c.ts → src/data/seed.js',
      'src/consortium/e.ts → fastify (a package)',
    ]);
  });
});
