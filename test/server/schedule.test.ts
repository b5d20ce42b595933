/**
 * The operator's schedule (src/server/service/schedule.ts): with `rounds: R` the service opens
 * round 1 once the initial model is set and round r + 1 once round r is over (scored, or aborted
 * when its stage deadline passes without enough silos), in order, and stops at R; a restarted
 * service resumes from the store; two replicas on one database never open a round twice; the log
 * has one line per round opened and per round ended.
 */
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { signedReport } from '../../src/consortium/private-scoring.js';
import type { StoreLocation } from '../../src/server/store/database.js';
import {
  adminInject,
  Clock,
  consortiumBody,
  f32bytes,
  type Harness,
  harness,
  INITIAL,
  Silo,
  STEPS,
  siloInject,
  tempSqlite,
} from './_harness.js';

/** A pino destination collecting the log's messages. */
function logSink(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push((JSON.parse(l) as { msg: string }).msg);
      done();
    },
  });
  return { lines, stream };
}

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

async function service(o: { location?: StoreLocation; clock?: Clock; log?: Writable } = {}) {
  const h = await harness({
    ...(o.location ? { location: o.location } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
    app: {
      scheduleIntervalMs: false,
      ...(o.log ? { logger: { level: 'info', stream: o.log } } : {}),
    },
  });
  open.push(h);
  return h;
}

const rounds = async (h: Harness) =>
  (await adminInject(h, 'GET', '/v1/consortia/c1/rounds')).json().rounds as {
    round: number;
    stage: string;
  }[];

/** Lets every log line of an event be written (they are written once the consortium is read). */
const settle = () => new Promise((r) => setTimeout(r, 20));

async function create(h: Harness, R: number, o: { model?: boolean } = {}) {
  const c = await adminInject(h, 'POST', '/v1/consortia', { ...consortiumBody(h.keys), rounds: R });
  expect(c.statusCode, c.body).toBe(201);
  expect(c.json().rounds).toBe(R);
  if (o.model !== false)
    expect((await adminInject(h, 'PUT', '/v1/consortia/c1/model', f32bytes(INITIAL))).statusCode).toBe(204);
}

/** Runs round `r` with silos 0–3 to its scores (the harness's evaluator gives the utilities). */
async function scoreRound(h: Harness, r: number) {
  const silos = [0, 1, 2, 3].map((i) => new Silo(h, 'c1', r, i, 3));
  for (const s of silos) await s.start();
  for (const k of STEPS) for (const s of silos) await s.step(k);
  for (const s of silos) {
    const report = signedReport('c1', r, s.id, -0.2 - 0.01 * s.id, -0.1 - 0.02 * s.id, h.keys[s.id]!);
    const res = await siloInject(h, s.id, 'POST', `/v1/consortia/c1/rounds/${r}/reports`, report);
    expect(res.statusCode, res.body).toBe(201);
  }
}

describe('the schedule', () => {
  test('waits for the initial model, then opens round 1', async () => {
    const h = await service();
    await create(h, 2, { model: false });
    await h.app.service.runSchedule();
    expect(await rounds(h)).toEqual([]);
    await adminInject(h, 'PUT', '/v1/consortia/c1/model', f32bytes(INITIAL));
    await h.app.service.runSchedule();
    await h.app.service.runSchedule();
    expect((await rounds(h)).map((r) => [r.round, r.stage])).toEqual([[1, 'advertise']]);
  });

  test('opens the next round when one is scored, in order, and stops at R; one log line each', async () => {
    const log = logSink();
    const h = await service({ log: log.stream });
    await create(h, 2);
    await h.app.service.runSchedule();
    await scoreRound(h, 1);
    // Not before round 1 is over: a pass while it ran opened nothing.
    expect((await rounds(h)).map((r) => [r.round, r.stage])).toEqual([[1, 'scored']]);
    await h.app.service.runSchedule();
    await scoreRound(h, 2);
    for (let k = 0; k < 3; k++) await h.app.service.runSchedule();
    expect((await rounds(h)).map((r) => [r.round, r.stage])).toEqual([
      [1, 'scored'],
      [2, 'scored'],
    ]);
    await settle();
    const schedule = log.lines.filter((l) => /round \d+ of 2 (opened|scored|closed|aborted)/.test(l));
    expect(schedule.map((l) => /round \d+ of 2 \w+/.exec(l)![0])).toEqual([
      'round 1 of 2 opened',
      'round 1 of 2 scored',
      'round 2 of 2 opened',
      'round 2 of 2 scored',
    ]);
  });

  test('rounds open past the schedule is refused with the schedule named, and nothing opens', async () => {
    const h = await service();
    await create(h, 1);
    await h.app.service.runSchedule();
    await scoreRound(h, 1);
    const res = await adminInject(h, 'POST', '/v1/consortia/c1/rounds');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      code: 'FEDSCORE_ERR_SCHEDULE_DONE',
      message:
        "the consortium's schedule of rounds is over: the schedule of c1 is 1 round and round 1 was its last; register a new consortium for more rounds",
    });
    expect((await rounds(h)).map((r) => [r.round, r.stage])).toEqual([[1, 'scored']]);
  });

  test('a round no silo joins aborts at its deadline, and the next one opens (it counts as one of R)', async () => {
    const log = logSink();
    const h = await service({ log: log.stream });
    await create(h, 2);
    await h.app.service.runSchedule();
    h.clock.advance(60_001); // the advertise deadline (default 60 s): no silo came
    await h.app.service.runSchedule();
    expect((await rounds(h)).map((r) => [r.round, r.stage])).toEqual([
      [1, 'aborted'],
      [2, 'advertise'],
    ]);
    h.clock.advance(60_001);
    await h.app.service.runSchedule();
    await h.app.service.runSchedule();
    expect((await rounds(h)).map((r) => [r.round, r.stage])).toEqual([
      [1, 'aborted'],
      [2, 'aborted'],
    ]);
    await settle();
    expect(log.lines.filter((l) => l.includes('round 1 of 2 aborted'))).toHaveLength(1);
    expect(log.lines.find((l) => l.includes('round 1 of 2 aborted'))).toContain('BELOW_THRESHOLD');
  });

  test('a restarted service resumes from the store', async () => {
    const { location, dir } = tempSqlite();
    const clock = new Clock();
    const a = await service({ location, clock });
    await create(a, 3);
    await a.app.service.runSchedule();
    await scoreRound(a, 1);
    await a.close();
    open.splice(open.indexOf(a), 1);
    const b = await service({ location, clock });
    await b.app.service.runSchedule();
    expect((await rounds(b)).map((r) => [r.round, r.stage])).toEqual([
      [1, 'scored'],
      [2, 'advertise'],
    ]);
    // A round that was running when the service stopped goes on after the restart, too.
    await b.close();
    open.splice(open.indexOf(b), 1);
    const c = await service({ location, clock });
    await scoreRound(c, 2);
    await c.app.service.runSchedule();
    expect((await rounds(c)).map((r) => r.round)).toEqual([1, 2, 3]);
    await import('node:fs').then((fs) => fs.rmSync(dir, { recursive: true, force: true }));
  });
});

