/**
 * The fedscore CLI as separate processes, for the end-to-end tests (test/e2e/consortium.test.ts,
 * test/client/e2e.test.ts): start one with its output collected as time-stamped lines, wait for
 * its exit, poll until a condition holds.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = new URL('../..', import.meta.url).pathname;
const CLI = join(ROOT, 'src/cli/main.ts');

/** The CLI processes one test file starts; {@link killAll} in its afterAll. */
export class CliProcesses {
  private readonly children: ChildProcess[] = [];
  private readonly t0 = Date.now();

  /** `adminToken`: FEDSCORE_ADMIN_TOKEN of every process. */
  constructor(private readonly adminToken: string) {}

  /**
   * `fedscore <args>` as a child process. The server stores in its own SQLite file (--db): a
   * DATABASE_URL inherited from CI (the PostgreSQL tests') would put it in a shared database that
   * outlives the test, so it is not passed on.
   */
  start(args: string[], name: string): { child: ChildProcess; lines: string[] } {
    const { DATABASE_URL: _shared, ...env } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      cwd: ROOT,
      env: { ...env, FEDSCORE_ADMIN_TOKEN: this.adminToken, FEDSCORE_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.push(child);
    const lines: string[] = [];
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const l of parts) lines.push(`${((Date.now() - this.t0) / 1000).toFixed(1)}s [${name}] ${l}`);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    return { child, lines };
  }

  /** SIGKILL every process still running. */
  killAll(): void {
    for (const c of this.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
}

/** The process's exit code once it has exited (null after a signal). */
export const exited = (c: ChildProcess) =>
  c.exitCode !== null || c.signalCode !== null
    ? Promise.resolve(c.exitCode)
    : new Promise<number | null>((r) => c.once('exit', (code) => r(code)));

/** Polls `probe` every 50 ms until it gives a value; throws naming `what()` after `ms`. */
export async function until<T>(
  what: () => string,
  probe: () => Promise<T | undefined> | T | undefined,
  ms = 120_000,
): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
