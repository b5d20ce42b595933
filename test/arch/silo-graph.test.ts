/**
 * The silo's runtime module graph (issue 33): what `fedscore client` runs (src/client/silo.ts) is
 * the silo's code — its learner, local training, the networked plan's use of it — and loads no
 * simulation engine, no estimator and no configuration schema; the defaults it needs (test-set
 * size, batch size, epochs) come from the contract (src/consortium/defaults.ts). Before issue 33 the
 * silo loaded the estimator registry and the schema to read DEFAULT_TEST_SIZE and
 * DEFAULT_BATCH_SIZE (171 modules, 12 estimator files among them).
 *
 * The silo's code lives in src/fl, a floor below both the simulation (src/sim) and the client;
 * the client reaches none of src/sim. A second check follows type imports too, from every file of
 * src/client and src/fl: the silo's code does not even name the simulation, an estimator or the
 * configuration schema (it reads a configuration as src/fl/run-config.ts's `RunConfig`). Before
 * that check, src/fl type-imported `ExperimentConfig`, and through records/config.ts the silo
 * reached the schema and all 12 estimator files.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fileCycles } from './_cycles.js';
import { moduleGraph } from './module-graph.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

const FORBIDDEN: readonly [RegExp, string][] = [
  [/(^|\/)estimators\//, 'a Shapley-family estimator'],
  [/(^|\/)config-schema\.ts$/, 'the experiment configuration schema'],
  [/^src\/records\/config\.ts$/, 'the configuration parser (it loads the estimator registry)'],
  [/^src\/sim\//, 'the in-process simulation'],
  [/^protocol\/simulate\.ts$/, "the simulation's protocol driver"],
];

describe("the silo's module graph (src/client/silo.ts)", () => {
  const graph = moduleGraph(root, 'src/client/silo.ts');

  it('reaches the protocol, the contract and its learner', () => {
    expect(graph.has('protocol/client.ts')).toBe(true);
    expect(graph.has('src/consortium/defaults.ts')).toBe(true);
    expect(graph.has('src/fl/learner/learner.ts')).toBe(true);
  });

  it('loads no simulation, estimator or configuration schema', () => {
    expect(forbiddenIn(graph)).toEqual([]);
  });
});

describe("the silo's code, type imports included (every file of src/client and src/fl)", () => {
  const filesUnder = (dir: string): string[] =>
    readdirSync(new URL(`../../${dir}`, import.meta.url), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? filesUnder(`${dir}/${e.name}`) : /\.ts$/.test(e.name) ? [`${dir}/${e.name}`] : [],
    );
  const entries = [...filesUnder('src/client'), ...filesUnder('src/fl')];
  const graph = moduleGraph(root, entries, { typeImports: true });

  it('covers the room and what it names', () => {
    expect(entries).toContain('src/fl/run-config.ts');
    expect(graph.has('src/consortium/defaults.ts')).toBe(true);
  });

  it('names no simulation, estimator or configuration schema, not even by type', () => {
    expect(forbiddenIn(graph)).toEqual([]);
  });

  it('a type import counts (the checker works)', () => {
    const runtime = moduleGraph(root, 'test/arch/_fixtures/type-only-importer.ts');
    const typed = moduleGraph(root, 'test/arch/_fixtures/type-only-importer.ts', { typeImports: true });
    expect(runtime.has('src/records/config.ts')).toBe(false);
    expect(forbiddenIn(typed)).toContain(
      'src/records/config.ts (the configuration parser (it loads the estimator registry))',
    );
  });
});

function forbiddenIn(graph: ReadonlySet<string>): string[] {
  return [...graph].flatMap((m) =>
    FORBIDDEN.filter(([re]) => re.test(m)).map(([, what]) => `${m} (${what})`),
  );
}

/**
 * Import cycles between files (type imports included) in src/, scoring/, protocol/ and crypto/:
 * the ones that exist are listed; a new one fails.
 */
const KNOWN_CYCLES = [
  ['src/data/files-dataset.ts', 'src/data/registry.ts'],
  ['src/fl/trainer.ts', 'src/fl/update-attacks.ts'],
  ['src/sim/round/references.ts', 'src/sim/round/setup.ts'],
  ['src/ml/_reduce.ts', 'src/ml/evaluate.ts'],
  ['src/ml/layers-model.ts', 'src/ml/model-registry.ts'],
  ['src/records/comparison-config.ts', 'src/records/config.ts'],
  // scoring.ts joined with main's 72893de (PUT utilities on a reports-only consortium).
  ['src/server/service/external.ts', 'src/server/service/rounds.ts', 'src/server/service/scoring.ts'],
  // Issue 37's headline: payout.ts names private.ts's CheckedUtilities type, private.ts registers
  // payout beside the schemes; the variant switch is headline-candidates' measurement knob.
  ['scoring/payout-variant.ts', 'scoring/payout.ts', 'scoring/private.ts'],
];

describe('no new import cycles', () => {
  it('the cycles of the source are the known ones', () => {
    const key = (c: readonly string[]) => [...c].sort().join(' ↔ ');
    const known = new Set(KNOWN_CYCLES.map(key));
    expect(
      fileCycles(root)
        .map(key)
        .filter((c) => !known.has(c)),
    ).toEqual([]);
  });

  it('finds a cycle (the checker works)', () => {
    expect(
      fileCycles(root, [
        { path: 'src/a/x.ts', text: "import { y } from './y.js';" },
        { path: 'src/a/y.ts', text: "import type { X } from './x.js';" },
        { path: 'src/a/z.ts', text: "import { y } from './y.js';" },
      ]),
    ).toEqual([['src/a/x.ts', 'src/a/y.ts']]);
  });
});
