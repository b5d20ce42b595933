/**
 * `fedscore client` and `fedscore keygen`: flags are validated with errors naming the flag, key
 * files are checked, and the real command line exits 2 with usage help on a bad flag.
 * `fedscore serve --config`: its flags. (A whole networked run: test/client/e2e.test.ts.)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import { UsageError } from '../../src/cli/_config.js';
import { parseClientArgs, readKeyFile } from '../../src/cli/client.js';
import { keygenCommand } from '../../src/cli/keygen.js';
import { parseServeArgs } from '../../src/cli/serve.js';

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
];
const without = (flag: string) => {
  const i = ok.indexOf(flag);
  return [...ok.slice(0, i), ...ok.slice(i + 2)];
};
const withValue = (flag: string, value: string) => ok.map((v, i) => (ok[i - 1] === flag ? value : v));

describe('fedscore client flags', () => {
  it('parses a complete command line with defaults', () => {
    expect(parseClientArgs(ok)).toEqual({
      server: 'http://127.0.0.1:8080',
      consortium: 'c1',
      silo: 2,
      key: 'k',
      config: 'c.json',
      firstRound: 1,
      timeoutMs: 3_600_000,
      quiet: false,
    });
    expect(
      parseClientArgs([
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

  it('names each missing or bad flag', () => {
    for (const f of ['--server', '--consortium', '--silo', '--key', '--config'])
      expect(() => parseClientArgs(without(f))).toThrow(new UsageError(`${f}: required`));
    const bad: [string, string, RegExp][] = [
      ['--server', 'localhost:8080', /^--server: expected an http\(s\) URL/],
      ['--server', 'ftp://x', /^--server: expected an http\(s\) URL/],
      ['--consortium', 'Bad_ID', /^--consortium: /],
      ['--silo', 'two', /^--silo: expected an integer in \[0, 254\]/],
      ['--silo', '255', /^--silo: /],
      ['--silo', '1.5', /^--silo: /],
    ];
    for (const [flag, value, message] of bad)
      expect(() => parseClientArgs(withValue(flag, value))).toThrow(message);
    expect(() => parseClientArgs([...without('--silo'), '--silo=-1'])).toThrow(/^--silo: /);
    expect(() => parseClientArgs([...ok, '--seed', 'x'])).toThrow(/^--seed: /);
    expect(() => parseClientArgs([...ok, '--first-round', '0'])).toThrow(/^--first-round: /);
    expect(() => parseClientArgs([...ok, '--first-round', '3', '--last-round', '2'])).toThrow(
      '--last-round: 2 is before --first-round 3',
    );
    expect(() => parseClientArgs([...ok, '--timeout', '0'])).toThrow(/^--timeout: /);
    expect(() => parseClientArgs([...ok, '--bogus'])).toThrow(UsageError);
    expect(() => parseClientArgs([...ok, 'extra'])).toThrow(UsageError);
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
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        new URL('../../src/cli/main.ts', import.meta.url).pathname,
        'client',
        ...without('--key'),
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('fedscore: --key: required\nRun "fedscore help" for usage.\n');
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
      expect(await keygenCommand(['--out', out])).toBe(0);
    } finally {
      spy.mockRestore();
    }
    const secret = await readKeyFile(out);
    expect(printed.join('')).toBe(
      `${Buffer.from(signingKeyPairFromSeed(secret).publicKey).toString('hex')}\n`,
    );
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const before = readFileSync(out, 'utf8');
    await expect(keygenCommand(['--out', out])).rejects.toThrow(/^--out: cannot write .*EEXIST/);
    expect(readFileSync(out, 'utf8')).toBe(before);
    await expect(keygenCommand([])).rejects.toThrow('--out: required');
  });
});

describe('fedscore serve --config', () => {
  const TOKEN = { FEDSCORE_ADMIN_TOKEN: 'x'.repeat(20) };
  it('takes --config, --seed and --backend; --seed and --backend need --config', () => {
    expect(
      parseServeArgs(['--port', '0', '--config', 'c.json', '--seed', '3', '--backend', 'cpu'], TOKEN),
    ).toMatchObject({
      config: 'c.json',
      seed: 3,
      backend: 'cpu',
    });
    expect(() => parseServeArgs(['--port', '0', '--seed', '3'], TOKEN)).toThrow(
      '--seed: applies only with --config',
    );
    expect(() => parseServeArgs(['--port', '0', '--backend', 'cpu'], TOKEN)).toThrow(
      '--backend: applies only with --config',
    );
    expect(() => parseServeArgs(['--port', '0', '--config', 'c.json', '--seed=-2'], TOKEN)).toThrow(
      /^--seed: /,
    );
  });
});
