/**
 * A silo's trainer process (docs/trainer.md): started once from the silo's command line, spoken to
 * in JSON lines over its stdin and stdout (./trainer-protocol.ts), one request at a time, each
 * with its own timeout. Parameter vectors and data are `.npy` files in a folder that only this
 * user can read (0700, removed on close), named to the trainer in `FEDSCORE_TRAINER_DIR`.
 *
 * On a protocol error — an exit, a line that is not an answer, a timeout, a vector that fails its
 * checks — the trainer (its whole process group) is killed and the error names the operation;
 * later requests fail with the same error. The trainer's stderr goes to the silo's log, and its
 * last lines are quoted when it exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  encodeRequest,
  MAX_ANSWER_LINE,
  parseAnswer,
  type TrainerOp,
  TrainerProtocolError,
  type TrainerRequest,
} from './trainer-protocol.js';

/** Seconds each operation may take before the trainer is killed. */
export type TrainerTimeouts = Record<TrainerOp, number>;

/**
 * Defaults: the first `layout` includes the interpreter's start and the library's import; a
 * round's training may take long on a large silo.
 */
export const DEFAULT_TRAINER_TIMEOUTS: TrainerTimeouts = {
  layout: 120,
  init: 120,
  train: 3600,
  evaluate: 600,
};

/**
 * clients/python: the helper `fedscore_client.trainer`, put on the trainer's PYTHONPATH (from a
 * checkout, src/fl/learner/ is three folders down; from the package, dist/src/fl/learner/ four).
 */
export const PYTHON_HELPER_DIR =
  [
    new URL('../../../clients/python/', import.meta.url),
    new URL('../../../../clients/python/', import.meta.url),
  ]
    .map((u) => fileURLToPath(u))
    .find((p) => existsSync(join(p, 'fedscore_client'))) ??
  fileURLToPath(new URL('../../../clients/python/', import.meta.url));

/** Options of {@link TrainerProcess.start}. */
export interface TrainerProcessOptions {
  /** The command line, run by the shell (`python3 model.py`). */
  readonly command: string;
  /** Its working directory (default: this process's). */
  readonly cwd?: string;
  /** Seconds per operation (default {@link DEFAULT_TRAINER_TIMEOUTS}). */
  readonly timeouts?: Partial<TrainerTimeouts>;
  /** Receives the trainer's stderr lines. */
  readonly log?: (line: string) => void;
}

/** One running trainer. */
export class TrainerProcess {
  /** The 0700 folder of the vectors and data. */
  readonly dir: string;
  private readonly child: ChildProcess;
  private readonly timeouts: TrainerTimeouts;
  private readonly stderrTail: string[] = [];
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private buffer = '';
  private lines: string[] = [];
  private wake: (() => void) | undefined;
  private exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private broken: TrainerProtocolError | undefined;
  private readonly exitPromise: Promise<void>;

  private constructor(
    readonly command: string,
    o: TrainerProcessOptions,
  ) {
    this.timeouts = { ...DEFAULT_TRAINER_TIMEOUTS, ...o.timeouts };
    for (const [op, s] of Object.entries(this.timeouts))
      if (!(typeof s === 'number' && s > 0 && Number.isFinite(s)))
        throw new RangeError(`timeouts.${op}: expected seconds > 0, got ${s}`);
    this.dir = mkdtempSync(join(tmpdir(), 'fedscore-trainer-'));
    chmodSync(this.dir, 0o700);
    const env = {
      ...process.env,
      FEDSCORE_TRAINER_DIR: this.dir,
      PYTHONPATH: [PYTHON_HELPER_DIR, process.env.PYTHONPATH].filter(Boolean).join(delimiter),
      PYTHONUNBUFFERED: '1',
    };
    // Its own process group: a kill reaches the shell and the interpreter it started.
    this.child = spawn(command, {
      shell: true,
      cwd: o.cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
    });
    const log = o.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    let errBuf = '';
    this.child.stderr!.on('data', (d: Buffer) => {
      errBuf += d.toString();
      const parts = errBuf.split('\n');
      errBuf = parts.pop()!.slice(-10_000);
      for (const p of parts) {
        const line = p.slice(0, 2000);
        this.stderrTail.push(line);
        if (this.stderrTail.length > 12) this.stderrTail.shift();
        log(`trainer: ${line}`);
      }
    });
    this.child.stdout!.on('data', (d: Buffer) => {
      this.buffer += d.toString();
      const parts = this.buffer.split('\n');
      this.buffer = parts.pop()!;
      for (const p of parts) if (p.trim() !== '') this.lines.push(p.replace(/\r$/, ''));
      if (this.buffer.length > MAX_ANSWER_LINE) {
        this.lines.push(this.buffer.slice(0, 200));
        this.buffer = '';
      }
      this.wake?.();
    });
    this.child.stdin!.on('error', () => {}); // EPIPE after an exit: reported by the exit
    this.exitPromise = new Promise((resolve) => {
      this.child.once('error', (e) => {
        this.stderrTail.push(String(e));
        this.exited ??= { code: null, signal: null };
        this.wake?.();
        resolve();
      });
      this.child.once('close', (code, signal) => {
        this.exited = { code, signal };
        this.wake?.();
        resolve();
      });
    });
  }

