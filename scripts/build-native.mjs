#!/usr/bin/env node
/**
 * Builds fedscore's optional native kernels (every native/*.c: fedscore_kernels.c, products.c,
 * loops.c, coalitions.c, coalition_kernels.c, train.c, layers.c, direct.c, helper.c, isa.c, narrow.c, with their
 * internal headers native/_*.h →
 * native/build/fedscore_kernels.node) against OpenBLAS.
 * Runs at `npm install`/`npm ci`; also `npm run build:native`.
 *
 * Needs a C compiler (`cc`, or $CC), Node's headers (`<node prefix>/include/node`, or
 * $npm_config_nodedir/include/node) and OpenBLAS's development files (Debian: libopenblas-dev,
 * found with pkg-config). When any is missing the build is skipped with one line saying what
 * to install: fedscore then runs on the wasm backend's own kernels, and the install does not
 * fail. `--strict` (used by `npm run build:native`) exits 1 instead. FEDSCORE_NATIVE=0 skips.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const strict = process.argv.includes('--strict');
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The addon's translation units, every native/*.c (native/_fedscore.h is their shared internal header). */
const nativeDir = join(root, 'native');
const units = existsSync(nativeDir) ? readdirSync(nativeDir).filter((f) => f.endsWith('.c')) : [];
const sources = [
  'fedscore_kernels.c',
  ...units.filter((f) => f !== 'fedscore_kernels.c').sort(),
  '_fedscore.h',
  '_train.h',
].map((f) => join(nativeDir, f));
const outDir = join(root, 'native', 'build');
const out = join(outDir, 'fedscore_kernels.node');

function skip(why) {
  console.log(
    `fedscore: native OpenBLAS kernels not built (${why}); training runs on the wasm backend's own kernels. ` +
      'Install a C compiler and libopenblas-dev, then run `npm run build:native`.',
  );
  process.exit(strict ? 1 : 0);
}

if (process.env.FEDSCORE_NATIVE === '0') skip('FEDSCORE_NATIVE=0');
const missing = sources.find((f) => !existsSync(f));
if (missing) skip(`${missing} is missing`);

const headerDirs = [
  process.env.npm_config_nodedir && join(process.env.npm_config_nodedir, 'include', 'node'),
  join(dirname(process.execPath), '..', 'include', 'node'),
].filter(Boolean);
const nodeInclude = headerDirs.find((d) => existsSync(join(d, 'node_api.h')));
if (!nodeInclude) skip(`Node's headers not found (looked for node_api.h in ${headerDirs.join(', ')})`);

function run(cmd, args) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

let cflags;
let libs;
try {
  cflags = run('pkg-config', ['--cflags', 'openblas']).split(/\s+/).filter(Boolean);
  libs = run('pkg-config', ['--libs', 'openblas']).split(/\s+/).filter(Boolean);
} catch {
  skip('OpenBLAS not found by pkg-config (Debian: apt-get install libopenblas-dev)');
}
// The library's own directory, so the addon loads it without LD_LIBRARY_PATH.
const rpath = libs.filter((f) => f.startsWith('-L')).map((f) => `-Wl,-rpath,${f.slice(2)}`);

const cc = process.env.CC || 'cc';
const tmp = `${out}.${process.pid}.tmp`;
mkdirSync(outDir, { recursive: true });
try {
  // -ffp-contract=off: the Adam step must round exactly as train.ts's JavaScript loop does.
  // -fvisibility=hidden: only the Node-API entry point (NAPI_MODULE_INIT) leaves the addon; the
  // functions the files share stay internal.
  run(cc, [
    '-O3',
    '-std=c11',
    '-ffp-contract=off',
    '-fno-math-errno',
    '-Wall',
    '-Wextra',
    '-shared',
    '-fPIC',
    '-fvisibility=hidden',
    `-I${nodeInclude}`,
    ...cflags,
    ...sources.filter((f) => f.endsWith('.c')),
    '-o',
    tmp,
    ...libs,
    '-lm',
    ...rpath,
  ]);
} catch (e) {
  const err = String(e.stderr || e.message)
    .trim()
    .split('\n')
    .slice(-3)
    .join(' ');
  skip(`${cc} failed: ${err}`);
}
renameSync(tmp, out);
console.log(`fedscore: built ${out} (OpenBLAS kernels)`);
