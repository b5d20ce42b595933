/**
 * The `fedscore` program, on commander: one subcommand per entry of COMMANDS, each with `--help`
 * (its flags, their descriptions and defaults), suggestions for a mistyped flag or command,
 * `fedscore help [command]` and `--version`. Only src/cli/commands/*.ts are loaded up front; a
 * command's own modules are imported when it runs.
 *
 * Exit codes (one path each):
 * - 0: the command succeeded, or help or the version was printed.
 * - 2: usage — the input is wrong and nothing was run: an unknown command or flag, a missing or
 *   bad flag value (out of range, an unreadable file, a key file without a key), a `--plugin`
 *   module that cannot be imported (UsageError, printed with `Run "fedscore <cmd> --help"`), and an
 *   invalid experiment configuration or utilities file (ConfigError, UtilitiesFileError, whose
 *   messages name the file and the JSON path of the field; printed without the pointer to --help,
 *   which would not help). Running again with the same input fails the same way.
 * - 1: runtime — the command started and failed (a service it could not reach, a request refused,
 *   an aborted secure round, a failure while training). Known error types print their message;
 *   anything else its stack trace.
 */
import { Command, CommanderError, Help, type Option } from 'commander';
import type { AnyCommand, Env } from './_command.js';
import { isRequired, UsageError } from './_flags.js';
import { packageVersion } from './_package.js';
import { loadPlugins, pluginOption } from './_plugins.js';
import { audit } from './commands/audit.js';
import { client } from './commands/client.js';
import { consortium } from './commands/consortium.js';
import { demo } from './commands/demo.js';
import { experiment } from './commands/experiment.js';
import { init } from './commands/init.js';
import { keygen } from './commands/keygen.js';
import { rounds } from './commands/rounds.js';
import { score } from './commands/score.js';
import { serve } from './commands/serve.js';
import { sweep } from './commands/sweep.js';
import { up } from './commands/up.js';
import { worker } from './commands/worker.js';

/** The subcommands, in the order `fedscore --help` lists them. */
export const COMMANDS: readonly AnyCommand[] = [
  init as AnyCommand,
  up as AnyCommand,
  experiment,
  sweep,
  worker,
  score,
  audit,
  serve,
  client,
  consortium,
  rounds,
  keygen,
  demo,
];

/** Where the program writes help and errors, and what it reads besides argv. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: Env;
  /** The directory `--plugin` paths are relative to. */
  cwd: string;
}

const processIo = (): CliIo => ({
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  env: process.env,
  cwd: process.cwd(),
});

/** Invalid input files: their message names the file and the field (exit code 2). */
const INPUT_ERRORS = new Set(['ConfigError', 'UtilitiesFileError']);

/** Errors whose message says it all: printed without a stack trace (exit code 1). */
const RUNTIME_ERRORS = new Set(['RangeError', 'TypeError', 'SecureRoundAborted', 'DataNotFoundError']);

const EXIT_CODES = `
Exit codes: 0 done; 1 the command failed while running; 2 usage error (an unknown
command or flag, a bad flag value, an unreadable file, an invalid configuration
or utilities file): nothing was run.`;

/** Help: a required flag is marked "(required)" after its description. */
function optionDescription(this: Help, option: Option): string {
  const text = Help.prototype.optionDescription.call(this, option);
  return isRequired(option) ? `${text} (required)` : text;
}

/**
 * Builds the program. It never exits the process: commander's exits are thrown (exitOverride)
 * as CommanderError, and runCli turns every error into its exit code.
 *
 * @param onExitCode - receives the exit code a command's action returns.
 */
export function buildProgram(
  io: CliIo = processIo(),
  commands: readonly AnyCommand[] = COMMANDS,
  onExitCode: (code: number) => void = () => {},
): Command {
  const program = new Command('fedscore')
    .description('contribution scoring for cross-silo federated learning under secure aggregation')
    .version(packageVersion(), '-V, --version', 'print the version')
    .configureOutput({ writeOut: io.out, writeErr: io.err, outputError: () => {} })
    .configureHelp({ optionDescription })
    .exitOverride()
    // Options belong to the command they follow (a nested command may reuse its parent's names).
    .enablePositionalOptions()
    .addHelpText('after', EXIT_CODES);
  for (const def of commands) addCommand(program, def, io, onExitCode);
  return program;
}

