/**
 * The `fedscore` processes `fedscore up` starts: the same program this one runs (under tsx from a
 * checkout, or the built dist/), in the project folder, each with its output in
 * `<project>/logs/<name>.log` (appended, each run under a header line); stopped together (SIGTERM, then SIGKILL after a grace period).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { privateDir, privateFile } from '../../data/private-files.js';

/** `node [loader] <fedscore main>`: how to start this same CLI as a child process. */
export function cliInvocation(): { command: string; args: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  const main = fileURLToPath(new URL(`../main.${fromSource ? 'ts' : 'js'}`, import.meta.url));
  // tsx's loader by absolute URL: the project folder may be outside the checkout.
  return {
    command: process.execPath,
    args: [...(fromSource ? ['--import', import.meta.resolve('tsx')] : []), main],
  };
}

/**
 * Variables a child must not inherit: npm's record of where the user typed the command (the child
 * runs in the project folder, main.ts would move it back) and a shared PostgreSQL database (the
 * project's service keeps its store in the folder).
 */
const NOT_INHERITED = ['INIT_CWD', 'npm_lifecycle_event', 'DATABASE_URL'];

/** One started process. */
export interface Started {
  name: string;
  child: ChildProcess;
  /** Its output lines so far (stdout and stderr). */
  lines: string[];
  /** Resolves with the exit code, or the signal's name, once it has exited. */
  exited: Promise<number | NodeJS.Signals>;
}

/** The processes of one `fedscore up`. */
export class ProjectProcesses {
  readonly started: Started[] = [];
  private readonly logs: string;

  /**
   * @param header the run's header line, written at the top of each process's part of its log:
   *   logs are appended run after run, never overwritten (issue 34).
   */
  constructor(
    private readonly dir: string,
    private readonly env: Record<string, string>,
    private readonly header = `fedscore up, ${new Date().toISOString()}, pid ${process.pid}`,
  ) {
    // Issue 32, P1: the logs hold the service's and the silos' lines (ids, tokens in URLs): 0700/0600.
    this.logs = privateDir(join(dir, 'logs'));
  }

  /** Starts `fedscore <args>` as `name` (its log: logs/<name>.log). */
  start(name: string, args: readonly string[], extraEnv: Record<string, string> = {}): Started {
    const { command, args: pre } = cliInvocation();
    const env: Record<string, string | undefined> = {
      ...process.env,
      ...this.env,
      ...extraEnv,
      FEDSCORE_PARENT_PID: String(process.pid),
    };
    for (const k of NOT_INHERITED) delete env[k];
    const child = spawn(command, [...pre, ...args], {
      cwd: this.dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = createWriteStream(privateFile(join(this.logs, `${name}.log`)), { flags: 'a' });
    log.write(`\n===== ${this.header}: fedscore ${args.join(' ')} =====\n`);
    const lines: string[] = [];
    let buf = '';
    const onData = (d: Buffer) => {
      log.write(d);
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      lines.push(...parts);
      if (lines.length > 2000) lines.splice(0, lines.length - 2000);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    const exited = new Promise<number | NodeJS.Signals>((resolve) => {
      child.once('close', (code, signal) => {
        log.end();
        resolve(signal ?? code ?? 1);
      });
      child.once('error', (e) => {
        lines.push(String(e));
        log.end();
        resolve(1);
      });
    });
    const s = { name, child, lines, exited };
    this.started.push(s);
    return s;
  }

  /** Whether `s` is still running. */
  static running(s: Started): boolean {
    return s.child.exitCode === null && s.child.signalCode === null;
  }

  /** Stops every process still running: SIGTERM, then SIGKILL after `graceMs`; resolves once all have exited. */
  async stopAll(graceMs = 5000): Promise<void> {
    const live = this.started.filter(ProjectProcesses.running);
    for (const s of live) s.child.kill('SIGTERM');
    const timer = setTimeout(() => {
      for (const s of live) if (ProjectProcesses.running(s)) s.child.kill('SIGKILL');
    }, graceMs);
    await Promise.all(live.map((s) => s.exited));
    clearTimeout(timer);
  }
}
