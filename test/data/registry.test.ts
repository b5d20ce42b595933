import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { checkDataset } from '../../src/data/dataset.js';
import {
  BUILTIN_DATASETS,
  DEFAULT_DATASET,
  datasetNames,
  findDataset,
  registerDataset,
} from '../../src/data/registry.js';
import { gaussianMixture } from '../../src/data/synthetic.js';
import { cifar10Dir, tempDir } from './_files.js';

const context = (env: Record<string, string | undefined> = {}) => ({ seed: 1, env, silos: 3 });

describe('dataset registry', () => {
  it('lists the built-ins first, fashion-mnist the default', () => {
    expect(datasetNames().slice(0, 4)).toEqual(['fashion-mnist', 'synthetic', 'cifar10', 'files']);
    expect(BUILTIN_DATASETS.map((d) => d.name)).toEqual(datasetNames().slice(0, 4));
    expect(DEFAULT_DATASET).toBe('fashion-mnist');
    expect(findDataset('synthetic')?.shape({ features: 8, classes: 3 })).toEqual({
      inputShape: [1, 8, 1],
      numClasses: 3,
    });
    expect(findDataset('cifar10')?.shape({})).toEqual({ inputShape: [32, 32, 3], numClasses: 10 });
    expect(findDataset('nope')).toBeUndefined();
  });

  it('registers a new data set; rejects a taken name and malformed definitions', () => {
    const def = {
      name: 'registry-test-blobs',
      description: 'two blobs',
      options: Type.Object(
        { n: Type.Optional(Type.Integer({ minimum: 10 })) },
        { additionalProperties: false },
      ),
      shape: () => ({ inputShape: [1, 4, 1] as [number, number, number], numClasses: 2 }),
      load: (o: { n?: number }, c: { seed: number }) => ({
        pool: gaussianMixture({ n: o.n ?? 40, numClasses: 2, features: 4, seed: c.seed }),
        source: 'blobs',
      }),
    };
    registerDataset(def);
    expect(datasetNames()).toContain('registry-test-blobs');
    expect(findDataset('registry-test-blobs')?.load({ n: 20 }, context()).pool.n).toBe(20);
    expect(() => registerDataset(def)).toThrow("name: data set 'registry-test-blobs' is already registered");
    expect(() => registerDataset({ ...def, name: 'has space' })).toThrow(/^name: /);
    expect(() => registerDataset({ ...def, name: 'registry-test-2', load: undefined as never })).toThrow(
      TypeError,
    );
    expect(() =>
      registerDataset({ ...def, name: 'registry-test-3', options: Type.String() as never }),
    ).toThrow(/^options: /);
  });
});

describe("the 'cifar10' data set", () => {
  const cifar10 = findDataset('cifar10')!;

  it('reads $FEDSCORE_DATA_DIR/cifar-10-batches-bin/ (or the directory itself)', () => {
    const root = tempDir();
    const batches = join(root, 'cifar-10-batches-bin');
    mkdirSync(batches);
    cifar10Dir(batches, 20, 10);
    const loaded = cifar10.load({}, context({ FEDSCORE_DATA_DIR: root }));
    expect(loaded.pool.n).toBe(100);
    expect(loaded.test?.n).toBe(10);
    expect(loaded.pool.shape).toEqual([32, 32, 3]);
    expect(loaded.source).toBe(`CIFAR-10 from ${batches}: 100 train, 10 test`);
    checkDataset(loaded.pool, true);
    const flat = cifar10Dir(tempDir(), 10, 10);
    expect(cifar10.load({}, context({ FEDSCORE_DATA_DIR: flat })).pool.n).toBe(50);
  });

  it('names data.dataset and FEDSCORE_DATA_DIR when the files are missing', () => {
    expect(() => cifar10.load({}, context())).toThrow(
      "data.dataset 'cifar10': FEDSCORE_DATA_DIR is not set; it must name a directory with cifar-10-batches-bin/",
    );
    const empty = tempDir();
    expect(() => cifar10.load({}, context({ FEDSCORE_DATA_DIR: empty }))).toThrow(
      `data.dataset 'cifar10': no CIFAR-10 batches in FEDSCORE_DATA_DIR=${empty}: expected ${join(empty, 'cifar-10-batches-bin')}/ with data_batch_1.bin … data_batch_5.bin and test_batch.bin`,
    );
  });
});
