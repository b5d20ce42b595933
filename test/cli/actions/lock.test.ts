/**
 * src/cli/actions/lock.ts: one holder at a time; a second taker refuses at once naming the holder's
 * PID; a lock whose holder is gone (SIGKILLed) is taken over; release removes only one's own lock.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireLock, LockHeldError, processAlive } from '../../../src/cli/actions/lock.js';

const dir = mkdtempSync(join(tmpdir(), 'fedscore-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A holder record for `pid`. */
const holder = (pid: number, host = hostname()) =>
  `${JSON.stringify({ pid, host, since: '2026-01-01T00:00:00.000Z', what: 'fedscore up' })}\n`;

describe('the lock of a project folder or store', () => {
  it('a live holder: the second taker is refused at once, with its PID; release frees it', () => {
    const path = join(dir, 'a.lock');
    const lock = acquireLock(path, 'fedscore up');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid, what: 'fedscore up' });
    // Another live process holds it (the test's parent stands in for a second `up`).
    writeFileSync(path, holder(process.ppid));
    expect(() => acquireLock(path, 'fedscore up')).toThrow(LockHeldError);
    expect(() => acquireLock(path, 'fedscore up')).toThrow(`held by fedscore up (pid ${process.ppid} on`);
    // Not ours any more: release leaves it.
    lock.release();
    expect(existsSync(path)).toBe(true);
    rmSync(path);
    const again = acquireLock(path, 'fedscore serve');
    again.release();
    expect(existsSync(path)).toBe(false);
  });

  it('a holder that was SIGKILLed: its stale lock is taken over and the old holder named', async () => {
    const path = join(dir, 'b.lock');
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    writeFileSync(path, holder(child.pid!));
    expect(() => acquireLock(path, 'fedscore up')).toThrow(`pid ${child.pid}`);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(processAlive(child.pid!)).toBe(false);
    const lock = acquireLock(path, 'fedscore up');
    expect(lock.tookOver?.pid).toBe(child.pid);
    lock.release();
  });

  it('a holder on another host counts as live; an unreadable lock file is stale', () => {
    const path = join(dir, 'c.lock');
    writeFileSync(path, holder(1, 'elsewhere.example'));
    expect(() => acquireLock(path, 'fedscore up')).toThrow('pid 1 on elsewhere.example');
    writeFileSync(path, 'garbage');
    acquireLock(path, 'fedscore up').release();
  });
});
