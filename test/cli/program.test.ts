/**
 * The `fedscore` program (src/cli/program.ts): every command's --help lists its flags, `help`
 * and --version work, a mistyped flag or command gets a suggestion, and every error takes one of
 * the two paths: usage (exit code 2, with a pointer to the command's help) or runtime (exit 1).
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import type { AnyCommand } from '../../src/cli/_command.js';
import { UsageError } from '../../src/cli/_flags.js';
import { COMMANDS } from '../../src/cli/program.js';
import { ConfigError } from '../../src/records/config.js';
import { cli, dryRun, spawnCli } from './_cli.js';

/** Each command's flags, in help order: the command-line contract (names must not change). */
const FLAGS: Record<string, string[]> = {
  init: [
    '--silos <n>',
    '--data <name-or-file>',
    '--format <formats>',
    '--model <model>',
    '--examples <n>',
    '--test-size <n>',
    '--rounds <n>',
    '--corrupt-silos <n>',
    '--id <id>',
    '--seed <s>',
    '--backend <name>',
    '--strategy <name>',
    '--clients-per-round <k>',
    '--trainer <kind>',
  ],
  up: ['--port <n>', '--backend <name>', '--keep-serving', '--fresh'],
  experiment: [
    '--config <file>',
    '--out <dir>',
    '--seeds <k>',
    '--backend <name>',
    '--workers <n>',
    '--schemes <list>',
    '--quiet',
    '--plugin <module>',
  ],
  sweep: [],
  worker: [
    '--queue <url>',
    '--concurrency <c>',
    '--backend <name>',
    '--poll <seconds>',
    '--maintenance <seconds>',
    '--idle-exit <seconds>',
    '--quiet',
    '--plugin <module>',
  ],
  score: ['--utilities <file>', '--out <dir>', '--schemes <list>'],
  audit: [
    '--from <dir>',
    '--utilities <file>',
    '--out <dir>',
    '--config <file>',
    '--backend <name>',
    '--quiet',
    '--plugin <module>',
  ],
  serve: [
    '--port <n>',
    '--host <h>',
    '--db <file>',
    '--config <file>',
    '--seed <s>',
    '--backend <name>',
    '--log-format <format>',
    '--headers-timeout <s>',
    '--request-timeout <s>',
    '--plugin <module>',
  ],
  client: [
    '--server <url>',
    '--consortium <id>',
    '--silo <n>',
    '--key <file>',
    '--config <file>',
    '--seed <s>',
    '--first-round <r>',
    '--last-round <r>',
    '--backend <name>',
    '--timeout <seconds>',
    '--quiet',
    '--consortium-file <file>',
    '--consortium-digest <sha256>',
    '--insecure-unpinned',
    '--deterministic-training',
    '--data <path>',
    '--data-format <format>',
    '--test-data <path>',
    '--model <file>',
    '--trainer <command>',
    '--plugin <module>',
  ],
  consortium: [
    '--server <url>',
    '--id <id>',
    '--config <file>',
    '--keys <file>',
    '--seed <s>',
    '--backend <name>',
    '--plugin <module>',
  ],
  rounds: [],
  keygen: ['--out <file>'],
  demo: ['--silos <n>', '--seed <s>', '--json'],
};

/** A complete command line per command (the dry runs accept it). */
const LINES: Record<string, string[]> = {
  experiment: ['--config', 'c.json', '--out', 'o'],
  worker: ['--queue', 'postgres://u@h:5432/db'],
  score: ['--utilities', 'u.json', '--out', 'o'],
  audit: ['--from', 'o'],
  serve: ['--port', '0'],
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
  keygen: ['--out', 'k'],
  demo: [],
};
const env = { FEDSCORE_ADMIN_TOKEN: 'x'.repeat(20) };
const hint = (command?: string) => `Run "fedscore${command ? ` ${command}` : ''} --help" for usage.\n`;

