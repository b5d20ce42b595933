/** A silo journal in a fresh temporary folder for tests that run the silo runtime (removed at exit). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SiloJournal } from '../../src/client/journal.js';

const folders: string[] = [];
process.once('exit', () => {
  for (const d of folders) rmSync(d, { recursive: true, force: true });
});

/** A new, empty journal (its own folder). */
export function tempJournal(): SiloJournal {
  const dir = mkdtempSync(join(tmpdir(), 'fedscore-journal-'));
  folders.push(dir);
  return SiloJournal.open(join(dir, 'silo.key.journal'));
}
