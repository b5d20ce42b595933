/**
 * Files only their owner may read (issue 32, P1): the service's store (fedscore.db with its -wal
 * and -shm: models, Σŵ_iΔ_i, reports), the logs, a silo's data and its folder. Every writer — `init`,
 * `up`, `serve`, `client` — goes through these helpers, so one rule sets the modes: files 0600,
 * folders 0700, whatever the process's umask, and also when the file or folder already existed
 * (a mode given to open/mkdir applies only on creation, and only under the umask).
 *
 * It sits in the lowest folder of src/ so that every writer, the data writers included, can use it.
 */
import {
  chmodSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  type WriteFileOptions,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

/** Owner read/write: the mode of every private file. */
export const PRIVATE_FILE_MODE = 0o600;
/** Owner read/write/search: the mode of every private folder. */
export const PRIVATE_DIR_MODE = 0o700;

/** Creates `path` (and missing parents) and sets it to 0700. @returns `path`. */
export function privateDir(path: string): string {
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(path, PRIVATE_DIR_MODE);
  return path;
}

/**
 * Creates `path` empty if it is missing (0600 from the start, so no other user can open it in
 * between), and sets an existing one to 0600. @returns `path`.
 */
export function privateFile(path: string): string {
  closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
  chmodSync(path, PRIVATE_FILE_MODE);
  return path;
}

/** Sets `path` to 0600 when it exists (a file another library created, e.g. SQLite's -wal). */
export function restrictIfPresent(path: string): void {
  if (existsSync(path)) chmodSync(path, PRIVATE_FILE_MODE);
}

/** `writeFileSync` of a private file: created 0600, and 0600 if it already existed. */
export function writePrivateFile(
  path: string,
  data: string | NodeJS.ArrayBufferView,
  o: Omit<Exclude<WriteFileOptions, string>, 'mode'> = {},
): void {
  writeFileSync(path, data, { ...o, mode: PRIVATE_FILE_MODE });
  chmodSync(path, PRIVATE_FILE_MODE);
}

/**
 * Makes a whole tree private: `root` and every folder below it 0700, every file 0600. Links are
 * left alone (their targets may lie outside the tree).
 */
export function privateTree(root: string): void {
  const st = lstatSync(root);
  if (st.isSymbolicLink()) return;
  if (!st.isDirectory()) {
    chmodSync(root, PRIVATE_FILE_MODE);
    return;
  }
  chmodSync(root, PRIVATE_DIR_MODE);
  for (const name of readdirSync(root)) privateTree(join(root, name));
}
