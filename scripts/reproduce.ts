/**
 * Runs a list of experiment configurations and prints the markdown tables of docs/reproductions.md
 * from their results.json, so the tables there are generated, not typed.
 *
 *   npx tsx scripts/reproduce.ts run   --out DIR [--seeds k] [--jobs j] examples/a.json …
 *   npx tsx scripts/reproduce.ts table --out DIR [--methods loo,fp,ee,eeMedian,cos] examples/a.json …
 *   npx tsx scripts/reproduce.ts outcomes --out DIR examples/a.json …
 *
 * `run` starts `fedscore experiment --config <file> --out DIR/<stem> [--seeds k]` for each file, at
 * most `jobs` (default 1) at a time, logging to DIR/<stem>.log; a configuration whose
 * DIR/<stem>/results.json exists is skipped (so a run list can be resumed). `table` prints, per
 * reference, one row per configuration: mean ± std over seeds of the Spearman correlation of each
 * method with the reference (± std only with several seeds), the seeds whose compared round had a
 * Fair-Private normalizer Σα ≤ 0, and the wall time. `outcomes` prints the final accuracy and the
 * per-role participation rates of selection experiments (papers/000 Table 2, papers/004).
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import type { ExperimentResults, MeanStd } from '../src/fl/results.js';

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
    'usage: reproduce.ts run|table|outcomes --out DIR [--seeds k] [--jobs j] [--methods a,b] config.json …\n',
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
  `${r.scoring?.coalitions ?? 'fedavg'}, v(∅) = ${r.scoring?.emptyCoalition === 'zero' ? '0' : 'v(M0)'}`;

async function table(): Promise<number> {
  const { normalizerProblems } = await import('../src/fl/report.js');
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

function outcomes(): number {
  const loaded = configs.flatMap((f) => {
    const r = resultsOf(f);
    if (!r) process.stderr.write(`no results for ${stem(f)} under ${out}\n`);
    return r ? [[f, r] as const] : [];
  });
  const roles = [...new Set(loaded.flatMap(([, r]) => Object.keys(r.outcomes?.byRole ?? {})))];
  process.stdout.write(
    `| configuration | seeds | final accuracy | ${roles.map((x) => `participation: ${x}`).join(' | ')} | wall time |\n`,
  );
  process.stdout.write(`|---|---:|---:|${roles.map(() => '---:').join('|')}|---:|\n`);
  const pct = (m: MeanStd | undefined, seeds: number) =>
    m
      ? seeds > 1
        ? `${(100 * m.mean).toFixed(1)} % ± ${(100 * m.std).toFixed(1)}`
        : `${(100 * m.mean).toFixed(1)} %`
      : '–';
  for (const [f, r] of loaded) {
    const seeds = r.seeds.length;
    process.stdout.write(
      `| \`${stem(f)}\` | ${seeds} | ${cell(r.outcomes?.finalAccuracy, seeds)} | ${roles
        .map((x) => pct(r.outcomes?.byRole[x]?.participation, seeds))
        .join(' | ')} | ${minutes(r.wallTimeMs)} |\n`,
    );
  }
  return 0;
}

process.exitCode =
  mode === 'run' ? await run() : mode === 'table' ? await table() : mode === 'outcomes' ? outcomes() : 2;
