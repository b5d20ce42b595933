/**
 * `fedscore serve --log-format json|pretty` (src/cli/_log-format.ts): the pretty form of a pino
 * line, the choice between the two, and a real `serve` whose stdout is not a terminal.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { chooseLogFormat, prettyLogLine, prettyLogStream } from '../../src/cli/_log-format.js';
import { cli, dryRun } from './_cli.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const TOKEN = 'x'.repeat(20);

/** `fedscore serve --port 0 …args` as a child process: its stdout once it has stopped after a GET /health. */
async function serveOutput(args: string[], level: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'fedscore-log-'));
  const { DATABASE_URL: _shared, FEDSCORE_LOG_FORMAT: _format, ...env } = process.env;
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'src/cli/main.ts'),
      'serve',
      '--port',
      '0',
      '--db',
      join(dir, 's.db'),
      ...args,
    ],
    {
      cwd: ROOT,
      env: { ...env, FEDSCORE_ADMIN_TOKEN: TOKEN, FEDSCORE_LOG_LEVEL: level },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not listen: ${err}`)), 30_000);
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /listening on (\S+)/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect((await fetch(`${url}/nowhere`)).status).toBe(404);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    return out.split('\n').filter((l) => l !== '');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the service log', () => {
  test('not a terminal: JSON lines, requests at debug level', async () => {
    const lines = (await serveOutput([], 'debug')).map(
      (l) => JSON.parse(l) as { level: number; msg: string },
    );
    expect(lines.map((l) => l.msg.replace(/ \d+ ms$/, ' … ms').replace(/http:\S+/, 'URL'))).toEqual([
      'Server listening at URL',
      'GET /health 200 … ms',
      'no such route: GET /nowhere',
      'GET /nowhere 404 … ms',
      'shutting down',
    ]);
    expect(lines.map((l) => l.level)).toEqual([30, 20, 20, 20, 30]);
  }, 60_000);

  test('--log-format pretty: HH:MM:SS LEVEL message; at info no request lines', async () => {
    expect(await serveOutput(['--log-format', 'pretty'], 'info')).toEqual([
      expect.stringMatching(/^\d\d:\d\d:\d\d INFO {2}Server listening at http:\/\/127\.0\.0\.1:\d+$/),
      expect.stringMatching(/^\d\d:\d\d:\d\d INFO {2}shutting down signal=SIGTERM$/),
    ]);
  }, 60_000);
});

describe('prettyLogLine', () => {
  const time = new Date(2026, 0, 2, 13, 4, 5).getTime();
  test('time, level, message and the other fields; round fields the message says are left out', () => {
    expect(
      prettyLogLine(
        JSON.stringify({
          level: 30,
          time,
          pid: 1,
          hostname: 'h',
          consortium: 'c1',
          round: 2,
          event: 'mask',
          late: [3],
          msg: 'consortium c1: round 2: share closed, 3 of 4 silos went on; late: silo 3',
        }),
      ),
    ).toBe('13:04:05 INFO  consortium c1: round 2: share closed, 3 of 4 silos went on; late: silo 3');
    expect(
      prettyLogLine(
        JSON.stringify({
          level: 50,
          time,
          reqId: 'r',
          err: { type: 'Error', message: 'disk full' },
          msg: 'request failed',
        }),
      ),
    ).toBe('13:04:05 ERROR request failed error="Error: disk full"');
    expect(
      prettyLogLine(
        JSON.stringify({ level: 20, time, code: 'FEDSCORE_ERR_X', detail: 'two words', msg: 'm' }),
      ),
    ).toBe('13:04:05 DEBUG m code=FEDSCORE_ERR_X detail="two words"');
  });

  test('a line that is not a JSON object passes unchanged; the stream writes one line per line', () => {
    expect(prettyLogLine('plain text')).toBe('plain text');
    expect(prettyLogLine('[1,2]')).toBe('[1,2]');
    const out: string[] = [];
    prettyLogStream({ write: (s) => out.push(s) }).write(
      `${JSON.stringify({ level: 40, time, msg: 'a' })}\n`,
    );
    expect(out).toEqual(['13:04:05 WARN  a\n']);
  });

  test('the choice: the flag or FEDSCORE_LOG_FORMAT, else pretty on a terminal only', async () => {
    expect(chooseLogFormat(undefined, true)).toBe('pretty');
    expect(chooseLogFormat(undefined, false)).toBe('json');
    expect(chooseLogFormat('json', true)).toBe('json');
    expect(chooseLogFormat('pretty', false)).toBe('pretty');
    const args = async (flags: string[], env: Record<string, string> = {}) => {
      const { commands, calls } = dryRun();
      const r = await cli(['serve', '--port', '1', ...flags], {
        env: { FEDSCORE_ADMIN_TOKEN: TOKEN, ...env },
        commands,
      });
      return {
        code: r.code,
        logFormat: (calls[0]?.args as { logFormat?: string } | undefined)?.logFormat,
        error: r.err.split('\n')[0],
      };
    };
    expect(await args([])).toEqual({ code: 0, logFormat: undefined, error: '' });
    expect((await args(['--log-format', 'pretty'])).logFormat).toBe('pretty');
    expect((await args([], { FEDSCORE_LOG_FORMAT: 'json' })).logFormat).toBe('json');
    expect((await args(['--log-format', 'pretty'], { FEDSCORE_LOG_FORMAT: 'json' })).logFormat).toBe(
      'pretty',
    );
    expect((await args(['--log-format', 'xml'])).code).toBe(2);
    expect(await args([], { FEDSCORE_LOG_FORMAT: 'text' })).toEqual({
      code: 2,
      logFormat: undefined,
      error: "fedscore: FEDSCORE_LOG_FORMAT: expected one of json, pretty, got 'text'",
    });
  });
});
