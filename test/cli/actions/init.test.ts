/** src/cli/actions/init.ts: what `fedscore init` refuses before it writes anything (issue 32 W1). */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initProject } from '../../../src/cli/actions/init.js';

const tmp = mkdtempSync(join(tmpdir(), 'fedscore-init-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('initProject', () => {
  it('refuses a consortium of 2 silos, saying why, and writes nothing', async () => {
    const dir = join(tmp, 'two');
    await expect(
      initProject({
        dir,
        silos: 2,
        data: 'synthetic',
        formats: ['npy'],
        model: 'mlp',
        examplesPerSilo: 20,
        testSize: 20,
        rounds: 1,
        corruptSilos: 0,
        seed: 1,
      }),
    ).rejects.toThrow(
      /^--silos: a consortium needs at least 3 silos, got 2: in a round of 2 each silo would read the other's update off the published sum/,
    );
    expect(existsSync(dir)).toBe(false);
  });
});
