/**
 * `fedscore client` and `fedscore keygen`: flags are validated with errors naming the flag, key
 * files are checked, and the real command line exits 2 with a pointer to the command's help on a
 * bad flag. `fedscore serve --config`: its flags. (A whole networked run: test/client/e2e.test.ts.)
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import { type ClientArgs, clientCommand, readKeyFile } from '../../src/cli/actions/client.js';
import { keygenCommand } from '../../src/cli/actions/keygen.js';
import { DATA_FORMAT_NAMES } from '../../src/data/formats/registry.js';
import { cli, dryRun, spawnCli } from './_cli.js';

const dir = mkdtempSync(join(tmpdir(), 'fedscore-client-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ok = [
  '--server',
  'http://127.0.0.1:8080',
  '--consortium',
  'c1',
  '--silo',
  '2',
  '--key',
  'k',
  '--config',
  'c.json',
  '--consortium-file',
  'f.json',
];
const without = (flag: string) => {
  const i = ok.indexOf(flag);
  return [...ok.slice(0, i), ...ok.slice(i + 2)];
};
const withValue = (flag: string, value: string) => ok.map((v, i) => (ok[i - 1] === flag ? value : v));

/** The arguments `fedscore client ...args` hands its action. */
async function clientArgs(args: string[]): Promise<unknown> {
  const { commands, calls } = dryRun();
  const r = await cli(['client', ...args], { commands });
  expect(r, r.err).toMatchObject({ code: 0, err: '' });
  return calls[0]!.args;
}

/** The first line `fedscore client ...args` writes on stderr; it must exit 2. */
async function clientError(args: string[]): Promise<string> {
  const { commands, calls } = dryRun();
  const r = await cli(['client', ...args], { commands });
  expect(r.code).toBe(2);
  expect(calls).toEqual([]);
  expect(r.err).toMatch(/\nRun "fedscore client --help" for usage\.\n$/);
  return r.err.split('\n')[0]!;
}

