/**
 * Issue 27, A7 (the smaller ones, but `advance`) — inputs accepted that should not be.
 *
 * Against dc1119c (these attacks run on the unchanged code; each test failed there):
 * - a model folder whose `weights.bin` is a symbolic link to a file outside it: read as the
 *   model's weights (the outside file's bytes came back as weight 'w'; `consortium create
 *   --server` would have uploaded them as M0);
 * - `fedscore audit --utilities` on a file with 1e308: here exit 0 with every bound of the
 *   summary "unbounded" (the run, on another file, got exit 1 "a[0]: expected a finite
 *   number, got Infinity"); utilities written in percent (62): exit 0, audited as if they were
 *   fractions; `fedscore score` took both without a word;
 * - `.npy` features of 3e38, and the same in a CSV: accepted as data.
 * Now: the symlink is refused naming the file and where it leads; the utilities are refused at
 * read time with their JSON path (exit 2, as every bad input file); the features are refused
 * naming the file, the index and the bound.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCsvDataset } from '../../src/data/csv.js';
import { MAX_FEATURE_MAGNITUDE } from '../../src/data/limits.js';
import { loadLocalData } from '../../src/data/local-data.js';
import { encodeNpy } from '../../src/data/npy.js';
import { readLayersModelFiles } from '../../src/ml/layers-files.js';
import { cli } from '../cli/_cli.js';

const dir = mkdtempSync(join(tmpdir(), 'fedscore-a7-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('A7: the model reader follows no symbolic link out of the model folder', () => {
  it('a weights.bin linking to a file outside the folder is refused', () => {
    const outside = join(dir, 'outside');
    const model = join(dir, 'model');
    mkdirSync(outside);
    mkdirSync(model);
    const secret = Float32Array.of(3.25, -1.5, 42, 7);
    writeFileSync(join(outside, 'secret.bin'), new Uint8Array(secret.buffer));
    symlinkSync(join(outside, 'secret.bin'), join(model, 'weights.bin'));
    writeFileSync(
      join(model, 'model.json'),
      JSON.stringify({
        format: 'layers-model',
        modelTopology: { class_name: 'Sequential', config: { layers: [] } },
        weightsManifest: [{ paths: ['weights.bin'], weights: [{ name: 'w', shape: [4], dtype: 'float32' }] }],
      }),
    );
    // dc1119c: returned { w: [3.25, -1.5, 42, 7] }, the outside file's bytes.
    let got: unknown;
    try {
      got = Array.from(readLayersModelFiles(join(model, 'model.json')).weights.get('w') ?? []);
    } catch (e) {
      got = e;
    }
    expect(got).toBeInstanceOf(RangeError);
    expect((got as Error).message).toMatch(
      new RegExp(
        `^model: ${join(model, 'model.json')}: weight file 'weights.bin' resolves to .*outside/secret\\.bin, outside the model's directory .*model \\(a symbolic link out of it is refused\\)$`,
      ),
    );
    // A link inside the folder is still read.
    writeFileSync(join(model, 'real.bin'), new Uint8Array(secret.buffer));
    rmSync(join(model, 'weights.bin'));
    symlinkSync(join(model, 'real.bin'), join(model, 'weights.bin'));
    expect(Array.from(readLayersModelFiles(join(model, 'model.json')).weights.get('w')!)).toEqual([
      3.25, -1.5, 42, 7,
    ]);
  });
});

/** A utilities file of one round of three silos with `withOnly[0]` = `v`. */
function utilities(name: string, v: number | string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `{"rounds":[{"round":1,"full":0.8,"empty":0.5,"withOnly":[${v},0.6,0.7],"without":[0.7,0.75,0.72]}]}`,
  );
  return path;
}

describe('A7: utilities near the float limit, or in percent', () => {
  it('fedscore audit: 1e308 is refused with its JSON path (exit 2), not an internal error', async () => {
    const path = utilities('huge.json', '1e308');
    // dc1119c: exit 0, the audit's summary "unbounded" in every column (nothing refused).
    const r = await cli(['audit', '--utilities', path]);
    expect({ code: r.code, err: r.err }).toEqual({
      code: 2,
      err: `fedscore: ${path}: invalid utilities file (docs/utilities.md)\n  rounds[0].withOnly[0]: 1e+308 is beyond ±1e+6, the largest utility read (accuracies lie in [0, 1])\n`,
    });
    const score = await cli(['score', '--utilities', path, '--out', join(dir, 'huge-scores')]);
    expect(score.code).toBe(2);
    expect(score.err).toContain('rounds[0].withOnly[0]: 1e+308 is beyond ±1e+6');
  });

  it('fedscore audit and fedscore score refuse utilities in percent naming the path, with the percent hint', async () => {
    const path = utilities('percent.json', '62');
    // dc1119c: exit 0, the audit of 62 as if it were an accuracy in [0, 1]; score scored it too.
    const expected = `fedscore: ${path}: invalid utilities file (docs/utilities.md)\n  rounds[0].withOnly[0]: 62 is outside the declared range [0, 1] (the default; a file of other utilities declares \`range\`) — 62 looks like a percentage (100·correct/total): write 0.62, the fraction\n`;
    const r = await cli(['audit', '--utilities', path]);
    expect({ code: r.code, err: r.err }).toEqual({ code: 2, err: expected });
    // Issue 22: \`score\` no longer scores a percent file with a warning; it refuses it the same way.
    const score = await cli(['score', '--utilities', path, '--out', join(dir, 'percent-scores')]);
    expect(score.code).toBe(2);
    expect(score.err).toContain('62 looks like a percentage (100·correct/total): write 0.62, the fraction');
  }, 20_000);
});

describe('A7: data features outside a sane range', () => {
  it('.npy features of 3e38 are refused naming the file and the first index', async () => {
    const d = join(dir, 'npy');
    mkdirSync(d);
    const x = new Float32Array(2 * 4).fill(0.5);
    x[6] = 3e38;
    writeFileSync(join(d, 'x.npy'), encodeNpy(x, [2, 4]));
    writeFileSync(join(d, 'y.npy'), encodeNpy(Int32Array.of(0, 1), [2]));
    // dc1119c: accepted ({ n: 2 }, x[6] = 3e38).
    await expect(loadLocalData(d, { inputShape: [1, 4, 1], numClasses: 2 })).rejects.toThrow(
      `${join(d, 'x.npy')}: feature value ${Math.fround(3e38)} at index 6 (example 1, feature 2) is beyond ±1e+6: features must be finite with |x| ≤ 1e+6 (scale the data)`,
    );
    // The bound itself is accepted.
    x[6] = -MAX_FEATURE_MAGNITUDE;
    writeFileSync(join(d, 'x.npy'), encodeNpy(x, [2, 4]));
    expect((await loadLocalData(d, { inputShape: [1, 4, 1], numClasses: 2 })).x[6]).toBe(-1e6);
  });

  it('CSV features of 3e38 are refused the same way', () => {
    const path = join(dir, 'big.csv');
    writeFileSync(path, 'a,b,label\n0.1,0.2,0\n0.3,3e38,1\n');
    // dc1119c: accepted (x[3] = 3e38).
    expect(() => readCsvDataset(path, { inputShape: [1, 2, 1], numClasses: 2 })).toThrow(
      `${path}: feature value ${Math.fround(3e38)} at index 3 (example 1, feature 1) is beyond ±1e+6`,
    );
  });
});
