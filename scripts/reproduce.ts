/**
 * Runs a list of experiment configurations and prints the markdown tables of docs/reproductions.md
 * from their results.json, so the tables there are generated, not typed.
 *
 *   npx tsx scripts/reproduce.ts run   --out DIR [--seeds k] [--jobs j] examples/a.json …
 *   npx tsx scripts/reproduce.ts table --out DIR [--methods loo,fp,ee,eeMedian,cos] examples/a.json …
 *   npx tsx scripts/reproduce.ts outcomes --out DIR examples/a.json …
 *   npx tsx scripts/reproduce.ts paper003 --out DIR [--methods …] examples/paper003-*table*.json
 *
 * `run` starts `fedscore experiment --config <file> --out DIR/<stem> [--seeds k]` for each file, at
 * most `jobs` (default 1) at a time, logging to DIR/<stem>.log; a configuration whose
 * DIR/<stem>/results.json exists is skipped (so a run list can be resumed). `table` prints, per
 * reference, one row per configuration: mean ± std over seeds of the Spearman correlation of each
 * method with the reference (± std only with several seeds), the seeds whose compared round had a
 * Fair-Private normalizer Σα ≤ 0, and the wall time. `outcomes` prints the final accuracy and the
 * mean accuracy over the last 5 rounds, the strategy's own coalition evaluations per round and the
 * per-role participation rates of selection experiments (papers/000 Table 2, papers/004).
 * `paper003` prints one table per number of silos: a row per configuration and reference, and
 * below them papers/003's own numbers for that many silos (Table 4 and Table 7, quoted in
 * `PAPER003`).
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_CONVENTION } from '../src/consortium/convention.js';
import { cos } from '../src/estimators/cos.js';
import { mrsv } from '../src/estimators/mrsv.js';
import { ROUND_SV, TRUE_SV } from '../src/records/compare.js';
import type { ExperimentResults, MeanStd } from '../src/records/results.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    out: { type: 'string' },
    seeds: { type: 'string' },
    jobs: { type: 'string', default: '1' },
    methods: { type: 'string', default: 'loo,fp,ee,eeMedian,cos' },
    metric: { type: 'string', default: 'spearman' },
  },
});
const [mode, ...configs] = positionals;
if (!values.out || !mode || configs.length === 0) {
  process.stderr.write(
    'usage: reproduce.ts run|table|outcomes|paper003 --out DIR [--seeds k] [--jobs j] [--methods a,b] config.json …\n',
  );
  process.exit(2);
}
const out = values.out;
const stem = (file: string) => basename(file).replace(/\.json$/, '');
const resultsOf = (file: string): ExperimentResults | undefined => {
  const path = join(out, stem(file), 'results.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as ExperimentResults) : undefined;
};

/** Runs one configuration as a child process; resolves with its exit code. */
function runOne(file: string): Promise<number> {
  const args = ['tsx', 'src/cli/main.ts', 'experiment', '--config', file, '--out', join(out, stem(file))];
  if (values.seeds) args.push('--seeds', values.seeds);
  const log = createWriteStream(join(out, `${stem(file)}.log`));
  const t0 = Date.now();
  process.stderr.write(`start ${stem(file)}\n`);
  return new Promise((resolve) => {
    const child = spawn('npx', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on('close', (code) => {
      log.end();
      process.stderr.write(
        `done  ${stem(file)}: exit ${code} after ${((Date.now() - t0) / 60_000).toFixed(1)} min\n`,
      );
      resolve(code ?? 1);
    });
  });
}

async function run(): Promise<number> {
  mkdirSync(out, { recursive: true });
  const queue = configs.filter((f) => {
    if (resultsOf(f)) process.stderr.write(`skip  ${stem(f)}: results.json exists\n`);
    return !resultsOf(f);
  });
  let failed = 0;
  const worker = async () => {
    for (let f = queue.shift(); f !== undefined; f = queue.shift()) if ((await runOne(f)) !== 0) failed++;
  };
  await Promise.all(Array.from({ length: Math.max(1, Number(values.jobs)) }, worker));
  return failed > 0 ? 1 : 0;
}

const fmt = (x: number | null | undefined) =>
  x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(3).replace(/^-/, '−');
const cell = (m: MeanStd | undefined, seeds: number) =>
  m ? (seeds > 1 ? `${fmt(m.mean)} ± ${fmt(m.std)}` : fmt(m.mean)) : '–';
const minutes = (ms: number) => `${(ms / 60_000).toFixed(1)} min`;
const conventionOf = (r: ExperimentResults) =>
  `${r.scoring?.coalitions ?? DEFAULT_CONVENTION}, v(∅) = ${r.scoring?.emptyCoalition === 'zero' ? '0' : 'v(M0)'}`;

async function table(): Promise<number> {
  const { normalizerProblems } = await import('../src/report/report.js');
  const methods = (values.methods ?? '').split(',').filter(Boolean);
  const metric = values.metric as 'spearman' | 'kendall' | 'pearson' | 'l2';
  const loaded = configs.map((f) => [f, resultsOf(f)] as const);
  for (const [f, r] of loaded) if (!r) process.stderr.write(`no results for ${stem(f)} under ${out}\n`);
  const references = [...new Set(loaded.flatMap(([, r]) => r?.comparison.references ?? []))];
  for (const reference of references) {
    const rows = loaded.filter(([, r]) => r?.comparison.byReference?.[reference]);
    if (rows.length === 0) continue;
    process.stdout.write(`\n${metric} against ${reference}:\n\n`);
    process.stdout.write(
      `| configuration | coalitions, v(∅) | silos | seeds | ${methods.join(' | ')} | seeds with Σα ≤ 0 at the compared round | wall time |\n`,
    );
    process.stdout.write(`|---|---|---:|---:|${methods.map(() => '---:').join('|')}|---:|---:|\n`);
    for (const [f, r] of rows) {
      const res = r!;
      const table = res.comparison.byReference![reference]!;
      const seeds = res.seeds.length;
      const inverted = normalizerProblems(res).filter((p) => p.compared && p.fp <= 0);
      const bad = [...new Set(inverted.map((p) => p.seed))];
      process.stdout.write(
        `| \`${stem(f)}\` | ${conventionOf(res)} | ${res.silos.count} | ${seeds} | ${methods
          .map((m) => cell(table[m]?.[metric], seeds))
          .join(
            ' | ',
          )} | ${bad.length}/${seeds}${bad.length > 0 ? ` (${bad.join(', ')})` : ''} | ${minutes(res.wallTimeMs)} |\n`,
      );
    }
  }
  return 0;
}

/**
 * papers/003's Spearman correlations with MR-SV at round 10 (μ = 0.5), mean ± std over its seeds:
 * Table 7 for LOO, EE and FP (6, 9, 12, 15 clients; the 9-client rows are Table 4's ϕ), Table 4's ϕ
 * for COS (9 clients only). The paper has no EE-median in these tables.
 */
const COS = cos.name;
const PAPER003: Record<number, Record<string, Record<string, string>>> = {
  6: {
    ISIC: { loo: '0.862 ± .001', ee: '0.941 ± .015', fp: '0.940 ± .013' },
    'Brain-MRI': { loo: '0.932 ± .012', ee: '0.950 ± .050', fp: '0.961 ± .024' },
    PCam: { loo: '0.737 ± .005', ee: '0.980 ± .006', fp: '0.981 ± .005' },
    CIFAR10: { loo: '0.793 ± .151', ee: '0.955 ± .023', fp: '0.948 ± .021' },
  },
  9: {
    ISIC: { loo: '0.821 ± .042', ee: '0.942 ± .054', fp: '0.933 ± .045', [COS]: '0.002 ± .667' },
    'Brain-MRI': { loo: '0.793 ± .111', ee: '0.891 ± .063', fp: '0.891 ± .063', [COS]: '0.083 ± .065' },
    PCam: { loo: '0.546 ± .149', ee: '0.946 ± .035', fp: '0.944 ± .024', [COS]: '0.211 ± .376' },
    CIFAR10: { loo: '0.684 ± .203', ee: '0.904 ± .042', fp: '0.904 ± .055', [COS]: '0.004 ± .322' },
  },
  12: {
    ISIC: { loo: '0.733 ± .022', ee: '0.882 ± .020', fp: '0.890 ± .011' },
    'Brain-MRI': { loo: '0.745 ± .083', ee: '0.844 ± .103', fp: '0.854 ± .141' },
    PCam: { loo: '0.528 ± .032', ee: '0.905 ± .077', fp: '0.906 ± .035' },
    CIFAR10: { loo: '0.601 ± .094', ee: '0.892 ± .072', fp: '0.892 ± .072' },
  },
  15: {
    ISIC: { loo: '0.682 ± .031', ee: '0.864 ± .078', fp: '0.870 ± .051' },
    'Brain-MRI': { loo: '0.612 ± .243', ee: '0.841 ± .028', fp: '0.841 ± .051' },
    PCam: { loo: '0.512 ± .006', ee: '0.866 ± .033', fp: '0.866 ± .054' },
    CIFAR10: { loo: '0.431 ± .006', ee: '0.862 ± .005', fp: '0.868 ± .004' },
  },
};

const REFERENCE_WORDS: Record<string, string> = {
  [mrsv.name]: 'MR-SV to round 10',
  [ROUND_SV]: 'round 10’s exact SV',
  [TRUE_SV]: 'true SV (retraining)',
};

async function paper003(): Promise<number> {
  const { normalizerProblems } = await import('../src/report/report.js');
  const methods = (values.methods ?? '').split(',').filter(Boolean);
  const loaded = configs.flatMap((f) => {
    const r = resultsOf(f);
    if (!r) process.stderr.write(`no results for ${stem(f)} under ${out}\n`);
    return r ? [[f, r] as const] : [];
  });
  for (const n of [...new Set(loaded.map(([, r]) => r.silos.count))].sort((a, b) => a - b)) {
    process.stdout.write(`\n${n} silos, Spearman at round 10:\n\n`);
    process.stdout.write(
      `| configuration | coalitions, v(∅) | reference | seeds | ${methods.join(' | ')} | seeds with Σα ≤ 0 at round 10 | wall time |\n`,
    );
    process.stdout.write(`|---|---|---|---:|${methods.map(() => '---:').join('|')}|---:|---:|\n`);
    for (const [f, r] of loaded.filter(([, x]) => x.silos.count === n)) {
      const seeds = r.seeds.length;
      const bad = [
        ...new Set(
          normalizerProblems(r)
            .filter((p) => p.compared && p.fp <= 0)
            .map((p) => p.seed),
        ),
      ];
      const order = (x: string) => Object.keys(REFERENCE_WORDS).indexOf(x);
      const references = [...(r.comparison.references ?? [r.comparison.reference])].sort(
        (a, b) => order(a) - order(b),
      );
      for (const reference of references) {
        const table = r.comparison.byReference?.[reference] ?? r.comparison.methods;
        process.stdout.write(
          `| \`${stem(f)}\` | ${conventionOf(r)} | ${REFERENCE_WORDS[reference] ?? reference} | ${seeds} | ${methods
            .map((m) => cell(table[m]?.spearman, seeds))
            .join(
              ' | ',
            )} | ${bad.length}/${seeds}${bad.length > 0 ? ` (${bad.join(', ')})` : ''} | ${minutes(r.wallTimeMs)} |\n`,
        );
      }
    }
    for (const [data, row] of Object.entries(PAPER003[n] ?? {}))
      process.stdout.write(
        `| papers/003, ${data} | FedAvg by examples, v(∅) = 0 (their code) | “MR-SV” (text); round 10’s exact SV (code) | 10 | ${methods.map((m) => row[m] ?? '–').join(' | ')} | – | – |\n`,
      );
  }
  return 0;
}

/** Mean ± std over seeds of each seed's mean test accuracy over its last 5 rounds. */
function lastRounds(r: ExperimentResults): MeanStd {
  const perSeed = r.runs.map((run) => {
    const last = run.rounds.slice(-5);
    return last.reduce((a, rd) => a + rd.testAccuracy, 0) / last.length;
  });
  const mean = perSeed.reduce((a, b) => a + b, 0) / perSeed.length;
  const std = Math.sqrt(perSeed.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, perSeed.length - 1));
  return { mean, std };
}

