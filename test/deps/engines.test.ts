/**
 * The Node version package.json promises (and the README repeats) runs every installed package:
 * no dependency in package-lock.json, direct or transitive, asks for a newer Node than the lowest
 * one `engines.node` admits — otherwise `npm ci` warns EBADENGINE on a machine we support.
 * Packages npm installs only on other platforms or as optional extras are checked too, except
 * development-only tools, which users of the package never install.
 */
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, { version?: string; dev?: boolean; engines?: { node?: string } | string[] }>;
};
const readme = readFileSync(new URL('README.md', root), 'utf8');

describe('the promised Node version', () => {
  const lowest = semver.minVersion(pkg.engines.node);

  it('is a version range with a lowest version', () => {
    expect(lowest).not.toBeNull();
  });

  it('is the one the README promises', () => {
    const shown = `${lowest!.major}.${lowest!.minor}`;
    expect(readme).toContain(`Node ≥ ${shown}`);
  });

  it('satisfies the engines of every runtime package in the lockfile', () => {
    const unmet: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (!path || entry.dev || !node) continue;
      if (!semver.satisfies(lowest!, node)) unmet.push(`${path}@${entry.version}: node ${node}`);
    }
    expect(unmet).toEqual([]);
  });
});
