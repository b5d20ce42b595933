/**
 * `fedscore audit --from <experiment output dir>` (or `--config <file> --from <dir>` to run the
 * experiment into <dir> first): writes <dir>/audit.json and adds the audit section to the report.
 * `fedscore audit --utilities <file> [--out <dir>]`: the same audit of a utilities file
 * (docs/utilities.md), its summary printed; with --out, <dir>/audit.json is written and the section
 * goes into the reports `fedscore score` wrote to <dir>, if any.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AuditResult, auditExperiment, auditUtilities } from '../../audit/manipulation-audit.js';
import { inertLines } from '../../consortium/inert-text.js';
import { type LeaderboardEntry, withAuditFlags } from '../../records/leaderboard.js';
import { type ExperimentResults, RESULTS_SCHEMA_VERSIONS } from '../../records/results.js';
import { hiddenSchemes } from '../../records/shown-schemes.js';
import { scoreUtilities } from '../../records/utility-scores.js';
import { auditHtml, auditMarkdown, auditSummaryRows } from '../../report/audit-report.js';
import { leaderboardHeading, leaderboardRows, textColumns } from '../../report/leaderboard-table.js';
import { hiddenOf } from '../../report/report-common.js';
import { UsageError } from '../_flags.js';
import { packageVersion } from '../_package.js';
import { loadUtilities } from '../_utilities.js';
import { experimentCommand } from './experiment.js';

/** What `fedscore audit` takes: its flags (src/cli/commands/audit.ts), either form. */
export type AuditFlags = AuditExperimentFlags | AuditUtilitiesFlags;

/** `--from <dir>`: the audit of an experiment. */
export interface AuditExperimentFlags {
  /** The experiment output directory (its results.json). */
  from: string;
  /** Run this configuration into `from` first. */
  config?: string;
  backend?: string;
  quiet?: boolean;
}

/** `--utilities <file> [--out <dir>]`: the audit of a utilities file. */
export interface AuditUtilitiesFlags {
  utilities: string;
  /** Where to write audit.json (and patch the reports); absent: print the summary only. */
  out?: string;
}

/** Runs `fedscore audit`. @returns the exit code. */
export async function auditCommand(values: AuditFlags): Promise<number> {
  const t0 = performance.now();
  if ('utilities' in values) {
    // The audit's detector and optimizer take utilities in [0, 1] (docs/utilities.md).
    const file = await loadUtilities(values.utilities, { range: [0, 1] });
    const audit = auditUtilities(file, values.utilities);
    const { leaderboard } = await scoreUtilities(file, {
      source: values.utilities,
      fedscoreVersion: packageVersion(),
    });
    const board = withAuditFlags(leaderboard ?? [], audit);
    if (values.out === undefined) {
      process.stdout.write(
        inertLines(
          `${boardText(board)}${summary(audit, values.utilities, t0)}\n(--out <dir> writes audit.json, docs/audit.md)\n`,
        ),
      );
      return 0;
    }
    await mkdir(values.out, { recursive: true });
    return writeAudit(values.out, audit, t0, values.utilities, false, board);
  }
  const dir = values.from;
  if (values.config) {
    const code = await experimentCommand({
      config: values.config,
      out: dir,
      ...(values.backend ? { backend: values.backend } : {}),
      ...(values.quiet ? { quiet: true } : {}),
    });
    if (code !== 0) return code;
  }
  let results: ExperimentResults;
  try {
    results = JSON.parse(await readFile(join(dir, 'results.json'), 'utf8')) as ExperimentResults;
  } catch (e) {
    throw new UsageError(`--from: cannot read ${join(dir, 'results.json')}: ${(e as Error).message}`);
  }
  if (!RESULTS_SCHEMA_VERSIONS.includes(results?.schemaVersion))
    throw new UsageError(
      `--from: ${join(dir, 'results.json')} is not a fedscore results.json (schemaVersion ${RESULTS_SCHEMA_VERSIONS.join(' or ')})`,
    );
  const audit = auditExperiment(results);
  return writeAudit(
    dir,
    audit,
    t0,
    dir,
    true,
    withAuditFlags(results.leaderboard ?? [], audit),
    hiddenOf(results),
  );
}

/**
 * Writes <dir>/audit.json, puts the audit section into report.md and report.html (replacing an
 * earlier one; `createReports`: a missing report is started with the section alone, else left
 * missing) and prints the summary table.
 */
async function writeAudit(
  dir: string,
  audit: AuditResult,
  t0: number,
  what: string,
  createReports: boolean,
  board: readonly LeaderboardEntry[],
  hidden?: ReadonlySet<string>,
): Promise<number> {
  await writeFile(join(dir, 'audit.json'), `${JSON.stringify(audit)}\n`);
  const patched: string[] = [];
  for (const [file, section, before] of [
    ['report.md', auditMarkdown(audit), null],
    ['report.html', auditHtml(audit), '</body>'],
  ] as const) {
    const path = join(dir, file);
    let text = await readFile(path, 'utf8').catch(() => null);
    if (text === null) {
      if (!createReports) continue;
      text = '';
    }
    patched.push(file);
    text = text.replace(/<section id="audit">[\s\S]*?<\/section>\n?|## Manipulation audit[\s\S]*$/, '');
    text =
      before && text.includes(before) ? text.replace(before, `${section}\n${before}`) : `${text}\n${section}`;
    await writeFile(path, text);
  }
  // Names come from files (issue 32, T1): escapes go before stdout.
  process.stdout.write(
    inertLines(
      `${boardText(board, hidden)}${summary(audit, what, t0)}\nwrote ${join(dir, 'audit.json')}${patched.length > 0 ? `; audit section added to ${patched.reverse().join(' and ')}` : ''}\n`,
    ),
  );
  return 0;
}

/**
 * The leaderboard with the audit's `self-gain` flags, printed before the audit's summary (nothing
 * for a results.json written before the leaderboard existed).
 */
function boardText(
  board: readonly LeaderboardEntry[],
  hidden: ReadonlySet<string> = hiddenSchemes(undefined),
): string {
  if (board.length === 0) return '';
  return `\n${leaderboardHeading()}; flags include the audit's:\n\n${textColumns(leaderboardRows(board, hidden))}\n`;
}

/** The heading and the per-scheme summary table, as printed. */
function summary(audit: AuditResult, what: string, t0: number): string {
  const rows = auditSummaryRows(audit);
  const widths = rows[0]!.map((_, k) => Math.max(...rows.map((r) => r[k]!.length)));
  const table = rows
    .map(
      (r) =>
        `  ${r.map((cell, k) => (k === 0 ? cell.padEnd(widths[k]!) : cell.padStart(widths[k]! + 2))).join('')}`,
    )
    .join('\n');
  return `\nManipulation audit of ${what} (${((performance.now() - t0) / 1000).toFixed(1)} s):\n\n${table}\n`;
}
