/**
 * Small files that grow large when read, for test/security/resource-exhaustion.test.ts. Each is
 * kilobytes to a megabyte on disk: gzip files are several gzip members of one compressed block
 * of zeros (readers inflate concatenated members as one stream), PNGs are 1-bit grey images of
 * zeros, which decoders expand to one byte per pixel.
 */
import { spawn } from 'node:child_process';
import { crc32, createGunzip, deflateSync, gzipSync } from 'node:zlib';

const MIB = 1024 * 1024;
const BLOCK = 16 * MIB;

/** A gzip stream of `prefix` then zeros, `total` bytes in all when inflated (≈ total/1000 on disk). */
export function gzipBomb(prefix: Uint8Array, total: number, fill = new Uint8Array(BLOCK)): Buffer {
  const zeros = gzipSync(fill, { level: 9 });
  const first = Buffer.alloc(Math.min(total, BLOCK));
  first.set(prefix);
  for (let k = prefix.length; k < first.length; k++) first[k] = fill[k % fill.length]!;
  const parts = [gzipSync(first, { level: 9 })];
  let left = total - first.length;
  for (; left >= BLOCK; left -= BLOCK) parts.push(zeros);
  if (left > 0) parts.push(gzipSync(fill.subarray(0, left), { level: 9 }));
  return Buffer.concat(parts);
}

/** An IDX header: uint8 elements of the given dimensions. */
export function idxHeader(dims: readonly number[]): Uint8Array {
  const h = Buffer.alloc(4 + 4 * dims.length);
  h[2] = 0x08;
  h[3] = dims.length;
  dims.forEach((d, k) => {
    h.writeUInt32BE(d, 4 + 4 * k);
  });
  return h;
}

/** How many bytes gzip data inflate to, counted while streaming (nothing kept). */
export function inflatedSize(gz: Uint8Array): Promise<number> {
  return new Promise((resolve, reject) => {
    let n = 0;
    const z = createGunzip();
    z.on('data', (c: Buffer) => {
      n += c.length;
    });
    z.on('end', () => resolve(n));
    z.on('error', reject);
    z.end(gz);
  });
}

function pngChunk(type: string, data: Uint8Array): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A side×side 1-bit grey PNG of zeros (side a multiple of 8): ~side²/8200 bytes, side² decoded. */
export function pngBomb(side: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 1; // bit depth 1
  ihdr[9] = 0; // greyscale
  const rows = Buffer.alloc(side * (1 + side / 8));
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(rows, { level: 9 })),
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}

/** A process's result: exit code, output, and whether it was killed at the timeout. */
export interface Spawned {
  code: number | null;
  out: string;
  err: string;
  killed: boolean;
}

/** Runs a command without blocking the event loop (servers in this process keep answering). */
export function run(cmd: string, args: string[], timeoutMs: number, cwd?: string): Promise<Spawned> {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let killed = false;
    p.stdout.on('data', (c) => {
      out += c;
    });
    p.stderr.on('data', (c) => {
      err += c;
    });
    const timer = setTimeout(() => {
      killed = true;
      p.kill('SIGKILL');
    }, timeoutMs);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err, killed });
    });
  });
}
