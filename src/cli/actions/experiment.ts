/**
 * `fedscore experiment --config <file.json> --out <dir> [--seeds k] [--backend name]`
 * (flags: src/cli/commands/experiment.ts).
 */

import { resolve } from 'node:path';
import { inertLines } from '../../consortium/inert-text.js';
import { dataShapeOf } from '../../fl/consortium-data.js';
import { createLearner } from '../../fl/learner/create-learner.js';
import { describeAdapter } from '../../ml/adapter.js';
import { describeEstimators, wantsTrueShapley } from '../../records/comparison-config.js';
import type { ExperimentResults } from '../../records/results.js';
import {
  agreementLines,
  leaderboardHeading,
  leaderboardRows,
  textColumns,
} from '../../report/leaderboard-table.js';
import { writeOutputs } from '../../report/outputs.js';
import { agreementTables, dataLine, seedLine } from '../../report/report.js';
import { hiddenOf } from '../../report/report-common.js';
import { assembleResults, runExperiment } from '../../sim/experiment.js';
import type { ProgressEvent } from '../../sim/round-loop.js';
import { loadConfig } from '../_config.js';
import { packageVersion } from '../_package.js';
import { schemesFlag } from '../_schemes.js';

/** What `fedscore experiment` takes: its flags, checked. */
export interface ExperimentFlags {
  config: string;
  out: string;
  /** Number of seeds, in [1, 100] (default: the configuration's seeds, else 1). */
  seeds?: number;
  backend?: string;
  quiet?: boolean;
  /** Processes the seeds run in (default: one per core, at most one per seed; 1: in this process). */
  workers?: number;
  /** The `--plugin` modules (each child process of a local sweep imports them too). */
  plugin?: string[];
  /** The private schemes the outputs show, comma-separated (overrides `scoring.schemes`). */
  schemes?: string;
}

/** Rows as aligned text columns: the first left-aligned, the others right-aligned, two spaces apart. */
function columns(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0))) ?? [];
  return rows
    .map(
      (r) => `  ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]! + 2))).join('')}`,
    )
    .join('\n');
}

