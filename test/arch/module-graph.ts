/**
 * The runtime module graph of a source file: the project modules it loads, following static and
 * dynamic relative imports (type-only imports are erased at run time and left out). Used by
 * service-graph.test.ts (docs/architecture.md, "Layers").
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const RUNTIME_IMPORT_RE =
  /(?:^|[;\s])(?:import|export)\s+(?!type\s)(?:[\w*{}\s,$]+\s+from\s+)?['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

/** The specifiers of the relative modules `text` loads at run time (`import { type X }` alone counts too: it keeps the module). */
export function runtimeImportsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(RUNTIME_IMPORT_RE)) out.push((m[1] ?? m[2]) as string);
  return out;
}

/** Every project module reachable from `entry` (paths relative to `root`, with forward slashes). */
export function moduleGraph(root: string, entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [join(root, entry)];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    const rel = relative(root, file).split('\\').join('/');
    if (seen.has(rel)) continue;
    seen.add(rel);
    for (const spec of runtimeImportsOf(readFileSync(file, 'utf8'))) {
      const js = join(dirname(file), spec);
      const ts = js.replace(/\.js$/, '.ts');
      if (existsSync(ts)) stack.push(ts);
      else if (existsSync(js) && /\.(m?js|ts)$/.test(js)) stack.push(js);
    }
  }
  return seen;
}
