/** `fedscore audit`: its flags; the action (src/cli/audit.ts) is imported when it runs. */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { backendOption, required } from '../_flags.js';
import type { AuditFlags } from '../audit.js';

export const audit: CommandDefinition<AuditFlags, AuditFlags> = {
  name: 'audit',
  summary: 'manipulation audit of an experiment (docs/audit.md): audit.json + report section',
  description:
    'Manipulation audit of an experiment (docs/audit.md): how far a selfish silo can move the scores. Writes <dir>/audit.json and adds the audit section to report.html and report.md.',
  options: [
    required(new Option('--from <dir>', 'an experiment output directory (its results.json)')),
    new Option('--config <file>', 'run this experiment configuration into --from first'),
    backendOption(' for the experiment run by --config'),
    new Option('--quiet', 'no progress lines from the experiment run by --config'),
  ],
  plugins: true,
  args: (flags) => flags,
  run: async (flags) => (await import('../audit.js')).auditCommand(flags),
};
