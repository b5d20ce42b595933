/** `fedscore serve`: its flags; the action (src/cli/actions/serve.ts) is imported when it runs. */
import { Option } from 'commander';
import type { CommandDefinition } from '../_command.js';
import { backendOption, integerOption, required, UsageError } from '../_flags.js';
import { LOG_FORMATS, type LogFormat } from '../_log-format.js';
import type { ServeArgs } from '../actions/serve.js';

interface ServeFlags {
  port: number;
  host: string;
  db: string;
  headersTimeout?: number;
  requestTimeout?: number;
  config?: string;
  seed?: number;
  backend?: string;
  logFormat?: LogFormat;
}

export const serve: CommandDefinition<ServeFlags, ServeArgs> = {
  name: 'serve',
  summary: 'the scoring service (FEDSCORE_ADMIN_TOKEN; DATABASE_URL for PostgreSQL)',
  description:
    'Runs the scoring service until SIGINT or SIGTERM. Logs go to stdout: one line per round opened, stage closed (with the silos that were late) and round scored; requests at debug level. On a terminal they are plain lines, otherwise JSON lines (--log-format). Once listening it prints "fedscore serve: listening on <url>" on stderr. With --config the service evaluates v(M) and v(M0) itself on that configuration\'s test set; without it the operator posts them (PUT /v1/consortia/:cid/rounds/:round/utilities, see /docs).',
  epilog: [
    'Environment:',
    "  FEDSCORE_ADMIN_TOKEN  the operator's token (required, ≥ 16 characters)",
    '  FEDSCORE_VIEWER_TOKEN a read-only token for the dashboard (optional, ≥ 16 characters; open',
    '                        /dashboard/<id>#token=<it>): consortia, rounds and scores only',
    '  DATABASE_URL          a PostgreSQL database instead of the SQLite file --db',
    '  FEDSCORE_LOG_LEVEL    log level (default: info; debug adds one line per request)',
    '  FEDSCORE_LOG_FORMAT   json or pretty, as --log-format (the flag wins)',
  ].join('\n'),
  options: [
    required(integerOption('port', 'n', 'TCP port (0 = any free port)', 0, 65535)),
    new Option('--host <h>', 'interface to listen on').default('127.0.0.1'),
    new Option('--db <file>', 'SQLite file; ignored when DATABASE_URL is set').default('fedscore.db'),
    new Option('--config <file>', "evaluate v(M) and v(M0) on this experiment configuration's test set"),
    integerOption(
      'seed',
      's',
      "the configuration's seed; only with --config (default: its seed, else 1)",
      0,
      2 ** 31 - 1,
    ),
    backendOption(' for the evaluator; only with --config'),
    new Option(
      '--log-format <format>',
      'json: one JSON object per line (pino); pretty: "HH:MM:SS LEVEL message" (default: pretty on a terminal, else json)',
    ).choices(LOG_FORMATS),
    integerOption(
      'headers-timeout',
      's',
      'seconds a request line and headers may take (default 10)',
      1,
      3600,
    ),
    integerOption(
      'request-timeout',
      's',
      'seconds a whole request, body included, may take (default 120)',
      1,
      86_400,
    ),
  ],
  plugins: true,
  args(f, env) {
    if (f.config === undefined && (f.seed !== undefined || f.backend !== undefined))
      throw new UsageError(`--${f.seed !== undefined ? 'seed' : 'backend'}: applies only with --config`);
    const adminToken = env.FEDSCORE_ADMIN_TOKEN;
    if (adminToken === undefined || adminToken.length < 16)
      throw new UsageError('FEDSCORE_ADMIN_TOKEN: set it to a secret of at least 16 characters');
    const viewerToken = env.FEDSCORE_VIEWER_TOKEN;
    if (viewerToken !== undefined && (viewerToken.length < 16 || viewerToken === adminToken))
      throw new UsageError(
        'FEDSCORE_VIEWER_TOKEN: set it to a secret of at least 16 characters, other than the admin token',
      );
    const headersS = f.headersTimeout ?? 10;
    const requestS = f.requestTimeout ?? 120;
    if (requestS < headersS) throw new UsageError('--request-timeout: must be at least --headers-timeout');
    const envFormat = env.FEDSCORE_LOG_FORMAT;
    if (envFormat !== undefined && !(LOG_FORMATS as readonly string[]).includes(envFormat))
      throw new UsageError(
        `FEDSCORE_LOG_FORMAT: expected one of ${LOG_FORMATS.join(', ')}, got '${envFormat}'`,
      );
    const logFormat = f.logFormat ?? (envFormat as LogFormat | undefined);
    return {
      port: f.port,
      host: f.host,
      location: env.DATABASE_URL ? { postgres: env.DATABASE_URL } : { sqlite: f.db },
      adminToken,
      ...(viewerToken !== undefined ? { viewerToken } : {}),
      ...(f.headersTimeout !== undefined || f.requestTimeout !== undefined
        ? { timeouts: { headersMs: 1000 * headersS, requestMs: 1000 * requestS } }
        : {}),
      logLevel: env.FEDSCORE_LOG_LEVEL ?? 'info',
      ...(logFormat !== undefined ? { logFormat } : {}),
      ...(f.config !== undefined ? { config: f.config } : {}),
      ...(f.seed !== undefined ? { seed: f.seed } : {}),
      ...(f.backend !== undefined ? { backend: f.backend } : {}),
    };
  },
  run: async (args) => (await import('../actions/serve.js')).serveCommand(args),
};
