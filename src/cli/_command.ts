/**
 * What one `fedscore` subcommand declares (src/cli/commands/*.ts): its flags and its action.
 * src/cli/program.ts builds the program from a table of these.
 */
import type { Option } from 'commander';

/** Environment variables, as in process.env. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * One subcommand. `F` is the shape of its parsed flags, named as commander names them
 * (`--first-round` → `firstRound`; required flags are present), `A` what its action takes.
 */
export interface CommandDefinition<F, A> {
  /** `fedscore <name>`. */
  name: string;
  /** One line, listed by `fedscore --help`. */
  summary: string;
  /** What `fedscore <name> --help` says above the flags (default: the summary). */
  description?: string;
  /** What `fedscore <name> --help` says below the flags (environment variables, notes). */
  epilog?: string;
  /**
   * The flags, commander Options. One marked with `required()` (src/cli/_flags.ts) is named in
   * the usage line, marked "(required)" in the help and reported as `--name: required` when
   * missing.
   */
  options: readonly Option[];
  /**
   * Positional arguments (`fedscore init <dir>`), in order: each is passed to `args` among the
   * flags under its name; `<name>` is required, `[name]` optional.
   */
  positionals?: readonly { name: string; description: string; required: boolean }[];
  /** It reads an experiment configuration, so it takes `--plugin <module>` (repeatable). */
  plugins?: boolean;
  /**
   * The action's arguments from the flags and the environment: checks that no single flag's
   * parser can make (flags that depend on each other, environment variables).
   * @throws UsageError naming the flag or variable.
   */
  args(flags: F, env: Env): A;
  /** Imports the command's modules (only those) and runs it. @returns the exit code. */
  run(args: A): Promise<number>;
  /**
   * Nested commands (`fedscore consortium create`): `fedscore <name> <sub>` runs the sub's own
   * flags and action; `fedscore <name>` alone still runs this one.
   */
  subcommands?: readonly CommandDefinition<never, unknown>[];
}

/**
 * An entry of the command table. Each command's own flag and argument types are erased here:
 * commander builds a command's flags from that command's own options, and its `args` result goes
 * to its own `run`.
 */
export type AnyCommand = CommandDefinition<never, unknown>;
