/**
 * `fedscore rounds open|status|close|release` against a listening service: help on every command, the
 * status table (stage, selection, dropouts, faults, schedule "round r of R", who the stage waits
 * for), closing a stage (missing silos are dropouts) and aborting a round, and one clear error
 * each for an unreachable service, a wrong token, an unknown consortium and a missing token.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { progressText, statusText } from '../../src/cli/actions/rounds.js';
import {
  ADMIN,
  adminInject,
  Clock,
  consortiumBody,
  f32bytes,
  type Harness,
  harness,
  INITIAL,
  Silo,
} from '../server/_harness.js';
import { cli } from './_cli.js';

const dir = mkdtempSync(join(tmpdir(), 'fedscore-rounds-cli-'));
let h: Harness;
let url = '';
beforeAll(async () => {
  h = await harness({ clock: new Clock(Date.now()), app: { scheduleIntervalMs: false } });
  url = (await h.app.listen({ port: 0, host: '127.0.0.1' })).replace(/\/$/, '');
  const c = await adminInject(h, 'POST', '/v1/consortia', {
    ...consortiumBody(h.keys),
    rounds: 2,
    strategy: { name: 'fedavg' },
    // Long deadlines: the clock is real-time (the output says how long is left), the suite may be slow.
    deadlines: {
      advertise: 3_600_000,
      share: 3_600_000,
      mask: 3_600_000,
      consistency: 3_600_000,
      unmask: 3_600_000,
      reporting: 3_600_000,
    },
  });
  expect(c.statusCode, c.body).toBe(201);
  await adminInject(h, 'PUT', '/v1/consortia/c1/model', f32bytes(INITIAL));
});
afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `fedscore rounds …` with the admin token in the environment; stdout captured. */
async function rounds(args: string[], env: Record<string, string> = { FEDSCORE_ADMIN_TOKEN: ADMIN }) {
  const printed: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
    printed.push(String(s));
    return true;
  });
  try {
    const r = await cli(['rounds', ...args], { env });
    return { ...r, out: r.out + printed.join('') };
  } finally {
    spy.mockRestore();
  }
}
const at = (extra: string[] = []) => ['--server', url, '--consortium', 'c1', ...extra];
afterEach(() => vi.restoreAllMocks());

describe('fedscore rounds: help', () => {
  it('lists its three commands, and each has help with its flags and the token variable', async () => {
    const top = await rounds(['--help'], {});
    expect(top.code).toBe(0);
    for (const sub of ['open', 'status', 'close', 'release'])
      expect(top.out).toMatch(new RegExp(`\\n\\s+${sub}\\b`));
    for (const sub of ['open', 'status', 'close']) {
      const r = await rounds([sub, '--help'], {});
      expect(r.code, sub).toBe(0);
      expect(r.out).toContain('--server <url>');
      expect(r.out).toContain('--consortium <id>');
      expect(r.out).toContain('--token-file <file>');
      expect(r.out).toContain('FEDSCORE_ADMIN_TOKEN');
    }
    expect((await rounds(['close', '--help'], {})).out).toContain('--abort');
    expect((await rounds(['release', '--help'], {})).out).toContain('--silo');
    const bare = await rounds([], {});
    expect(bare.code).toBe(2);
    expect(bare.err).toContain('expected a subcommand: open, status, close or release');
  });
});

describe('fedscore rounds: errors', () => {
  it('an unreachable service', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const r = await rounds(['status', '--server', `http://127.0.0.1:${port}`, '--consortium', 'c1']);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`fedscore: cannot reach the service at http://127.0.0.1:${port}: ECONNREFUSED\n`);
  });

  it('a wrong token, from the environment or a token file', async () => {
    const r = await rounds(['status', ...at()], { FEDSCORE_ADMIN_TOKEN: 'not-the-admin-token-at-all' });
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `fedscore: the service at ${url} refused the admin token (FEDSCORE_ERR_CREDENTIALS_REQUIRED)\n`,
    );
    writeFileSync(join(dir, 'wrong'), 'still-not-the-admin-token\n');
    const f = await rounds(['open', ...at(['--token-file', join(dir, 'wrong')])], {});
    expect(f.code).toBe(1);
    expect(f.err).toBe(
      `fedscore: the service at ${url} refused the admin token (FEDSCORE_ERR_ADMIN_TOKEN)\n`,
    );
  });

  it('an unknown consortium', async () => {
    const r = await rounds(['status', '--server', url, '--consortium', 'nope']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      `the service at ${url} has no consortium 'nope' (FEDSCORE_ERR_CONSORTIUM_NOT_FOUND)`,
    );
  });

  it('no token at all, an unreadable token file, a bad flag', async () => {
    const none = await rounds(['status', ...at()], {});
    expect(none.code).toBe(2);
    expect(none.err).toContain(
      'FEDSCORE_ADMIN_TOKEN: set it to the service’s admin token, or give --token-file',
    );
    const missing = await rounds(['status', ...at(['--token-file', join(dir, 'absent')])], {});
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(`--token-file: cannot read ${join(dir, 'absent')}: ENOENT`);
    const bad = await rounds(['close', ...at(['--round', '0'])]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--round: expected an integer in [1, 4294967295], got '0'");
  });
});

