/** The actions of `fedscore sweep submit|status|collect` (flags: src/cli/commands/sweep.ts). */
import { inertLines } from '../../consortium/inert-text.js';
import { DEFAULT_POLICY } from '../../sweep/queue.js';
import type { SweepStatus } from '../../sweep/status.js';
import { loadConfig } from '../_config.js';
import { packageVersion } from '../_package.js';

export type SweepArgs =
  | {
      action: 'submit';
      queue: string;
      configs: string[];
      seeds?: number;
      chunks?: number;
      retries?: number;
      expireIn?: number;
    }
  | { action: 'status'; queue: string; id: string; json?: boolean }
  | { action: 'collect'; queue: string; id: string; out: string };

/** The status as a table: one row per configuration, then the failures. */
export function statusTable(s: SweepStatus): string {
  const head = ['configuration', 'jobs', 'done', 'running', 'queued', 'failed', 'retried'];
  const rows = [
    head,
    ...s.configs.map((c) => [c.label, c.jobs, c.done, c.running, c.queued, c.failed, c.retried].map(String)),
  ];
  const widths = head.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '),
  );
  const total = s.configs.reduce((a, c) => a + c.jobs, 0);
  const done = s.configs.reduce((a, c) => a + c.done, 0);
  const failures = s.failures.map((f) => `failed: ${f.label} seed ${f.seed}: ${f.error}`);
  return `${[`sweep ${s.id}: ${done}/${total} jobs done`, ...lines, ...failures].join('\n')}\n`;
}

/** Runs a `sweep` subcommand. @returns the exit code (collect: 1 when a configuration is not complete). */
export async function sweepCommand(a: SweepArgs): Promise<number> {
  if (a.action === 'submit') {
    const { submitSweep, sweepOf } = await import('../../sweep/submit.js');
    const configs = [];
    for (const path of a.configs) configs.push({ path, config: await loadConfig(path) });
    const spec = sweepOf(configs, a.seeds, a.chunks);
    if (a.chunks !== undefined)
      for (const [i, c] of spec.configs.entries())
        process.stderr.write(
          (spec.chunks?.[i] ?? 0) > 0
            ? `${c.label}: its true Shapley value in ${spec.chunks![i]} chunk job(s) per seed\n`
            : `${c.label}: computes no true Shapley value (comparison.trueShapley), --chunks does not apply\n`,
        );
    const s = await submitSweep(a.queue, spec, {
      retries: a.retries ?? DEFAULT_POLICY.retries,
      expireInSeconds: a.expireIn ?? DEFAULT_POLICY.expireInSeconds,
    });
    process.stderr.write(
      `sweep ${s.id}: ${spec.configs.length} configuration(s), ${s.jobs} job(s); ${s.enqueued} to run (a job already queued is not added twice), ${s.jobs - s.enqueued} already finished\n`,
    );
    process.stdout.write(`${s.id}\n`);
    return 0;
  }
  if (a.action === 'status') {
    const { sweepStatus } = await import('../../sweep/status.js');
    const s = await sweepStatus(a.queue, a.id);
    process.stdout.write(
      a.json
        ? `${JSON.stringify({ id: s.id, configs: s.configs, failures: s.failures }, null, 2)}\n`
        : inertLines(statusTable(s)), // labels and errors read back from the database (issue 32, T1)
    );
    return 0;
  }
  const { collectSweep } = await import('../../sweep/collect.js');
  const c = await collectSweep(a.queue, a.id, a.out, { fedscoreVersion: packageVersion() });
  for (const w of c.written)
    process.stdout.write(`wrote ${w.dir}/results.json (+ reports), ${w.results.seeds.length} seed(s)\n`);
  for (const i of c.incomplete)
    process.stdout.write(`not written: ${i.label}: ${i.missing} job(s) not done\n`);
  return c.incomplete.length > 0 ? 1 : 0;
}
