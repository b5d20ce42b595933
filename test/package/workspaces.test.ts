/**
 * The workspace packages as their users get them: `npm pack` in scoring/ (@fedscore/scoring) and
 * protocol/ (@fedscore/secagg; their prepack compiles dist/), then each tarball installed into a
 * fresh project outside the checkout, timed and measured, and used from a plain .mjs file:
 * - @fedscore/scoring installs with `--offline` (it has no dependency, so the registry is never
 *   needed), in seconds and well under a few MB, without a warning; papers/003 Example 2 gives
 *   EE(A) = 3/4, and the example of scoring/README.md prints what it says;
 * - @fedscore/secagg installs with `--prefer-offline` (its four cryptography libraries come from
 *   the npm cache), without a warning; Shamir sharing and a signed score report work from it, and
 *   the example of protocol/README.md prints what it says.
 * Each tarball holds compiled JavaScript, declarations, README, LICENSE and package.json only;
 * @fedscore/scoring's declarations type-check without @types/node; docs/api.md's examples of the
 * scoring, protocol and crypto subpaths run from the lean packages with only the import changed. The
 * install's size (du of node_modules) and time are printed. About 20 s (mostly the two builds).
 */
import { type SpawnSyncOptions, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const work = mkdtempSync(join(tmpdir(), 'fedscore-workspaces-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs a command; fails the test with its output unless it exits 0. @returns stdout and stderr. */
function run(command: string, args: string[], options: SpawnSyncOptions = {}): { out: string; err: string } {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 240_000, ...options });
  if (r.status !== 0)
    throw new Error(
      `${command} ${args.join(' ')} exited ${r.status ?? r.signal}\n${String(r.stdout)}\n${String(r.stderr)}`,
    );
  return { out: String(r.stdout), err: String(r.stderr) };
}

interface Manifest {
  name: string;
  version: string;
  license: string;
  type: string;
  engines: { node: string };
  exports: Record<string, unknown>;
  files: string[];
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const manifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  workspaces: string[];
  dependencies: Record<string, string>;
};

/** The first ```js block of a package's README. */
function readmeExample(folder: string): string {
  const m = readFileSync(join(root, folder, 'README.md'), 'utf8').match(/```js\n([\s\S]*?)\n```/);
  if (!m) throw new Error(`${folder}/README.md has no js example`);
  return `${m[1]}\n`;
}

interface Installed {
  /** The fresh project the tarball was installed into. */
  project: string;
  /** Every file of the tarball, without the `package/` prefix. */
  files: string[];
  /** npm install's combined output. */
  output: string;
  seconds: number;
  kilobytes: number;
  /** The packages under node_modules (scoped ones as `@scope/name`). */
  packages: string[];
}

/** Packs the workspace in `folder`, installs the tarball into a fresh project with `mode`. */
function packAndInstall(folder: string, mode: '--offline' | '--prefer-offline'): Installed {
  const { name, version } = manifest(join(root, folder));
  const destination = join(work, folder);
  mkdirSync(destination, { recursive: true });
  run('npm', ['pack', '--pack-destination', destination, '--loglevel=error'], { cwd: join(root, folder) });
  const tarball = join(destination, `${name.replace('@', '').replace('/', '-')}-${version}.tgz`);
  const files = run('tar', ['tzf', tarball])
    .out.trim()
    .split('\n')
    .map((f) => f.replace(/^package\//, ''))
    .sort();
  const project = join(destination, 'consumer');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }),
  );
  const start = performance.now();
  const r = run('npm', ['install', mode, '--no-audit', '--no-fund', tarball], { cwd: project });
  const seconds = (performance.now() - start) / 1000;
  const modules = join(project, 'node_modules');
  const kilobytes = Number(run('du', ['-sk', modules]).out.split(/\s/)[0]);
  const packages = readdirSync(modules)
    .filter((d) => !d.startsWith('.'))
    .flatMap((d) => (d.startsWith('@') ? readdirSync(join(modules, d)).map((s) => `${d}/${s}`) : [d]))
    .sort();
  console.log(
    `${name}: npm install ${mode} of the tarball took ${seconds.toFixed(1)} s; node_modules ${(kilobytes / 1024).toFixed(2)} MB (du -sk ${kilobytes}), ${packages.length} package(s)`,
  );
  return { project, files, output: r.out + r.err, seconds, kilobytes, packages };
}

/** Runs `code` as a plain .mjs file of the project. @returns its output lines. */
function runModule(project: string, file: string, code: string): string[] {
  writeFileSync(join(project, file), code);
  return run(process.execPath, [join(project, file)], { cwd: project }).out.split('\n');
}

/**
 * The `ts` example of docs/api.md that imports from `fedscore/<subpath>` only, with the `text`
 * block printed after it, as plain JavaScript (types stripped).
 */
