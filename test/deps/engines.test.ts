/**
 * The Node version package.json promises (and the README repeats) runs every installed package:
 * no dependency in package-lock.json, direct or transitive, asks for a newer Node than the lowest
 * one `engines.node` admits — otherwise `npm ci` warns EBADENGINE on a machine we support.
 * Packages npm installs only on other platforms or as optional extras are checked too, except
 * development-only tools, which users of the package never install. The workspace packages
 * (scoring/, protocol/) are checked the same way against what each installs for its users.
 */
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  engines: { node: string };
  workspaces: string[];
};
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<
    string,
    {
      version?: string;
      dev?: boolean;
      engines?: { node?: string } | string[];
      dependencies?: Record<string, string>;
    }
  >;
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

describe('the Node version each workspace package promises (scoring/, protocol/)', () => {
  /** The lockfile entries a workspace installs for its users: its dependencies, transitively. */
  function installs(workspace: string): string[] {
    const seen = new Set<string>();
    const visit = (deps: Record<string, string> | undefined) => {
      for (const name of Object.keys(deps ?? {})) {
        const path = `node_modules/${name}`;
        if (seen.has(path)) continue;
        seen.add(path);
        expect(lock.packages[path], path).toBeDefined();
        visit(lock.packages[path]!.dependencies);
      }
    };
    visit(lock.packages[workspace]!.dependencies);
    return [...seen].sort();
  }

  it.each(pkg.workspaces)(
    '%s: its lowest Node satisfies the engines of everything it installs',
    (workspace) => {
      const manifest = JSON.parse(readFileSync(new URL(`${workspace}/package.json`, root), 'utf8')) as {
        engines: { node: string };
      };
      const floor = semver.minVersion(manifest.engines.node);
      expect(floor, workspace).not.toBeNull();
      const unmet: string[] = [];
      for (const path of installs(workspace)) {
        const entry = lock.packages[path]!;
        const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        if (node && !semver.satisfies(floor!, node)) unmet.push(`${path}@${entry.version}: node ${node}`);
      }
      expect(unmet).toEqual([]);
    },
  );

  it('protocol/ installs the four crypto libraries and what they need; scoring/ nothing', () => {
    expect(installs('scoring')).toEqual([]);
    expect(installs('protocol')).toEqual([
      'node_modules/@noble/curves',
      'node_modules/@noble/hashes',
      'node_modules/libsodium',
      'node_modules/libsodium-wrappers',
      'node_modules/shamir-secret-sharing',
    ]);
  });
});
