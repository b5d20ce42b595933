#!/usr/bin/env node
/**
 * The `fedscore` command line: experiment, score, audit, serve, client, consortium, keygen, demo
 * (src/cli/program.ts builds it; each command loads its own modules when it runs).
 */
import { runCli } from './program.js';

process.exitCode = await runCli(process.argv.slice(2));
