/**
 * The package as its users get it. `npm pack` (its prepack builds dist/), install the tarball into
 * a fresh project with TypeScript, and there:
 * - the `exports` map names the subpaths and nothing else, every target is in the tarball, a deep
 *   import of a file is refused;
 * - the built declarations of every subpath export nothing `_`-prefixed and re-export nothing from
 *   a `_` file (read with the TypeScript checker, so re-exports of re-exports count);
 * - an ESM TypeScript file importing every subpath type-checks (strict, module nodenext, the
 *   package's declarations checked too) and runs: papers/003 Example 2 gives EE(A) = 3/4;
 * - every example of docs/api.md type-checks, runs and prints what the page says it prints, and so
 *   does its plain JavaScript copy, examples/api/<subpath>.mjs (run with node).
 * The install uses the npm cache first (`--prefer-offline`) and skips install scripts for speed;
 * the install script itself is run once in the installed package and must not fail without a
 * compiler. About 40 s (most of it the build and the install).
 */
import { type SpawnSyncOptions, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
  devDependencies: Record<string, string>;
  exports: Record<string, string | { types: string; import: string }>;
};
/** examples/api/<name>.mjs: the plain JavaScript copies of docs/api.md's examples, in its order. */
const MJS_EXAMPLES = ['scoring', 'protocol', 'crypto', 'client'];
const SUBPATHS = ['fedscore', 'fedscore/scoring', 'fedscore/protocol', 'fedscore/crypto', 'fedscore/client'];
const work = mkdtempSync(join(tmpdir(), 'fedscore-pack-'));
const project = join(work, 'consumer');
const installed = join(project, 'node_modules', 'fedscore');
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs a command; fails the test with its output unless it exits 0. @returns stdout. */
function run(command: string, args: string[], options: SpawnSyncOptions = {}): string {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 240_000, ...options });
  if (r.status !== 0)
    throw new Error(
      `${command} ${args.join(' ')} exited ${r.status ?? r.signal}\n${String(r.stdout)}\n${String(r.stderr)}`,
    );
  return String(r.stdout);
}

/** The `ts` examples of docs/api.md, each with the `text` block printed after it. */
function apiExamples(): { code: string; prints: string }[] {
  const page = readFileSync(join(root, 'docs', 'api.md'), 'utf8');
  return [...page.matchAll(/```ts\n([\s\S]*?)\n```\n\nprints\n\n```text\n([\s\S]*?)\n```/g)].map((m) => ({
    code: m[1]!,
    prints: m[2]!,
  }));
}

/** main.ts: every subpath imported, papers/003 Example 2 reproduced. */
const MAIN = `import * as root from 'fedscore';
import { SiloHttp, signRequest } from 'fedscore/client';
import { combineShares, seededRandomFromInts, splitSecret } from 'fedscore/crypto';
import { SecAggError, simulateRound } from 'fedscore/protocol';
import { coalitionTable, everybodyElse, exactShapley, fairPrivate, paper003Example2, utilitiesOfTable } from 'fedscore/scoring';

const example = paper003Example2();
const table = await coalitionTable(example.game);
const u = utilitiesOfTable(3, table);
const ee: Float64Array = everybodyElse(u);
console.log(\`EE(A) = \${ee[0]}, EE = \${ee.join(' ')}\`);
console.log(\`FP = \${fairPrivate(u).join(' ')}; Shapley = \${exactShapley(3, table).join(' ')}\`);
console.log(\`root = scoring: \${root.everybodyElse === everybodyElse}\`);
const shares = await splitSecret(new Uint8Array(32).fill(7), 3, 2, seededRandomFromInts(1));
console.log(\`shamir: \${(await combineShares(shares.slice(1))).every((x) => x === 7)}\`);
console.log(\`protocol: \${typeof simulateRound} \${new SecAggError('MALFORMED', 'x').code}\`);
console.log(\`client: \${typeof SiloHttp} \${typeof signRequest}\`);
`;

beforeAll(() => {
  run('npm', ['pack', '--pack-destination', work, '--loglevel=error'], { cwd: root });
  const tarball = join(work, `fedscore-${pkg.version}.tgz`);
  mkdirSync(join(project, 'examples'), { recursive: true });
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }),
  );
  run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--ignore-scripts',
      '--omit=optional',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      tarball,
      `typescript@${pkg.devDependencies.typescript}`,
      `@types/node@${pkg.devDependencies['@types/node']}`,
    ],
    { cwd: project },
  );
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: false,
        types: ['node'],
        outDir: 'out',
      },
      include: ['main.ts', 'examples/*.ts'],
    }),
  );
  writeFileSync(join(project, 'main.ts'), MAIN);
  apiExamples().forEach((e, k) => {
    writeFileSync(join(project, 'examples', `api-${k + 1}.ts`), `${e.code}\n`);
  });
  for (const name of MJS_EXAMPLES)
    writeFileSync(join(project, `${name}.mjs`), readFileSync(join(root, 'examples', 'api', `${name}.mjs`)));
}, 300_000);

