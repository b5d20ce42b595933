/** Import-direction checker used by layers.test.ts (see docs/architecture.md, "Layers"). */
import { posix } from 'node:path';

export interface SourceFile {
  /** Path relative to the repository root, with forward slashes. */
  path: string;
  text: string;
}

export interface Violation {
  file: string;
  specifier: string;
  rule: string;
}

/** Layer order of src/: a layer may import itself and the layers after it (downward). */
const SRC_ORDER = [
  'cli',
  'sweep',
  'server',
  'sim',
  'client',
  'report',
  'audit',
  'fl',
  'records',
  'estimators',
  'strategies',
  'ml',
  'data',
  'consortium',
  'schema',
] as const;

const IMPORT_RE =
  /(?:^|[;\s])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The module specifiers a source file imports (static, re-export and dynamic import). */
export function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT_RE)) out.push((m[1] ?? m[2]) as string);
  return out;
}

/** Top-level area of a repository path: 'scoring', 'crypto', 'protocol', 'src/<layer>', or other. */
function areaOf(path: string): string {
  const parts = path.split('/');
  if (parts[0] === 'src') return parts.length > 2 ? `src/${parts[1]}` : 'src';
  return parts[0] ?? '';
}

const isTensorLib = (s: string) => s.startsWith('@tensorflow/');
const isNetwork = (s: string) =>
  /^(node:)?(http|https|http2|net|dgram|tls|dns)$/.test(s) ||
  s === 'fastify' ||
  s.startsWith('@fastify/') ||
  s === 'undici';

export function findViolations(files: SourceFile[]): Violation[] {
  const out: Violation[] = [];
  for (const f of files) {
    const from = areaOf(f.path);
    for (const spec of importsOf(f.text)) {
      const relativeImport = spec.startsWith('.');
      const target = relativeImport ? areaOf(posix.normalize(posix.join(posix.dirname(f.path), spec))) : null;
      const flag = (rule: string) => out.push({ file: f.path, specifier: spec, rule });
      if (isTensorLib(spec) && from !== 'src/ml') flag('only src/ml imports TensorFlow.js');
      if (spec === '@tensorflow/tfjs' && from === 'src/ml' && f.path !== 'src/ml/tf.ts')
        flag("src/ml imports tfjs through './tf.js' (it sets PROD: no banner, no debug checks)");
      if ((from === 'scoring' || from === 'crypto') && target !== null && target !== from)
        flag(`${from}/ imports nothing from the project`);
      if (from === 'protocol') {
        if (target !== null && target !== 'protocol' && target !== 'crypto')
          flag('protocol/ imports crypto/ only');
        if (isNetwork(spec)) flag('protocol/ does no network I/O');
      }
      if (from.startsWith('src/') && target?.startsWith('src/')) {
        const a = SRC_ORDER.indexOf(from.slice(4) as (typeof SRC_ORDER)[number]);
        const b = SRC_ORDER.indexOf(target.slice(4) as (typeof SRC_ORDER)[number]);
        if (a >= 0 && b >= 0 && b < a) flag(`${from} may not import ${target} (imports point downward)`);
      }
    }
  }
  return out;
}

/**
 * Modules whose randomness is derived from the public experiment seed (simulation only,
 * protocol/simulation-random.ts) or that use it: the networked processes must never reach them.
 */
export const SIMULATION_RANDOMNESS = [
  'protocol/simulation-random.ts',
  'protocol/simulate.ts',
  'src/sim/secure-round.ts',
] as const;

/** The roots of the networked processes: the silo runtime and the service. */
const NETWORKED = (path: string) => path.startsWith('src/client/') || path.startsWith('src/server/');

/** The only module allowed to mention seeded random sources while being reachable: their definition. */
const SEEDED_DEFINITION = 'crypto/random-bytes.ts';

/**
 * Every way a networked module (src/client, src/server) reaches simulation randomness through its
 * relative imports, directly or transitively: a module of {@link SIMULATION_RANDOMNESS}, or any
 * module that mentions a seeded random source (`seededRandom…`). `file` is the networked root,
 * `specifier` the import chain to the offending module.
 */
export function findSimulationRandomnessLeaks(files: SourceFile[]): Violation[] {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const resolveImport = (from: string, spec: string) =>
    posix.normalize(posix.join(posix.dirname(from), spec)).replace(/\.js$/, '.ts');
  const out: Violation[] = [];
  for (const root of files.filter((f) => NETWORKED(f.path))) {
    const parent = new Map<string, string | null>([[root.path, null]]);
    const queue = [root.path];
    while (queue.length > 0) {
      const path = queue.shift()!;
      const f = byPath.get(path);
      if (!f) continue;
      const forbidden = (SIMULATION_RANDOMNESS as readonly string[]).includes(path);
      if (forbidden || (path !== SEEDED_DEFINITION && /\bseededRandom/.test(f.text))) {
        const chain: string[] = [];
        for (let p: string | null | undefined = path; p; p = parent.get(p)) chain.unshift(p);
        out.push({
          file: root.path,
          specifier: chain.join(' → '),
          rule: 'networked code (src/client, src/server) must not reach simulation randomness',
        });
        continue;
      }
      for (const spec of importsOf(f.text)) {
        if (!spec.startsWith('.')) continue;
        const target = resolveImport(path, spec);
        if (!parent.has(target)) {
          parent.set(target, path);
          queue.push(target);
        }
      }
    }
  }
  return out;
}

/**
 * A `_`-prefixed module is private to its folder: it may be imported from its own folder and the
 * folders below it (`scoring/manipulation/` may use `scoring/_checks.ts`), never from a sibling,
 * a parent or another top-level folder. A helper that another folder needs gets a public name
 * (`crypto/check.ts`, which protocol/ and src/client use). Checked on the project's source
 * (scoring, crypto, protocol, src, scripts); test/ and bench/ are exempt as importers: a test or a
 * benchmark of a private module reaches it where it is (white-box), and their own `_` helpers
 * mark files that are not tests.
 */
export function findPrivateImports(files: SourceFile[]): Violation[] {
  const out: Violation[] = [];
  for (const f of files) {
    const from = posix.dirname(f.path);
    for (const spec of importsOf(f.text)) {
      if (!spec.startsWith('.')) continue;
      const target = posix.normalize(posix.join(from, spec));
      if (!posix.basename(target).startsWith('_')) continue;
      const home = posix.dirname(target);
      if (from === home || from.startsWith(`${home}/`)) continue;
      out.push({
        file: f.path,
        specifier: spec,
        rule: `${target.replace(/\.js$/, '.ts')} is private to ${home}/ (give it a name without '_' to share it)`,
      });
    }
  }
  return out;
}
