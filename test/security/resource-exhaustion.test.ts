/**
 * Issue 27, A5 — files and answers that exhaust memory before any check.
 *
 * Against dc1119c (these attacks run on the unchanged code; each test failed there):
 * - a 0.5 MB IDX `.gz` declaring 700,000 images of 28×28 (549 MB inflated; the reader's float
 *   copy adds 2.2 GB): the reader process ran past the test's 20 s and was killed; one
 *   declaring 10 images but holding 256 MiB was inflated whole, then "268427600 unexpected
 *   trailing bytes after IDX data of dimensions [10, 28, 28]";
 * - a 0.3 MB CSV `.gz` of 256 MiB of rows: gunzipSync and csv-parse took it all (killed at 20 s);
 * - nine 16376² 1-bit PNGs of 32 KB each (268M pixels decoded each, 8 at a time): killed at 20 s;
 *   with `resize` libvips shrank them while decoding and the folder was accepted ({ ok: true, n: 9 });
 * - a consortium file nested 100,000 deep: "RangeError: Maximum call stack size exceeded";
 * - SiloHttp read a 256 MiB answer to a model of d = 1000 whole (no AnswerRefusedError existed),
 *   followed a 302 to another port that received the request with fresh `x-fedscore-*` headers,
 *   was still waiting on a server dripping a byte every 400 ms after 3 s (its only bound: 120 s
 *   per attempt, 8 attempts), and getJson threw a bare SyntaxError on a malformed answer;
 * - the Python client was still reading the 256 MiB answer when killed at 8 s, followed the
 *   redirect ({ ok: true }, the other port got the signed request), was still reading the drip
 *   at 8 s, and raised an uncaught "RecursionError: maximum recursion depth exceeded while
 *   decoding a JSON array from a unicode string" on a 200,000-deep answer.
 * What each printed is in the assertions' comments. Now each is one clear error naming the file,
 * field or endpoint and the limit, and every reader's peak RSS (its own process) stays < 512 MiB.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnswerRefusedError, SiloHttp, UnreachableError } from '../../src/client/http.js';
import { readImageFolder } from '../../src/data/image-folder.js';
import { MAX_JSON_DEPTH } from '../../src/schema/json-depth.js';
import { PYTHON_CLIENT_DIR, pythonProblem } from '../clients/_python.js';
import { gzipBomb, idxHeader, inflatedSize, pngBomb, run } from './_bombs.js';

const MIB = 1024 * 1024;
const PEAK_MIB = 512;
const READER = new URL('./_bounded-reader.ts', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'fedscore-a5-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `reader` on `path` in its own process: its verdict and peak RSS. */
async function readAlone(reader: string, path: string, shape?: number[]) {
  const r = await run(
    process.execPath,
    ['--import', 'tsx', READER, reader, path, ...(shape ? [JSON.stringify(shape)] : [])],
    20_000,
  );
  expect(r.killed, `${reader} ${path} ran past 20 s`).toBe(false);
  const line = r.out.trim().split('\n').pop() ?? '';
  expect(line, r.err).toMatch(/^\{/);
  return JSON.parse(line) as { ok: boolean; message?: string; n?: number; maxRssMb: number };
}

describe('A5: data files that inflate', () => {
  it('an IDX .gz declaring 700,000 images is refused from its header, before it is inflated', async () => {
    const d = join(dir, 'idx-declared');
    mkdirSync(d);
    const n = 700_000;
    const images = gzipBomb(idxHeader([n, 28, 28]), 16 + n * 784);
    writeFileSync(join(d, 'train-images-idx3-ubyte.gz'), images);
    writeFileSync(
      join(d, 'train-labels-idx1-ubyte.gz'),
      gzipSync(Buffer.concat([idxHeader([n]), Buffer.alloc(n)])),
    );
    // The attack's potency: ~1 MB on disk, > 1 GB inflated.
    expect(images.length).toBeLessThan(0.6 * MIB);
    const inflated = await inflatedSize(images);
    expect(inflated / images.length).toBeGreaterThan(900);
    // dc1119c: { ok: true, n: 700000 } (549 MB inflated, 2.2 GB of float features).
    const r = await readAlone('data', d);
    expect(r.ok).toBe(false);
    expect(r.message).toContain('train-images-idx3-ubyte.gz: its IDX header declares 548800016 bytes');
    expect(r.message).toContain('above the limit of 512 MiB of decompressed data (maxBytes)');
    expect(r.maxRssMb).toBeLessThan(PEAK_MIB);
  });

  it('an IDX .gz whose header declares 10 images but which holds 256 MiB stops at the declared size', async () => {
    const d = join(dir, 'idx-lying');
    mkdirSync(d);
    const images = gzipBomb(idxHeader([10, 28, 28]), 256 * MIB);
    writeFileSync(join(d, 'train-images-idx3-ubyte.gz'), images);
    writeFileSync(
      join(d, 'train-labels-idx1-ubyte.gz'),
      gzipSync(Buffer.concat([idxHeader([10]), Buffer.alloc(10)])),
    );
    expect((await inflatedSize(images)) / images.length).toBeGreaterThan(900);
    // dc1119c: refused only after inflating all 256 MiB ("… unexpected trailing bytes").
    const r = await readAlone('data', d);
    expect(r.ok).toBe(false);
    expect(r.message).toContain('gzip data decompress to more than the 7856 bytes its IDX header declares');
    expect(r.maxRssMb).toBeLessThan(PEAK_MIB);
  });

  it('a CSV .gz of 256 MiB of text stops at the 128 MiB cap', async () => {
    const rows = Buffer.from('0,0\n'.repeat(4 * MIB)); // 16 MiB of rows
    const gz = gzipBomb(Buffer.from('x,label\n'), 256 * MIB, rows);
    const path = join(dir, 'bomb.csv.gz');
    writeFileSync(path, gz);
    expect(gz.length).toBeLessThan(0.5 * MIB);
    expect((await inflatedSize(gz)) / gz.length).toBeGreaterThan(700);
    // dc1119c: gunzipSync inflated all 256 MiB, then csv-parse took it (killed at 20 s).
    const r = await readAlone('data', path, [1, 1, 1]);
    expect(r.ok).toBe(false);
    expect(r.message).toContain(
      'bomb.csv.gz: gzip data decompress to more than the limit of 128 MiB of CSV text (maxBytes)',
    );
    expect(r.maxRssMb).toBeLessThan(PEAK_MIB);
  });

  it('nine 16376² PNGs of 32 KB are refused from their headers, resized or not, before any decode', async () => {
    const d = join(dir, 'png');
    mkdirSync(join(d, '0'), { recursive: true });
    const png = pngBomb(16376);
    for (let k = 0; k < 9; k++) writeFileSync(join(d, '0', `img${k}.png`), png);
    // The attack's potency: each 32 KB file decodes to 268 MB (sharp's own limit is 16383²).
    const meta = await sharp(png).metadata();
    expect(png.length).toBeLessThan(40 * 1024);
    expect((meta.width! * meta.height!) / png.length).toBeGreaterThan(8000);
    // dc1119c: 8 decodes in flight, each 268 MB (recorded: 3.0 GB for the PNGs).
    const r = await readAlone('data', d);
    expect(r.ok).toBe(false);
    const refused =
      'img0.png: image is 16376×16376 = 268173376 pixels, above the limit of 16777216 (maxPixels, 4096²); refused before decoding';
    expect(r.message).toContain(refused);
    expect(r.maxRssMb).toBeLessThan(PEAK_MIB);
    // Without resize, the same refusal (the size check would come second).
    await expect(readImageFolder(d, { inputShape: [28, 28, 1], numClasses: 10 })).rejects.toThrow(refused);
  });

  it('a consortium file nested 100,000 deep is refused naming the file and the depth limit', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const hex = (c: string) => c.repeat(64);
    const text = `{"format":"fedscore-consortium","version":1,"id":"c1","participants":[{"publicKey":"${hex('a')}"},{"publicKey":"${hex('b')}"}],"threshold":2,"corruptSilos":0,"weakThreshold":false,"parameters":10,"data":{"inputShape":[1,4,1],"numClasses":3},"model":{"kind":"mlp","topologyDigest":"${hex('0')}","initialWeightsDigest":"${hex('1')}"},"testSetDigest":"${hex('2')}","schemes":["ee"],"convention":"x","emptyCoalition":"initialModel","utility":{"name":"accuracy"},"encoding":{"clip":1,"weightRange":1,"minWeight":0},"weights":{"kind":"equal","scale":1},"strategy":{"name":"fedavg","parameters":{"deep":${deep}}},"seed":1,"rounds":1}`;
    const path = join(dir, 'deep-consortium.json');
    writeFileSync(path, text);
    // dc1119c: "RangeError: Maximum call stack size exceeded" (canonicalJson).
    const r = await readAlone('consortium', path);
    expect(r.ok).toBe(false);
    expect(r.message).toBe(
      `ConsortiumFileError: ${path}: nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects (the consortium file's depth limit); refused before reading it`,
    );
    expect(r.maxRssMb).toBeLessThan(PEAK_MIB);
  });
});

