/**
 * Issue 27, A3 — the audit ran on the request path.
 *
 * The attack: the operator's `GET …/audit` recomputed the manipulation audit (src/audit/manipulation-audit.ts)
 * over every scored round on each call, synchronously on the event loop; its cost grows as about
 * N^3.9 in a round's N silos (EE-median's breakpoint grid per silo and the detector's 2000-step
 * walk per silo). One call on a large consortium stopped the service for every consortium.
 * Against dc1119c the first test below printed
 *   "32 silos × 1 round: audit 10530 ms; the other consortium's read waited 10520 ms;
 *    event loop blocked up to 10479 ms"
 * (each request answered only once the audit had run), and the second (128 silos × 10 rounds)
 * ran past its 240 s limit without an answer (one such round alone took 454 s in the issue).
 *
 * Now each round is audited once, when it is scored, in a worker thread (off the event loop), in
 * the bounded mode for rounds of more than SERVICE_AUDIT_MAX_OPTIMIZED_SILOS silos (docs/audit.md
 * "Bounded mode": the round says what it left out), and stored (table `round_audits`); the GET
 * answers from the stored rounds.
 */
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, test } from 'vitest';
import { signedReport } from '../../src/consortium/private-scoring.js';
import { SERVICE_AUDIT_MAX_OPTIMIZED_SILOS } from '../../src/server/service/round-audits.js';
import { ADMIN, adminInject, consortiumBody, type Harness, harness, siloInject } from '../server/_harness.js';

/** A deterministic accuracy in [0.05, 0.95] (xorshift). */
function accuracies(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return 0.05 + 0.9 * ((x >>> 0) / 2 ** 32);
  };
}

/** A reports-only consortium of the harness's first `n` keys. */
async function createExternal(h: Harness, id: string, n: number): Promise<void> {
  const r = await adminInject(h, 'POST', '/v1/consortia', {
    ...consortiumBody(h.keys.slice(0, n), id, n),
    utility: { name: 'accuracy' as const },
    secureAggregation: 'external' as const,
  });
  expect(r.statusCode, r.body).toBe(201);
}

/** Scores `rounds` rounds of consortium `id` from its operator's utilities and every silo's report. */
async function scoreRounds(h: Harness, id: string, n: number, rounds: number, seed: number): Promise<void> {
  const next = accuracies(seed);
  for (let round = 1; round <= rounds; round++) {
    const opened = await adminInject(h, 'POST', `/v1/consortia/${id}/rounds/${round}/utilities`, {
      full: 0.9,
      empty: 0.1,
    });
    expect(opened.statusCode, opened.body).toBe(201);
    for (let silo = 0; silo < n; silo++) {
      const body = signedReport(id, round, silo, next(), next(), h.keys[silo]!);
      const r = await siloInject(h, silo, 'POST', `/v1/consortia/${id}/rounds/${round}/reports`, body);
      expect(r.statusCode, r.body).toBe(201);
    }
  }
}

/** The largest gap between 10 ms ticks while `run` runs: how long the event loop was held. */
async function loopBlocked<T>(run: () => Promise<T>): Promise<{ result: T; blockedMs: number }> {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 10);
    last = now;
  }, 10);
  try {
    const result = await run();
    return { result, blockedMs: Math.max(worst, performance.now() - last - 10) };
  } finally {
    clearInterval(timer);
  }
}

/**
 * Reads of another consortium from a second thread over HTTP, one every 20 ms, timed there (a
 * stalled event loop here cannot hide its own stall): how many were answered and the longest wait.
 */
