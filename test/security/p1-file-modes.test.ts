/**
 * Issue 32, P1: file modes. `fedscore.db` (models, Σŵ_iΔ_i, reports) with its -wal and -shm, the
 * logs `fedscore up` writes and the silos' data files were written 0644 (readable by every local
 * user) under the usual umask 022; only keys and tokens were 0600. Now the store, the logs and a
 * silo's data are 0600, the silo folders, the logs folder and the tokens folder 0700
 * (src/data/private-files.ts), whatever the umask, and a store an older version left 0644 is made
 * 0600 when the service opens it.
 *
 * Against the code before the fix (f7a4317) all three tests failed under umask 022: the store and
 * its -wal/-shm were 0644, each silo's folder 0755 and its data files 0644, the log file 0644.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initProject } from '../../src/cli/actions/init.js';
import { ProjectProcesses } from '../../src/cli/actions/processes.js';
import { openStore } from '../../src/server/store/database.js';

const tmp = mkdtempSync(join(tmpdir(), 'fedscore-p1-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const mode = (path: string) => statSync(path).mode & 0o777;
/** Every file under `dir` with its mode, as `path 0ooo`. */
function modes(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => join(e.parentPath, e.name))
    .map((p) => `${p.slice(dir.length + 1)} ${mode(p).toString(8)}`)
    .sort();
}

// The usual umask: what makes a plain writeFile 0644.
let umask = 0;
beforeEach(() => {
  umask = process.umask(0o022);
});
afterEach(() => {
  process.umask(umask);
});

describe('file modes (issue 32, P1)', () => {
  it('the SQLite store and its -wal and -shm are 0600, and an old 0644 store is made 0600 on open', async () => {
    const db = join(tmp, 'fedscore.db');
    const store = await openStore({ sqlite: db });
    try {
      await store.db.selectFrom('consortia').selectAll().execute(); // the migrations wrote: -wal, -shm in use
      for (const f of [db, `${db}-wal`, `${db}-shm`]) expect(`${f} ${mode(f).toString(8)}`).toBe(`${f} 600`);
    } finally {
      await store.close();
    }
    const old = join(tmp, 'old.db');
    writeFileSync(old, '');
    chmodSync(old, 0o644);
    const again = await openStore({ sqlite: old });
    await again.close();
    expect(mode(old)).toBe(0o600);
  });

  it('fedscore init: each silo folder 0700, its key and data 0600; the tokens folder 0700', async () => {
    const dir = join(tmp, 'project');
    await initProject(
      {
        dir,
        silos: 3,
        data: 'synthetic',
        formats: ['npy', 'csv', 'idx'],
        model: 'mlp',
        examplesPerSilo: 30,
        testSize: 30,
        rounds: 1,
        corruptSilos: 0,
        seed: 1,
        backend: 'cpu',
      },
      () => {},
    );
    for (const silo of ['silo-0', 'silo-1', 'silo-2']) {
      const folder = join(dir, 'silos', silo);
      expect(mode(folder)).toBe(0o700);
      const inside = modes(folder);
      expect(inside.length).toBeGreaterThan(1); // the key and at least one data file
      for (const line of inside) expect(line).toMatch(/ (600|700)$/);
      expect(inside.filter((l) => l.endsWith(' 600')).length).toBeGreaterThan(1);
    }
    expect(mode(join(dir, 'tokens'))).toBe(0o700);
    for (const t of ['admin.token', 'viewer.token']) expect(mode(join(dir, 'tokens', t))).toBe(0o600);
  }, 60_000);

  it('fedscore up: the logs folder 0700 and each process log 0600', async () => {
    const p = new ProjectProcesses(tmp, {});
    const started = p.start('probe', ['--version']);
    expect(await started.exited).toBe(0);
    expect(mode(join(tmp, 'logs'))).toBe(0o700);
    expect(mode(join(tmp, 'logs', 'probe.log'))).toBe(0o600);
  }, 60_000);
});
