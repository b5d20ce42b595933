/**
 * Runs the fedscore program in-process with its output captured (runCli), with the real commands
 * or with their actions replaced by recorders (dryRun); spawnCli runs src/cli/main.ts as a
 * process, for what only the entry point shows (the process's exit code).
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import type { AnyCommand, Env } from '../../src/cli/_command.js';
import { COMMANDS, runCli } from '../../src/cli/program.js';

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** Runs `fedscore ...argv` in this process; `env` replaces process.env (default: empty). */
export async function cli(
  argv: string[],
  options: { env?: Env; cwd?: string; commands?: readonly AnyCommand[] } = {},
): Promise<CliResult> {
  let out = '';
  let err = '';
  const io = {
    out: (t: string) => {
      out += t;
    },
    err: (t: string) => {
      err += t;
    },
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
  };
  const code = await runCli(argv, io, options.commands);
  return { code, out, err };
}

/** The real commands (flags, checks) whose actions record their arguments instead of running. */
export function dryRun(): { commands: AnyCommand[]; calls: { command: string; args: unknown }[] } {
  const calls: { command: string; args: unknown }[] = [];
  const commands = COMMANDS.map((c) => ({
    ...c,
    run: async (args: unknown) => {
      calls.push({ command: c.name, args });
      return 0;
    },
  }));
  return { commands, calls };
}

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;

/** Runs `node --import tsx src/cli/main.ts ...args` (about a second each: use sparingly). */
export function spawnCli(args: string[]): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
}