describe('help', () => {
  it('every command has --help (exit 0) listing its flags with descriptions and defaults', async () => {
    expect(COMMANDS.map((c) => c.name)).toEqual(Object.keys(FLAGS));
    for (const [command, flags] of Object.entries(FLAGS)) {
      const r = await cli([command, '--help']);
      expect(r.code, command).toBe(0);
      expect(r.err).toBe('');
      expect(r.out).toMatch(new RegExp(`^Usage: fedscore ${command} `));
      const listed = [...r.out.matchAll(/^ {2}(--[\w-]+(?: <[\w-]+>)?) {2,}\S/gm)].map((m) => m[1]);
      expect(listed, command).toEqual(flags);
      expect(await cli(['help', command])).toEqual(r);
    }
  });

  it('names the required flags in the usage line and shows defaults', async () => {
    const help = async (command: string) => (await cli([command, '--help'])).out;
    expect(await help('experiment')).toMatch(
      /^Usage: fedscore experiment --config <file> --out <dir> \[options\]\n/,
    );
    expect(await help('client')).toMatch(
      /^Usage: fedscore client --server <url> --consortium <id> --silo <n> --key <file> --config <file> \[options\]\n/,
    );
    expect(await help('experiment')).toMatch(/--out <dir> +the output directory \(required\)\n/);
    const demo = await help('demo');
    expect(demo).toMatch(/--silos <n> +number of silos, 3\.\.20 \(default: 8\)/);
    expect(demo).toMatch(/--seed <s> +integer seed \(default: 1\)/);
    expect(await help('serve')).toMatch(/--host <h> +interface to listen on \(default: "127\.0\.0\.1"\)/);
    expect(await help('serve')).toMatch(/Environment:\n {2}FEDSCORE_ADMIN_TOKEN/);
  });

  it('prints the client usage: what each flag is for', async () => {
    const r = await cli(['client', '--help']);
    for (const text of [
      'the scoring service, e.g. http://127.0.0.1:8080',
      "this silo's Ed25519 secret key: 64 hex digits (fedscore keygen writes one)",
      'first round to take part in (default: 1)',
      "last round to take part in (default: the configuration's rounds)",
    ])
      expect(r.out.replace(/\s+/g, ' ')).toContain(text);
    expect(r.out.replace(/\s+/g, ' ')).toMatch(
      /give up waiting for the server after this long \(default: 3600\)/,
    );
  });

  it('fedscore, fedscore --help and fedscore help list every command; --version prints the version', async () => {
    const root = await cli(['--help']);
    expect(root.code).toBe(0);
    for (const c of COMMANDS) expect(root.out).toMatch(new RegExp(`^ {2}${c.name} `, 'm'));
    expect(root.out).toContain('Exit codes: 0 done; 1 the command failed');
    expect(await cli([])).toEqual(root);
    expect(await cli(['help'])).toEqual(root);
    const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };
    expect(await cli(['--version'])).toEqual({ code: 0, out: `${version}\n`, err: '' });
  });

  it('the entry point prints a command help with exit code 0', () => {
    const r = spawnCli(['experiment', '--help']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Usage: fedscore experiment --config <file> --out <dir> \[options\]\n/);
  });
});

