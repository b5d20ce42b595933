/**
 * Issue 23: a silo started before its consortium exists says so while it waits — a heartbeat line
 * naming what it waits for, within 10 s — instead of falling silent. Against a real listening
 * service that has no consortium yet.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import { SiloHttp } from '../../src/client/http.js';
import { runSilo } from '../../src/client/silo.js';
import { buildApp } from '../../src/server/app.js';
import { openStore } from '../../src/server/store/database.js';
import { tempJournal } from './_journal.js';

const dir = mkdtempSync(join(tmpdir(), 'fedscore-heartbeat-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a silo waiting for its consortium', () => {
  it('prints a heartbeat naming what it waits for within 10 s', async () => {
    const store = await openStore({ sqlite: join(dir, 's.db') });
    const app = await buildApp({
      store,
      adminToken: 'heartbeat-admin-token-0123',
      closeStore: true,
      logger: { level: 'silent' },
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const key = signingKeyPairFromSeed(new Uint8Array(32).fill(3));
      const lines: { at: number; line: string }[] = [];
      const t0 = Date.now();
      // It gives up after 7 s (waitTimeoutMs): long enough for a heartbeat (every 5 s), not more.
      const silo = runSilo({
        journal: tempJournal(),
        http: new SiloHttp({ server: url, consortium: 'hospitals', silo: 1, secretKey: key.secretKey }),
        // Not reached: the silo waits for the consortium before it uses its run or model.
        run: undefined as never,
        learner: undefined as never,
        insecureUnpinned: true,
        secretKey: key.secretKey,
        firstRound: 1,
        lastRound: 1,
        log: (line) => lines.push({ at: Date.now() - t0, line }),
        waitTimeoutMs: 7000,
      });
      await expect(silo).rejects.toThrow('timed out after 7000 ms waiting for consortium hospitals to exist');
      const beat = lines.find((l) => l.line === 'silo 1: waiting for consortium hospitals to exist (5 s)');
      expect(beat, JSON.stringify(lines)).toBeDefined();
      expect(beat!.at).toBeLessThan(10_000);
    } finally {
      await app.close();
    }
  }, 30_000);
});
