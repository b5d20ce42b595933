#!/usr/bin/env node
/**
 * The `fedscore` command line: init, up, experiment, score, audit, serve, client, consortium,
 * rounds, keygen, demo (src/cli/program.ts builds it; each command loads its own modules when it runs).
 *
 * Paths on the command line are relative to the directory the user typed the command in. Run as
 * `npm run fedscore -- …` (or `npm --prefix <checkout> run fedscore -- …`), npm starts the script in
 * the checkout and records that directory in INIT_CWD: the CLI moves back there first, and drops
 * the variables so that the processes it starts (`fedscore up`) do not move again.
 */
import { runCli } from './program.js';

if (process.env.npm_lifecycle_event === 'fedscore' && process.env.INIT_CWD) {
  process.chdir(process.env.INIT_CWD);
  delete process.env.INIT_CWD;
  delete process.env.npm_lifecycle_event;
}

// A process `fedscore up` started stops when `up` is gone (SIGKILLed: its children would otherwise
// run on as orphans, holding the store, while the next `up` takes the folder; issue 34).
const parent = Number(process.env.FEDSCORE_PARENT_PID);
if (Number.isInteger(parent) && parent > 0) {
  delete process.env.FEDSCORE_PARENT_PID;
  setInterval(() => {
    if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
  }, 500).unref();
}

// `fedscore --help | head`: a reader that closes the pipe early ends the output, not in an EPIPE
// stack trace.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(process.exitCode ?? 0);
  });

process.exitCode = await runCli(process.argv.slice(2));
