/**
 * `--plugin <module>` (src/cli/_plugins.ts): the modules are imported in order, relative to the
 * current directory, before the command runs (so before it reads its configuration); a module
 * that cannot be imported is a usage error naming the flag and the path.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/_flags.js';
import { loadPlugins } from '../../src/cli/_plugins.js';
import { COMMANDS } from '../../src/cli/program.js';
import { cli } from './_cli.js';

declare global {
  /** Names of the test plugins in the order they were imported. */
  var fedscorePluginTrace: string[] | undefined;
}

const dir = mkdtempSync(join(tmpdir(), 'fedscore-plugins-'));
mkdirSync(join(dir, 'sub'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  globalThis.fedscorePluginTrace = [];
});

/** Writes dir/<path>: a module that records its name when imported (after running `body`). */
function plugin(path: string, body = ''): string {
  writeFileSync(
    join(dir, path),
    `${body}\n(globalThis.fedscorePluginTrace ??= []).push(${JSON.stringify(path)});\n`,
  );
  return path;
}

describe('loadPlugins', () => {
  it('imports each module once, in order, relative paths against cwd', async () => {
    plugin('a.mjs');
    plugin('sub/b.mjs');
    plugin('c.mjs');
    await loadPlugins(['./a.mjs', 'sub/b.mjs', join(dir, 'c.mjs'), 'a.mjs'], dir);
    expect(globalThis.fedscorePluginTrace).toEqual(['a.mjs', 'sub/b.mjs', 'c.mjs']);
  });

  it('a module that is missing or throws is a UsageError naming --plugin and the path', async () => {
    const missing = loadPlugins(['missing.mjs'], dir);
    await expect(missing).rejects.toThrow(UsageError);
    await expect(missing).rejects.toThrow(/^--plugin: cannot import missing\.mjs: /);
    plugin('throws.mjs', "throw new Error('registerStrategy: fedowen is already registered');");
    await expect(loadPlugins(['throws.mjs'], dir)).rejects.toThrow(
      '--plugin: cannot import throws.mjs: registerStrategy: fedowen is already registered',
    );
  });
});

describe('fedscore <command> --plugin', () => {
  const env = { FEDSCORE_ADMIN_TOKEN: 'x'.repeat(20) };
  const lines: Record<string, string[]> = {
    experiment: ['--config', 'c.json', '--out', 'o'],
    audit: ['--from', 'o'],
    serve: ['--port', '0', '--config', 'c.json'],
    client: [
      '--server',
      'http://h:1',
      '--consortium',
      'c1',
      '--silo',
      '0',
      '--key',
      'k',
      '--config',
      'c.json',
      '--consortium-file',
      'consortium.json',
    ],
    consortium: ['--server', 'http://h:1', '--id', 'c1', '--config', 'c.json', '--keys', 'k.txt'],
  };
  /** The commands, whose actions record which plugins had been imported when they ran. */
  const recording = (seen: Record<string, string[]>) =>
    COMMANDS.map((c) => ({
      ...c,
      run: async () => {
        seen[c.name] = [...(globalThis.fedscorePluginTrace ?? [])];
        return 0;
      },
    }));

  it('the commands that read a configuration import every --plugin before they run', async () => {
    const seen: Record<string, string[]> = {};
    for (const [command, args] of Object.entries(lines)) {
      globalThis.fedscorePluginTrace = [];
      const first = plugin(`${command}-1.mjs`);
      const second = plugin(`sub/${command}-2.mjs`);
      const r = await cli([command, ...args, '--plugin', first, '--plugin', `./${second}`], {
        env,
        cwd: dir,
        commands: recording(seen),
      });
      expect(r, r.err).toMatchObject({ code: 0, err: '' });
    }
    expect(seen).toEqual(
      Object.fromEntries(Object.keys(lines).map((c) => [c, [`${c}-1.mjs`, `sub/${c}-2.mjs`]])),
    );
  });

  it('a module that cannot be imported exits 2 naming the flag and the path, and nothing runs', async () => {
    const seen: Record<string, string[]> = {};
    const r = await cli(['experiment', ...lines.experiment!, '--plugin', 'nope.mjs'], {
      cwd: dir,
      commands: recording(seen),
    });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /^fedscore: --plugin: cannot import nope\.mjs: .*\nRun "fedscore experiment --help"/,
    );
    expect(seen).toEqual({});
  });

  it('demo and keygen read no configuration and take no --plugin', async () => {
    for (const line of [['demo'], ['keygen', '--out', 'k']]) {
      const r = await cli([...line, '--plugin', 'x.mjs']);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^fedscore: unknown option '--plugin'\n/);
    }
  });
});