/** `text` wrapped at `width` columns, each line indented by `indent` and continuation lines by two more. */
function wrap(text: string, indent: string, width = 100): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const lead = lines.length === 0 ? indent : `${indent}  `;
    if (line && lead.length + line.length + 1 + word.length > width) {
      lines.push(lead + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push((lines.length === 0 ? indent : `${indent}  `) + line);
  return lines.join('\n');
}

const seconds = (ms: number) =>
  ms < 60_000 ? `${(ms / 1000).toFixed(0)} s` : `${(ms / 60_000).toFixed(1)} min`;

/**
 * The seeds in this process (one seed, or `--workers 1`), else in child processes, one per core
 * (src/sweep/local.ts): the same results.json either way, timings aside.
 */
async function runSeeds(
  cfg: Awaited<ReturnType<typeof loadConfig>>,
  seeds: number[],
  values: ExperimentFlags,
  learner: Awaited<ReturnType<typeof createLearner>>,
  onProgress: Parameters<typeof runExperiment>[1]['onProgress'],
  log: (line: string) => void,
) {
  const { defaultWorkers, runSeedsLocally } = await import('../../sweep/local.js');
  const workers = Math.min(values.workers ?? defaultWorkers(seeds.length), seeds.length);
  if (workers <= 1)
    return runExperiment(cfg, {
      learner,
      seeds,
      fedscoreVersion: packageVersion(),
      ...(onProgress ? { onProgress } : {}),
    });
  log(`${seeds.length} seeds in ${workers} processes (--workers 1: in this process, with progress by round)`);
  const t0 = performance.now();
  const records = await runSeedsLocally(cfg, seeds, {
    workers,
    ...(values.backend ? { backend: values.backend } : {}),
    plugins: (values.plugin ?? []).map((p) => resolve(p)),
    onSeed: (seed, done, total) =>
      log(`[seed ${seed}] done (${done}/${total}); ${seconds(performance.now() - t0)} elapsed`),
  });
  return assembleResults(cfg, records, {
    fedscoreVersion: packageVersion(),
    wallTimeMs: performance.now() - t0,
  });
}

/**
 * What `fedscore experiment` prints when the run is done: the leaderboard first, then one agreement
 * table per reference (the primary first; ± std only with several seeds), a ratio score reversed by
 * its normalizer marked † with a one-line note (the full explanation is in report.md's agreement
 * section and docs/findings.md), the convention, accuracy, data used and the files written.
 */
export function experimentSummary(results: ExperimentResults, files: readonly string[]): string {
  const board = results.leaderboard
    ? `\n${leaderboardHeading(results.seeds.length > 1 ? `mean over ${results.seeds.length} seeds` : `seed ${results.seeds[0]}`)}:\n\n${textColumns(leaderboardRows(results.leaderboard, hiddenOf(results)))}\n${agreementLines(
        results.leaderboard,
      )
        .map((l) => `  ${l}\n`)
        .join('')}`
    : '';
  const tables = agreementTables(results).map(
    (t) =>
      `\n${t.heading}:\n\n${columns(t.rows)}\n${t.notes.map((n) => `${wrap(shortNote(n), '  ')}\n`).join('')}`,
  );
  const s = results.scoring;
  const scoring = s
    ? `scoring: ${s.coalitions} coalitions, v(∅) = ${s.emptyCoalition === 'zero' ? '0' : 'v(M0)'} (scoring.emptyCoalition '${s.emptyCoalition}')${s.raw ? ', raw scores recorded' : ''}\n`
    : '';
  return (
    `${board}${tables.join('')}\n${scoring}` +
    `final test accuracy: ${results.runs.map((r) => r.finalAccuracy.toFixed(4)).join(', ')} (${seedLine(results.seeds)}); data: ${dataLine(results)}\n` +
    `wrote ${files.slice(0, 3).join(', ')} (+ charts) in ${seconds(results.wallTimeMs)}\n`
  );
}

/** A † note cut to where it happened (before its `; e.g.`), pointing to report.md for the rest. */
function shortNote(note: string): string {
  const cut = note.indexOf('; e.g.');
  return cut < 0
    ? note
    : `${note.slice(0, cut)}: its ranking is reversed there (report.md explains why and what to use instead; the headline score never reverses).`;
}

/** Runs `fedscore experiment`. @returns the exit code. */
export async function experimentCommand(values: ExperimentFlags): Promise<number> {
  // --schemes is an option of the reports (recorded as results.json's `schemes`), checked before anything runs.
  const schemes = values.schemes === undefined ? undefined : schemesFlag(values.schemes);
  const cfg = await loadConfig(values.config);
  const seedCount = values.seeds ?? cfg.seeds ?? 1;
  const seeds = Array.from({ length: seedCount }, (_, i) => (cfg.seed ?? 1) + i);
  const log = (line: string) => {
    if (!values.quiet) process.stderr.write(`${line}\n`);
  };
  const learner = await createLearner({
    ...dataShapeOf(cfg),
    model: cfg.model,
    training: cfg.training ?? {},
    ...(values.backend ? { backend: values.backend } : {}),
  });
  log(
    `fedscore experiment '${cfg.name ?? values.config}': ${cfg.silos} silos, ${cfg.rounds} rounds, ${seeds.length} seed(s); backend ${learner.backend}${learner.adapter ? ` on ${describeAdapter(learner.adapter)}` : ''}`,
  );
  log(
    `reference estimators: ${describeEstimators(cfg)}${wantsTrueShapley(cfg) ? ', true Shapley of the retraining game' : ''}`,
  );
  const t0 = performance.now();
  const totalRounds = seeds.length * cfg.rounds;
  let doneRounds = 0;
  const onProgress = (e: ProgressEvent | { seed: number; phase: 'true-sv'; done: number; total: number }) => {
    if (e.phase === 'true-sv') {
      if (e.done === e.total || e.done % Math.ceil(e.total / 8) === 0)
        log(`[seed ${e.seed}] true Shapley (retraining game): ${e.done}/${e.total} coalitions trained`);
      return;
    }
    if (e.phase === 'setup') log(`[seed ${e.seed}] loading data and partitioning`);
    if (e.phase === 'done') {
      doneRounds++;
      const elapsed = performance.now() - t0;
      const left = (elapsed / doneRounds) * (totalRounds - doneRounds);
      log(
        `[seed ${e.seed}] round ${e.round}/${e.rounds}: ${e.detail}; ${seconds(elapsed)} elapsed, ~${seconds(left)} left`,
      );
    }
  };
  try {
    const results = await runSeeds(cfg, seeds, values, learner, onProgress, log);
    if (schemes) results.schemes = schemes;
    const files = await writeOutputs(values.out, results);
    process.stdout.write(inertLines(experimentSummary(results, files))); // names from files (issue 32, T1)
    return 0;
  } finally {
    await learner.close();
  }
}
