/**
 * `fedscore client --data/--test-data/--model/--consortium-file`: bad files give one clear error
 * each (the flag, the file and the problem) and exit code 1, before the silo contacts the
 * service (the --server here listens nowhere): a truncated file, examples of the wrong shape,
 * labels out of range, a test set that is not the consortium's, a consortium file whose digest
 * is not the pinned one, a Layers model with an unsupported layer.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import { type ConsortiumFile, consortiumFileDigest } from '../../src/consortium/consortium-file.js';
import { encodeNpy } from '../../src/data/npy.js';
import { consortiumFileOf } from '../../src/fl/consortium-of-run.js';
import { networkedLearner, networkedRun } from '../../src/fl/networked.js';
import { layersModelSaveHandler } from '../../src/ml/layers-files.js';
import type { ExperimentConfig } from '../../src/records/config.js';
import { writeSiloData } from '../e2e/_silo-files.js';
import { cli } from './_cli.js';

const config: ExperimentConfig = {
  silos: 3,
  rounds: 1,
  data: {
    dataset: 'synthetic',
    trainSize: 60,
    testSize: 30,
    synthetic: { features: 6, classes: 3, examples: 200 },
  },
  model: { kind: 'mlp', hidden: [4] },
};
const run = networkedRun(config, 1);
const dir = join(tmpdir(), `fedscore-client-data-${process.pid}`);
const keys = [1, 2, 3].map((i) => signingKeyPairFromSeed(new Uint8Array(32).fill(i)));
let file: ConsortiumFile;
let digest: string;

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  const learner = await networkedLearner(config, { backend: 'cpu' });
  file = consortiumFileOf(
    run,
    'c1',
    keys.map((k) => Buffer.from(k.publicKey).toString('hex')),
    learner,
    { examples: [20, 20, 20] },
  );
  await learner.close();
  digest = consortiumFileDigest(file);
  writeFileSync(join(dir, 'consortium.json'), JSON.stringify(file));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  writeFileSync(join(dir, 'silo.key'), Buffer.from(keys[1]!.secretKey).toString('hex'));
  await writeSiloData(join(dir, 'test'), run.data.test, 'npy');
  await writeSiloData(join(dir, 'good'), run.data.silos[1]!, 'npy');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `fedscore client` for silo 1 with `extra` flags; @returns its exit code and every line it wrote. */
async function client(extra: string[]): Promise<{ code: number; text: string }> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
    lines.push(String(s));
    return true;
  });
  try {
    const r = await cli([
      'client',
      '--server',
      'http://127.0.0.1:9',
      '--consortium',
      'c1',
      '--silo',
      '1',
      '--key',
      join(dir, 'silo.key'),
      '--config',
      join(dir, 'config.json'),
      '--consortium-file',
      join(dir, 'consortium.json'),
      '--backend',
      'cpu',
      '--timeout',
      '1',
      '--quiet',
      ...extra,
    ]);
    return { code: r.code, text: lines.join('') + r.err };
  } finally {
    spy.mockRestore();
  }
}

const dataFlags = (data: string, test = join(dir, 'test')) => ['--data', data, '--test-data', test];

describe('fedscore client on bad files: one clear error each, exit 1', () => {
  it('a truncated x.npy', async () => {
    const d = join(dir, 'truncated');
    mkdirSync(d, { recursive: true });
    const x = encodeNpy(new Float32Array(5 * 6), [5, 1, 6, 1]);
    writeFileSync(join(d, 'x.npy'), x.subarray(0, x.length - 7));
    writeFileSync(join(d, 'y.npy'), encodeNpy(new Int32Array(5), [5]));
    const r = await client(dataFlags(d));
    expect(r.code).toBe(1);
    expect(r.text).toMatch(new RegExp(`^fedscore client: --data: ${join(d, 'x.npy')}: .*truncated`, 'm'));
    expect(r.text.trim().split('\n')).toHaveLength(1);
  });

  it('examples of the wrong shape', async () => {
    const d = join(dir, 'shape');
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'x.npy'), encodeNpy(new Float32Array(5 * 5), [5, 5]));
    writeFileSync(join(d, 'y.npy'), encodeNpy(new Int32Array(5), [5]));
    const r = await client(dataFlags(d));
    expect(r).toEqual({
      code: 1,
      text: `fedscore client: --data: ${join(d, 'x.npy')}: examples of shape (5,) do not fit the input shape 1×6×1 (6 features)\n`,
    });
  });

  it('labels out of range, in a CSV file', async () => {
    const path = join(dir, 'labels.csv');
    writeFileSync(path, 'a,b,c,d,e,f,label\n0,0,0,0,0,0,1\n0,0,0,0,0,0,7\n');
    const r = await client(dataFlags(path));
    expect(r.code).toBe(1);
    expect(r).toEqual({
      code: 1,
      text: `fedscore client: --data: ${path}: line 3, column 'label': '7' is not a class label (an integer in [0, 3))\n`,
    });
  });

  it('a truncated IDX images file', async () => {
    const d = join(dir, 'idx');
    await writeSiloData(d, run.data.silos[0]!, 'idx');
    const images = join(d, 'train-images-idx3-ubyte');
    const bytes = readFileSync(images);
    writeFileSync(images, bytes.subarray(0, bytes.length - 3));
    const r = await client([...dataFlags(d), '--data-format', 'idx']);
    expect(r.code).toBe(1);
    expect(r.text).toMatch(new RegExp(`^fedscore client: --data: ${images}: .*\\n$`));
  });

  it('a test set that is not the consortium’s', async () => {
    const r = await client(dataFlags(join(dir, 'good'), join(dir, 'good')));
    expect(r.code).toBe(1);
    expect(r.text).toMatch(
      /^fedscore client: consortium file testSetDigest: the local test set's digest is [0-9a-f]{64}, the file's [0-9a-f]{64}\n$/,
    );
  });

  it('a consortium file whose digest is not the pinned one', async () => {
    const other = 'ab'.repeat(32);
    const r = await client(['--consortium-digest', other]);
    expect(r).toEqual({
      code: 1,
      text: `fedscore client: ${join(dir, 'consortium.json')}: its digest is ${digest}, not the pinned ${other} (--consortium-digest): this is not the consortium file you agreed to\n`,
    });
  });

  it('a Layers model with an unsupported layer, named', async () => {
    await tf.setBackend('cpu');
    const m = tf.sequential();
    m.add(tf.layers.flatten({ inputShape: [1, 6, 1] }));
    m.add(tf.layers.batchNormalization({ name: 'bn_1' }));
    m.add(tf.layers.dense({ units: 3 }));
    const modelDir = join(dir, 'bad-model');
    mkdirSync(modelDir, { recursive: true });
    await m.save(layersModelSaveHandler(modelDir));
    const r = await client([...dataFlags(join(dir, 'good')), '--model', join(modelDir, 'model.json')]);
    expect(r.code).toBe(1);
    expect(r.text).toMatch(/^fedscore: model: .*layer 'bn_1' \(BatchNormalization\) is not supported/m);
  });

  it('a --seed that is not the consortium file’s (the strategy replays the file’s seed)', async () => {
    const r = await client([...dataFlags(join(dir, 'good')), '--seed', String(file.seed + 1)]);
    expect(r.code).toBe(2);
    expect(r.text).toContain(
      `--seed: ${file.seed + 1} is not the consortium file's seed ${file.seed} (the strategy's selection and weights replay it)`,
    );
  });
});
