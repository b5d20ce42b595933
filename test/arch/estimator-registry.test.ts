/**
 * Estimator names live in one place: each built-in's name is written once, in its own file under
 * src/fl/estimators/, and everything else (harness, config schema, experiment, CLI, benches) asks
 * the registry (STYLE.md: "A list of names repeated in four files (estimators) wants one registry").
 *
 * What counts as writing a name, found with the TypeScript parser (so comments never count): a
 * string literal or substitution-free template equal to the name ('gtg', "gtg", `gtg`, also in
 * types), a property name (`{ gtg: … }`, `interface { gtg?: … }`) and a property access
 * (`estimators.gtg`; not `Math.cos`, the cosine). Prose in strings ("add comparison.estimators.x")
 * does not count. Scanned: the non-test TypeScript/JavaScript of src/, scoring/, protocol/,
 * crypto/, bench/ and scripts/; not test/, and not examples/*.json (configurations are data).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_ESTIMATORS } from '../../src/fl/estimators/registry.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const REGISTRY_DIR = 'src/fl/estimators/';

/** Uses of a name that mean something else, or that sit in a file another change owns. */
const EXCEPTIONS: { file: string; name: string; why: string }[] = [
  { file: 'src/fl/setup.ts', name: 'maverick', why: "a silo's role (papers/000 Fig. 1), not the estimator" },
  {
    file: 'src/fl/strategies/fedms.ts',
    name: 'gtg',
    why: "FedMS's own `estimator` option (MS-GTG inside the strategy), not the harness estimator",
  },
  {
    file: 'scoring/games.ts',
    name: 'banzhaf',
    why: "a known game's closed-form Banzhaf value (the mathematical quantity scoring/ tests against)",
  },
  {
    file: 'bench/estimators.ts',
    name: 'banzhaf',
    why: 'which value a scoring/ micro-benchmark compares against (Shapley or Banzhaf)',
  },
];

interface Hit {
  file: string;
  name: string;
  line: number;
  kind: 'string' | 'property' | 'access';
}

/** Every place a source text writes one of `names` (see the module comment for what counts). */
function findNameUses(file: string, text: string, names: ReadonlySet<string>): Hit[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const hits: Hit[] = [];
  const hit = (node: ts.Node, name: string, kind: Hit['kind']) => {
    if (!names.has(name)) return;
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    hits.push({ file, name, line, kind });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) hit(node, node.text, 'string');
    else if (
      (ts.isPropertyAssignment(node) || ts.isPropertySignature(node) || ts.isPropertyDeclaration(node)) &&
      (ts.isIdentifier(node.name) || ts.isPrivateIdentifier(node.name))
    )
      hit(node.name, node.name.text, 'property');
    else if (
      ts.isPropertyAccessExpression(node) &&
      !(ts.isIdentifier(node.expression) && node.expression.text === 'Math')
    )
      hit(node.name, node.name.text, 'access');
    ts.forEachChild(node, visit);
  };
  visit(source);
  return hits;
}

function walk(dir: string, out: string[] = []): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function sourceHits(names: ReadonlySet<string>): Hit[] {
  return ['src', 'scoring', 'protocol', 'crypto', 'bench', 'scripts']
    .flatMap((d) => walk(join(root, d)))
    .flatMap((abs) =>
      findNameUses(relative(root, abs).split(sep).join('/'), readFileSync(abs, 'utf8'), names),
    );
}

const NAMES = new Set(BUILT_IN_ESTIMATORS.map((e) => e.name));
const isException = (h: Hit) => EXCEPTIONS.some((x) => x.file === h.file && x.name === h.name);

describe('estimator names live in the registry (src/fl/estimators/)', () => {
  const hits = sourceHits(NAMES);

  it('the scan sees the built-ins and their definitions', () => {
    expect(NAMES.size).toBe(BUILT_IN_ESTIMATORS.length);
    expect(NAMES.size).toBeGreaterThanOrEqual(9);
    expect(hits.filter((h) => h.file.startsWith(REGISTRY_DIR)).length).toBeGreaterThanOrEqual(NAMES.size);
  });

  it('no estimator name is written outside the registry folder', () => {
    const outside = hits
      .filter((h) => !h.file.startsWith(REGISTRY_DIR) && !isException(h))
      .map((h) => `${h.file}:${h.line}: '${h.name}' (${h.kind})`);
    expect(outside).toEqual([]);
  });

  it("each built-in's name is written exactly once, in its own file", () => {
    for (const name of NAMES) {
      const inside = hits.filter((h) => h.name === name && h.file.startsWith(REGISTRY_DIR));
      expect({ name, at: inside.map((h) => `${h.file} (${h.kind})`) }).toEqual({
        name,
        at: [`${REGISTRY_DIR}${name}.ts (string)`],
      });
    }
  });

  it('every exception is still needed (remove the ones that are not)', () => {
    for (const x of EXCEPTIONS)
      expect({ exception: x, used: hits.some((h) => h.file === x.file && h.name === x.name) }).toEqual({
        exception: x,
        used: true,
      });
  });

  it('the checker flags literals, keys and accesses, and ignores comments, prose and Math.cos', () => {
    const text = [
      "// 'gtg' in a comment",
      '/* and "owen" in a block comment */',
      "const a = 'gtg';",
      'const b = ["owen", `mc`];',
      'const c = { mrsv: {}, "cos": 1 };',
      'interface D { tsv?: number }',
      'const e = cfg.estimators.banzhaf;',
      "type F = 'maverick' | 'exact';",
      "const g = 'add comparison.estimators.tmr';",
      'const h = Math.cos(1);',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: source text with a template literal in it
      'const i = `${x}tmr`;',
    ].join('\n');
    const found = findNameUses('x.ts', text, NAMES).map((h) => `${h.line}:${h.name}:${h.kind}`);
    expect(found).toEqual([
      '3:gtg:string',
      '4:owen:string',
      '4:mc:string',
      '5:mrsv:property',
      '5:cos:string',
      '6:tsv:property',
      '7:banzhaf:access',
      '8:maverick:string',
    ]);
  });
});
