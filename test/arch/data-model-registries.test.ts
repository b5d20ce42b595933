/**
 * Data sets and models are named in one place each: the entry of the dataset registry
 * (src/data/registry.ts, `name: '…'`) or of the model registry (src/ml/model-registry.ts,
 * `kind: '…'`). Everything else reaches them through the registry or its exported defaults
 * (`DEFAULT_DATASET`, `DEFAULT_MODEL`), so no code branches on a name. Checked on the string
 * literals (and template literal pieces) of the library source; comments, tests, benchmarks and
 * the JSON examples are not scanned.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { BUILTIN_DATASETS } from '../../src/data/registry.js';
import { BUILTIN_MODELS } from '../../src/ml/model-registry.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface Occurrence {
  file: string;
  line: number;
  text: string;
  /** The property the literal initializes (`name: 'x'` → 'name'), if any. */
  property?: string;
}

/** Every string literal and template piece of a TypeScript source, with its position. */
function stringLiterals(file: string, text: string): Occurrence[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: Occurrence[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      const parent = node.parent;
      const property =
        parent &&
        ts.isPropertyAssignment(parent) &&
        parent.initializer === node &&
        ts.isIdentifier(parent.name)
          ? parent.name.text
          : undefined;
      out.push({
        file,
        line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
        text: node.text,
        ...(property ? { property } : {}),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/**
 * Literals equal to a registry name that mean something else, with why; the count is exact, so
 * a new use fails the test.
 */
const ELSEWHERE: { file: string; text: string; count: number; why: string }[] = [
  {
    file: 'src/data/fashion-mnist.ts',
    text: 'fashion-mnist',
    count: 2,
    why: 'the directory the IDX files sit in (examples/data/fashion-mnist/, $FEDSCORE_DATA_DIR/fashion-mnist/)',
  },
  {
    file: 'src/data/cifar10.ts',
    text: 'cifar10',
    count: 2,
    why: 'the default Dataset.name of a CIFAR-10 batch file read on its own (the reader, not the registry)',
  },
];

describe('data set and model names live in their registry entries only', () => {
  const entries = [
    ...BUILTIN_DATASETS.map((d) => ({ name: d.name, file: 'src/data/registry.ts', property: 'name' })),
    ...BUILTIN_MODELS.map((m) => ({ name: m.kind, file: 'src/ml/model-registry.ts', property: 'kind' })),
  ];
  const literals = ['src', 'scoring', 'protocol', 'crypto']
    .flatMap((d) => walk(join(root, d)))
    .flatMap((abs) => stringLiterals(relative(root, abs).split(sep).join('/'), readFileSync(abs, 'utf8')));

  it('finds the source files and the names', () => {
    expect(literals.length).toBeGreaterThan(1000);
    expect(entries.map((e) => e.name)).toEqual([
      'fashion-mnist',
      'synthetic',
      'cifar10',
      'mlp',
      'cnn003',
      'lenet5',
      'layers',
    ]);
  });

  it.each(entries)('$name appears once (outside the listed exceptions): in its entry in $file', (e) => {
    const uses = literals.filter((l) => l.text === e.name);
    const excused = ELSEWHERE.filter((x) => x.text === e.name);
    const entry = uses.filter((u) => u.file === e.file && u.property === e.property);
    expect(entry).toHaveLength(1);
    expect(uses.filter((u) => !excused.some((x) => x.file === u.file))).toEqual(entry);
    for (const x of excused)
      expect(
        uses.filter((u) => u.file === x.file),
        x.why,
      ).toHaveLength(x.count);
  });

  it('the scanner sees string literals and template pieces, not comments', () => {
    const found = stringLiterals(
      'x.ts',
      [
        "// 'mlp'",
        "/* 'cnn003' */",
        "const a = { kind: 'lenet5' };",
        'const b = `synthetic`;',
        `const c = \`cifar10\${a}\`;`,
        'if (x === "fashion-mnist") f();',
      ].join('\n'),
    );
    expect(found).toEqual([
      { file: 'x.ts', line: 3, text: 'lenet5', property: 'kind' },
      { file: 'x.ts', line: 4, text: 'synthetic' },
      { file: 'x.ts', line: 5, text: 'cifar10' },
      { file: 'x.ts', line: 5, text: '' },
      { file: 'x.ts', line: 6, text: 'fashion-mnist' },
    ]);
  });
});