function probe(url: string): { stop(): Promise<{ answered: number; longestMs: number }> } {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    let stopping = false, answered = 0, longest = 0;
    parentPort.on('message', () => { stopping = true; });
    (async () => {
      while (!stopping) {
        const t = performance.now();
        const r = await fetch(workerData.url, { headers: { authorization: 'Bearer ' + workerData.token } });
        await r.arrayBuffer();
        if (r.status === 200) answered++;
        longest = Math.max(longest, performance.now() - t);
        await new Promise((s) => setTimeout(s, 20));
      }
      parentPort.postMessage({ answered, longestMs: longest });
    })();`;
  const worker = new Worker(code, { eval: true, workerData: { url, token: ADMIN } });
  return {
    stop: () =>
      new Promise((resolve) => {
        worker.once('message', (m) => {
          void worker.terminate();
          resolve(m);
        });
        worker.postMessage('stop');
      }),
  };
}

/**
 * The operator's audit of `big` while a second thread reads `small`'s scores: how long the audit
 * took, the longest stall of the event loop, and the reads answered meanwhile.
 */
async function auditBesideReads(h: Harness, big: string, small: string) {
  const address = await h.app.listen({ port: 0, host: '127.0.0.1' });
  const reads = probe(`${address}/v1/consortia/${small}/scores`);
  await new Promise((resolve) => setTimeout(resolve, 200)); // the reads are under way
  const { result, blockedMs } = await loopBlocked(async () => {
    const t0 = performance.now();
    const r = await adminInject(h, 'GET', `/v1/consortia/${big}/audit`);
    return { r, ms: performance.now() - t0 };
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
  return { audit: result, blockedMs, reads: await reads.stop() };
}

describe('A3: the audit off the request path', () => {
  let h: Harness;
  afterEach(async () => h?.close());

  test('a 32-silo round: the audit does not hold up another consortium’s read', async () => {
    h = await harness({ n: 32 });
    await createExternal(h, 'big', 32);
    await createExternal(h, 'small', 4);
    await scoreRounds(h, 'small', 4, 1, 7);
    await scoreRounds(h, 'big', 32, 1, 11);
    // Right after scoring the audit is being computed (in the worker): requests are answered.
    const during = await loopBlocked(() => siloInject(h, 0, 'GET', '/v1/consortia/small/scores'));
    expect(during.result.statusCode).toBe(200);
    await h.app.service.auditsIdle();
    const { audit: got, blockedMs, reads } = await auditBesideReads(h, 'big', 'small');
    console.log(
      `32 silos × 1 round: audit ${got.ms.toFixed(0)} ms; event loop blocked up to ${blockedMs.toFixed(0)} ms; ` +
        `the other consortium's reads meanwhile: ${reads.answered} answered, the longest ${reads.longestMs.toFixed(0)} ms ` +
        `(while the round was being audited: loop blocked up to ${during.blockedMs.toFixed(0)} ms)`,
    );
    expect(got.r.statusCode, got.r.body).toBe(200);
    const audit = got.r.json();
    // 32 silos: audited in full, every silo's undetected box computed
    expect(audit.runs[0].rounds[0].bounded).toBeUndefined();
    expect(audit.runs[0].rounds[0].undetectedBoxes).toHaveLength(32);
    expect(got.ms).toBeLessThan(1000);
    expect(blockedMs).toBeLessThan(500);
    expect(reads.longestMs).toBeLessThan(500);
    expect(during.blockedMs).toBeLessThan(500);
  }, 120_000);

  test('128 silos × 10 rounds: the audit answers within 1 s, another consortium’s read alongside', async () => {
    h = await harness({ n: 128 });
    await createExternal(h, 'big', 128);
    await createExternal(h, 'small', 4);
    await scoreRounds(h, 'small', 4, 1, 7);
    await scoreRounds(h, 'big', 128, 10, 13);
    await h.app.service.auditsIdle();
    const { audit: got, blockedMs, reads } = await auditBesideReads(h, 'big', 'small');
    console.log(
      `128 silos × 10 rounds: audit ${got.ms.toFixed(0)} ms (${(got.r.body.length / 2 ** 20).toFixed(1)} MiB); ` +
        `event loop blocked up to ${blockedMs.toFixed(0)} ms; the other consortium's reads meanwhile: ` +
        `${reads.answered} answered, the longest ${reads.longestMs.toFixed(0)} ms`,
    );
    expect(got.r.statusCode, got.r.body.slice(0, 200)).toBe(200);
    expect(got.ms).toBeLessThan(1000);
    expect(reads.answered).toBeGreaterThan(0);
    expect(reads.longestMs).toBeLessThan(1000);
    const audit = got.r.json();
    expect(audit.options.maxOptimizedSilos).toBe(SERVICE_AUDIT_MAX_OPTIMIZED_SILOS);
    const rounds = audit.runs[0].rounds;
    expect(rounds.map((r: { round: number }) => r.round)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const r of rounds) {
      // the auditor is told what the bounded mode left out, and those fields hold no value
      expect(r.bounded).toMatchObject({ maxOptimizedSilos: SERVICE_AUDIT_MAX_OPTIMIZED_SILOS, silos: 128 });
      expect(r.bounded.notComputed).toContain('schemes.eeMedian.selfGain');
      expect(r.undetectedBoxes).toEqual([]);
      expect(r.schemes.eeMedian.selfGain).toEqual([]);
      expect(r.schemes.fp.selfGainUndetected).toEqual([]);
      expect(r.schemes.fp.influence).toEqual([]);
      // what it did compute is there: every silo's FP self-gain and the scores
      expect(r.schemes.fp.selfGain).toHaveLength(128);
      expect(r.schemes.fp.scores).toHaveLength(128);
    }
  }, 240_000);
});
