/**
 * The operator's log (src/server/round-log.ts, src/server/app.ts): one info line per round opened,
 * stage closed and round scored, naming the silos that were late; requests only at debug level.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, test } from 'vitest';
import { signedReport } from '../../src/consortium/private-scoring.js';
import { roundLogLine } from '../../src/server/round-log.js';
import { adminInject, createConsortium, type Harness, harness, Silo, STEPS, siloInject } from './_harness.js';

interface LogLine {
  level: number;
  msg: string;
  late?: number[];
}

/** A pino destination keeping every JSON line, parsed. */
function logSink(): { lines: LogLine[]; stream: Writable } {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as LogLine);
      done();
    },
  });
  return { lines, stream };
}

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

/**
 * Round 1 of a 4-silo consortium (t = 3): silo 3 vanishes after ShareKeys (late at mask), silo 2
 * does not report (late at reporting); the stages it misses close at their deadlines.
 */
async function runRound(level: string): Promise<LogLine[]> {
  const log = logSink();
  const h = await harness({ app: { scheduleIntervalMs: false, logger: { level, stream: log.stream } } });
  open.push(h);
  await createConsortium(h);
  expect((await adminInject(h, 'POST', '/v1/consortia/c1/rounds')).statusCode).toBe(201);
  const silos = [0, 1, 2, 3].map((i) => new Silo(h, 'c1', 1, i, 3));
  for (const s of silos) await s.start();
  for (let k = 0; k < STEPS.length; k++) {
    const stage = (await adminInject(h, 'GET', '/v1/consortia/c1/rounds/1')).json().stage;
    if (stage !== ['share', 'mask', 'consistency', 'unmask'][k]) h.clock.advance(10 * 60_000);
    for (const s of silos) if (s.id !== 3 || k === 0) await s.step(STEPS[k]!);
  }
  for (const i of [0, 1]) {
    const r = signedReport('c1', 1, i, -0.2 - 0.01 * i, -0.1 - 0.02 * i, h.keys[i]!);
    expect((await siloInject(h, i, 'POST', '/v1/consortia/c1/rounds/1/reports', r)).statusCode).toBe(201);
  }
  h.clock.advance(60 * 60_000);
  expect((await adminInject(h, 'GET', '/v1/consortia/c1/rounds/1')).json().stage).toBe('scored');
  await new Promise((r) => setTimeout(r, 50)); // round lines are written once the consortium is read
  return log.lines;
}

describe('the operator log', () => {
  test('info: a line per round opened, stage closed (with who was late) and round scored; no request lines', async () => {
    const lines = await runRound('info');
    expect(lines.every((l) => l.level >= 30)).toBe(true);
    expect(lines.map((l) => l.msg)).toEqual([
      'consortium c1: round 1 opened (every silo)',
      'consortium c1: round 1: advertise closed, 4 of 4 silos went on; none late',
      'consortium c1: round 1: share closed, 4 of 4 silos went on; none late',
      'consortium c1: round 1: mask closed, 3 of 4 silos went on; late: silo 3',
      'consortium c1: round 1: consistency closed, 3 of 3 silos went on; none late',
      'consortium c1: round 1: unmask closed, 3 of 3 silos went on; none late',
      'consortium c1: round 1 scored: 2 of 3 silos reported; late: silo 2',
    ]);
    expect(lines[3]!.late).toEqual([3]);
    expect(lines[6]!.late).toEqual([2]);
  });

  test('debug: every request gets one line (method, path, status, time)', async () => {
    const lines = await runRound('debug');
    const requests = lines.filter((l) => /^(GET|POST|PUT) \/v1\//.test(l.msg));
    // 4 advertise, 4 ShareKeys, 3 × 3 later messages and as many inbox reads, 2 reports, …
    expect(requests.length).toBeGreaterThan(30);
    expect(requests.every((l) => l.level === 20)).toBe(true);
    expect(requests.some((l) => /^POST \/v1\/consortia\/c1\/rounds 201 \d+ ms$/.test(l.msg))).toBe(true);
    expect(lines.filter((l) => /: mask closed/.test(l.msg))).toHaveLength(1);
  });
});

describe('roundLogLine', () => {
  const c = { participants: [{ publicKey: 'a' }, { publicKey: 'b' }, { publicKey: 'c' }], rounds: 5 };
  test('a selection: the first stage waited for the selected silos only', () => {
    const e = {
      consortium: 'h',
      round: 2,
      event: 'share' as const,
      detail: '',
      progress: { closed: 'advertise', waited: [0, 2], went: [0] },
    };
    expect(roundLogLine(e, c)).toEqual({
      level: 'info',
      message: 'consortium h: round 2 of 5: advertise closed, 1 of 2 silos went on; late: silo 2',
      fields: { consortium: 'h', round: 2, event: 'share', late: [2] },
    });
    expect(
      roundLogLine({ ...e, progress: { closed: 'advertise', waited: null, went: [1] } }, c).message,
    ).toBe('consortium h: round 2 of 5: advertise closed, 1 of 3 silos went on; late: silos 0, 2');
  });

  test('a round aborted or closed early is a warning with its reason', () => {
    expect(
      roundLogLine(
        { consortium: 'h', round: 1, event: 'aborted', detail: 'FEDSCORE_ERR_X: y' },
        { participants: [] },
      ),
    ).toEqual({
      level: 'warn',
      message: 'consortium h: round 1 aborted (FEDSCORE_ERR_X: y)',
      fields: { consortium: 'h', round: 1, event: 'aborted' },
    });
  });
});
