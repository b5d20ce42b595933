/** `fedscore serve`: argument parsing, and a real listen + graceful shutdown on SIGTERM. */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { cli, dryRun } from './_cli.js';

const TOKEN = { FEDSCORE_ADMIN_TOKEN: 'x'.repeat(20) };

/** The arguments `fedscore serve ...args` hands its action, or its exit code and error line. */
async function serve(args: string[], env: Record<string, string> = TOKEN) {
  const { commands, calls } = dryRun();
  const r = await cli(['serve', ...args], { env, commands });
  return { code: r.code, args: calls[0]?.args, error: r.err.split('\n')[0] };
}

describe('fedscore serve', () => {
  test('arguments: port required and in range, token required, DATABASE_URL wins over --db', async () => {
    expect((await serve(['--port', '8080', '--db', 'a.db'])).args).toEqual({
      port: 8080,
      host: '127.0.0.1',
      location: { sqlite: 'a.db' },
      adminToken: TOKEN.FEDSCORE_ADMIN_TOKEN,
      logLevel: 'info',
    });
    expect((await serve(['--port', '0'])).args).toMatchObject({ location: { sqlite: 'fedscore.db' } });
    expect((await serve(['--port', '1'], { ...TOKEN, DATABASE_URL: 'postgres://x/y' })).args).toMatchObject({
      location: { postgres: 'postgres://x/y' },
    });
    expect(await serve([])).toEqual({ code: 2, args: undefined, error: 'fedscore: --port: required' });
    expect((await serve(['--port', '70000'])).error).toMatch(
      /^fedscore: --port: expected an integer in \[0, 65535\]/,
    );
    expect(await serve(['--port', '-1'])).toMatchObject({
      code: 2,
      error: expect.stringMatching(/^fedscore: --port: /),
    });
    expect(await serve(['--port', '1', '--bogus'])).toMatchObject({
      code: 2,
      error: "fedscore: unknown option '--bogus'",
    });
    expect(await serve(['--port', '1'], { FEDSCORE_ADMIN_TOKEN: 'short' })).toMatchObject({
      code: 2,
      error: expect.stringMatching(/^fedscore: FEDSCORE_ADMIN_TOKEN: /),
    });
  });

  test('the viewer token and the timeouts', async () => {
    const viewer = 'v'.repeat(20);
    expect(
      (
        await serve(['--port', '1', '--headers-timeout', '5', '--request-timeout', '60'], {
          ...TOKEN,
          FEDSCORE_VIEWER_TOKEN: viewer,
        })
      ).args,
    ).toMatchObject({ viewerToken: viewer, timeouts: { headersMs: 5000, requestMs: 60_000 } });
    for (const bad of ['short', TOKEN.FEDSCORE_ADMIN_TOKEN])
      expect(await serve(['--port', '1'], { ...TOKEN, FEDSCORE_VIEWER_TOKEN: bad })).toMatchObject({
        code: 2,
        error: expect.stringMatching(/^fedscore: FEDSCORE_VIEWER_TOKEN: /),
      });
    expect(await serve(['--port', '1', '--headers-timeout', '30', '--request-timeout', '20'])).toMatchObject({
      code: 2,
      error: 'fedscore: --request-timeout: must be at least --headers-timeout',
    });
  });

  test('listens, and SIGTERM closes it with exit code 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fedscore-serve-'));
    const before = process.listenerCount('SIGTERM');
    try {
      const done = cli(['serve', '--port', '0', '--db', join(dir, 's.db')], {
        env: { ...TOKEN, FEDSCORE_LOG_LEVEL: 'silent' },
      });
      const t0 = Date.now();
      while (process.listenerCount('SIGTERM') === before) {
        if (Date.now() - t0 > 20_000) throw new Error('serve did not start');
        await new Promise((r) => setTimeout(r, 20));
      }
      // Issue 34: a second service on the same SQLite file refuses at once, naming the holder.
      const holder = JSON.parse(readFileSync(join(dir, 's.db.lock'), 'utf8'));
      expect(holder).toMatchObject({ pid: process.pid, what: 'fedscore serve' });
      const second = await cli(['serve', '--port', '0', '--db', join(dir, 's.db')], {
        env: { ...TOKEN, FEDSCORE_LOG_LEVEL: 'silent' },
      });
      expect(second.code).toBe(1);
      process.emit('SIGTERM', 'SIGTERM');
      expect((await done).code).toBe(0);
      // Closed: the lock is released.
      expect(existsSync(join(dir, 's.db.lock'))).toBe(false);
      expect(process.listenerCount('SIGTERM')).toBe(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
