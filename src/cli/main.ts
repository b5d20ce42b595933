#!/usr/bin/env node
/** The `fedscore` command line: experiment, audit, serve, client, keygen, demo. */
import { parseArgs } from 'node:util';
import { UsageError as CommandUsageError } from './_config.js';

// Commands are imported when run, so that each loads only its own modules (the silo client does
// not load the report renderer or the service).

const USAGE = `fedscore — contribution scoring for cross-silo federated learning under secure aggregation

Usage:
  fedscore experiment --config <file.json> --out <dir> [--seeds k] [--backend name] [--quiet]
                                                 run a consortium experiment (docs/results.md describes the outputs)
  fedscore audit --from <dir> [--config <file.json>]
                                                 manipulation audit of an experiment (docs/audit.md): audit.json + report section
  fedscore serve --port N [--host H] [--db FILE]   the scoring service (FEDSCORE_ADMIN_TOKEN; DATABASE_URL for PostgreSQL)
  fedscore client --server URL --consortium ID --silo N --key FILE --config FILE [--seed S]
                 [--first-round R] [--last-round R] [--backend name] [--timeout s] [--quiet]
                                                 one silo of a networked consortium: trains, runs secure aggregation, reports
  fedscore consortium --server URL --id ID --config FILE --keys FILE [--seed S] [--backend name]
                                                 create a networked run's consortium and upload its initial model (FEDSCORE_ADMIN_TOKEN)
  fedscore keygen --out FILE                     a silo's Ed25519 secret key (64 hex digits); prints the public key
  fedscore demo [--silos N] [--seed S] [--json]   private scores vs exact Shapley on a built-in consortium game
  fedscore help                                  this text

Options:
  --silos N   number of silos, 3..20 (default 8)
  --seed S    integer seed (default 1)
  --json      print the result as JSON instead of tables
`;

/** A usage error: printed without a stack trace, exit code 2. */
class UsageError extends Error {}

function intOption(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const v = Number(raw);
  if (!Number.isInteger(v)) throw new UsageError(`--${name}: expected an integer, got '${raw}'`);
  return v;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return 0;
    case 'demo': {
      const { values } = parseArgs({
        args: rest,
        options: { silos: { type: 'string' }, seed: { type: 'string' }, json: { type: 'boolean' } },
        strict: true,
      });
      const { formatDemo, runDemo } = await import('./demo.js');
      const result = await runDemo(intOption('silos', values.silos, 8), intOption('seed', values.seed, 1));
      process.stdout.write(`${values.json ? JSON.stringify(result, null, 2) : formatDemo(result)}\n`);
      return 0;
    }
    case 'experiment':
      return (await import('./experiment.js')).experimentCommand(rest);
    case 'audit':
      return (await import('./audit.js')).auditCommand(rest);
    case 'serve':
      return (await import('./serve.js')).serveCommand(rest);
    case 'client':
      return (await import('./client.js')).clientCommand(rest);
    case 'consortium':
      return (await import('./consortium.js')).consortiumCommand(rest);
    case 'keygen':
      return (await import('./keygen.js')).keygenCommand(rest);
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const usage =
      err instanceof UsageError ||
      err instanceof CommandUsageError ||
      (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    const known =
      usage ||
      err instanceof RangeError ||
      err instanceof TypeError ||
      (err as Error)?.name === 'ConfigError' ||
      (err as Error)?.name === 'SecureRoundAborted';
    process.stderr.write(
      `fedscore: ${known ? (err as Error).message : String((err as Error)?.stack ?? err)}\n`,
    );
    if (usage) process.stderr.write('Run "fedscore help" for usage.\n');
    process.exitCode = usage ? 2 : 1;
  },
);
