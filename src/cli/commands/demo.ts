/** `fedscore demo`: its flags and action; the demo itself (src/cli/actions/demo.ts) is imported when it runs. */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { integerOption, UsageError } from '../_flags.js';

interface DemoFlags {
  silos: number;
  seed: number;
  json?: boolean;
}

/** Any integer, as JavaScript reads it (the demo's seed goes to createRng, which takes any). */
const anyInteger = (flag: string) => (raw: string) => {
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new UsageError(`--${flag}: expected an integer, got '${raw}'`);
  return value;
};

export const demo: CommandDefinition<DemoFlags, DemoFlags> = {
  name: 'demo',
  summary: 'private scores vs exact Shapley on a built-in consortium game',
  description:
    'Private scores (LOO, IOI, FP, EE, EE-median) against exact Shapley on a built-in consortium game: seeded silos, one free rider and one with label noise.',
  options: [
    integerOption('silos', 'n', 'number of silos, 3..20', 3, 20).default(8),
    new Option('--seed <s>', 'integer seed').argParser(anyInteger('seed')).default(1),
    new Option('--json', 'print the result as JSON instead of tables'),
  ],
  args: (flags) => flags,
  run: async ({ silos, seed, json }) => {
    const { formatDemo, runDemo } = await import('../actions/demo.js');
    const result = await runDemo(silos, seed);
    process.stdout.write(`${json ? JSON.stringify(result, null, 2) : formatDemo(result)}\n`);
    return 0;
  },
};
