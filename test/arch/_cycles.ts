/** Internal to test/arch: import cycles between source files (Tarjan's strongly connected components). */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { importsOf } from './layers.js';

interface Source {
  path: string;
  text: string;
}

function sourcesUnder(root: string, dirs: readonly string[]): Source[] {
  const out: Source[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (name === 'node_modules' || name.startsWith('.')) continue;
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.ts$/.test(name) && !/\.d\.ts$/.test(name))
        out.push({ path: relative(root, full).split('\\').join('/'), text: readFileSync(full, 'utf8') });
    }
  };
  for (const d of dirs) walk(join(root, d));
  return out;
}

/**
 * The cycles (components of more than one file, each sorted) of the relative imports, type
 * imports included, among `sources` (default: src/, scoring/, protocol/, crypto/ under `root`).
 */
export function fileCycles(
  root: string,
  sources: readonly Source[] = sourcesUnder(root, ['src', 'scoring', 'protocol', 'crypto']),
): string[][] {
  const paths = new Set(sources.map((s) => s.path));
  const edges = new Map<string, string[]>();
  for (const s of sources)
    edges.set(
      s.path,
      importsOf(s.text)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => posix.normalize(posix.join(posix.dirname(s.path), spec)).replace(/\.js$/, '.ts'))
        .filter((t) => paths.has(t)),
    );
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const s of sources) if (!index.has(s.path)) visit(s.path);
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
