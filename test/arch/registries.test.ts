/**
 * Registries are the only place names are listed: the name of each built-in estimator, data set,
 * model, strategy and coalition convention is written exactly once in the non-test source, in its
 * registry entry, and everything else (harness, configuration schema, experiment, CLI, server,
 * benches) asks the registry or takes the entry's name (`fedAvgEntry.name`, `DEFAULT_DATASET`,
 * `DEFAULT_CONVENTION`). What counts as writing a name, and what is scanned: ./_names.ts.
 *
 * A use of a name that means something else is listed below with the file, the exact count and
 * why; the test fails when a file writes a name more often than its exception allows, and when an
 * exception is no longer needed (count too high), so the list stays short and true.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONVENTIONS } from '../../src/consortium/convention.js';
import { DATA_FORMATS } from '../../src/data/formats/registry.js';
import { BUILTIN_MISBEHAVIORS } from '../../src/data/misbehaviors/registry.js';
import { BUILTIN_DATASETS } from '../../src/data/registry.js';
import { BUILT_IN_ESTIMATORS } from '../../src/estimators/registry.js';
import { BUILTIN_MODELS } from '../../src/ml/model-registry.js';
import { BUILT_IN_STRATEGIES } from '../../src/strategies/registry.js';
import { findNameUses, type NameHit, ROOT, sourceNameUses } from './_names.js';

/** Where a built-in's name is written: its entry (a string, initializing `property` if given). */
interface Home {
  registry: string;
  name: string;
  file: string;
  property?: string;
}

const HOMES: Home[] = [
  ...BUILT_IN_ESTIMATORS.map((e) => ({
    registry: 'estimator',
    name: e.name,
    file: `src/estimators/${e.name}.ts`,
    property: 'name',
  })),
  ...BUILTIN_DATASETS.map((d) => ({
    registry: 'data set',
    name: d.name,
    file: 'src/data/registry.ts',
    property: 'name',
  })),
  ...BUILTIN_MODELS.map((m) => ({
    registry: 'model',
    name: m.kind,
    file: 'src/ml/model-registry.ts',
    property: 'kind',
  })),
  ...BUILT_IN_STRATEGIES.map((s) => ({
    registry: 'strategy',
    name: s.name,
    file: `src/strategies/${s.name}.ts`,
    property: 'name',
  })),
  // The list `CONVENTIONS = ['fedavg', 'additive']`: elements, no property.
  ...CONVENTIONS.map((c) => ({
    registry: 'convention',
    name: c as string,
    file: 'src/consortium/convention.ts',
  })),
];