/** A hostile service: each consortium id is one behaviour; `seen` records who asked what. */
function hostile() {
  const seen: { port: number; path: string; signed: boolean }[] = [];
  const sent = { bytes: 0 };
  let other = 0;
  const handler = (port: () => number) =>
    createServer((req, res) => {
      const path = req.url ?? '';
      seen.push({ port: port(), path, signed: typeof req.headers['x-fedscore-signature'] === 'string' });
      const kind = /^\/v1\/consortia\/([^/]+)/.exec(path)?.[1];
      const stop: (() => void)[] = [];
      res.on('close', () => {
        for (const f of stop) f();
      });
      if (port() === other) return void res.end('{}');
      if (kind === 'big') {
        // 256 MiB of zeros, chunked: for a model of d = 1000 (4000 bytes) or a JSON answer.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(MIB);
        let left = 256;
        const pump = () => {
          while (left > 0) {
            left--;
            sent.bytes += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
      } else if (kind === 'redirect') {
        res.writeHead(302, { location: `http://127.0.0.1:${other}${path}` });
        res.end();
      } else if (kind === 'drip') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const t = setInterval(() => res.write(' '), 400);
        stop.push(() => clearInterval(t));
      } else if (kind === 'deep') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`${'['.repeat(200_000)}${']'.repeat(200_000)}`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id": "malformed"');
      }
    });
  let main: Server;
  let second: Server;
  let mainPort = 0;
  return {
    seen,
    sent,
    async start() {
      main = handler(() => mainPort);
      second = handler(() => other);
      await new Promise<void>((r) => main.listen(0, '127.0.0.1', r));
      await new Promise<void>((r) => second.listen(0, '127.0.0.1', r));
      mainPort = (main.address() as AddressInfo).port;
      other = (second.address() as AddressInfo).port;
      return `http://127.0.0.1:${mainPort}`;
    },
    otherPort: () => other,
    async stop() {
      main.closeAllConnections();
      second.closeAllConnections();
      await new Promise((r) => main.close(r));
      await new Promise((r) => second.close(r));
    },
  };
}

