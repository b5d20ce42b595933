/**
 * src/client/journal.ts: the silo's masking journal is a file beside its key, mode 0600, read back
 * entry for entry by a restarted silo; a malformed or torn file is refused naming the line, never
 * guessed around.
 */
import {
  appendFileSync,
  chmodSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JournalError, journalPathOf, SiloJournal } from '../../src/client/journal.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
const fresh = () => {
  dir = mkdtempSync(join(tmpdir(), 'fedscore-journal-test-'));
  return journalPathOf(join(dir, 'silo-0.key'));
};
const BASE = 'a1'.repeat(32);
const entry = {
  kind: 'unmasked' as const,
  consortium: 'c'.repeat(64),
  round: 3,
  attempt: 2,
  base: BASE,
};

describe('the silo journal', () => {
  it('lies beside the key as <key>.journal, is created 0600 and survives a restart entry for entry', () => {
    const path = fresh();
    expect(path).toBe(join(dir!, 'silo-0.key.journal'));
    const j = SiloJournal.open(path, { now: () => new Date(0) });
    j.append({ ...entry, kind: 'trained', seed: 12345 });
    j.append(entry);
    j.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8').split('\n')[1]).toBe(
      `{"kind":"unmasked","consortium":"${'c'.repeat(64)}","round":3,"attempt":2,"base":"${BASE}","at":"1970-01-01T00:00:00.000Z"}`,
    );
    const again = SiloJournal.open(path);
    expect(again.all().map((e) => [e.kind, e.round, e.seed])).toEqual([
      ['trained', 3, 12345],
      ['unmasked', 3, undefined],
    ]);
    again.close();
  });

  it('tightens an existing journal readable by others to 0600', () => {
    const path = fresh();
    writeFileSync(path, '');
    chmodSync(path, 0o644);
    SiloJournal.open(path).close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('reload() sees what another process with the same key appended', () => {
    const path = fresh();
    const a = SiloJournal.open(path);
    const b = SiloJournal.open(path);
    b.append(entry);
    expect(a.all()).toEqual([]);
    a.reload();
    expect(a.all()).toHaveLength(1);
    a.close();
    b.close();
  });

  it.each([
    ['not JSON', '{"kind":\n', 'line 1 is not JSON'],
    [
      'an unknown kind',
      `${JSON.stringify({ ...entry, kind: 'forgot', at: 'x' })}\n`,
      'line 1: kind: expected one of',
    ],
    [
      'a base that is no digest',
      `${JSON.stringify({ ...entry, base: 'M0', at: 'x' })}\n`,
      'line 1: base: expected 64 hex digits',
    ],
    [
      'a torn last line',
      `${JSON.stringify({ ...entry, at: 'x' })}\n{"kind":"unm`,
      'its last line is incomplete',
    ],
  ])('refuses a journal with %s, naming the file and the line (FEDSCORE_ERR_JOURNAL)', (_, text, why) => {
    const path = fresh();
    appendFileSync(path, text);
    const e = (() => {
      try {
        SiloJournal.open(path);
      } catch (x) {
        return x;
      }
    })();
    expect(e).toBeInstanceOf(JournalError);
    expect(e).toMatchObject({ code: 'FEDSCORE_ERR_JOURNAL', path });
    expect((e as Error).message).toContain(`FEDSCORE_ERR_JOURNAL: ${path}: ${why}`);
  });

  it('refuses to open a journal in a folder that does not exist', () => {
    fresh();
    expect(() => SiloJournal.open(join(dir!, 'missing', 'k.journal'))).toThrow(
      /^FEDSCORE_ERR_JOURNAL: .*cannot open/,
    );
  });
});
