/**
 * Runs one reader in its own process for the resource-exhaustion tests, so its peak memory can
 * be measured alone: `node --import tsx _bounded-reader.ts <reader> <args…>` prints one JSON
 * line `{ ok, message?, n?, maxRssMb }` (maxRssMb: the process's peak resident set, MiB, VmHWM).
 */

import { readFileSync } from 'node:fs';
import { readConsortiumFile } from '../../src/consortium/consortium-file.js';
import { loadLocalData } from '../../src/data/local-data.js';

const [reader, path, shape] = process.argv.slice(2) as [string, string, string | undefined];
const inputShape = (shape ? JSON.parse(shape) : [28, 28, 1]) as [number, number, number];

async function run(): Promise<{ ok: boolean; message?: string; n?: number }> {
  try {
    if (reader === 'consortium') {
      readConsortiumFile(path);
      return { ok: true };
    }
    const ds = await loadLocalData(path, { inputShape, numClasses: 10, resize: reader === 'resize' });
    return { ok: true, n: ds.n };
  } catch (e) {
    return { ok: false, message: `${(e as Error).name}: ${(e as Error).message}` };
  }
}

/**
 * This process's peak RSS in MiB: VmHWM of /proc/self/status (getrusage's maxrss would include
 * the parent's RSS at spawn, which Linux carries across execve).
 */
function peakRssMb(): number {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) / 1024;
  } catch {}
  return process.resourceUsage().maxRSS / 1024;
}

const out = await run();
process.stdout.write(`${JSON.stringify({ ...out, maxRssMb: peakRssMb() })}\n`);
