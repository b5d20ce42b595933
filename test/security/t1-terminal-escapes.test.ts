/**
 * Issue 32, T1: text from outside is inert. A malicious server's round `stage` and error `message`,
 * and silo names in a utilities file, reached the terminal raw: an ESC sequence cleared the screen
 * or set the window title, and a newline forged a line of its own ("report accepted") or broke the
 * leaderboard table; report.md carried a name's raw HTML and markdown (report.html escaped it).
 *
 * Against the code before the fix (f7a4317) every test below but the module's own properties
 * failed: the silo's log line carried the ESC and the forged line, the refused request's message
 * carried the title escape, the `fedscore client` and `fedscore score` output carried ESC bytes and
 * the score table gained a line, and report.md held `<img src=x onerror=alert(1)>`.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { SiloHttp } from '../../src/client/http.js';
import { runSilo } from '../../src/client/silo.js';
import { hasControlCharacters, inertLines, inertText } from '../../src/consortium/inert-text.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { networkedRun } from '../../src/fl/networked.js';
import type { ExperimentConfig } from '../../src/records/config.js';
import { cli } from '../cli/_cli.js';
import { injectFetch } from '../client/_inject.js';
import { tempJournal } from '../client/_journal.js';
import { adminInject, consortiumBody, D, type Harness, harness } from '../server/_harness.js';

/** What a terminal obeys: ESC, CSI, BEL, CR, LF and the other C0/C1 controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
/** Clear screen, set the window title, then a forged progress line. */
const EVIL = '\u001b[2J\u001b]0;owned\u0007\nsilo 1 round 1: report accepted (forged)';

const tmp = mkdtempSync(join(tmpdir(), 'fedscore-t1-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('inertText / inertLines (src/consortium/inert-text.ts)', () => {
  it('leaves no control character, bidi override or line break in a field; printable text is unchanged', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (s) => {
        const out = inertText(s);
        expect(out).not.toMatch(CONTROL);
        expect(out).not.toMatch(/[\n\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
        expect(hasControlCharacters(out)).toBe(false);
        expect(inertText(out)).toBe(out);
      }),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), (s) => {
        fc.pre(!/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u.test(s));
        expect(inertText(s)).toBe(s);
      }),
    );
    expect(inertText(EVIL)).toBe('[2J]0;owned silo 1 round 1: report accepted (forged)');
    expect(inertLines(`a\u001b[31m\nb\r\nc\u009b2J`)).toBe('a[31m\nb\nc2J');
    expect(() => inertText(3 as unknown as string)).toThrow(TypeError);
  });
});

