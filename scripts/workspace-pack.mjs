/**
 * prepack / postpack of the workspace packages (scoring/ = @fedscore/scoring, protocol/ =
 * @fedscore/secagg): `build` compiles the package's entry files and what they import to JS and
 * declarations in <package>/dist with its tsconfig.build.json and copies the repository's LICENSE
 * beside its package.json, so the tarball needs no build step at install; `clean` removes both
 * again after `npm pack` (dist/ inside a source folder is not source). Run from the package folder.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const step = process.argv[2];
const dir = process.cwd();
const root = resolve(import.meta.dirname, '..');
if (step !== 'build' && step !== 'clean') {
  console.error(`workspace-pack: step must be 'build' or 'clean', got ${String(step)}`);
  process.exit(2);
}
if (!existsSync(join(dir, 'tsconfig.build.json')) || resolve(dir, '..') !== root) {
  console.error(
    `workspace-pack: run it in a workspace package of ${root} (no tsconfig.build.json in ${dir})`,
  );
  process.exit(2);
}
rmSync(join(dir, 'dist'), { recursive: true, force: true });
rmSync(join(dir, 'LICENSE'), { force: true });
if (step === 'build') {
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  copyFileSync(join(root, 'LICENSE'), join(dir, 'LICENSE'));
}
