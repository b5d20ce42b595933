/**
 * `fedscore audit --from <experiment output dir>` (or `--config <file> --from <dir>` to run the
 * experiment into <dir> first): writes <dir>/audit.json and adds the audit section to the report.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { auditExperiment } from '../fl/audit.js';
import { auditHtml, auditMarkdown, auditSummaryRows } from '../fl/audit-report.js';
import { type ExperimentResults, RESULTS_SCHEMA_VERSIONS } from '../fl/results.js';
import { UsageError } from './_flags.js';
import { experimentCommand } from './experiment.js';

/** What `fedscore audit` takes: its flags (src/cli/commands/audit.ts). */
export interface AuditFlags {
  /** The experiment output directory (its results.json). */
  from: string;
  /** Run this configuration into `from` first. */
  config?: string;
  backend?: string;
  quiet?: boolean;
}

/** Runs `fedscore audit`. @returns the exit code. */
export async function auditCommand(values: AuditFlags): Promise<number> {
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
  const t0 = performance.now();
  const audit = auditExperiment(results);
  await writeFile(join(dir, 'audit.json'), `${JSON.stringify(audit)}\n`);
  for (const [file, section, before] of [
    ['report.md', auditMarkdown(audit), null],
    ['report.html', auditHtml(audit), '</body>'],
  ] as const) {
    const path = join(dir, file);
    let text = await readFile(path, 'utf8').catch(() => '');
    text = text.replace(/<section id="audit">[\s\S]*?<\/section>\n?|## Manipulation audit[\s\S]*$/, '');
    text =
      before && text.includes(before) ? text.replace(before, `${section}\n${before}`) : `${text}\n${section}`;
    await writeFile(path, text);
  }
  const rows = auditSummaryRows(audit);
  const widths = rows[0]!.map((_, k) => Math.max(...rows.map((r) => r[k]!.length)));
  const table = rows
    .map(
      (r) =>
        `  ${r.map((cell, k) => (k === 0 ? cell.padEnd(widths[k]!) : cell.padStart(widths[k]! + 2))).join('')}`,
    )
    .join('\n');
  process.stdout.write(
    `\nManipulation audit of ${dir} (${((performance.now() - t0) / 1000).toFixed(1)} s):\n\n${table}\n\nwrote ${join(dir, 'audit.json')}; audit section added to report.html and report.md\n`,
  );
  return 0;
}
