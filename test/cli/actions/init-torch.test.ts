/**
 * `fedscore init --trainer torch` where Python lacks torch: one line saying so, before anything is
 * written; and the Python helper's own line when a trainer's interpreter lacks torch.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { torchModelPy, torchPython } from '../../../src/cli/actions/init-torch.js';
import { createTrainerLearner } from '../../../src/fl/learner/trainer-learner.js';

const dir = mkdtempSync(join(tmpdir(), 'fedscore-init-torch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const PY = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

describe('a Python without torch', () => {
  it('init --trainer torch refuses it in one line naming the package', () => {
    const fake = join(dir, 'python-without-torch');
    writeFileSync(fake, '#!/bin/sh\necho "ModuleNotFoundError: No module named \'torch\'" >&2\nexit 1\n');
    chmodSync(fake, 0o755);
    expect(() => torchPython({ FEDSCORE_PYTHON: fake })).toThrow(
      `--trainer torch: ${fake} lacks torch (Debian: apt-get install python3-torch python3-numpy; or set FEDSCORE_PYTHON to an interpreter that has them)`,
    );
    expect(() => torchPython({ FEDSCORE_PYTHON: join(dir, 'no-such-python') })).toThrow(
      /^--trainer torch: cannot run .*no-such-python \(ENOENT\); install Python 3 or set FEDSCORE_PYTHON$/,
    );
  });

  it("the trainer's helper says so in one line, which the silo quotes naming the operation", async () => {
    writeFileSync(join(dir, 'model.py'), torchModelPy([28, 28, 1], 10));
    // torch made unimportable: sys.modules['torch'] = None makes `import torch` raise ImportError.
    const command = `${PY} -c "import sys, runpy; sys.modules['torch'] = None; runpy.run_path('model.py', run_name='__main__')"`;
    await expect(
      createTrainerLearner({ command, cwd: dir, inputShape: [28, 28, 1], numClasses: 10, log: () => {} }),
    ).rejects.toThrow(
      /^trainer layout: the trainer '.*' exited with code 3; its last stderr lines: fedscore_client\.trainer: .* lacks torch \(Debian: apt-get install python3-torch python3-numpy; elsewhere: pip install torch numpy\)$/,
    );
  });
});