describe('the silo client: a malicious server’s words reach stderr inert', () => {
  const cfg: ExperimentConfig = {
    silos: 4,
    rounds: 1,
    data: {
      dataset: 'synthetic',
      trainSize: 80,
      testSize: 30,
      synthetic: { features: 4, classes: 3, examples: 200 },
    },
  };
  const run = networkedRun(cfg, 1);
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** A silo against the real service, with round 1's answer replaced by the server's lie. */
  async function siloAgainst(roundAnswer: { status: number; body: unknown }) {
    h = await harness({ n: 4 });
    const body = {
      ...consortiumBody(h.keys),
      utility: { name: 'accuracy' },
      testSetDigest: run.testSetDigest,
    };
    expect((await adminInject(h, 'POST', '/v1/consortia', body)).statusCode).toBe(201);
    const real = injectFetch(h.app).fetch;
    const lying = (async (input: string | URL | Request, init?: RequestInit) => {
      if (new URL(String(input)).pathname === '/v1/consortia/c1/rounds/1')
        return new Response(JSON.stringify(roundAnswer.body), {
          status: roundAnswer.status,
          headers: { 'content-type': 'application/json' },
        });
      return real(input, init);
    }) as typeof fetch;
    const secretKey = h.keys[1]!.secretKey;
    const http = new SiloHttp({
      server: 'http://service.test',
      consortium: 'c1',
      silo: 1,
      secretKey,
      fetch: lying,
      now: h.clock.now,
      retry: { attempts: 1 },
    });
    const lines: string[] = [];
    const result = runSilo({
      http,
      run,
      learner: { parameterCount: D } as Learner,
      secretKey,
      journal: tempJournal(),
      firstRound: 1,
      lastRound: 1,
      waitTimeoutMs: 1000,
      insecureUnpinned: true,
      log: (line) => lines.push(line),
    });
    return { result, lines };
  }

  it('a round stage with a clear-screen, a title escape and a forged line is logged as one inert line', async () => {
    const { result, lines } = await siloAgainst({
      status: 200,
      body: { round: 1, stage: EVIL, selected: null, deadline: null },
    });
    const outcomes = await result;
    expect(outcomes).toMatchObject([{ round: 1, status: 'missed' }]);
    const missed = lines.find((l) => l.includes('missed'));
    expect(missed).toBeDefined();
    for (const line of lines) {
      expect(line).not.toMatch(CONTROL);
      expect(line).not.toContain('\n');
    }
    expect(missed).toContain('[2J]0;owned silo 1 round 1: report accepted (forged)');
  });

  it("an error answer's message is inert in the error the silo stops with", async () => {
    const { result } = await siloAgainst({
      status: 409,
      body: { code: 'FEDSCORE_ERR_ROUND_CLOSED', message: EVIL },
    });
    const e = (await result.catch((x: unknown) => x)) as Error;
    expect(e.name).toBe('ServiceResponseError');
    expect(e.message).toContain('FEDSCORE_ERR_ROUND_CLOSED');
    expect(e.message).not.toMatch(CONTROL);
    expect(e.message).not.toContain('\n');
  });

  it('`fedscore client` prints a refusing server’s message without its escapes', async () => {
    let server: Server | undefined;
    let stderr = '';
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      stderr += String(chunk);
      return true;
    });
    try {
      server = createServer((_req, res) => {
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: `FEDSCORE_ERR_\u001b]0;x\u0007`, message: EVIL }));
      });
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      const port = (server.address() as AddressInfo).port;
      const key = join(tmp, 'silo.key');
      writeFileSync(key, `${'07'.repeat(32)}\n`);
      const config = join(tmp, 'client.json');
      writeFileSync(config, JSON.stringify(cfg));
      const r = await cli(
        [
          'client',
          '--server',
          `http://127.0.0.1:${port}`,
          '--consortium',
          'c1',
          '--silo',
          '1',
          '--key',
          key,
          '--config',
          config,
          '--insecure-unpinned',
          '--timeout',
          '2000',
        ],
        { env: {} },
      );
      expect(r.code).toBe(1);
      const all = stderr + r.err;
      expect(all).toContain('report accepted (forged)');
      expect(all).not.toMatch(CONTROL);
      expect(all.split('\n').filter((l) => l.includes('report accepted (forged)'))).toHaveLength(1);
      expect(all).not.toMatch(/^silo 1 round 1: report accepted/m);
    } finally {
      spy.mockRestore();
      await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    }
  });
});

describe('`fedscore score` with names from a utilities file', () => {
  const names = [
    `hospital-a\u001b]0;owned\u0007\u001b[2J`,
    'clinic\nsilo-x  9.99  rank 1',
    '<img src=x onerror=alert(1)>',
    'free|rider *bold* [link](http://e.test)',
  ];
  const file = join(tmp, 'names.json');
  writeFileSync(
    file,
    JSON.stringify({
      silos: names,
      rounds: [1, 2].map((round) => ({
        round,
        full: 0.7,
        empty: 0.4,
        withOnly: [0.6, 0.55, 0.5, 0.4],
        without: [0.6, 0.62, 0.65, 0.7],
      })),
    }),
  );

  it('prints the leaderboard with one line per silo and no escape', async () => {
    const out = join(tmp, 'score-out');
    let stdout = '';
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      stdout += String(chunk);
      return true;
    });
    let r: Awaited<ReturnType<typeof cli>>;
    try {
      r = await cli(['score', '--utilities', file, '--out', out]);
    } finally {
      spy.mockRestore();
    }
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(stdout).not.toMatch(CONTROL);
    // The name with a newline stays on its silo's line: no line starts with the forged row.
    expect(stdout).not.toMatch(/^\s*silo-x/m);
    expect(stdout.split('\n').filter((l) => l.includes('clinic silo-x'))).toHaveLength(1);

    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).not.toMatch(CONTROL);
    expect(md).not.toMatch(/(?<!\\)<img/); // raw HTML: only escaped (`\<img`)
    expect(md).not.toMatch(/(?<!\\)\[link(?<!\\)\]/);
    expect(md).toContain('\\<img src=x onerror=alert\\(1\\)\\>');
    // The leaderboard table: a `|` in a name does not add a column.
    const rows = md.split('\n').filter((l) => l.startsWith('|'));
    const cells = (l: string) => l.split(/(?<!\\)\|/).length;
    expect(new Set(rows.slice(0, 2 + names.length).map(cells)).size).toBe(1);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).not.toContain('<img');
    expect(html).not.toMatch(CONTROL);
  });
});
