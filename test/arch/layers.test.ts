/**
 * Guards the import direction of docs/architecture.md ("Layers"):
 *   scoring/ and crypto/ import nothing from the project; protocol/ imports crypto/ only;
 *   only src/ml imports TensorFlow.js; scoring/ imports no tensor library; protocol/ no network.
 * Imports point downward only, in the order of layers.ts `SRC_ORDER` (src/cli → sweep → server → sim →
 * client → report → audit → fl → records → estimators → strategies → ml → data → consortium → schema;
 * docs/architecture.md, "Layers").
 * A `_`-prefixed module is private to its folder (and the folders below it); test/ and bench/ are
 * exempt as importers (findPrivateImports in layers.ts says why).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  findPrivateImports,
  findSimulationRandomnessLeaks,
  findViolations,
  type SourceFile,
} from './layers.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function walk(dir: string, out: string[] = []): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function projectSources(dirs = ['scoring', 'crypto', 'protocol', 'src']): SourceFile[] {
  return dirs
    .flatMap((d) => walk(join(root, d)))
    .map((abs) => ({ path: relative(root, abs).split(sep).join('/'), text: readFileSync(abs, 'utf8') }));
}

describe('layering (docs/architecture.md)', () => {
  it('the project source tree respects the import direction', () => {
    const files = projectSources();
    expect(files.length).toBeGreaterThan(0);
    expect(findViolations(files)).toEqual([]);
  });

  it('flags each kind of violation (the checker itself can fail)', () => {
    const bad: SourceFile[] = [
      { path: 'scoring/a.ts', text: "import { x } from '../crypto/prg.js';" },
      { path: 'scoring/b.ts', text: "import * as tf from '@tensorflow/tfjs';" },
      { path: 'crypto/c.ts', text: "export { y } from '../scoring/metrics.js';" },
      { path: 'protocol/d.ts', text: "import { z } from '../src/sim/round-loop.js';" },
      { path: 'protocol/e.ts', text: "import net from 'node:net';" },
      { path: 'src/sim/f.ts', text: "const tf = await import('@tensorflow/tfjs');" },
      { path: 'src/strategies/up.ts', text: "import { run } from '../sim/engine.js';" },
      { path: 'src/consortium/up.ts', text: "import { r } from '../records/results.js';" },
      { path: 'src/data/g.ts', text: "import { h } from '../ml/model.js';" },
      { path: 'src/ml/h.ts', text: "import * as tf from '@tensorflow/tfjs';" },
      {
        path: 'src/ml/tf.ts',
        text: "import * as tf from '@tensorflow/tfjs';\nimport { r } from '../data/idx.js';",
      },
      {
        path: 'src/ml/ok.ts',
        text: "import * as tf from './tf.js';\nimport * as w from '@tensorflow/tfjs-backend-wasm';",
      },
      { path: 'protocol/ok.ts', text: "import { s } from '../crypto/shamir.js';" },
      {
        path: 'src/sim/ok.ts',
        text: "import { t } from '../../scoring/private.js';\nimport { u } from '../../protocol/server.js';",
      },
    ];
    const v = findViolations(bad).map((x) => x.file);
    expect(v).toEqual([
      'scoring/a.ts',
      'scoring/b.ts',
      'crypto/c.ts',
      'protocol/d.ts',
      'protocol/e.ts',
      'src/sim/f.ts',
      'src/strategies/up.ts',
      'src/consortium/up.ts',
      'src/data/g.ts',
      'src/ml/h.ts',
    ]);
  });

  it('the networked processes cannot reach simulation randomness (protocol/simulation-random.ts)', () => {
    expect(findSimulationRandomnessLeaks(projectSources())).toEqual([]);
  });

  it('flags a networked module reaching simulation randomness, directly or not', () => {
    const files: SourceFile[] = [
      { path: 'src/client/a.ts', text: "import { x } from '../sim/b.js';" },
      { path: 'src/sim/b.ts', text: "import { y } from '../../protocol/simulate.js';" },
      { path: 'protocol/simulate.ts', text: '' },
      { path: 'src/server/c.ts', text: "import { seededRandom } from '../../crypto/random-bytes.js';" },
      { path: 'crypto/random-bytes.ts', text: 'export function seededRandom() {}' },
      { path: 'src/client/ok.ts', text: "import { systemRandom } from '../../crypto/random-bytes.js';" },
    ];
    expect(findSimulationRandomnessLeaks(files).map((v) => [v.file, v.specifier])).toEqual([
      ['src/client/a.ts', 'src/client/a.ts → src/sim/b.ts → protocol/simulate.ts'],
      ['src/server/c.ts', 'src/server/c.ts'],
    ]);
  });
});

describe('`_` means private to its folder', () => {
  it('no `_` module of the project is imported from outside its folder', () => {
    const files = projectSources(['scoring', 'crypto', 'protocol', 'src', 'scripts']);
    expect(files.some((f) => f.path.startsWith('scripts/'))).toBe(true);
    expect(findPrivateImports(files)).toEqual([]);
  });

  it('flags an import of a `_` module from a sibling, a parent or another folder, not from below', () => {
    const files: SourceFile[] = [
      { path: 'protocol/a.ts', text: "import { checkBytes } from '../crypto/_check.js';" },
      { path: 'src/client/b.ts', text: "export { c } from '../../crypto/_check.js';" },
      { path: 'src/sim/c.ts', text: "const m = await import('../strategies/_schema.js');" },
      { path: 'src/sim/round/d.ts', text: "import type { T } from '../../estimators/_schema.js';" },
      { path: 'scoring/manipulation/ok.ts', text: "import { checkFiniteNumber } from '../_checks.js';" },
      { path: 'scoring/ok.ts', text: "import { Budget } from './_budget.js';" },
      { path: 'src/cli/commands/ok.ts', text: "import { required } from '../_flags.js';" },
      {
        path: 'protocol/ok.ts',
        text: "import { checkBytes } from '../crypto/check.js';\nimport x from '_pkg';",
      },
    ];
    expect(findPrivateImports(files).map((v) => [v.file, v.rule])).toEqual([
      ['protocol/a.ts', "crypto/_check.ts is private to crypto/ (give it a name without '_' to share it)"],
      ['src/client/b.ts', "crypto/_check.ts is private to crypto/ (give it a name without '_' to share it)"],
      [
        'src/sim/c.ts',
        "src/strategies/_schema.ts is private to src/strategies/ (give it a name without '_' to share it)",
      ],
      [
        'src/sim/round/d.ts',
        "src/estimators/_schema.ts is private to src/estimators/ (give it a name without '_' to share it)",
      ],
    ]);
  });
});
