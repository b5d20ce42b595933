/** The fedscore package's own metadata, read from package.json (from src/ or from dist/src/). */
import { createRequire } from 'node:module';

/** The version in package.json, or 'unknown' when it cannot be read. */
export function packageVersion(): string {
  const req = createRequire(import.meta.url);
  for (const p of ['../../package.json', '../../../package.json']) {
    try {
      return (req(p) as { version: string }).version;
    } catch {}
  }
  return 'unknown';
}