describe('fedscore client flags', () => {
  it('parses a complete command line with defaults', async () => {
    expect(await clientArgs(ok)).toEqual({
      server: 'http://127.0.0.1:8080',
      consortium: 'c1',
      silo: 2,
      key: 'k',
      config: 'c.json',
      firstRound: 1,
      timeoutMs: 3_600_000,
      quiet: false,
      consortiumFile: 'f.json',
      insecureUnpinned: false,
      deterministicTraining: false,
    });
    expect(
      await clientArgs([
        ...ok,
        '--seed',
        '7',
        '--first-round',
        '2',
        '--last-round',
        '5',
        '--backend',
        'cpu',
        '--timeout',
        '30',
        '--quiet',
      ]),
    ).toMatchObject({ seed: 7, firstRound: 2, lastRound: 5, backend: 'cpu', timeoutMs: 30_000, quiet: true });
  });

  it('refuses to run unpinned unless --insecure-unpinned; checks the pinning and data flags together', async () => {
    const unpinned = without('--consortium-file');
    expect(await clientError(unpinned)).toBe(
      "fedscore: --consortium-file: required — pin the consortium you agreed to (or pass --insecure-unpinned to trust the server's roster)",
    );
    expect(await clientArgs([...unpinned, '--insecure-unpinned'])).toMatchObject({ insecureUnpinned: true });
    expect(await clientError([...ok, '--insecure-unpinned'])).toBe(
      'fedscore: --insecure-unpinned: cannot be combined with --consortium-file',
    );
    expect(await clientError([...unpinned, '--consortium-digest', 'ab'.repeat(32)])).toBe(
      'fedscore: --consortium-digest: pins a consortium file; pass the file with --consortium-file',
    );
    expect(await clientError([...ok, '--consortium-digest', 'xyz'])).toBe(
      "fedscore: --consortium-digest: expected 64 hex digits, got 'xyz'",
    );
    expect(await clientArgs([...ok, '--consortium-digest', 'AB'.repeat(32)])).toMatchObject({
      consortiumDigest: 'ab'.repeat(32),
    });
    expect(await clientError([...ok, '--data', 'd'])).toBe(
      'fedscore: --test-data: required with --data (the common test set, in any --data format)',
    );
    expect(await clientError([...unpinned, '--insecure-unpinned', '--data', 'd', '--test-data', 't'])).toBe(
      "fedscore: --data: needs --consortium-file (the weights' public scale is the consortium file's)",
    );
    // The format is the format registry's: checked when the command runs, before anything else.
    const parquet = await clientArgs([...ok, '--data', 'd', '--test-data', 't', '--data-format', 'parquet']);
    await expect(clientCommand(parquet as ClientArgs)).rejects.toThrow(
      `--data-format: expected one of ${DATA_FORMAT_NAMES.join(', ')}, got 'parquet'`,
    );
    expect(
      await clientArgs([
        ...ok,
        '--data',
        'd',
        '--test-data',
        't',
        '--data-format',
        'csv',
        '--model',
        'm.json',
      ]),
    ).toMatchObject({ data: 'd', testData: 't', dataFormat: 'csv', model: 'm.json' });
  });

  it('names each missing or bad flag', async () => {
    for (const f of ['--server', '--consortium', '--silo', '--key', '--config'])
      expect(await clientError(without(f))).toBe(`fedscore: ${f}: required`);
    const bad: [string, string, RegExp][] = [
      ['--server', 'localhost:8080', /^fedscore: --server: expected an http\(s\) URL/],
      ['--server', 'ftp://x', /^fedscore: --server: expected an http\(s\) URL/],
      ['--consortium', 'Bad_ID', /^fedscore: --consortium: /],
      ['--silo', 'two', /^fedscore: --silo: expected an integer in \[0, 254\]/],
      ['--silo', '255', /^fedscore: --silo: /],
      ['--silo', '1.5', /^fedscore: --silo: /],
    ];
    for (const [flag, value, message] of bad)
      expect(await clientError(withValue(flag, value))).toMatch(message);
    expect(await clientError([...without('--silo'), '--silo=-1'])).toMatch(/^fedscore: --silo: /);
    expect(await clientError([...ok, '--seed', 'x'])).toMatch(/^fedscore: --seed: /);
    expect(await clientError([...ok, '--first-round', '0'])).toMatch(/^fedscore: --first-round: /);
    expect(await clientError([...ok, '--first-round', '3', '--last-round', '2'])).toBe(
      'fedscore: --last-round: 2 is before --first-round 3',
    );
    expect(await clientError([...ok, '--timeout', '0'])).toMatch(/^fedscore: --timeout: /);
    expect(await clientError([...ok, '--bogus'])).toBe("fedscore: unknown option '--bogus'");
    expect(await clientError([...ok, 'extra'])).toMatch(/^fedscore: too many arguments for 'client'/);
  });

  it('reads a 64-hex-digit key file and refuses anything else, naming --key', async () => {
    const good = join(dir, 'good.key');
    writeFileSync(good, `${'0a'.repeat(32)}\n`);
    expect(await readKeyFile(good)).toEqual(new Uint8Array(32).fill(10));
    const bad = join(dir, 'bad.key');
    writeFileSync(bad, 'ab'.repeat(31));
    await expect(readKeyFile(bad)).rejects.toThrow(
      `--key: ${bad} must hold a 32-byte Ed25519 secret key as 64 hex digits`,
    );
    await expect(readKeyFile(join(dir, 'missing.key'))).rejects.toThrow(/^--key: cannot read .*ENOENT/);
  });

  it('the command line exits 2 with the flag named and a pointer to help', () => {
    const r = spawnCli(['client', ...without('--key')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('fedscore: --key: required\nRun "fedscore client --help" for usage.\n');
  });
});

describe('fedscore keygen', () => {
  it('writes a fresh secret key (0600, never overwritten) and prints its public key', async () => {
    const out = join(dir, 'silo.key');
    const printed: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
      printed.push(String(s));
      return true;
    });
    try {
      expect(await keygenCommand({ out })).toBe(0);
    } finally {
      spy.mockRestore();
    }
    const secret = await readKeyFile(out);
    expect(printed.join('')).toBe(
      `${Buffer.from(signingKeyPairFromSeed(secret).publicKey).toString('hex')}\n`,
    );
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const before = readFileSync(out, 'utf8');
    await expect(keygenCommand({ out })).rejects.toThrow(/^--out: cannot write .*EEXIST/);
    expect(readFileSync(out, 'utf8')).toBe(before);
    expect(await cli(['keygen'])).toEqual({
      code: 2,
      out: '',
      err: 'fedscore: --out: required\nRun "fedscore keygen --help" for usage.\n',
    });
  });
});

describe('fedscore serve --config', () => {
  const env = { FEDSCORE_ADMIN_TOKEN: 'x'.repeat(20) };
  it('takes --config, --seed and --backend; --seed and --backend need --config', async () => {
    const { commands, calls } = dryRun();
    const serve = (args: string[]) => cli(['serve', '--port', '0', ...args], { env, commands });
    expect(await serve(['--config', 'c.json', '--seed', '3', '--backend', 'cpu'])).toMatchObject({ code: 0 });
    expect(calls[0]!.args).toMatchObject({ config: 'c.json', seed: 3, backend: 'cpu' });
    expect((await serve(['--seed', '3'])).err).toMatch(/^fedscore: --seed: applies only with --config\n/);
    expect((await serve(['--backend', 'cpu'])).err).toMatch(
      /^fedscore: --backend: applies only with --config\n/,
    );
    expect(await serve(['--config', 'c.json', '--seed=-2'])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/^fedscore: --seed: /),
    });
    expect(calls).toHaveLength(1);
  });
});
