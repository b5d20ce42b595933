/**
 * `fedscore consortium`: creates a networked run's consortium with the engine's settings and
 * uploads the engine's initial model, against a real listening service; bad flags are named.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import { readPublicKeys } from '../../src/cli/actions/consortium.js';
import { consortiumFileDigest, readConsortiumFile } from '../../src/consortium/consortium-file.js';
import { capWeights, DEFAULT_WEIGHT_BOUNDS } from '../../src/consortium/weight-floor.js';
import { datasetDigest } from '../../src/data/digest.js';
import { loadLocalData } from '../../src/data/local-data.js';
import { initialModel, networkedLearner, networkedRun } from '../../src/fl/networked.js';
import type { ExperimentConfig } from '../../src/records/config.js';
import { buildApp } from '../../src/server/app.js';
import { openStore } from '../../src/server/store/database.js';
import { cli, dryRun } from './_cli.js';

const TOKEN = 'consortium-cli-token-0123';
const dir = mkdtempSync(join(tmpdir(), 'fedscore-consortium-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cfg: ExperimentConfig = {
  silos: 3,
  rounds: 1,
  data: {
    dataset: 'synthetic',
    trainSize: 60,
    testSize: 30,
    synthetic: { features: 4, classes: 3, examples: 200 },
  },
  model: { kind: 'mlp', hidden: [5] },
};

describe('fedscore consortium', () => {
  it('creates the consortium and uploads the initial model of the run', async () => {
    const store = await openStore({ sqlite: join(dir, 's.db') });
    const app = await buildApp({ store, adminToken: TOKEN, closeStore: true });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const keys = [1, 2, 3].map((i) =>
      Buffer.from(signingKeyPairFromSeed(new Uint8Array(32).fill(i)).publicKey).toString('hex'),
    );
    writeFileSync(join(dir, 'keys.txt'), `${keys.join('\n')}\n`);
    writeFileSync(join(dir, 'cfg.json'), JSON.stringify(cfg));
    const env = { FEDSCORE_ADMIN_TOKEN: TOKEN };
    const printed: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
      printed.push(String(s));
      return true;
    });
    try {
      const args = [
        'consortium',
        '--server',
        url,
        '--id',
        'net1',
        '--config',
        join(dir, 'cfg.json'),
        '--keys',
        join(dir, 'keys.txt'),
        '--backend',
        'cpu',
      ];
      expect(await cli(args, { env })).toEqual({ code: 0, out: '', err: '' });
      const run = networkedRun(cfg, 1);
      const learner = await networkedLearner(cfg, { backend: 'cpu' });
      const m0 = initialModel(run, learner);
      await learner.close();
      const admin = { headers: { authorization: `Bearer ${TOKEN}` } }; // consortium data is not public
      const c = await (await fetch(`${url}/v1/consortia/net1`, admin)).json();
      expect(c).toMatchObject({
        participants: keys.map((publicKey) => ({ publicKey })),
        threshold: run.threshold,
        model: { parameters: m0.length },
        testSetDigest: run.testSetDigest,
        encoding: { clip: 1, weightRange: 1 },
        convention: 'fedavg',
        schemes: ['loo', 'ioi', 'fp', 'ee', 'eeMedian'],
        utility: { name: 'accuracy' },
      });
      const model = new Float32Array(
        await (await fetch(`${url}/v1/consortia/net1/model`, admin)).arrayBuffer(),
      );
      expect(model).toEqual(m0);
      expect(printed.join('')).toContain(`consortium net1: 3 silos, threshold ${run.threshold}`);
      // A second creation is refused by the service and reported with exit code 1.
      const errors: string[] = [];
      const err = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
        errors.push(String(s));
        return true;
      });
      try {
        expect((await cli(args, { env })).code).toBe(1);
      } finally {
        err.mockRestore();
      }
      expect(errors.join('')).toContain('HTTP 409');
    } finally {
      spy.mockRestore();
      await app.close();
    }
  });

  it('create: writes the consortium file, prints its digest, exports the test set and registers the consortium', async () => {
    const store = await openStore({ sqlite: join(dir, 'create.db') });
    const app = await buildApp({ store, adminToken: TOKEN, closeStore: true });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const keys = [4, 5, 6].map((i) =>
      Buffer.from(signingKeyPairFromSeed(new Uint8Array(32).fill(i)).publicKey).toString('hex'),
    );
    writeFileSync(join(dir, 'keys2.txt'), `${keys.join('\n')}\n`);
    writeFileSync(join(dir, 'cfg.json'), JSON.stringify(cfg));
    const printed: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
      printed.push(String(s));
      return true;
    });
    try {
      const out = join(dir, 'consortium.json');
      const weights = capWeights([10, 30, 20], DEFAULT_WEIGHT_BOUNDS);
      const scale = Math.max(...weights);
      const capped = { scale, minWeight: Math.max(0.1, Math.min(...weights) / scale) };
      const args = ['consortium', 'create', '--id', 'net2', '--config', join(dir, 'cfg.json')];
      args.push('--keys', join(dir, 'keys2.txt'), '--out', out, '--examples', '10,30,20');
      args.push('--test-set-out', join(dir, 'test-set'), '--server', url, '--backend', 'cpu');
      const r = await cli(args, { env: { FEDSCORE_ADMIN_TOKEN: TOKEN } });
      expect(r).toEqual({ code: 0, out: '', err: '' });
      const { file, digest } = readConsortiumFile(out);
      expect(printed.join('')).toContain(`digest ${digest}\n`);
      expect(consortiumFileDigest(file)).toBe(digest);
      expect(file).toMatchObject({
        id: 'net2',
        participants: keys.map((publicKey) => ({ publicKey })),
        weights: { kind: 'examples', scale: capped.scale },
        encoding: { minWeight: capped.minWeight },
      });
      // Issue 32 W1: 3 silos and minEffectiveSilos 3 leave only equal weights: the counts 10, 30, 20
      // are floored to 15, 30, 20 (f_3 = 1/2) and capped at ≈ 15, the public scale.
      expect(capped.scale).toBeCloseTo(15, 5);
      expect(capped.minWeight).toBeCloseTo(1, 5);
      const test = await loadLocalData(join(dir, 'test-set'), { inputShape: [1, 4, 1], numClasses: 3 });
      expect(datasetDigest(test)).toBe(file.testSetDigest);
      const admin = { headers: { authorization: `Bearer ${TOKEN}` } };
      const c = await (await fetch(`${url}/v1/consortia/net2`, admin)).json();
      expect(c).toMatchObject({
        participants: file.participants,
        threshold: file.threshold,
        corruptSilos: file.corruptSilos,
        model: { name: 'mlp', parameters: file.parameters },
        testSetDigest: file.testSetDigest,
        encoding: file.encoding,
      });
      // Without --server it only writes the file; a missing required flag is named.
      const only = await cli([...args.slice(0, args.indexOf('--server')), '--out', join(dir, 'c2.json')]);
      expect(only.code).toBe(0);
      expect(readConsortiumFile(join(dir, 'c2.json')).digest).toBe(digest);
      const missing = await cli(['consortium', 'create', '--id', 'x', '--config', 'c.json', '--keys', 'k']);
      expect(missing).toMatchObject({ code: 2, err: expect.stringMatching(/^fedscore: --out: required\n/) });
    } finally {
      spy.mockRestore();
      await app.close();
    }
  });

  it('names bad flags, a missing token and bad key lists', async () => {
    const env = { FEDSCORE_ADMIN_TOKEN: TOKEN };
    const ok = ['--server', 'http://h:1', '--id', 'c1', '--config', 'c.json', '--keys', 'k.txt'];
    const parse = async (args: string[], environment: Record<string, string> = env) => {
      const { commands, calls } = dryRun();
      const r = await cli(['consortium', ...args], { env: environment, commands });
      return { code: r.code, args: calls[0]?.args, error: r.err.split('\n')[0] };
    };
    expect((await parse(ok)).args).toEqual({
      server: 'http://h:1',
      id: 'c1',
      config: 'c.json',
      keys: 'k.txt',
      adminToken: TOKEN,
    });
    expect(await parse(ok.slice(2))).toMatchObject({ code: 2, error: 'fedscore: --server: required' });
    expect((await parse(['--server', 'h:1', ...ok.slice(2)])).error).toMatch(/^fedscore: --server: /);
    expect((await parse([...ok.slice(0, 2), '--id', 'C!', ...ok.slice(4)])).error).toMatch(
      /^fedscore: --id: /,
    );
    expect((await parse([...ok, '--seed', 'x'])).error).toMatch(/^fedscore: --seed: /);
    expect(await parse(ok, {})).toMatchObject({
      code: 2,
      error: expect.stringMatching(/^fedscore: FEDSCORE_ADMIN_TOKEN: /),
    });
    writeFileSync(join(dir, 'bad.txt'), `${'ab'.repeat(32)}\nnot-a-key\n`);
    await expect(readPublicKeys(join(dir, 'bad.txt'))).rejects.toThrow(
      /^--keys: line 2 of .* is not a 64-hex-digit/,
    );
    await expect(readPublicKeys(join(dir, 'none.txt'))).rejects.toThrow(/^--keys: cannot read .*ENOENT/);
  });
});
