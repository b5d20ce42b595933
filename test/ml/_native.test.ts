import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadNativeAt } from '../../src/ml/_native.js';

function fakePackage(withLib: boolean, main: string): string {
  const root = mkdtempSync(join(tmpdir(), 'fedscore-native-'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'fake-tfjs-node', main: 'index.js' }));
  writeFileSync(join(root, 'index.js'), main);
  if (withLib) mkdirSync(join(root, 'lib'));
  return root;
}

describe('loadNativeAt', () => {
  it('says "not installed" without a folder', () => {
    expect(loadNativeAt(undefined)).toBe('not installed');
  });

  it('does not require a package whose install script never ran (no lib/)', () => {
    const root = fakePackage(false, 'globalThis.__fedscoreFakeLoaded = true;');
    expect(loadNativeAt(root)).toMatch(/without its native binding/);
    expect((globalThis as { __fedscoreFakeLoaded?: boolean }).__fedscoreFakeLoaded).toBeUndefined();
  });

  it('reports a binding that throws on load, and loads a good one', () => {
    expect(loadNativeAt(fakePackage(true, "throw new Error('libtensorflow.so: cannot open');"))).toBe(
      'failed to load (libtensorflow.so: cannot open)',
    );
    expect(loadNativeAt(fakePackage(true, 'module.exports = 1;'))).toBeUndefined();
  });
});