describe('npm pack → npm install → import', () => {
  it('exports the subpaths and nothing else; their files are in the tarball; deep imports are refused', () => {
    const got = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    expect(Object.keys(got.exports)).toEqual([
      '.',
      './scoring',
      './protocol',
      './crypto',
      './client',
      './package.json',
    ]);
    for (const [key, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue;
      expect(Object.keys(target), key).toEqual(['types', 'import']);
      expect(existsSync(join(installed, target.types)), target.types).toBe(true);
      expect(existsSync(join(installed, target.import)), target.import).toBe(true);
    }
    expect(existsSync(join(installed, 'dist/src/cli/main.js'))).toBe(true); // what the bin runs
    // The bin npm links (node_modules/.bin/fedscore here; on PATH after `npm install -g`) runs the
    // built CLI: the tarball has no sources.
    expect(existsSync(join(installed, 'src/cli/main.ts'))).toBe(false);
    const help = spawnSync(join(project, 'node_modules', '.bin', 'fedscore'), ['--help'], {
      cwd: project,
      encoding: 'utf8',
    });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: fedscore /);
    expect(existsSync(join(installed, 'docs/utilities.schema.json'))).toBe(true);
    // the README's links resolve inside the package (test/package/readme-links.test.ts checks each)
    for (const f of ['LICENSE', 'docs/api.md', 'docs/networked.md', 'examples/api/scoring.mjs'])
      expect(existsSync(join(installed, f)), f).toBe(true);
    // `fedscore init`'s default data set (src/data/fashion-mnist.ts, source 'bundled') ships with it
    for (const f of ['t10k-images-idx3-ubyte.gz', 't10k-labels-idx1-ubyte.gz', 'LICENSE'])
      expect(existsSync(join(installed, 'examples/data/fashion-mnist', f)), f).toBe(true);
    expect(existsSync(join(installed, 'dist/.tsbuildinfo'))).toBe(false);
    const deep = spawnSync(process.execPath, ['-e', "import('fedscore/dist/scoring/private.js')"], {
      cwd: project,
      encoding: 'utf8',
    });
    expect(deep.stderr).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });

  it('the declarations of every subpath export nothing `_`-prefixed and nothing from a `_` file', () => {
    const files = SUBPATHS.map((s) => {
      const resolved = ts.resolveModuleName(
        s,
        join(project, 'main.ts'),
        { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext },
        ts.sys,
      );
      expect(resolved.resolvedModule?.extension, s).toBe('.d.ts');
      return resolved.resolvedModule!.resolvedFileName;
    });
    const program = ts.createProgram(files, {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      noEmit: true,
    });
    const checker = program.getTypeChecker();
    const problems: string[] = [];
    let total = 0;
    files.forEach((file, k) => {
      const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
      const exports = checker.getExportsOfModule(module);
      expect(exports.length, SUBPATHS[k]).toBeGreaterThan(10);
      total += exports.length;
      for (const e of exports) {
        const name = e.getName();
        if (name.startsWith('_')) problems.push(`${SUBPATHS[k]}: exports ${name}`);
        const target = e.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(e) : e;
        for (const d of target.getDeclarations() ?? [])
          if (basename(d.getSourceFile().fileName).startsWith('_'))
            problems.push(`${SUBPATHS[k]}: ${name} comes from ${d.getSourceFile().fileName}`);
      }
    });
    expect(problems).toEqual([]);
    expect(total).toBeGreaterThan(100);
  });

  it('an ESM TypeScript file importing every subpath type-checks and runs: EE(A) = 3/4 (papers/003 Example 2)', () => {
    run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', project], { cwd: project });
    const out = run(process.execPath, [join(project, 'out', 'main.js')], { cwd: project });
    expect(out.split('\n')).toEqual([
      'EE(A) = 0.75, EE = 0.75 1 1.25',
      'FP = 0 1 2; Shapley = 0 1 2',
      'root = scoring: true',
      'shamir: true',
      'protocol: function MALFORMED',
      'client: function function',
      '',
    ]);
  });

  it('every example of docs/api.md runs and prints what the page says', () => {
    const examples = apiExamples();
    expect(examples.length).toBe(4); // one per subpath
    for (const [k, e] of examples.entries()) {
      const out = run(process.execPath, [join(project, 'out', 'examples', `api-${k + 1}.js`)], {
        cwd: project,
      });
      expect(out, `docs/api.md example ${k + 1}`).toBe(`${e.prints}\n`);
    }
    // … and its plain JavaScript copy, run as a user would: `node <name>.mjs` in the project
    expect(readdirSync(join(root, 'examples', 'api')).sort()).toEqual(
      MJS_EXAMPLES.map((n) => `${n}.mjs`).sort(),
    );
    for (const [k, name] of MJS_EXAMPLES.entries()) {
      const code = readFileSync(join(project, `${name}.mjs`), 'utf8');
      expect(code, name).toContain(`from 'fedscore/${name}'`);
      const out = run(process.execPath, [`${name}.mjs`], { cwd: project });
      expect(out, `examples/api/${name}.mjs`).toBe(`${examples[k]!.prints}\n`);
    }
    // each subpath has its example
    for (const s of ['scoring', 'protocol', 'crypto', 'client'])
      expect(
        examples.some((e) => e.code.includes(`from 'fedscore/${s}'`)),
        s,
      ).toBe(true);
  });

  it('the install script does not fail an install it cannot build in: one line, exit 0', () => {
    const r = spawnSync(process.execPath, [join(installed, 'scripts', 'build-native.mjs')], {
      cwd: installed,
      encoding: 'utf8',
      env: { ...process.env, CC: join(work, 'no-such-compiler') },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stdout).toMatch(/^fedscore: native OpenBLAS kernels not built \(/);
    expect(readdirSync(installed)).not.toContain('build');
  });
});
