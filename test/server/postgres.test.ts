/**
 * The service over a real PostgreSQL server: a whole round, two app instances sharing one
 * database (with concurrent requests), and kill -9 of a child process mid-round.
 *
 * Uses DATABASE_URL when set (CI: `source scripts/ci-postgres.sh`); otherwise, when Debian's
 * PostgreSQL binaries are installed, starts a private server through that script. Without either
 * the suite is skipped (and says so). Each test gets a fresh database.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signedReport } from '../../src/consortium/private-scoring.js';
import {
  adminInject,
  Clock,
  createConsortium,
  evaluate,
  harness,
  runChildUntilMidShare,
  Silo,
  STEPS,
  siloInject,
} from './_harness.js';

function serverUrl(): string | undefined {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const installed = existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').length > 0;
  if (!installed) return undefined;
  const script = new URL('../../scripts/ci-postgres.sh', import.meta.url).pathname;
  const out = execFileSync('bash', [script], { encoding: 'utf8' });
  return /DATABASE_URL=(\S+)/.exec(out)?.[1];
}

const url = serverUrl();
if (!url) console.warn('postgres.test.ts: skipped — no DATABASE_URL and no PostgreSQL installed');

describe.skipIf(!url)('the service over PostgreSQL', () => {
  const admin = new pg.Client({ connectionString: url });
  const created: string[] = [];
  beforeAll(async () => admin.connect());
  afterAll(async () => {
    for (const db of created) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
  });
  /** A fresh database on the server. */
  async function freshDatabase(): Promise<{ postgres: string }> {
    const name = `fedscore_test_${process.pid}_${created.length}_${Math.random().toString(36).slice(2, 8)}`;
    await admin.query(`CREATE DATABASE ${name}`);
    created.push(name);
    const u = new URL(url!);
    u.pathname = `/${name}`;
    return { postgres: u.toString() };
  }

  test('a whole round with two app instances sharing the database, messages sent concurrently', async () => {
    const location = await freshDatabase();
    const clock = new Clock();
    const a = await harness({ location, clock });
    const b = await harness({ location, clock });
    try {
      await createConsortium(a);
      expect((await adminInject(b, 'POST', '/v1/consortia/c1/rounds')).statusCode).toBe(201);
      // Silos 0 and 2 talk to app a, 1 and 3 to app b; each stage's messages race each other.
      const silos = [0, 1, 2, 3].map((i) => new Silo(i % 2 ? b : a, 'c1', 1, i, 3));
      await Promise.all(silos.map((s) => s.start()));
      for (const k of STEPS) await Promise.all(silos.map((s) => s.step(k)));
      const round = (await adminInject(a, 'GET', '/v1/consortia/c1/rounds/1')).json();
      expect(round).toMatchObject({ stage: 'reporting', survivors: [0, 1, 2, 3] });
      const results = await Promise.all(
        silos.map(async (s) => {
          const r = signedReport('c1', 1, s.id, -0.2 * s.id, -0.1 * s.id, s.h.keys[s.id]!);
          return (await siloInject(s.h, s.id, 'POST', '/v1/consortia/c1/rounds/1/reports', r)).statusCode;
        }),
      );
      expect(results).toEqual([201, 201, 201, 201]);
      const scores = (await adminInject(b, 'GET', '/v1/consortia/c1/rounds/1/scores')).json();
      expect(scores.silos).toEqual([0, 1, 2, 3]);
      // LOO(i) = v(M) − v(M − U_i) with the reported v(M − U_i) = −0.1·i.
      const full = round.utilities.full;
      const m1 = (await adminInject(b, 'GET', '/v1/consortia/c1/models/1')).rawPayload;
      expect(full).toBe(await evaluate({} as never, new Float32Array(new Uint8Array(m1).buffer)));
      expect(scores.schemes.loo).toEqual([0, 1, 2, 3].map((i) => full - -0.1 * i));
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('kill -9 mid-round: a restarted service continues from PostgreSQL', async () => {
    const location = await freshDatabase();
    const clock = new Clock();
    const acked = await runChildUntilMidShare('postgres', location.postgres, clock);
    expect(acked.slice(0, 6)).toContain('acked share 1');
    const b = await harness({ location, clock });
    try {
      const stored = await b.store.db.selectFrom('messages').select(['stage', 'silo']).execute();
      const shares = stored.filter((m) => m.stage === 'share').map((m) => m.silo);
      expect(stored.filter((m) => m.stage === 'advertise').length).toBe(4);
      expect(shares).toEqual(expect.arrayContaining([0, 1]));
      const silos = [0, 1, 2, 3].map((i) => new Silo(b, 'c1', 1, i, 3));
      for (const s of silos) s.replayStart();
      for (const s of silos) {
        if (shares.includes(s.id)) await s.replayStep('keys');
        else await s.step('keys');
      }
      for (const k of STEPS.slice(1)) for (const s of silos) await s.step(k);
      const round = (await adminInject(b, 'GET', '/v1/consortia/c1/rounds/1')).json();
      expect(round).toMatchObject({ stage: 'reporting', survivors: [0, 1, 2, 3] });
    } finally {
      await b.close();
    }
  });
});
