/**
 * An exclusive lock on a folder or a file, held by one process (issue 34: two `fedscore up` on one
 * folder lost data; nothing locked it). The lock is a file created with O_EXCL holding the holder's
 * PID, host and start time: a second taker refuses at once, naming that PID. A lock whose holder is
 * gone (its PID is not alive on this host: the holder was SIGKILLed) is stale and taken over.
 *
 * `fedscore up` locks its project folder (`<dir>/fedscore.lock`); `fedscore serve` locks its SQLite
 * file (`<file>.lock`), so a second `up` — or a `serve` on the store of a running `up` — refuses.
 * A PostgreSQL store is not locked: several service replicas may share one database by design
 * (docs/architecture.md, "Beyond one machine").
 */
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** What a lock file holds. */
export interface LockHolder {
  pid: number;
  host: string;
  /** ISO time the lock was taken. */
  since: string;
  /** What holds it (`fedscore up`, `fedscore serve`). */
  what: string;
}

/** Thrown when a live process holds the lock. */
export class LockHeldError extends Error {
  constructor(
    readonly path: string,
    readonly holder: LockHolder,
  ) {
    super(
      `${path} is held by ${holder.what} (pid ${holder.pid} on ${holder.host}, since ${holder.since}): it is running on this ${holder.what === 'fedscore serve' ? 'store' : 'folder'}; stop it first (kill ${holder.pid}) or wait for it to finish`,
    );
    this.name = 'LockHeldError';
  }
}

/** Whether process `pid` exists on this host (EPERM: it exists, owned by another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(path: string): LockHolder | undefined {
  try {
    const h = JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
    return Number.isInteger(h?.pid) && h.pid > 0 && typeof h.host === 'string' ? h : undefined;
  } catch {
    return undefined;
  }
}

/** A held lock. */
export interface Lock {
  readonly path: string;
  /** The previous holder when a stale lock was taken over. */
  readonly tookOver?: LockHolder;
  /** Removes the lock file if it is still this process's. */
  release(): void;
}

/**
 * Takes the lock at `path` for this process.
 * @throws LockHeldError when a live process holds it (a holder on another host counts as live:
 *   its liveness cannot be checked from here).
 */
export function acquireLock(path: string, what: string): Lock {
  const mine: LockHolder = { pid: process.pid, host: hostname(), since: new Date().toISOString(), what };
  let tookOver: LockHolder | undefined;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${JSON.stringify(mine)}\n`, { flag: 'wx', mode: 0o600 });
      return {
        path,
        ...(tookOver ? { tookOver } : {}),
        release() {
          if (readHolder(path)?.pid === process.pid)
            try {
              unlinkSync(path);
            } catch {}
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const holder = readHolder(path);
    // A holder that is alive here (or on another host) keeps it; an unreadable file is a taker's
    // half-written lock only for an instant, and otherwise the remains of a crash.
    if (holder && (holder.host !== mine.host || processAlive(holder.pid)))
      throw new LockHeldError(path, holder);
    if (holder) tookOver = holder;
    try {
      unlinkSync(path);
    } catch {}
  }
  // Two takers raced for a stale lock and the other won.
  const holder = readHolder(path);
  if (holder) throw new LockHeldError(path, holder);
  throw new Error(`${path}: cannot take the lock`);
}