describe('fedscore rounds: open, status, close', () => {
  it('runs a round by hand and shows where it stands', async () => {
    writeFileSync(join(dir, 'token'), `${ADMIN}\n`);
    const opened = await rounds(['open', ...at(['--token-file', join(dir, 'token')])], {});
    expect(opened.code, opened.err).toBe(0);
    expect(opened.out).toMatch(/^round 1 opened: silos 0, 1, 2, 3; advertise: \d+ min \d+ s left\n$/);
    // Two of the four silos advertise.
    for (const i of [0, 2]) await new Silo(h, 'c1', 1, i, 3).start();
    const status = await rounds(['status', ...at()]);
    expect(status.code, status.err).toBe(0);
    const lines = status.out.split('\n');
    expect(lines[0]).toBe(
      'consortium c1: 4 silos, t = 3 (minimum 3 for n_C = 1); strategy fedavg; schedule: round 1 of 2',
    );
    expect(lines[1]).toMatch(/^round +stage +selected +survivors +dropped +v\(M\) \/ v\(M0\) +faults$/);
    expect(lines[2]).toMatch(/^1 +advertise +0,1,2,3 +– +– +– +–$/);
    expect(lines[3]).toMatch(
      /^round 1 is in advertise: 2 of 4 in \(0,2\), waiting for silos 1, 3; \d+ min \d+ s left$/,
    );

    // Naming another stage than the current one closes nothing (issue 27 A7).
    const wrong = await rounds(['close', ...at(['--stage', 'mask'])]);
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain('FEDSCORE_ERR_STAGE_MISMATCH');
    expect(wrong.err).toContain('round 1 is in stage advertise, not mask');
    // Closing the stage now: silos 1 and 3 are dropouts, two remain below t = 3: the round aborts.
    const closed = await rounds(['close', ...at()]);
    expect(closed.code, closed.err).toBe(0);
    expect(closed.out).toMatch(/^round 1: stage advertise closed; now aborted \(BELOW_THRESHOLD: /);
    const again = await rounds(['close', ...at(['--round', '1'])]);
    expect(again.code).toBe(1);
    expect(again.err).toContain('FEDSCORE_ERR_ROUND_CLOSED');

    expect((await rounds(['open', ...at()])).out).toMatch(/^round 2 opened/);
    const aborted = await rounds(['close', ...at(['--abort'])]);
    expect(aborted.out).toBe('round 2 aborted\n');
    const done = (await rounds(['status', ...at()])).out.split('\n');
    expect(done[0]).toContain('schedule: round 2 of 2 (done)');
    expect(done[2]).toMatch(/^1 +aborted \(BELOW_THRESHOLD\)/);
    expect(done[3]).toMatch(/^2 +aborted \(ABORTED_BY_OPERATOR\)/);
    expect(done[4]).toBe('');
    // Only a quarantined report of a scored round can be released.
    const release = await rounds(['release', ...at(['--round', '1', '--silo', '0'])]);
    expect(release.code).toBe(1);
    expect(release.err).toContain('FEDSCORE_ERR_NOT_READY');
    expect(release.err).toContain('round 1 is aborted, not scored');
  });
});

describe('the status text', () => {
  const c = {
    id: 'c9',
    participants: Array.from({ length: 5 }, () => ({ publicKey: '00' })),
    threshold: 3,
    corruptSilos: 1,
    minimumThreshold: 4,
    weakThreshold: true,
    rounds: 3,
  };
  it('shows the weak-threshold opt-in, survivors, dropouts, utilities and faults with the sender', () => {
    const text = statusText(c, [
      {
        round: 1,
        stage: 'scored',
        deadline: 0,
        selected: null,
        survivors: [0, 1, 2, 4],
        dropped: [3],
        utilities: { full: 0.812345, empty: 0.5 },
        error: null,
        faults: [{ silo: 2, code: 'BAD_SHARE', detail: 'share of 1 does not verify' }],
      },
    ]);
    expect(text.split('\n')[0]).toBe(
      'consortium c9: 5 silos, t = 3 (minimum 4 for n_C = 1) WEAK THRESHOLD (opted in); schedule: round 1 of 3',
    );
    expect(text.split('\n')[2]).toMatch(/^1 +scored +all +0,1,2,4 +3 +0\.8123 \/ 0\.5 +silo 2 BAD_SHARE$/);
  });

  it('says when the deadline has passed', () => {
    const p = {
      stage: 'mask' as const,
      deadline: 1000,
      expected: [0, 1, 2],
      received: [0, 1, 2],
      missing: [],
    };
    expect(progressText(4, p, 5000)).toBe(
      'round 4 is in mask: 3 of 3 in (0,1,2), waiting for nobody (closes now); deadline passed: it closes at the next request or schedule pass\n',
    );
  });
});