const url = process.env.DATABASE_URL;
describe.skipIf(!url)('two replicas on one PostgreSQL database', () => {
  const admin = new pg.Client({ connectionString: url });
  const created: string[] = [];
  afterAll(async () => {
    // pg's pool.end() resolves before every backend has seen its client go: let them go first.
    await new Promise((r) => setTimeout(r, 300));
    for (const db of created) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
  });

  test('passes racing on both never open a round twice', async () => {
    await admin.connect();
    const name = `fedscore_sched_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await admin.query(`CREATE DATABASE ${name}`);
    created.push(name);
    const u = new URL(url!);
    u.pathname = `/${name}`;
    const location = { postgres: u.toString() };
    const clock = new Clock();
    const logA = logSink();
    const logB = logSink();
    const a = await service({ location, clock, log: logA.stream });
    const b = await service({ location, clock, log: logB.stream });
    await create(a, 3);
    for (let k = 0; k < 5; k++) await Promise.all([a.app.service.runSchedule(), b.app.service.runSchedule()]);
    expect((await rounds(a)).map((r) => r.round)).toEqual([1]);
    for (let r = 1; r <= 3; r++) {
      clock.advance(60_001); // each round aborts at its advertise deadline; both replicas race on
      for (let k = 0; k < 3; k++)
        await Promise.all([a.app.service.runSchedule(), b.app.service.runSchedule()]);
    }
    expect((await rounds(b)).map((r) => [r.round, r.stage])).toEqual([
      [1, 'aborted'],
      [2, 'aborted'],
      [3, 'aborted'],
    ]);
    await settle();
    const opened = [...logA.lines, ...logB.lines].filter((l) => / of 3 opened/.test(l));
    expect(opened.map((l) => /round \d/.exec(l)![0]).sort()).toEqual(['round 1', 'round 2', 'round 3']);
    // Closed before the database is dropped (afterAll), so no pooled connection is cut mid-use.
    for (const h of open.splice(0)) await h.close();
  });
});