/** Adds `def` (and its subcommands) under `parent`. */
function addCommand(parent: Command, def: AnyCommand, io: CliIo, onExitCode: (code: number) => void): void {
  // .command() copies the settings of the program (output, help, exitOverride) to the subcommand.
  const cmd = parent
    .command(def.name)
    .summary(def.summary)
    .description(def.description ?? def.summary);
  for (const a of def.positionals ?? [])
    cmd.argument(a.required ? `<${a.name}>` : `[${a.name}]`, a.description);
  for (const option of def.options) cmd.addOption(option);
  if (def.plugins) cmd.addOption(pluginOption());
  const requiredFlags = def.options.filter(isRequired);
  cmd.usage(
    [
      ...(def.positionals ?? []).map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)),
      ...requiredFlags.map((o) => o.flags),
      '[options]',
    ].join(' '),
  );
  if (def.epilog) cmd.addHelpText('after', `\n${def.epilog}`);
  // Commander has checked unknown flags and extra arguments by now; then the required flags.
  cmd.action(async (...params: unknown[]) => {
    // commander passes the positionals, then the flags, then the command.
    const positionals = def.positionals ?? [];
    const flags = {
      ...(params[positionals.length] as Record<string, unknown>),
      ...Object.fromEntries(positionals.map((a, k) => [a.name, params[k]])),
    } as Record<string, unknown> & { plugin?: string[] };
    const missing = requiredFlags.find((o) => flags[o.attributeName()] === undefined);
    if (missing) throw new UsageError(`${missing.long}: required`);
    const args = def.args(flags as never, io.env);
    if (def.plugins) await loadPlugins(flags.plugin ?? [], io.cwd);
    onExitCode(await def.run(args));
  });
  // `fedscore consortium create --id …`: the flags after the subcommand are the subcommand's.
  if (def.subcommands?.length) cmd.enablePositionalOptions();
  for (const sub of def.subcommands ?? []) addCommand(cmd, sub, io, onExitCode);
}

/** Runs `fedscore` on argv (without the node and script paths). @returns the exit code. */
export async function runCli(
  argv: readonly string[],
  io: CliIo = processIo(),
  commands: readonly AnyCommand[] = COMMANDS,
): Promise<number> {
  let code = 0;
  let active: Command | undefined;
  const program = buildProgram(io, commands, (c) => {
    code = c;
  }).hook('preSubcommand', (_program, subcommand) => {
    active = subcommand;
  });
  try {
    await program.parseAsync(argv.length > 0 ? [...argv] : ['--help'], { from: 'user' });
    return code;
  } catch (e) {
    // Loaded only here, so that --help loads no module outside src/cli (test/cli/lazy.test.ts).
    const { inertLines } = await import('../consortium/inert-text.js');
    return report(e, active, io, inertLines);
  }
}

/** Writes an error the way its kind is reported (see the module comment). @returns the exit code. */
function report(
  e: unknown,
  command: Command | undefined,
  io: CliIo,
  inertLines: (text: string) => string,
): number {
  let error = e as Error | undefined;
  if (e instanceof CommanderError) {
    if (e.exitCode === 0) return 0; // help or version, printed
    if (e.code === 'commander.help') return 2; // help printed to stderr instead (`fedscore help bogus`)
    // An unknown command or flag (with commander's suggestion), a missing value, extra arguments.
    error = new UsageError(e.message.replace(/^error: /, ''));
  }
  if (error instanceof UsageError) {
    const help = command ? `fedscore ${command.name()} --help` : 'fedscore --help';
    io.err(`fedscore: ${inertLines(error.message)}\nRun "${help}" for usage.\n`);
    return 2;
  }
  // Messages quote files and the service (issue 32, T1): escapes go, their own line breaks stay.
  if (error && INPUT_ERRORS.has(error.name)) {
    io.err(`fedscore: ${inertLines(error.message)}\n`);
    return 2;
  }
  const known = RUNTIME_ERRORS.has(error?.name ?? '');
  io.err(`fedscore: ${inertLines(known ? error!.message : String(error?.stack ?? e))}\n`);
  return 1;
}
