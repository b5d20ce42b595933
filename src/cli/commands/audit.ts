/** `fedscore audit`: its flags; the action (src/cli/actions/audit.ts) is imported when it runs. */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { backendOption, UsageError } from '../_flags.js';
import type { AuditExperimentFlags, AuditFlags } from '../actions/audit.js';

/** The flags as commander parses them (none is required alone: --from or --utilities). */
type ParsedAuditFlags = Partial<AuditExperimentFlags> & { utilities?: string; out?: string };

export const audit: CommandDefinition<ParsedAuditFlags, AuditFlags> = {
  name: 'audit',
  summary:
    'manipulation audit of an experiment or a utilities file (docs/audit.md): audit.json + report section',
  description:
    'Manipulation audit (docs/audit.md): how far a selfish silo can move the scores. Of an experiment (--from <dir>: writes <dir>/audit.json and adds the audit section to report.html and report.md), or of a utilities file computed anywhere (--utilities <file>: prints the summary; with --out <dir> also writes <dir>/audit.json and adds the section to the reports `fedscore score` wrote there).',
  options: [
    new Option('--from <dir>', 'an experiment output directory (its results.json)'),
    new Option('--utilities <file>', 'a utilities file (docs/utilities.md) instead of an experiment'),
    new Option(
      '--out <dir>',
      'with --utilities: where to write audit.json (default: print the summary only)',
    ),
    new Option('--config <file>', 'run this experiment configuration into --from first'),
    backendOption(' for the experiment run by --config'),
    new Option('--quiet', 'no progress lines from the experiment run by --config'),
  ],
  plugins: true,
  args: (flags) => {
    if (flags.from !== undefined && flags.utilities !== undefined)
      throw new UsageError('--utilities: give either --from or --utilities, not both');
    if (flags.utilities !== undefined) {
      if (flags.config !== undefined) throw new UsageError('--config: only with --from');
      return { utilities: flags.utilities, ...(flags.out !== undefined ? { out: flags.out } : {}) };
    }
    if (flags.from === undefined) throw new UsageError('--from: required (or --utilities)');
    if (flags.out !== undefined)
      throw new UsageError('--out: only with --utilities (--from writes into its directory)');
    const { out: _, utilities: __, ...rest } = flags;
    return { ...rest, from: flags.from };
  },
  run: async (flags) => (await import('../actions/audit.js')).auditCommand(flags),
};
