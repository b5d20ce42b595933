/** The action of `fedscore worker` (flags: src/cli/commands/worker.ts). */
import { execFileSync, spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runWorker } from '../../sweep/worker.js';
import { packageVersion } from '../_package.js';

export interface WorkerArgs {
  queue: string;
  concurrency: number;
  backend?: string;
  poll?: number;
  maintenance?: number;
  idleExit?: number;
  quiet?: boolean;
}

/** `fedscore@<version>`, and `+<commit>` when this code is a git checkout (with `-dirty` when it has changes). */
export function codeVersion(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: here,
      encoding: 'utf8',
      stdio: 'pipe',
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: here,
      encoding: 'utf8',
      stdio: 'pipe',
    }).trim();
    return `fedscore@${packageVersion()}+${commit.slice(0, 12)}${dirty ? '-dirty' : ''}`;
  } catch {
    return `fedscore@${packageVersion()}`;
  }
}

/**
 * Runs one worker in this process, or with --concurrency c > 1, c worker processes (this command
 * again with `--concurrency 1`), and waits for them. @returns the exit code.
 */
export async function workerCommand(a: WorkerArgs): Promise<number> {
  const log = (line: string) => {
    if (!a.quiet) process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  };
  if (a.concurrency > 1) {
    const argv = process.argv.slice(1);
    const i = argv.indexOf('--concurrency');
    if (i >= 0) argv.splice(i, 2, '--concurrency', '1');
    else argv.push('--concurrency', '1');
    const children = Array.from({ length: a.concurrency }, () =>
      spawn(process.execPath, [...process.execArgv, ...argv], { stdio: 'inherit' }),
    );
    const forward = (signal: NodeJS.Signals) => () => {
      for (const c of children) c.kill(signal);
    };
    process.on('SIGINT', forward('SIGINT'));
    process.on('SIGTERM', forward('SIGTERM'));
    const codes = await Promise.all(
      children.map((c) => new Promise<number>((resolve) => c.on('exit', (code) => resolve(code ?? 1)))),
    );
    return Math.max(...codes);
  }
  await runWorker({
    queue: a.queue,
    codeVersion: codeVersion(),
    ...(a.backend ? { backend: a.backend } : {}),
    ...(a.poll !== undefined ? { pollSeconds: a.poll } : {}),
    ...(a.maintenance !== undefined ? { maintenanceSeconds: a.maintenance } : {}),
    ...(a.idleExit !== undefined ? { idleExitSeconds: a.idleExit } : {}),
    log,
  });
  return 0;
}
