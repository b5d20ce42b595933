/** Loads JSON known-answer vectors from test/vectors/ (test helper). */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'vectors');

export function loadVectors<T>(relative: string): T {
  return JSON.parse(readFileSync(join(root, relative), 'utf8')) as T;
}

export const hex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
export const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
