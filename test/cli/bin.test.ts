/**
 * The `fedscore` command as a user runs it (package.json "bin": bin/fedscore.mjs): `npx fedscore`
 * in a checkout after `npm ci`, with no build, and no command printing TensorFlow.js's banner.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
const bin = join(root, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).bin.fedscore);
const work = mkdtempSync(join(tmpdir(), 'fedscore-bin-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const run = (args: string[]) =>
  spawnSync(process.execPath, [bin, ...args], { cwd: work, encoding: 'utf8', timeout: 120_000 });

describe('the fedscore bin', () => {
  it('runs the sources when dist/ is absent: --help lists the commands', () => {
    const r = run(['--help']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Usage: fedscore /);
    expect(r.stdout).toContain('init');
  });

  it('a reader that closes the pipe early (`fedscore --help | head -1`) ends the output quietly', async () => {
    const child = spawn(process.execPath, [bin, '--help'], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // closed before the bin writes: its every write fails with EPIPE
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('init prints no TensorFlow.js banner, and paths are relative to where it was typed', () => {
    const r = run(['init', 'demo', '--silos', '3', '--examples', '40', '--test-size', '40']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toMatch(/Hi, looks like you are running TensorFlow\.js/);
    expect(r.stderr).toBe('');
    expect(readFileSync(join(work, 'demo', 'fedscore-project.json'), 'utf8')).toContain('"silos"');
  });
});
