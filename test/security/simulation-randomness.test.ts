/**
 * Attack family: simulation randomness on a networked path (trust issue, "Also").
 *
 * The experiment engine derives every silo's key seeds, self-mask seed b_u and Shamir
 * coefficients from the experiment seed, which is public (it is in the configuration and in
 * results.json): anyone who knows it can recompute b_u and s_u^SK and unmask x_u. That is fine
 * for a simulation, fatal on a network. This checks which modules the networked processes
 * (src/client, src/server) can reach through their imports.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importsOf } from '../arch/layers.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.ts')) out.push(relative(root, p).split(sep).join('/'));
  }
  return out;
}

/** Project modules reachable from `entries` through relative imports. */
function closure(entries: string[]): Set<string> {
  const seen = new Set<string>();
  const stack = [...entries];
  while (stack.length > 0) {
    const f = stack.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    for (const spec of importsOf(readFileSync(join(root, f), 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = posix.normalize(posix.join(posix.dirname(f), spec)).replace(/\.js$/, '.ts');
      stack.push(target);
    }
  }
  return seen;
}

describe('security: simulation randomness on networked paths', () => {
  it('old behaviour: the silo and the service reach the engine’s seed-derived randomness', () => {
    const reach = closure([...walk(join(root, 'src/client')), ...walk(join(root, 'src/server'))]);
    expect(reach.has('src/fl/secure-round.ts')).toBe(true);
    expect(reach.has('protocol/simulate.ts')).toBe(true);
  });
});
