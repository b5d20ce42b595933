/**
 * Internal to test/arch: where the source writes a name, found with the TypeScript parser (so
 * comments never count). What counts as writing a name:
 * - a string literal, a substitution-free template or a template piece equal to the name
 *   ('gtg', "gtg", `gtg`, the `tmr` of `${x}tmr`; also in types: `type T = 'gtg'`);
 * - a property name (`{ gtg: … }`, `interface { gtg?: … }`, `class { gtg = … }`);
 * - a property access (`estimators.gtg`), except on `Math` (`Math.cos` is the cosine).
 * Prose that contains a name ("add comparison.estimators.gtg") does not count.
 * Scanned: the non-test TypeScript/JavaScript of src/, scoring/, protocol/, crypto/, bench/ and
 * scripts/; not test/, and not examples/*.json (configurations are data).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The folders of non-test source that are scanned. */
export const SOURCE_DIRS = ['src', 'scoring', 'protocol', 'crypto', 'bench', 'scripts'] as const;

/** One place a name is written. */
export interface NameHit {
  /** Path relative to the repository root, with forward slashes. */
  file: string;
  name: string;
  line: number;
  kind: 'string' | 'property' | 'access';
  /** For a string that initializes a property (`name: 'gtg'`): that property's name. */
  property?: string;
}

const isStringPiece = (node: ts.Node): node is ts.StringLiteralLike | ts.TemplateLiteralLikeNode =>
  ts.isStringLiteral(node) ||
  ts.isNoSubstitutionTemplateLiteral(node) ||
  ts.isTemplateHead(node) ||
  ts.isTemplateMiddle(node) ||
  ts.isTemplateTail(node);

/** Every place `text` (the source of `file`) writes one of `names` (see the module comment). */
export function findNameUses(file: string, text: string, names: ReadonlySet<string>): NameHit[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const hits: NameHit[] = [];
  const hit = (node: ts.Node, name: string, kind: NameHit['kind'], property?: string) => {
    if (!names.has(name)) return;
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    hits.push({ file, name, line, kind, ...(property === undefined ? {} : { property }) });
  };
  const visit = (node: ts.Node): void => {
    if (isStringPiece(node)) {
      const parent = node.parent;
      const property =
        parent &&
        ts.isPropertyAssignment(parent) &&
        parent.initializer === node &&
        ts.isIdentifier(parent.name)
          ? parent.name.text
          : undefined;
      hit(node, node.text, 'string', property);
    } else if (
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
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !/\.d\.ts$|\.test\.[mc]?[tj]s$/.test(name)) out.push(p);
  }
  return out;
}

/** The scanned source files, as paths relative to the root with forward slashes. */
export function sourceFiles(): string[] {
  return SOURCE_DIRS.flatMap((d) => walk(join(ROOT, d))).map((abs) =>
    relative(ROOT, abs).split(sep).join('/'),
  );
}

/** Every place the scanned source writes one of `names`. */
export function sourceNameUses(names: ReadonlySet<string>): NameHit[] {
  return sourceFiles().flatMap((file) => findNameUses(file, readFileSync(join(ROOT, file), 'utf8'), names));
}
