/**
 * The signing test vectors of docs/signing.md (test/vectors/signing/signing.json): the committed
 * file is what scripts/gen-signing-vectors.ts generates from the TypeScript implementation (so it
 * cannot drift from the code); the vectors verify under the service's own checks (auth.ts,
 * protocol/score-report.ts) and follow the byte layout the page documents, rebuilt here by hand;
 * and the Python client (clients/python/test_vectors.py) reproduces every byte.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { verify } from '../../crypto/signature.js';
import { verifyScoreReport } from '../../protocol/score-report.js';
import { renderSigningVectors, SIGNING_VECTORS_PATH } from '../../scripts/gen-signing-vectors.js';
import { parseAuthHeaders, verifyRequest } from '../../src/server/auth.js';
import { PYTHON_CLIENT_DIR, pythonProblem } from './_python.js';

const committed = readFileSync(SIGNING_VECTORS_PATH, 'utf8');
const v = JSON.parse(committed);
const bytes = (hex: string) => new Uint8Array(Buffer.from(hex, 'hex'));
const publicKey = bytes(v.key.publicKeyHex);

describe('test/vectors/signing/signing.json', () => {
  it('is what scripts/gen-signing-vectors.ts generates', () => {
    const fresh = renderSigningVectors();
    if (committed !== fresh) {
      const a = committed.split('\n');
      const b = fresh.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      expect.fail(
        `signing.json is stale: run npx tsx scripts/gen-signing-vectors.ts (first difference at line ${line + 1}:\n  committed: ${a[line] ?? '(end)'}\n  generated: ${b[line] ?? '(end)'})`,
      );
    }
  });

  it('requests: the documented canonical bytes, and the service verifies the headers', () => {
    expect(v.requests.length).toBeGreaterThanOrEqual(3);
    for (const r of v.requests) {
      const digest = createHash('sha256').update(Buffer.from(r.bodyHex, 'hex')).digest('hex');
      expect(r.bodySha256).toBe(digest);
      const text = [
        'fedscore/http-request/v1',
        r.method,
        r.path,
        String(r.silo),
        String(r.timestamp),
        r.nonce,
        digest,
      ].join('\n');
      expect(r.signedText).toBe(text);
      expect(r.signedBytesHex).toBe(Buffer.from(text, 'utf8').toString('hex'));
      expect(verify(publicKey, bytes(r.signedBytesHex), bytes(r.headers['x-fedscore-signature']))).toBe(true);
      const parsed = parseAuthHeaders(r.headers);
      if (!parsed.ok) throw new Error(parsed.detail);
      const signed = {
        method: r.method,
        path: r.path,
        silo: parsed.silo,
        timestamp: parsed.timestamp,
        nonce: parsed.nonce,
      };
      expect(verifyRequest(publicKey, { ...signed, bodyDigest: parsed.digest! }, parsed.signature)).toBe(
        true,
      );
      for (const moved of [
        { ...signed, path: `${r.path}x` },
        { ...signed, silo: parsed.silo + 1 },
        { ...signed, timestamp: parsed.timestamp + 1 },
        { ...signed, method: r.method === 'GET' ? 'POST' : 'GET' },
      ])
        expect(verifyRequest(publicKey, { ...moved, bodyDigest: parsed.digest! }, parsed.signature)).toBe(
          false,
        );
      expect(verifyRequest(publicKey, { ...signed, bodyDigest: 'f'.repeat(64) }, parsed.signature)).toBe(
        false,
      );
    }
  });

  it('reports: the documented byte layout, and the service verifies them', () => {
    expect(v.reports.length).toBeGreaterThanOrEqual(3);
    for (const r of v.reports) {
      const session = Buffer.from(r.session, 'utf8');
      const classes = r.perClassSingleton?.length ?? 0;
      const head = Buffer.alloc(3 + 1 + 1 + session.length + 4 + 1 + 8 + 8 + 4);
      head.write('FSR', 0, 'latin1');
      head[3] = 1;
      head[4] = session.length;
      session.copy(head, 5);
      let o = 5 + session.length;
      head.writeUInt32BE(r.round, o);
      head[o + 4] = r.silo;
      head.writeDoubleBE(r.singleton, o + 5);
      head.writeDoubleBE(r.complement, o + 13);
      head.writeUInt32BE(classes, o + 21);
      o += 25;
      const tail = Buffer.alloc(16 * classes);
      [...(r.perClassSingleton ?? []), ...(r.perClassComplement ?? [])].forEach((x: number, k: number) => {
        tail.writeDoubleBE(x, 8 * k);
      });
      const body = Buffer.concat([head, tail]);
      expect(r.bodyHex).toBe(body.toString('hex'));
      const message = Buffer.concat([Buffer.from('fedscore/score-report/v1', 'utf8'), body]);
      expect(r.signedMessageHex).toBe(message.toString('hex'));
      expect(r.reportHex).toBe(body.toString('hex') + r.signatureHex);
      expect(verify(publicKey, new Uint8Array(message), bytes(r.signatureHex))).toBe(true);
      const report = verifyScoreReport(bytes(r.reportHex), {
        session: r.session,
        round: r.round,
        roster: Object.assign([], { [r.silo]: publicKey }),
      });
      expect([report.silo, report.singleton, report.complement]).toEqual([r.silo, r.singleton, r.complement]);
      const tampered = bytes(r.reportHex);
      tampered[body.length - 1]! ^= 1;
      expect(() =>
        verifyScoreReport(tampered, {
          session: r.session,
          round: r.round,
          roster: Object.assign([], { [r.silo]: publicKey }),
        }),
      ).toThrow();
    }
  });

  const problem = pythonProblem();
  if (problem) console.warn(`signing-vectors.test.ts: the Python check is skipped — ${problem}`);
  it.skipIf(problem !== undefined)(
    'the Python client reproduces every vector (clients/python/test_vectors.py)',
    () => {
      const r = spawnSync('python3', [`${PYTHON_CLIENT_DIR}test_vectors.py`, SIGNING_VECTORS_PATH], {
        encoding: 'utf8',
      });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^ok: \d+ checks$/m);
      expect(r.stdout.match(/^(request|report) ok:/gm)?.length).toBe(v.requests.length + v.reports.length);
    },
  );
});