/** The strategy's own coalition evaluations per round, averaged over rounds and seeds ('0' when it spends none). */
function strategyEvaluations(r: ExperimentResults): string {
  const rounds = r.runs.flatMap((run) => run.rounds);
  const total = rounds.reduce((a, rd) => a + (rd.evaluations.strategy ?? 0), 0);
  return (total / Math.max(1, rounds.length)).toFixed(1);
}

function outcomes(): number {
  const loaded = configs.flatMap((f) => {
    const r = resultsOf(f);
    if (!r) process.stderr.write(`no results for ${stem(f)} under ${out}\n`);
    return r ? [[f, r] as const] : [];
  });
  const roles = [...new Set(loaded.flatMap(([, r]) => Object.keys(r.outcomes?.byRole ?? {})))];
  process.stdout.write(
    `| configuration | seeds | final accuracy | mean accuracy, last 5 rounds | strategy evaluations / round | ${roles.map((x) => `participation: ${x}`).join(' | ')} | wall time |\n`,
  );
  process.stdout.write(`|---|---:|---:|---:|---:|${roles.map(() => '---:').join('|')}|---:|\n`);
  const pct = (m: MeanStd | undefined, seeds: number) =>
    m
      ? seeds > 1
        ? `${(100 * m.mean).toFixed(1)} % ± ${(100 * m.std).toFixed(1)}`
        : `${(100 * m.mean).toFixed(1)} %`
      : '–';
  for (const [f, r] of loaded) {
    const seeds = r.seeds.length;
    process.stdout.write(
      `| \`${stem(f)}\` | ${seeds} | ${cell(r.outcomes?.finalAccuracy, seeds)} | ${cell(lastRounds(r), seeds)} | ${strategyEvaluations(r)} | ${roles
        .map((x) => pct(r.outcomes?.byRole[x]?.participation, seeds))
        .join(' | ')} | ${minutes(r.wallTimeMs)} |\n`,
    );
  }
  return 0;
}

const modes: Record<string, () => number | Promise<number>> = { run, table, outcomes, paper003 };
process.exitCode = modes[mode] ? await modes[mode]() : 2;