describe('usage errors: exit code 2, a pointer to help, nothing runs', () => {
  it('every complete command line parses; each required flag, when missing, is named', async () => {
    for (const [command, line] of Object.entries(LINES)) {
      const { commands, calls } = dryRun();
      expect(await cli([command, ...line], { env, commands }), command).toMatchObject({ code: 0, err: '' });
      expect(calls.map((c) => c.command)).toEqual([command]);
      for (let i = 0; i < line.length; i += 2) {
        const { commands: none, calls: nothing } = dryRun();
        const r = await cli([command, ...line.slice(0, i), ...line.slice(i + 2)], { env, commands: none });
        // (a flag required only without another names the alternative: `--from: required (or …)`)
        expect(r).toMatchObject({ code: 2, out: '' });
        expect(r.err.startsWith(`fedscore: ${line[i]}: required`), r.err).toBe(true);
        expect(r.err.endsWith(`\n${hint(command)}`), r.err).toBe(true);
        expect(nothing).toEqual([]);
      }
    }
  });

  it('an unknown flag suggests the right one, even when a required flag is missing too', async () => {
    const typos: [string, string, string][] = [
      ['demo', '--sed', '--seed'],
      ['experiment', '--confg', '--config'],
      ['audit', '--form', '--from'],
      ['serve', '--prot', '--port'],
      ['client', '--first-rond', '--first-round'],
      ['consortium', '--kyes', '--keys'],
      ['keygen', '--ot', '--out'],
    ];
    for (const [command, typo, meant] of typos)
      expect(await cli([command, typo, '1'], { env })).toEqual({
        code: 2,
        out: '',
        err: `fedscore: unknown option '${typo}'\n(Did you mean ${meant}?)\n${hint(command)}`,
      });
  });

  it('an unknown command suggests the right one', async () => {
    expect(await cli(['experimnt', '--config', 'c.json'])).toEqual({
      code: 2,
      out: '',
      err: `fedscore: unknown command 'experimnt'\n(Did you mean experiment?)\n${hint()}`,
    });
    expect((await cli(['help', 'experimnt'])).code).toBe(2);
  });

  it('a bad value, a missing value or an extra argument', async () => {
    expect(await cli(['demo', '--silos', '50'])).toEqual({
      code: 2,
      out: '',
      err: `fedscore: --silos: expected an integer in [3, 20], got '50'\n${hint('demo')}`,
    });
    expect((await cli(['experiment', ...LINES.experiment!, '--seeds', '101'])).err).toBe(
      `fedscore: --seeds: expected an integer in [1, 100], got '101'\n${hint('experiment')}`,
    );
    expect((await cli(['client', ...LINES.client!, '--backend', 'gpu'])).err).toBe(
      `fedscore: --backend: expected one of webgpu, tensorflow, wasm, cpu, got 'gpu'\n${hint('client')}`,
    );
    expect((await cli(['demo', '--silos'])).err).toBe(
      `fedscore: option '--silos <n>' argument missing\n${hint('demo')}`,
    );
    expect((await cli(['demo', 'now'])).err).toMatch(/^fedscore: too many arguments for 'demo'/);
  });
});

describe('errors from a running command', () => {
  const failing = (error: unknown, code = 0): AnyCommand => ({
    name: 'fail',
    summary: 'fails',
    options: [],
    args: () => undefined,
    run: async () => {
      if (error) throw error;
      return code;
    },
  });
  const run = (error: unknown, code?: number) => cli(['fail'], { commands: [failing(error, code)] });

  it('a UsageError from the action takes the usage path', async () => {
    expect(await run(new UsageError('--key: cannot read k: ENOENT'))).toEqual({
      code: 2,
      out: '',
      err: `fedscore: --key: cannot read k: ENOENT\n${hint('fail')}`,
    });
  });

  it('an invalid configuration exits 2 with its message (file and field), without the pointer to help', async () => {
    const e = new ConfigError([{ path: '/rounds', message: 'expected an integer' }], 'c.json');
    expect(await run(e)).toEqual({ code: 2, out: '', err: `fedscore: ${e.message}\n` });
    expect(e.message).toMatch(/^c\.json: invalid configuration\n {2}\/rounds: expected an integer$/);
  });

  it('known runtime errors exit 1 with their message; unknown ones with their stack', async () => {
    expect(await run(new RangeError('backend: expected one of …'))).toEqual({
      code: 1,
      out: '',
      err: 'fedscore: backend: expected one of …\n',
    });
    const unknown = await run(new Error('boom'));
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/^fedscore: Error: boom\n {4}at /);
    expect(await run(undefined, 1)).toEqual({ code: 1, out: '', err: '' });
  });
});
