/**
 * Docs that cannot drift (issue 34): every shell block in docs/*.md and the README that runs a
 * `fedscore` command is either run here, in a fresh folder with `fedscore` on PATH (the package's
 * bin), or listed below with the test that runs the same commands or the reason it cannot run in
 * CI. A new block nobody listed fails the test, and so does a listing whose block is gone.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

/** How one block is checked: run here (`files` copied into its folder first), run by a test, or not in CI. */
type Verdict = { run: { files?: Record<string, string> } } | { by: string } | { notInCi: string };

/** Keyed by `<doc>: <the block's first fedscore command line>`. */
const SHELL_BLOCKS: Record<string, Verdict> = {
  'README.md: npm ci && npm run quickstart   # main job: a 9-silo consortium on real Fashion-MNIST, scored privately each round (~20 s)':
    { by: 'test/records/leaderboard.test.ts' },
  'docs/audit.md: npm run quickstart                       # runs/quickstart/results.json, about 20 s': {
    by: 'test/records/leaderboard.test.ts',
  },
  'docs/consortium.md: fedscore init hospitals --silos 3 --format idx,npy,csv --rounds 2 --examples 60': {
    by: 'test/e2e/up.test.ts', // test/docs/consortium-doc.test.ts checks the doc shows exactly its commands
  },
  'docs/trainer.md: fedscore init demo --trainer torch --silos 3': {
    by: 'test/e2e/trainer-up.test.ts', // test/docs/trainer-doc.test.ts checks the doc shows exactly its commands
  },
  'docs/consortium.md: npx fedscore serve --port 8080 --db hospitals.db --config cfg.json': {
    by: 'test/e2e/consortium.test.ts', // serve, consortium create and the silos' clients as processes on loopback
  },
  'docs/consortium.md: npx fedscore keygen --out silo-0.key      # prints the public key: send it to the operator':
    { by: 'test/cli/client.test.ts' },
  'docs/consortium.md: npx fedscore consortium create --server http://127.0.0.1:8080 --id hospitals \\': {
    by: 'test/e2e/consortium.test.ts',
  },
  'docs/consortium.md: npx fedscore client --server http://127.0.0.1:8080 --consortium hospitals --silo 0 \\':
    {
      by: 'test/e2e/consortium.test.ts',
    },
  'docs/consortium.md: npx fedscore rounds status --server http://127.0.0.1:8080 --consortium hospitals': {
    by: 'test/e2e/consortium.test.ts',
  },
  'docs/networked.md: npx fedscore keygen --out silo-0.key >> keys.txt     # one per silo; keys.txt: public keys':
    { by: 'test/e2e/consortium.test.ts' },
  'docs/networked.md: FEDSCORE_ADMIN_TOKEN=… npx fedscore serve --port 8080 &': {
    by: 'test/clients/python-loopback.test.ts',
  },
  'docs/reproductions.md: fedscore sweep submit --queue $Q --config examples/full-scale/paper003-*.json                # 120 jobs':
    { notInCi: 'the full-scale sweep: days of compute on a PostgreSQL queue and several machines' },
  'docs/reproductions.md: nice -n 10 npx fedscore experiment --config examples/$c.json --out runs/split003/$c --seeds 10 --workers 1; done':
    { notInCi: 'a reproduction: 30 seeded runs of papers/003 Table 4, about an hour on 2 cores' },
  'docs/reproductions.md: FEDMS_TRACE=runs/trace.jsonl npx fedscore experiment --plugin scripts/fedms-trace.ts --config /tmp/trace.json --out runs/trace --seeds 1':
    { by: 'test/scripts/fedms-trace.test.ts' },
  'docs/sweeps.md: fedscore sweep submit --queue postgres://me@db:5432/fedscore --config examples/full-scale/paper003-table7-*.json --seeds 10':
    { by: 'test/sweep/chunks.test.ts' },
  'docs/utilities.md: fedscore score --utilities utilities.json --out scores/   # scores.json, report.html, report.md, charts/':
    { run: { files: { 'utilities.json': 'examples/utilities/four-silos.json' } } },
};

const COMMAND =
  /^\s*(?:npm ci && )?(?:[A-Z_]+=\S*\s+)*(?:npm run (?:-s )?fedscore\b|npx fedscore\b|fedscore\s|npm run quickstart\b|nice -n \d+ (?:npm run (?:-s )?fedscore|npx fedscore)\b)/;

/** The shell blocks of the docs that run fedscore, keyed as in SHELL_BLOCKS. */
function shellBlocks(): Map<string, string> {
  const docs = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const out = new Map<string, string>();
  for (const doc of docs) {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    for (const m of text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
      const first = (m[1] as string).split('\n').find((l) => COMMAND.test(l));
      if (first !== undefined) out.set(`${doc}: ${first.trim()}`, m[1] as string);
    }
  }
  return out;
}

const work = mkdtempSync(join(tmpdir(), 'fedscore-doc-blocks-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('shell blocks in the docs', () => {
  const blocks = shellBlocks();

  it('every block that runs fedscore is run here, run by a named test, or says why not in CI', () => {
    const unlisted = [...blocks.keys()].filter((k) => !(k in SHELL_BLOCKS));
    const gone = Object.keys(SHELL_BLOCKS).filter((k) => !blocks.has(k));
    expect(unlisted, 'blocks no one checks: add them to SHELL_BLOCKS').toEqual([]);
    expect(gone, 'listed blocks no doc has any more').toEqual([]);
    for (const [key, v] of Object.entries(SHELL_BLOCKS))
      if ('by' in v) expect(existsSync(join(ROOT, v.by)), `${key}: ${v.by}`).toBe(true);
  });

  for (const [key, verdict] of Object.entries(SHELL_BLOCKS)) {
    if (!('run' in verdict)) continue;
    it(`runs ${key.slice(0, 80)}`, () => {
      const dir = mkdtempSync(join(work, 'block-'));
      for (const [to, from] of Object.entries(verdict.run.files ?? {}))
        copyFileSync(join(ROOT, from), join(dir, to));
      // `fedscore` is the package's bin, as `npm install -g` or `npx fedscore` would run it.
      const bin = join(dir, '.bin');
      const shim = join(bin, 'fedscore');
      spawnSync('mkdir', ['-p', bin]);
      writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin/fedscore.mjs')}" "$@"\n`);
      chmodSync(shim, 0o755);
      const script = (blocks.get(key) as string).replace(/npm run (-s )?fedscore --/g, 'fedscore');
      const r = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
        cwd: dir,
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, FEDSCORE_BACKEND: 'cpu' },
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(r.status, `${key}\n${r.stdout}\n${r.stderr}`).toBe(0);
    }, 150_000);
  }
});