/** Uses of a name that mean something else: the file, the name, how often, and why. */
const EXCEPTIONS: { file: string; name: string; count: number; why: string }[] = [
  {
    file: 'src/consortium/defaults.ts',
    name: 'fedavg',
    count: 1,
    why: "the contract's default strategy (what a service without one runs, as a silo compares it); the contract sits below the strategy registry, whose DEFAULT_STRATEGY is this name (test/strategies/registry.test.ts checks it is registered)",
  },
  {
    file: 'scripts/false-flags.ts',
    name: 'maverick',
    count: 2,
    why: "a silo's role (papers/000 Fig. 1) in the recorded runs, not the estimator: Mavericks are honest and counted apart",
  },
  {
    file: 'scripts/headline-candidates.ts',
    name: 'mrsv',
    count: 1,
    why: "the reference of the candidates' table: a run's cumulative MR-SV, read from its results (docs/findings.md)",
  },
  {
    file: 'src/data/partition-registry.ts',
    name: 'maverick',
    count: 1,
    why: "a silo's role (papers/000 Fig. 1), not the estimator",
  },
  {
    file: 'src/strategies/fedms.ts',
    name: 'gtg',
    count: 2,
    why: "FedMS's own `estimator` parameter (MS-GTG inside the strategy: values and default of its one schema), not the harness estimator",
  },
  {
    file: 'scoring/games.ts',
    name: 'banzhaf',
    count: 4,
    why: "a known game's closed-form Banzhaf value (the mathematical quantity scoring/ tests against)",
  },
  {
    file: 'bench/estimators.ts',
    name: 'banzhaf',
    count: 6,
    why: 'which value a scoring/ micro-benchmark compares against (Shapley or Banzhaf)',
  },
  {
    file: 'src/data/fashion-mnist.ts',
    name: 'fashion-mnist',
    count: 2,
    why: 'the directory the IDX files sit in (examples/data/fashion-mnist/, $FEDSCORE_DATA_DIR/fashion-mnist/)',
  },
  {
    file: 'src/data/cifar10.ts',
    name: 'cifar10',
    count: 2,
    why: 'the default Dataset.name of a CIFAR-10 batch file read on its own (the reader, not the registry)',
  },
  {
    file: 'bench/round.ts',
    name: 'fashion-mnist',
    count: 1,
    why: "the benchmark's configuration (the setting docs/performance.md reports), data like examples/*.json",
  },
  {
    file: 'bench/round.ts',
    name: 'mlp',
    count: 1,
    why: "the benchmark's configuration (the setting docs/performance.md reports), data like examples/*.json",
  },
  {
    file: 'bench/multi-round.ts',
    name: 'fedavg',
    count: 1,
    why: 'a configuration of the multi-round differencing table (docs/threat-model.md): the networked strategies whose selection changes, with their parameters, data like examples/*.json',
  },
  {
    file: 'bench/multi-round.ts',
    name: 'score-selection',
    count: 1,
    why: 'a configuration of the multi-round differencing table (docs/threat-model.md): the networked strategies whose selection changes, with their parameters, data like examples/*.json',
  },
  {
    file: 'bench/multi-round.ts',
    name: 'score-weighted',
    count: 1,
    why: 'a configuration of the multi-round differencing table (docs/threat-model.md): the networked strategies whose selection changes, with their parameters, data like examples/*.json',
  },
  {
    file: 'bench/ml.ts',
    name: 'mlp',
    count: 1,
    why: 'the key prefix of the PyTorch reference figures (`mlp_train_samples_per_s`), not the model kind',
  },
  {
    file: 'src/ml/starter-model.ts',
    name: 'mlp',
    count: 1,
    why: '`fedscore init --model mlp`: the starter Layers model init writes (it runs as a tfjs-layers model), not the built-in mlp kind',
  },
  {
    file: 'src/cli/commands/init.ts',
    name: 'mlp',
    count: 1,
    why: "`fedscore init --model`'s default, the starter model (src/ml/starter-model.ts); flag declarations load no registry",
  },
  {
    file: 'src/cli/commands/init.ts',
    name: 'fashion-mnist',
    count: 1,
    why: "`fedscore init --data`'s default in its flag declaration (commands are loaded up front and load no registry)",
  },
  ...(
    [
      ['mlp', 5],
      ['cnn003', 3],
      ['lenet5', 3],
    ] as const
  ).map(([name, count]) => ({
    file: 'bench/gpu.ts',
    name,
    count,
    why: "the device check's models and their reference figures, the setting docs/performance.md's GPU section reports",
  })),
  ...(['cnn003', 'lenet5'] as const).map((name) => ({
    file: 'bench/gpu-conv-step.ts',
    name,
    count: 1,
    why: 'the two built-in conv models whose fused step this bench times (docs/performance.md, "The fused conv step")',
  })),
  {
    file: 'bench/gpu-table.ts',
    name: 'mlp',
    count: 1,
    why: 'the model of the coalition-table profile (docs/performance.md, "The coalition table on the GPU")',
  },
];

const NAMES = new Set(HOMES.map((h) => h.name));
const isHome = (h: NameHit) =>
  h.kind === 'string' &&
  HOMES.some((home) => home.name === h.name && home.file === h.file && home.property === h.property);
const excused = (h: NameHit) => EXCEPTIONS.some((x) => x.file === h.file && x.name === h.name);
const where = (h: NameHit) =>
  `${h.file}:${h.line}: '${h.name}' (${h.kind}${h.property ? ` of ${h.property}` : ''})`;

describe('registries are the only place names are written', () => {
  const hits = sourceNameUses(NAMES);

  it('sees every registry and its built-ins', () => {
    const count = (registry: string) => HOMES.filter((h) => h.registry === registry).length;
    expect(count('estimator')).toBeGreaterThanOrEqual(9);
    expect(count('data set')).toBeGreaterThanOrEqual(3);
    expect(count('model')).toBeGreaterThanOrEqual(3);
    expect(count('strategy')).toBeGreaterThanOrEqual(8);
    expect(count('convention')).toBe(2);
    expect(hits.length).toBeGreaterThanOrEqual(HOMES.length);
  });

  it.each(HOMES)('the $registry $name is written once in $file, in its entry', (home) => {
    const inFile = hits.filter((h) => h.name === home.name && h.file === home.file);
    expect(inFile.map(where)).toHaveLength(1);
    expect(inFile[0]).toMatchObject({
      kind: 'string',
      ...(home.property ? { property: home.property } : {}),
    });
  });

  it('no built-in name is written anywhere else (outside the exceptions)', () => {
    expect(hits.filter((h) => !isHome(h) && !excused(h)).map(where)).toEqual([]);
  });

  it.each(EXCEPTIONS)('$file writes $name exactly $count times (the exception is still needed)', (x) => {
    const uses = hits.filter((h) => h.file === x.file && h.name === x.name && !isHome(h));
    expect(uses.map(where), x.why).toHaveLength(x.count);
  });
});

