/**
 * Issue 23: `fedscore consortium create --server` is atomic. It checks with the service first and
 * writes the consortium file (and the test set) only once the service accepted the consortium; a
 * refusal — the id taken, a wrong admin token, an unreachable service — is one sentence with the
 * code, and no file is written. `--external` registers a reports-only consortium.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import type { ExperimentConfig } from '../../src/records/config.js';
import { buildApp } from '../../src/server/app.js';
import { openStore } from '../../src/server/store/database.js';
import { cli } from './_cli.js';

const TOKEN = 'consortium-create-atomic-token-0123';
const dir = mkdtempSync(join(tmpdir(), 'fedscore-create-atomic-'));
const cfg: ExperimentConfig = {
  silos: 3,
  rounds: 2,
  data: {
    dataset: 'synthetic',
    trainSize: 60,
    testSize: 30,
    synthetic: { features: 4, classes: 3, examples: 200 },
  },
  model: { kind: 'mlp', hidden: [5] },
};
let url = '';
let close: () => Promise<void> = async () => {};

beforeAll(async () => {
  const store = await openStore({ sqlite: join(dir, 's.db') });
  const app = await buildApp({ store, adminToken: TOKEN, closeStore: true, logger: { level: 'silent' } });
  url = (await app.listen({ port: 0, host: '127.0.0.1' })).replace(/\/$/, '');
  close = () => app.close();
  const keys = [1, 2, 3].map((i) =>
    Buffer.from(signingKeyPairFromSeed(new Uint8Array(32).fill(i)).publicKey).toString('hex'),
  );
  writeFileSync(join(dir, 'keys.txt'), `${keys.join('\n')}\n`);
  writeFileSync(join(dir, 'cfg.json'), JSON.stringify(cfg));
});
afterAll(async () => {
  await close();
  rmSync(dir, { recursive: true, force: true });
});

const create = async (
  id: string,
  out: string,
  o: { token?: string; server?: string; extra?: string[] } = {},
) => {
  const printed: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
    printed.push(String(s));
    return true;
  });
  try {
    const r = await cli(
      [
        'consortium',
        'create',
        '--server',
        o.server ?? url,
        '--id',
        id,
        '--config',
        join(dir, 'cfg.json'),
        '--keys',
        join(dir, 'keys.txt'),
        '--out',
        join(dir, out),
        '--test-set-out',
        join(dir, `${out}-test-set`),
        '--backend',
        'cpu',
        ...(o.extra ?? []),
      ],
      { env: { FEDSCORE_ADMIN_TOKEN: o.token ?? TOKEN } },
    );
    return { ...r, printed: printed.join('') };
  } finally {
    spy.mockRestore();
  }
};

describe('fedscore consortium create --server is atomic', () => {
  it('writes the file once the service accepted it; an existing id is refused in one sentence, nothing written', async () => {
    const ok = await create('hospitals', 'first.json');
    expect(ok.code, ok.err).toBe(0);
    expect(existsSync(join(dir, 'first.json'))).toBe(true);
    expect(ok.printed).toContain(`consortium hospitals registered at ${url}`);

    const again = await create('hospitals', 'second.json');
    expect(again.code).toBe(1);
    expect(again.err).toBe(
      `fedscore: the consortium 'hospitals' already exists on ${url}: nothing was written\n`,
    );
    expect(existsSync(join(dir, 'second.json'))).toBe(false);
    expect(existsSync(join(dir, 'second.json-test-set'))).toBe(false);
  });

  it('a refused admin token and an unreachable service: one sentence each, nothing written', async () => {
    const token = await create('clinics', 'token.json', { token: 'not-the-admin-token-0123456' });
    expect(token.code).toBe(1);
    expect(token.err).toMatch(
      /^fedscore: the service at http:\/\/127\.0\.0\.1:\d+ refused the admin token \(FEDSCORE_ERR_(ADMIN_TOKEN|CREDENTIALS_REQUIRED)\): check FEDSCORE_ADMIN_TOKEN: nothing was written\n$/,
    );
    expect(existsSync(join(dir, 'token.json'))).toBe(false);
    // A port nothing listens on: one taken from the system, then freed.
    const free = createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
    const port = (free.address() as AddressInfo).port;
    await new Promise((r) => free.close(r));
    const gone = await create('clinics', 'gone.json', { server: `http://127.0.0.1:${port}` });
    expect(gone.code).toBe(1);
    expect(gone.err).toBe(`fedscore: cannot reach the service at http://127.0.0.1:${port}: ECONNREFUSED\n`);
    expect(existsSync(join(dir, 'gone.json'))).toBe(false);
  });

  it('--external registers a reports-only consortium (no schedule, no model)', async () => {
    const r = await create('reports', 'external.json', { extra: ['--external'] });
    expect(r.code, r.err).toBe(0);
    expect(r.printed).toContain('reports-only consortium reports registered');
    const c = (await (
      await fetch(`${url}/v1/consortia/reports`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as Record<string, unknown>;
    expect(c.secureAggregation).toBe('external');
    expect(c.rounds).toBeUndefined();
    // Its rounds open when the operator posts the utilities.
    const opened = await fetch(`${url}/v1/consortia/reports/rounds/1/utilities`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ full: 0.7, empty: 0.3 }),
    });
    expect(opened.status).toBe(201);
    const without = await cli([
      'consortium',
      'create',
      '--id',
      'x',
      '--config',
      'c',
      '--keys',
      'k',
      '--out',
      'o',
      '--external',
    ]);
    expect(without.err).toContain('--external: applies only with --server');
  });
});
