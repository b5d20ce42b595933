/**
 * Issue 23: `fedscore init --data <file>` splits a user's own data (the `files` data set,
 * src/data/files-dataset.ts): x.npy + y.npy or a CSV file with a label column. The project copies
 * the files into source-data/, its config.json names them relative to the project with the shape
 * and classes read off the data, and that configuration, read from the project's folder as the
 * service reads it, gives the same common test set (digest) as the consortium file pins.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initProject } from '../../../src/cli/actions/init.js';
import type { LocalFormat } from '../../../src/data/local-data.js';
import { encodeNpy, readNpy } from '../../../src/data/npy.js';
import { networkedRun } from '../../../src/fl/networked.js';
import { parseConfig } from '../../../src/records/config.js';

const dir = mkdtempSync(join(tmpdir(), 'fedscore-init-data-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const N = 240;
const F = 6;
/** Three well-separated classes of 6 features (a seeded LCG, no randomness of the test's own). */
const x = new Float32Array(N * F);
const y = new Int32Array(N);
let state = 7;
const noise = () => {
  state = (state * 1103515245 + 12345) % 2 ** 31;
  return state / 2 ** 31 - 0.5;
};
for (let i = 0; i < N; i++) {
  y[i] = i % 3;
  for (let j = 0; j < F; j++) x[i * F + j] = (j % 3 === y[i] ? 1 : 0) + 0.2 * noise();
}
const own = join(dir, 'mine');
writeFileSync(join(dir, 'x.npy'), encodeNpy(x, [N, F]));
writeFileSync(join(dir, 'y.npy'), encodeNpy(y, [N]));
const csv = [
  [...Array.from({ length: F }, (_, j) => `f${j}`), 'label'].join(','),
  ...Array.from({ length: N }, (_, i) =>
    [...x.subarray(i * F, (i + 1) * F)]
      .map((v) => v.toFixed(4))
      .concat(String(y[i]))
      .join(','),
  ),
].join('\n');
writeFileSync(join(dir, 'patients.csv'), `${csv}\n`);

const init = (
  project: string,
  data: string,
  out: (s: string) => void = () => {},
  formats: LocalFormat[] = ['npy', 'csv'],
) =>
  initProject(
    {
      dir: join(own, project),
      silos: 3,
      data,
      formats,
      model: 'mlp',
      examplesPerSilo: 100,
      testSize: 100,
      rounds: 2,
      corruptSilos: 0,
      seed: 1,
      backend: 'cpu',
    },
    out,
  );

describe('fedscore init --data <your file>', () => {
  it('x.npy: copied into the project, described in config.json, split among the silos', async () => {
    let said = '';
    const project = await init('npy', join(dir, 'x.npy'), (s) => {
      said += s;
    });
    const p = join(own, 'npy');
    // It says where the examples went, and why.
    expect(said).toContain(
      `data: ${N} examples in ${join(dir, 'x.npy')}: 60 to the common test set every silo evaluates on (a quarter of the examples, at most --test-size 100, the same number of each class), 24 to the server's validation set (a tenth of the examples, at most 500; FedTSV's reference), ${N - 60 - 24} shared among the 3 silos`,
    );
    const config = JSON.parse(readFileSync(join(p, 'config.json'), 'utf8'));
    expect(config.data).toEqual({
      dataset: 'files',
      testSize: 60, // a quarter of the 240 examples, below --test-size 100
      files: { path: 'source-data/x.npy', format: 'npy', shape: [1, F, 1], classes: 3 },
    });
    for (const f of ['source-data/x.npy', 'source-data/y.npy']) expect(existsSync(join(p, f)), f).toBe(true);
    expect(readNpy(join(p, 'test-set/y.npy')).shape).toEqual([60]);
    // every example not in the test set (60) or the validation set (24) goes to a silo
    expect(project.silos.reduce((k, s) => k + s.examples, 0)).toBe(N - 60 - 24);
    expect(project.silos.map((s) => s.format)).toEqual(['npy', 'csv', 'npy']);
    // The configuration as the service reads it from the project's folder: the pinned test set.
    const pinned = JSON.parse(readFileSync(join(p, 'consortium.json'), 'utf8')).testSetDigest;
    const abs = parseConfig({
      ...config,
      data: { ...config.data, files: { ...config.data.files, path: join(p, config.data.files.path) } },
    });
    expect(networkedRun(abs, 1).testSetDigest).toBe(pinned);
  }, 60_000);

  it('a CSV file with a label column', async () => {
    await init('csv', join(dir, 'patients.csv'));
    const config = JSON.parse(readFileSync(join(own, 'csv', 'config.json'), 'utf8'));
    expect(config.data.files).toEqual({
      path: 'source-data/patients.csv',
      format: 'csv',
      shape: [1, F, 1],
      classes: 3,
    });
    expect(existsSync(join(own, 'csv', 'source-data/patients.csv'))).toBe(true);
  }, 60_000);

  it('issue 34: an init that fails half-way leaves nothing behind, and the retry succeeds', async () => {
    // IDX stores pixels in [0, 1]: these data have other values, refused once the silos' data are written.
    await expect(init('retry', join(dir, 'patients.csv'), () => {}, ['csv', 'idx'])).rejects.toThrow(
      /--format: idx stores pixels in \[0, 1\]/,
    );
    expect(existsSync(join(own, 'retry'))).toBe(false);
    expect(readdirSync(own).filter((f) => f.includes('retry'))).toEqual([]);
    await init('retry', join(dir, 'patients.csv'), () => {}, ['csv']);
    expect(existsSync(join(own, 'retry', 'fedscore-project.json'))).toBe(true);
  }, 60_000);

  it('a path that does not exist says "not found" with the path, and names the built-ins; files without its block is refused', async () => {
    await expect(init('none', join(dir, 'nope.npy'))).rejects.toThrow(
      `--data: '${join(dir, 'nope.npy')}' is not a built-in data set (fashion-mnist, synthetic, cifar10), and as a data file (x.npy with y.npy beside it, an IDX images file, a .csv file with a label column) ${join(dir, 'nope.npy')} was not found`,
    );
    expect(existsSync(join(own, 'none'))).toBe(false);
    expect(() => parseConfig({ silos: 2, rounds: 1, data: { dataset: 'files' } })).toThrow(
      "data.files: required for data.dataset 'files' (with path, shape, classes)",
    );
  });
});