function apiExample(subpath: string): { code: string; prints: string } {
  const page = readFileSync(join(root, 'docs', 'api.md'), 'utf8');
  const all = [...page.matchAll(/```ts\n([\s\S]*?)\n```\n\nprints\n\n```text\n([\s\S]*?)\n```/g)];
  const imports = (code: string) => [...code.matchAll(/from '(fedscore[^']*)'/g)].map((m) => m[1]);
  const found = all.filter((m) => imports(m[1]!).every((from) => from === `fedscore/${subpath}`));
  expect(found, `docs/api.md's example of fedscore/${subpath}`).toHaveLength(1);
  const js = ts.transpileModule(found[0]![1]!, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  return { code: js, prints: `${found[0]![2]!}\n` };
}

let scoring: Installed;
let secagg: Installed;
beforeAll(() => {
  scoring = packAndInstall('scoring', '--offline');
  secagg = packAndInstall('protocol', '--prefer-offline');
}, 300_000);

describe('the workspace packages, each published on its own', () => {
  it('the root declares them as workspaces, and the folders stay where they are', () => {
    expect(rootManifest.workspaces).toEqual(['scoring', 'protocol']);
    expect(manifest(join(root, 'scoring')).name).toBe('@fedscore/scoring');
    expect(manifest(join(root, 'protocol')).name).toBe('@fedscore/secagg');
  });

  it('their manifests: ESM, MIT, Node engines, exports and files; no install-time script', () => {
    for (const folder of ['scoring', 'protocol']) {
      const m = manifest(join(root, folder));
      expect(m.type, folder).toBe('module');
      expect(m.license, folder).toBe('MIT');
      expect(m.files, folder).toEqual(['dist']);
      expect(m.engines.node, folder).toMatch(/^>=20(\.\d+)?$/);
      expect(Object.keys(m.scripts ?? {}).sort(), folder).toEqual(['postpack', 'prepack']);
      expect(m.peerDependencies, folder).toBeUndefined();
      expect(m.optionalDependencies, folder).toBeUndefined();
    }
    expect(manifest(join(root, 'scoring')).exports).toEqual({
      '.': { types: './dist/public.d.ts', import: './dist/public.js' },
      './package.json': './package.json',
    });
    expect(manifest(join(root, 'protocol')).exports).toEqual({
      '.': { types: './dist/protocol/public.d.ts', import: './dist/protocol/public.js' },
      './crypto': { types: './dist/crypto/public.d.ts', import: './dist/crypto/public.js' },
      './package.json': './package.json',
    });
  });

  it('@fedscore/scoring has no runtime dependency; @fedscore/secagg only the crypto libraries, pinned as the root pins them', () => {
    expect(manifest(join(root, 'scoring')).dependencies).toBeUndefined();
    const deps = manifest(join(root, 'protocol')).dependencies!;
    expect(Object.keys(deps)).toEqual([
      '@noble/curves',
      '@noble/hashes',
      'libsodium-wrappers',
      'shamir-secret-sharing',
    ]);
    for (const [name, version] of Object.entries(deps))
      expect(version, name).toBe(rootManifest.dependencies[name]);
    // the engines floor is the one its dependencies declare
    expect(manifest(join(root, 'protocol')).engines.node).toBe('>=20.19');
  });

  it('each tarball holds compiled JS, declarations, README, LICENSE and package.json, nothing else', () => {
    for (const { files } of [scoring, secagg]) {
      const rest = files.filter((f) => !/^dist\/.*\.(js|d\.ts)$/.test(f));
      expect(rest).toEqual(['LICENSE', 'README.md', 'package.json']);
    }
    expect(scoring.files).toContain('dist/public.js');
    expect(scoring.files).toContain('dist/public.d.ts');
    expect(secagg.files).toContain('dist/protocol/public.js');
    expect(secagg.files).toContain('dist/crypto/public.d.ts');
    // prepack's output is removed again after packing: no dist/ or LICENSE left in the source folders
    for (const folder of ['scoring', 'protocol'])
      expect(readdirSync(join(root, folder)).filter((f) => f === 'dist' || f === 'LICENSE')).toEqual([]);
  });

  it('@fedscore/scoring installs offline in seconds and a few MB, alone, without a warning', () => {
    expect(scoring.packages).toEqual(['@fedscore/scoring']);
    expect(scoring.output).toMatch(/added 1 package/); // npm's output is what is checked below
    expect(scoring.output).not.toMatch(/EBADENGINE|\bwarn/i);
    expect(scoring.kilobytes).toBeLessThan(3 * 1024);
    expect(scoring.seconds).toBeLessThan(30);
  });

  it('a plain .mjs runs papers/003 Example 2 from @fedscore/scoring: EE(A) = 3/4', () => {
    const lines = runModule(
      scoring.project,
      'example2.mjs',
      `import { coalitionTable, everybodyElse, exactShapley, fairPrivate, paper003Example2, utilitiesOfTable } from '@fedscore/scoring';

const example = paper003Example2();
const table = await coalitionTable(example.game);
const u = utilitiesOfTable(3, table);
const ee = everybodyElse(u);
console.log(\`EE(A) = \${ee[0]}, EE = \${ee.join(' ')}\`);
console.log(\`FP = \${fairPrivate(u).join(' ')}; Shapley = \${exactShapley(3, table).join(' ')}\`);
`,
    );
    expect(lines).toEqual(['EE(A) = 0.75, EE = 0.75 1 1.25', 'FP = 0 1 2; Shapley = 0 1 2', '']);
    expect(Number(lines[0]!.match(/^EE\(A\) = ([\d.]+),/)![1])).toBe(3 / 4);
    // the README's example prints what its comments say
    expect(runModule(scoring.project, 'readme.mjs', readmeExample('scoring'))).toEqual([
      '0.75 1 1.25',
      '0 1 2',
      '',
    ]);
  });

  it("@fedscore/scoring's declarations type-check in a strict nodenext project without @types/node", () => {
    writeFileSync(
      join(scoring.project, 'check.ts'),
      `import { everybodyElse, type PrivateUtilities } from '@fedscore/scoring';
const u: PrivateUtilities = { full: 3, empty: 0, withOnly: [0, 1, 2], without: [3, 2, 1] };
export const ee: Float64Array = everybodyElse(u);
`,
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const compilerOptions = {
      noEmit: true,
      strict: true,
      module: 'nodenext',
      target: 'es2022',
      types: [],
      skipLibCheck: false,
    };
    writeFileSync(
      join(scoring.project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions, files: ['check.ts'] }),
    );
    run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: scoring.project });
    // and the checker can fail here: a wrong type is refused
    writeFileSync(
      join(scoring.project, 'bad.ts'),
      "import { everybodyElse } from '@fedscore/scoring';\neverybodyElse(1);\n",
    );
    writeFileSync(
      join(scoring.project, 'tsconfig.bad.json'),
      JSON.stringify({ compilerOptions, files: ['bad.ts'] }),
    );
    const bad = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.bad.json'], {
      cwd: scoring.project,
      encoding: 'utf8',
    });
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toContain('TS2345');
  });

  it("docs/api.md's examples run from the lean packages with only the import changed", () => {
    const cases = [
      { installed: scoring, subpath: 'scoring', from: '@fedscore/scoring' },
      { installed: secagg, subpath: 'protocol', from: '@fedscore/secagg' },
      { installed: secagg, subpath: 'crypto', from: '@fedscore/secagg/crypto' },
    ];
    for (const { installed, subpath, from } of cases) {
      const { code, prints } = apiExample(subpath);
      const lean = code.replaceAll(`from 'fedscore/${subpath}'`, `from '${from}'`);
      expect(lean, subpath).not.toMatch(/from 'fedscore/);
      expect(runModule(installed.project, `api-${subpath}.mjs`, lean).join('\n'), subpath).toBe(prints);
    }
  });

  it('@fedscore/scoring refuses deep imports: only its entry is public', () => {
    const deep = spawnSync(process.execPath, ['-e', "import('@fedscore/scoring/dist/private.js')"], {
      cwd: scoring.project,
      encoding: 'utf8',
    });
    expect(deep.stderr).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });

  it('@fedscore/secagg installs with its four crypto libraries only, without a warning, and runs', () => {
    expect(secagg.packages).toEqual([
      '@fedscore/secagg',
      '@noble/curves',
      '@noble/hashes',
      'libsodium',
      'libsodium-wrappers',
      'shamir-secret-sharing',
    ]);
    expect(secagg.output).not.toMatch(/EBADENGINE|\bwarn/i);
    expect(secagg.seconds).toBeLessThan(60);
    const lines = runModule(
      secagg.project,
      'round.mjs',
      `import { SecAggError, decodeWeightedSum, encodeWeightedInput, simulateRound, simulatedIdentities } from '@fedscore/secagg';
import { combineShares, seededRandomFromInts, splitSecret } from '@fedscore/secagg/crypto';

const shares = await splitSecret(new Uint8Array(32).fill(7), 3, 2, seededRandomFromInts(1));
console.log(\`shamir: \${(await combineShares(shares.slice(1))).every((x) => x === 7)}\`);
const encoding = { valueRange: 10, weightRange: 10, n: 3 };
const result = await simulateRound({
  session: 's', round: 1, threshold: 2, seed: 3, signingKeys: simulatedIdentities(3, 3),
  inputs: [1, 2, 3].map((w) => encodeWeightedInput(Float32Array.from([0.5]), w, encoding)),
});
console.log(\`round: \${result.ok} Σw = \${decodeWeightedSum(result.result.sum, encoding).totalWeight.toFixed(3)}\`);
console.log(\`error: \${new SecAggError('MALFORMED', 'x').code}\`);
`,
    );
    expect(lines).toEqual(['shamir: true', 'round: true Σw = 6.000', 'error: MALFORMED', '']);
    expect(runModule(secagg.project, 'readme.mjs', readmeExample('protocol'))).toEqual(['true', '0.7', '']);
  });
});
