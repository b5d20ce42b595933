/**
 * The module graph of a source file: the project modules it loads at run time, following static and
 * dynamic relative imports (type-only imports are erased at run time and left out), or with
 * `{ typeImports: true }` every module it names, type imports included (what its code depends on,
 * not only what it loads). Used by service-graph.test.ts and silo-graph.test.ts
 * (docs/architecture.md, "Layers").
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { importsOf } from './layers.js';

const RUNTIME_IMPORT_RE =
  /(?:^|[;\s])(?:import|export)\s+(?!type\s)(?:[\w*{}\s,$]+\s+from\s+)?['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

/** The specifiers of the relative modules `text` loads at run time (`import { type X }` alone counts too: it keeps the module). */
export function runtimeImportsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(RUNTIME_IMPORT_RE)) out.push((m[1] ?? m[2]) as string);
  return out;
}

/**
 * Every project module reachable from `entries` (paths relative to `root`, with forward slashes):
 * by run-time imports, or by every import, type-only ones included, with `typeImports`.
 */
export function moduleGraph(
  root: string,
  entries: string | readonly string[],
  options: { readonly typeImports?: boolean } = {},
): Set<string> {
  const importsOfText = options.typeImports === true ? importsOf : runtimeImportsOf;
  const seen = new Set<string>();
  const stack = (typeof entries === 'string' ? [entries] : entries).map((e) => join(root, e));
  while (stack.length > 0) {
    const file = stack.pop() as string;
    const rel = relative(root, file).split('\\').join('/');
    if (seen.has(rel)) continue;
    seen.add(rel);
    for (const spec of importsOfText(readFileSync(file, 'utf8')).filter((s) => s.startsWith('.'))) {
      const js = join(dirname(file), spec);
      const ts = js.replace(/\.js$/, '.ts');
      if (existsSync(ts)) stack.push(ts);
      else if (existsSync(js) && /\.(m?js|ts)$/.test(js)) stack.push(js);
    }
  }
  return seen;
}
