/**
 * The silo's masking journal (issue 32, R1; docs/threat-model.md, "Round replay"): a durable,
 * append-only record, beside the silo's key, of what the silo committed to in every round —
 * the training randomness it drew, every masked input and every Unmasking response it sent,
 * the round results it accepted, and the server faults it saw — each with the consortium's digest,
 * the round, the attempt on that base model and the base model's digest.
 *
 * One JSON object a line. Every entry is written and fsync'd *before* the message it records
 * is sent (write-ahead): a crash between the two leaves the entry and no message, which errs on
 * the safe side. The file is created 0600 (its folder is the key's) and kept across restarts and
 * `--first-round`: a silo that restarts reads what it did before. The rule the journal enforces is
 * ./replay-guard.ts's.
 */
import {
  closeSync,
  existsSync,
  fchmodSync,
  fstatSync,
  fsyncSync,
  openSync,
  readFileSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { SiloCode } from '../consortium/error-codes.js';

/** What an entry records. */
export type JournalKind =
  /** The silo trained for a round on a base model; `seed` is the training randomness it drew. */
  | 'trained'
  /** The silo is about to send its masked input (MaskedInputCollection). */
  | 'masked'
  /** The silo is about to send its Unmasking response. */
  | 'unmasked'
  /** The silo accepted the round's published result (`model`: the digest of M_r it derived). */
  | 'accepted'
  /** The server reported the round aborted after this silo's Unmasking response. */
  | 'server-fault';

/** One line of the journal. */
export interface JournalEntry {
  readonly kind: JournalKind;
  /** The digest of the pinned consortium file (or `unpinned:<id>`). */
  readonly consortium: string;
  readonly round: number;
  /** 1 + the number of earlier rounds this silo trained for on the same base model. */
  readonly attempt: number;
  /** The base model's digest (src/ml/layers-model.ts `paramsDigest`, hex SHA-256 of its bytes). */
  readonly base: string;
  /** `trained`: the training seed drawn for the round. */
  readonly seed?: number;
  /** `accepted`: the digest of the round's result M_r. */
  readonly model?: string;
  /** `server-fault`: what happened. */
  readonly detail?: string;
  /** When it was written (ISO 8601). */
  readonly at: string;
}

/** The journal cannot be read or written: the silo stops (it cannot keep its promise without it). */
export class JournalError extends Error {
  readonly code = 'FEDSCORE_ERR_JOURNAL' satisfies SiloCode;
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`FEDSCORE_ERR_JOURNAL: ${path}: ${detail}`);
    this.name = 'JournalError';
  }
}

const KINDS: readonly JournalKind[] = ['trained', 'masked', 'unmasked', 'accepted', 'server-fault'];
const HEX64 = /^[0-9a-f]{64}$/;

/** The journal file of the silo whose secret key is at `keyPath`: `<keyPath>.journal`, beside it. */
export function journalPathOf(keyPath: string): string {
  return `${keyPath}.journal`;
}

/** A silo's journal, opened on its file (created if absent). */
export class SiloJournal {
  private readonly entries: JournalEntry[];

  private constructor(
    readonly path: string,
    private readonly fd: number,
    entries: JournalEntry[],
    private readonly now: () => Date,
  ) {
    this.entries = entries;
  }

  /**
   * Opens (creating, mode 0600) the journal at `path` and reads every entry.
   * @throws JournalError naming the file and line when it cannot be opened, a line does not parse
   *   or an entry is malformed: the silo must not guess what it sent before.
   */
  static open(path: string, o: { now?: () => Date } = {}): SiloJournal {
    let fd: number;
    try {
      const created = !existsSync(path);
      fd = openSync(path, 'a+', 0o600);
      // A new file's directory entry is made durable too (else a crash could lose the whole file).
      if (created) fsyncDirectory(dirname(path));
      // An existing file keeps its mode on open: tighten it (it says which bases the silo used).
      if ((fstatSync(fd).mode & 0o077) !== 0) fchmodSync(fd, 0o600);
    } catch (e) {
      throw new JournalError(path, `cannot open (${(e as Error).message}); its folder is ${dirname(path)}`);
    }
    try {
      const entries = parseJournal(path, readFileSync(path, 'utf8'));
      return new SiloJournal(path, fd, entries, o.now ?? (() => new Date()));
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  /**
   * Reads the file again (another process with the same key may have written to it).
   * @throws JournalError as {@link SiloJournal.open}.
   */
  reload(): void {
    const fresh = parseJournal(this.path, readFileSync(this.path, 'utf8'));
    this.entries.splice(0, this.entries.length, ...fresh);
  }

  /** Every entry, oldest first. */
  all(): readonly JournalEntry[] {
    return this.entries;
  }

  /**
   * Appends an entry and waits until it is on disk (fsync) before returning.
   * @throws JournalError when the write or the fsync fails (the caller must then not send).
   */
  append(e: Omit<JournalEntry, 'at'>): JournalEntry {
    const entry: JournalEntry = { ...e, at: this.now().toISOString() };
    checkEntry(entry, this.path, this.entries.length + 1);
    const line = Buffer.from(`${JSON.stringify(entry)}\n`, 'utf8');
    try {
      let off = 0;
      while (off < line.length) off += writeSync(this.fd, line, off);
      fsyncSync(this.fd);
    } catch (err) {
      throw new JournalError(this.path, `cannot write (${(err as Error).message}); refusing to send`);
    }
    this.entries.push(entry);
    return entry;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * The entries of the journal at `path`, read without opening it for writing (`fedscore up` reads its
 * silos' journals to know which of them sit out a round, ../cli/actions/up-replay.ts); none when the
 * file does not exist.
 * @throws JournalError as {@link SiloJournal.open} when it cannot be read or does not parse.
 */
export function readJournal(path: string): JournalEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new JournalError(path, `cannot read (${(e as Error).message})`);
  }
  return parseJournal(path, text);
}

function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function parseJournal(path: string, text: string): JournalEntry[] {
  if (text.length === 0) return [];
  if (!text.endsWith('\n'))
    throw new JournalError(path, 'its last line is incomplete (a torn write); check the file by hand');
  return text
    .slice(0, -1)
    .split('\n')
    .map((l, k) => {
      let v: unknown;
      try {
        v = JSON.parse(l);
      } catch {
        throw new JournalError(path, `line ${k + 1} is not JSON`);
      }
      return checkEntry(v, path, k + 1);
    });
}

function checkEntry(v: unknown, path: string, line: number): JournalEntry {
  const bad = (what: string) => new JournalError(path, `line ${line}: ${what}`);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad('expected an object');
  const e = v as Record<string, unknown>;
  if (!KINDS.includes(e.kind as JournalKind)) throw bad(`kind: expected one of ${KINDS.join(', ')}`);
  if (typeof e.consortium !== 'string' || e.consortium.length === 0)
    throw bad('consortium: expected a digest');
  for (const k of ['round', 'attempt'] as const)
    if (!Number.isInteger(e[k]) || (e[k] as number) < 0) throw bad(`${k}: expected an integer ≥ 0`);
  if (typeof e.base !== 'string' || !HEX64.test(e.base)) throw bad('base: expected 64 hex digits');
  if (e.seed !== undefined && !Number.isInteger(e.seed)) throw bad('seed: expected an integer');
  if (e.model !== undefined && (typeof e.model !== 'string' || !HEX64.test(e.model)))
    throw bad('model: expected 64 hex digits');
  if (e.detail !== undefined && typeof e.detail !== 'string') throw bad('detail: expected a string');
  if (typeof e.at !== 'string') throw bad('at: expected a time');
  return e as unknown as JournalEntry;
}
