/** readProject (src/cli/actions/project.ts): what `fedscore up <dir>` says of a folder that is not a project. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_FILE, readProject } from '../../../src/cli/actions/project.js';

const work = mkdtempSync(join(tmpdir(), 'fedscore-project-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('readProject', () => {
  it('a missing folder is not a project, and init is named', () => {
    const dir = join(work, 'nope');
    expect(() => readProject(dir)).toThrow(
      new RangeError(
        `${dir} is not a consortium project (no ${PROJECT_FILE}; create one with "fedscore init ${dir}")`,
      ),
    );
  });

  it('a file given for the folder (`fedscore up demo/config.json`) is named as a file', () => {
    const file = join(work, 'config.json');
    writeFileSync(file, '{}');
    expect(() => readProject(file)).toThrow(`${file} is a file, not a consortium project's folder`);
  });

  it('a project file that is not JSON, or not a project file, names the file', () => {
    const bad = join(work, 'bad');
    const wrong = join(work, 'wrong');
    for (const [dir, text] of [
      [bad, '{'],
      [wrong, '{"format":"other"}'],
    ] as const) {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      writeFileSync(join(dir, PROJECT_FILE), text);
    }
    expect(() => readProject(bad)).toThrow(`${join(bad, PROJECT_FILE)}: `);
    expect(() => readProject(wrong)).toThrow(
      `${join(wrong, PROJECT_FILE)}: format: expected a version-1 fedscore-project file`,
    );
  });
});
