/** `fedscore serve`: argument parsing, and a real listen + graceful shutdown on SIGTERM. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseServeArgs, ServeUsageError, serveCommand } from '../../src/cli/serve.js';

const TOKEN = { FEDSCORE_ADMIN_TOKEN: 'x'.repeat(20) };

describe('fedscore serve', () => {
  test('arguments: port required and in range, token required, DATABASE_URL wins over --db', () => {
    expect(parseServeArgs(['--port', '8080', '--db', 'a.db'], TOKEN)).toEqual({
      port: 8080,
      host: '127.0.0.1',
      location: { sqlite: 'a.db' },
      adminToken: TOKEN.FEDSCORE_ADMIN_TOKEN,
      logLevel: 'info',
    });
    expect(parseServeArgs(['--port', '1'], { ...TOKEN, DATABASE_URL: 'postgres://x/y' }).location).toEqual({
      postgres: 'postgres://x/y',
    });
    expect(() => parseServeArgs([], TOKEN)).toThrow(new ServeUsageError('--port: required'));
    expect(() => parseServeArgs(['--port', '70000'], TOKEN)).toThrow(/^--port: expected 0\.\.65535/);
    expect(() => parseServeArgs(['--port', '-1'], TOKEN)).toThrow(ServeUsageError);
    expect(() => parseServeArgs(['--port', '1', '--bogus'], TOKEN)).toThrow(ServeUsageError);
    expect(() => parseServeArgs(['--port', '1'], { FEDSCORE_ADMIN_TOKEN: 'short' })).toThrow(
      /^FEDSCORE_ADMIN_TOKEN: /,
    );
  });

  test('listens, and SIGTERM closes it with exit code 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fedscore-serve-'));
    const before = process.listenerCount('SIGTERM');
    const saved = { ...process.env };
    Object.assign(process.env, TOKEN, { FEDSCORE_LOG_LEVEL: 'silent' });
    delete process.env.DATABASE_URL;
    try {
      const done = serveCommand(['--port', '0', '--db', join(dir, 's.db')]);
      const t0 = Date.now();
      while (process.listenerCount('SIGTERM') === before) {
        if (Date.now() - t0 > 20_000) throw new Error('serve did not start');
        await new Promise((r) => setTimeout(r, 20));
      }
      process.emit('SIGTERM', 'SIGTERM');
      expect(await done).toBe(0);
      expect(process.listenerCount('SIGTERM')).toBe(before);
    } finally {
      process.env = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