describe('the scanner (./_names.ts)', () => {
  const names = new Set(['gtg', 'owen', 'mc', 'mrsv', 'cos', 'tsv', 'banzhaf', 'maverick', 'tmr', 'lenet5']);

  it('flags literals, template pieces, keys and accesses; ignores comments, prose and Math.cos', () => {
    const text = [
      "// 'gtg' in a comment",
      '/* and "owen" in a block comment */',
      "const a = 'gtg';",
      'const b = ["owen", `mc`];',
      'const c = { mrsv: {}, "cos": 1 };',
      'interface D { tsv?: number }',
      'const e = cfg.estimators.banzhaf;',
      "type F = 'maverick' | 'exact';",
      "const g = 'add comparison.estimators.tmr';",
      'const h = Math.cos(1);',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: source text with a template literal in it
      'const i = `${x}tmr`;',
      "const j = { kind: 'lenet5' };",
    ].join('\n');
    expect(
      findNameUses('x.ts', text, names).map((h) => `${h.line}:${h.name}:${h.kind}:${h.property ?? ''}`),
    ).toEqual([
      '3:gtg:string:',
      '4:owen:string:',
      '4:mc:string:',
      '5:mrsv:property:',
      '5:cos:string:',
      '6:tsv:property:',
      '7:banzhaf:access:',
      '8:maverick:string:',
      '11:tmr:string:',
      '12:lenet5:string:kind',
    ]);
  });
});

/**
 * Data formats and simulated misbehaviours (`attacks[].kind`) have short everyday names ('csv',
 * 'scale'), so they are not held to "written once"; what keeps them one file and one line each is
 * that nothing but their own folder lists or switches on them: a file that writes two different
 * names of one kind (a second list, a switch or an if-chain) fails unless excepted below.
 */
const PLUGIN_KINDS = [
  {
    kind: 'data format',
    folder: 'src/data/formats/',
    list: 'src/data/formats/builtin.ts',
    names: DATA_FORMATS.map((f) => f.name),
    file: (name: string) => `src/data/formats/${name}.ts`,
  },
  {
    kind: 'misbehaviour',
    folder: 'src/data/misbehaviors/',
    list: 'src/data/misbehaviors/builtin.ts',
    names: BUILTIN_MISBEHAVIORS.map((m) => m.name),
    file: (name: string) => `src/data/misbehaviors/${name}.ts`,
  },
];

/** Files that write two or more names of one kind for another reason. */
const LIST_EXCEPTIONS: { file: string; kind: string; why: string }[] = [];

describe('data formats and misbehaviours: one file each, one registry line', () => {
  it.each(PLUGIN_KINDS)('each $kind lives in its own file, named in its entry', ({ names, file }) => {
    expect(names.length).toBeGreaterThanOrEqual(4);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) {
      const hits = findNameUses(file(name), readFileSync(join(ROOT, file(name)), 'utf8'), new Set([name]));
      expect(
        hits.some((h) => h.kind === 'string' && h.property === 'name'),
        file(name),
      ).toBe(true);
    }
  });

  it.each(PLUGIN_KINDS)(
    '$list is one `export { x } from` line per $kind and nothing else',
    ({ list, names, file }) => {
      const lines = readFileSync(join(ROOT, list), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '' && !/^\s*(\/\*\*|\*|\/\/)/.test(l));
      const listed = lines.map(
        (l) => /^export \{ \w+ \} from '\.\/([\w-]+)\.js';$/.exec(l)?.[1] ?? `not a list line: ${l}`,
      );
      expect(listed.map((f) => `src/${list.split('/').slice(1, -1).join('/')}/${f}.ts`).sort()).toEqual(
        names.map(file).sort(),
      );
    },
  );

  it('data formats have distinct detection ranks (the detection order is theirs, not the list order)', () => {
    const ranks = DATA_FORMATS.map((f) => f.detectionRank);
    expect(new Set(ranks).size).toBe(ranks.length);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });

  it.each(PLUGIN_KINDS)('no file outside $folder lists two $kind names', ({ kind, folder, names }) => {
    const hits = sourceNameUses(new Set(names)).filter(
      (h) => h.kind === 'string' && !h.file.startsWith(folder),
    );
    const byFile = new Map<string, Set<string>>();
    for (const h of hits) byFile.set(h.file, (byFile.get(h.file) ?? new Set()).add(h.name));
    const lists = [...byFile]
      .filter(
        ([file, found]) =>
          found.size >= 2 && !LIST_EXCEPTIONS.some((x) => x.file === file && x.kind === kind),
      )
      .map(([file, found]) => `${file}: ${[...found].join(', ')}`);
    expect(lists).toEqual([]);
  });
});