describe('A5: answers of a hostile service', () => {
  const h = hostile();
  let server = '';
  beforeAll(async () => {
    server = await h.start();
  });
  afterAll(() => h.stop());

  const client = (consortium: string, extra: object = {}) =>
    new SiloHttp({
      server,
      consortium,
      silo: 0,
      secretKey: new Uint8Array(32).fill(7),
      retry: { attempts: 1 },
      ...extra,
    });

  it('a 256 MiB answer to a model of d = 1000 is refused past 4·d bytes', async () => {
    const before = process.memoryUsage().arrayBuffers;
    // dc1119c: returned all 268435456 bytes.
    const got = await client('big', { parameters: 1000 })
      .send('GET', '/v1/consortia/big/models/0')
      .then((a) => `read ${a.bytes.length} bytes`)
      .catch((e: Error) => e);
    expect(got).toBeInstanceOf(AnswerRefusedError);
    expect((got as AnswerRefusedError).code).toBe('FEDSCORE_CLIENT_ANSWER_TOO_LARGE');
    expect((got as Error).message).toContain(
      'GET /v1/consortia/big/models/0: answer refused (FEDSCORE_CLIENT_ANSWER_TOO_LARGE): HTTP 200 body of more than 4000 bytes, above the 4000 bytes this endpoint can hold',
    );
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * MIB);
    // JSON answers have their own cap (16 MiB by default, here 1 MiB).
    const json = await client('big', { limits: { maxJsonBytes: MIB } })
      .getJson('/v1/consortia/big')
      .catch((e: Error) => e);
    expect((json as AnswerRefusedError).code).toBe('FEDSCORE_CLIENT_ANSWER_TOO_LARGE');
  });

  it('a redirect to another port is refused, not followed with a fresh signature', async () => {
    h.seen.length = 0;
    // dc1119c: followed; the other port received GET /v1/consortia/redirect signed.
    const got = await client('redirect')
      .getJson('/v1/consortia/redirect')
      .catch((e: Error) => e);
    expect(h.seen.filter((s) => s.port === h.otherPort())).toEqual([]);
    expect(got).toBeInstanceOf(AnswerRefusedError);
    expect((got as AnswerRefusedError).code).toBe('FEDSCORE_CLIENT_REDIRECT_REFUSED');
    expect((got as Error).message).toContain(
      `GET /v1/consortia/redirect: answer refused (FEDSCORE_CLIENT_REDIRECT_REFUSED): HTTP 302 redirect to "http://127.0.0.1:${h.otherPort()}/v1/consortia/redirect" not followed`,
    );
  });

  it('a server dripping a byte every 400 ms is dropped at the idle timeout', async () => {
    const t0 = performance.now();
    // dc1119c: still waiting after 3 s (its only bound: 120 s per attempt, 8 attempts).
    const got = await Promise.race([
      client('drip', { limits: { idleTimeoutMs: 200 } })
        .getJson('/v1/consortia/drip')
        .catch((e: Error) => e),
      new Promise((r) => setTimeout(() => r('still waiting after 3 s'), 3000)),
    ]);
    expect(got).toBeInstanceOf(UnreachableError);
    expect((got as Error).message).toBe(
      'GET /v1/consortia/drip: no answer after 1 attempt(s) (reading the answer: no data for 200 ms while reading the answer (idle timeout))',
    );
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('deep or malformed JSON is one clear error naming the request', async () => {
    const deep = await client('deep')
      .getJson('/v1/consortia/deep')
      .catch((e: Error) => e);
    expect(deep).toBeInstanceOf(AnswerRefusedError);
    expect((deep as Error).message).toBe(
      `GET /v1/consortia/deep: answer refused (FEDSCORE_CLIENT_JSON_TOO_DEEP): JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
    // dc1119c: SyntaxError: Expected ',' or '}' after property value in JSON at position 18
    const bad = await client('malformed')
      .getJson('/v1/consortia/malformed')
      .catch((e: Error) => e);
    expect(bad).toBeInstanceOf(AnswerRefusedError);
    expect((bad as Error).message).toMatch(
      /^GET \/v1\/consortia\/malformed: answer refused \(FEDSCORE_CLIENT_MALFORMED_JSON\): not JSON/,
    );
  });
});

/** The Python client (clients/python/) in a python3 process per case: its outcome and peak RSS (VmHWM). */
const PY_CASE = `
import json, re, resource, sys
sys.path.insert(0, ${JSON.stringify(PYTHON_CLIENT_DIR)})
import fedscore_client as f
case = sys.argv[1]
key = f.SiloKey(bytes(32))
try:
    c = f.SiloClient(sys.argv[2], case, 0, key, timeout=5.0, deadline=1.0 if case == 'drip' else 30.0)
except TypeError:
    c = f.SiloClient(sys.argv[2], case, 0, key, timeout=5.0)
try:
    out = c.consortium_config()
    res = {"ok": True, "what": type(out).__name__}
except f.FedscoreError as e:
    res = {"ok": False, "type": type(e).__name__, "code": e.code, "message": str(e)}
except RecursionError as e:
    res = {"ok": False, "type": "RecursionError", "message": str(e)}
try:
    res["maxRssMb"] = int(re.search(r"^VmHWM:\\s+(\\d+) kB$", open("/proc/self/status").read(), re.M).group(1)) / 1024
except (OSError, AttributeError):
    res["maxRssMb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(res))
`;

const problem = pythonProblem();
describe.skipIf(problem !== undefined)('A5: answers of a hostile service to the Python client', () => {
  const h = hostile();
  let server = '';
  beforeAll(async () => {
    server = await h.start();
  });
  afterAll(() => h.stop());

  const py = async (kind: string) => {
    const r = await run('python3', ['-c', PY_CASE, kind, server], 8000);
    expect(r.killed, `python3 on '${kind}' still running at 8 s`).toBe(false);
    const line = r.out.trim().split('\n').pop() ?? '';
    expect(line, r.err.slice(-500)).toMatch(/^\{/);
    return JSON.parse(line) as {
      ok: boolean;
      code?: string;
      type?: string;
      message: string;
      maxRssMb: number;
    };
  };

  it('a 256 MiB answer is refused past max_bytes (16 MiB)', async () => {
    // dc1119c: killed at 8 s, still reading the 256 MiB into memory.
    const big = await py('big');
    expect(big).toMatchObject({
      ok: false,
      type: 'AnswerRefusedError',
      code: 'FEDSCORE_CLIENT_ANSWER_TOO_LARGE',
    });
    expect(big.message).toContain('GET /v1/consortia/big: body of more than 16777216 bytes');
    expect(big.maxRssMb).toBeLessThan(PEAK_MIB);
  });

  it('a redirect to another port is refused, not followed with the signed headers', async () => {
    h.seen.length = 0;
    // dc1119c: followed (the other port got the signed request), { ok: true }.
    const redirect = await py('redirect');
    expect(h.seen.filter((s) => s.port === h.otherPort())).toEqual([]);
    expect(redirect).toMatchObject({ ok: false, code: 'FEDSCORE_CLIENT_REDIRECT_REFUSED' });
    expect(redirect.message).toContain(
      `redirect to 'http://127.0.0.1:${h.otherPort()}/v1/consortia/redirect' not followed`,
    );
  });

  it('a server dripping a byte every 400 ms is dropped at the deadline', async () => {
    // dc1119c: killed at 8 s, still reading the drip.
    const drip = await py('drip');
    expect(drip).toMatchObject({ ok: false, code: 'FEDSCORE_CLIENT_ANSWER_TIMEOUT' });
    expect(drip.message).toContain('GET /v1/consortia/drip: the answer took longer than 1.0 s (deadline)');
  });

  it('a 200,000-deep answer is one clear error, not a RecursionError', async () => {
    // dc1119c: RecursionError: maximum recursion depth exceeded while decoding a JSON array …
    const deep = await py('deep');
    expect(deep).toMatchObject({ ok: false, code: 'FEDSCORE_CLIENT_JSON_TOO_DEEP' });
    expect(deep.message).toContain(
      `GET /v1/consortia/deep: JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
  });
});