  /** Starts `o.command`. */
  static start(o: TrainerProcessOptions): TrainerProcess {
    if (typeof o.command !== 'string' || o.command.trim() === '')
      throw new TypeError('command: expected the trainer command line, e.g. "python3 model.py"');
    return new TrainerProcess(o.command, o);
  }

  /** Path of a file in the trainer's folder. */
  file(name: string): string {
    return join(this.dir, name);
  }

  /** Whether the trainer is still usable (not exited, no protocol error). */
  get alive(): boolean {
    return this.exited === undefined && this.broken === undefined;
  }

  /**
   * Sends `r` and returns the fields of its answer; `check` runs on them (and on the files the
   * trainer wrote) while the request still holds the trainer, so a failed check kills it too.
   * @throws TrainerProtocolError naming the operation (the trainer is then killed);
   *   TrainerError when the trainer answers with an error (it stays up).
   */
  request<T>(r: TrainerRequest, check: (answer: Record<string, unknown>) => T): Promise<T> {
    const run = async () => {
      if (this.broken) throw this.broken;
      const id = this.nextId++;
      try {
        if (this.exited) throw this.exitError(r.op);
        this.child.stdin!.write(encodeRequest(id, r));
        const line = await this.nextLine(r.op);
        return check(parseAnswer(r.op, id, line));
      } catch (e) {
        if (e instanceof TrainerProtocolError) this.fail(e);
        throw e;
      }
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => {});
    return p;
  }

  private exitError(op: string): TrainerProtocolError {
    const how = this.exited?.signal
      ? `was killed (${this.exited.signal})`
      : `exited with code ${this.exited?.code ?? 'unknown'}`;
    const tail = this.stderrTail.slice(-3).join(' | ');
    return new TrainerProtocolError(
      op,
      `the trainer '${this.command}' ${how}${tail ? `; its last stderr lines: ${tail}` : ''}`,
    );
  }

  private nextLine(op: TrainerOp): Promise<string> {
    const seconds = this.timeouts[op];
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        reject(
          new TrainerProtocolError(
            op,
            `no answer within its timeout of ${seconds} s; the trainer is stopped`,
          ),
        );
      }, seconds * 1000);
      const check = () => {
        const line = this.lines.shift();
        if (line !== undefined) {
          clearTimeout(timer);
          this.wake = undefined;
          resolve(line);
        } else if (this.exited) {
          clearTimeout(timer);
          this.wake = undefined;
          reject(this.exitError(op));
        }
      };
      this.wake = check;
      check();
    });
  }

  /** Marks the trainer broken and kills its process group. */
  private fail(e: TrainerProtocolError): void {
    this.broken ??= e;
    this.kill('SIGKILL');
  }

  private kill(signal: NodeJS.Signals): void {
    if (this.exited || this.child.pid === undefined) return;
    try {
      if (process.platform !== 'win32') process.kill(-this.child.pid, signal);
      else this.child.kill(signal);
    } catch {
      this.child.kill(signal);
    }
  }

  /**
   * Closes stdin (a trainer exits at its end), kills what is left after `graceMs`, and removes
   * the folder.
   */
  async close(graceMs = 3000): Promise<void> {
    this.child.stdin!.end();
    const timer = setTimeout(() => this.kill('SIGKILL'), graceMs);
    await this.exitPromise;
    clearTimeout(timer);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
