/**
 * The package's entry files (docs/api.md) load only what their subpath is about: no TensorFlow.js,
 * no native kernels, no service, no report renderer — checked on the static imports of the sources
 * (the built package is checked by package.test.ts). A subpath of pure math loads no package at all.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;

/** Value-level static imports and re-exports of a TypeScript source (type-only ones are erased). */
function staticImports(text: string): string[] {
  const re = /^\s*(?:import|export)\s+(?!type\s)(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]/gm;
  return [...text.matchAll(re)].map((m) => m[1]!);
}

/** Every project file and package an entry loads, transitively (paths relative to the root). */
function closure(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of staticImports(readFileSync(join(root, file), 'utf8'))) {
      if (!spec.startsWith('.')) {
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
        continue;
      }
      const target = relative(root, join(root, dirname(file), spec)).replace(/\.js$/, '.ts');
      expect(existsSync(join(root, target)), `${file} imports ${spec}`).toBe(true);
      visit(target);
    }
  };
  visit(entry);
  return { files: [...files].sort(), packages: [...packages].filter((p) => !p.startsWith('node:')).sort() };
}

const CRYPTO_PACKAGES = ['@noble/curves', '@noble/hashes', 'libsodium-wrappers', 'shamir-secret-sharing'];

describe('entry files of the package', () => {
  it('fedscore/scoring loads scoring/ only, and no package', () => {
    const { files, packages } = closure('scoring/public.ts');
    expect(files.every((f) => f.startsWith('scoring/'))).toBe(true);
    expect(packages).toEqual([]);
  });

  it('fedscore/crypto and fedscore/protocol load crypto/ and protocol/, and the crypto libraries', () => {
    const crypto = closure('crypto/public.ts');
    expect(crypto.files.every((f) => f.startsWith('crypto/'))).toBe(true);
    expect(crypto.packages).toEqual(CRYPTO_PACKAGES);
    const protocol = closure('protocol/public.ts');
    expect(protocol.files.every((f) => /^(protocol|crypto)\//.test(f))).toBe(true);
    expect(protocol.packages.every((p) => CRYPTO_PACKAGES.includes(p))).toBe(true);
  });

  it('the workspace manifests declare what their entries load: @fedscore/scoring nothing, @fedscore/secagg the crypto libraries', () => {
    const manifest = (folder: string) =>
      JSON.parse(readFileSync(join(root, folder, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
      };
    expect(manifest('scoring').dependencies ?? {}).toEqual({});
    const loaded = [
      ...new Set([...closure('protocol/public.ts').packages, ...closure('crypto/public.ts').packages]),
    ].sort();
    expect(Object.keys(manifest('protocol').dependencies ?? {}).sort()).toEqual(loaded);
  });

  it('fedscore/client loads the HTTP client and request signing, not the silo runtime or the service', () => {
    const { files, packages } = closure('src/client/public.ts');
    expect(files.filter((f) => f.startsWith('src/'))).toEqual([
      'src/client/answers.ts',
      'src/client/http.ts',
      'src/client/public.ts',
      'src/consortium/inert-text.ts', // server text made inert before it reaches a terminal (issue 32, T1)
      'src/consortium/signing.ts',
      // the dependency-free JSON depth scan every reader of JSON shares (issue 27 A5)
      'src/schema/json-depth.ts',
    ]);
    expect(
      files.every(
        (f) =>
          /^(src\/client|crypto)\//.test(f) ||
          f === 'src/schema/json-depth.ts' ||
          f === 'src/consortium/inert-text.ts' ||
          f === 'src/consortium/signing.ts',
      ),
    ).toBe(true);
    expect(packages.every((p) => CRYPTO_PACKAGES.includes(p))).toBe(true);
  });

  it('package.json maps each subpath to its entry file, built to dist/', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const entry = (source: string) => ({
      types: `./dist/${source}.d.ts`,
      import: `./dist/${source}.js`,
    });
    expect(pkg.exports).toEqual({
      '.': entry('scoring/public'),
      './scoring': entry('scoring/public'),
      './protocol': entry('protocol/public'),
      './crypto': entry('crypto/public'),
      './client': entry('src/client/public'),
      './package.json': './package.json',
    });
    expect(pkg.main).toBe('./dist/scoring/public.js');
    expect(pkg.types).toBe('./dist/scoring/public.d.ts');
    // bin/fedscore.mjs runs dist/ in an installed package, the sources in a checkout (npx fedscore)
    expect(pkg.bin).toEqual({ fedscore: 'bin/fedscore.mjs' });
  });
});
