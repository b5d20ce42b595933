/**
 * The end-to-end row of issue 36: `npx tsx bench/e2e-cnn003.ts --backend <name> [--silos S]
 * [--rounds R] [--test N] [--train N] [--config <file>]` runs `fedscore experiment` on
 * bench/cnn003-20-silos.json (20 silos, cnn003, exact per-round Shapley — MR-SV, all 2ⁿ
 * coalitions every round — as the reference; one seed, one process) on the named backend
 * (webgpu, wasm: the CPU path, with the OpenBLAS kernels on every core when built) and prints
 * one Markdown row: the machine's cores and the kernels' threads, the sizes, the wall time, and
 * where it went (training, the reference's coalition evaluations — MR-SV's —, the rest) from
 * results.json.
 * The flags shrink the configuration for a machine where the full one does not fit (each row
 * says what it ran); they write a copy of it, never the file.
 *
 *   npx tsx bench/e2e-cnn003.ts --backend webgpu     # the GPU column
 *   npx tsx bench/e2e-cnn003.ts --backend wasm       # the CPU path of the same machine
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const BACKENDS = ['webgpu', 'tensorflow', 'wasm', 'cpu'];

interface Row {
  backend: string;
  kernels: string;
  cores: number;
  silos: number;
  rounds: number;
  test: number;
  train: number;
  wallS: number;
  trainingS: number;
  mrsvS: number;
  coalitions: number;
}

function parse(argv: readonly string[]) {
  const opts: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) continue;
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) throw new RangeError(`e2e-cnn003: ${a} needs a value`);
    opts[a.slice(2)] = value;
    i++;
  }
  for (const k of Object.keys(opts))
    if (!['backend', 'silos', 'rounds', 'test', 'train', 'config'].includes(k))
      throw new RangeError(`e2e-cnn003: unknown option --${k}`);
  const backend = opts.backend;
  if (backend === undefined || !BACKENDS.includes(backend))
    throw new RangeError(`e2e-cnn003: --backend: expected one of ${BACKENDS.join(', ')}, got ${backend}`);
  const int = (name: string, min: number, max: number) => {
    const v = opts[name];
    if (v === undefined) return undefined;
    const k = Number(v);
    if (!Number.isInteger(k) || k < min || k > max)
      throw new RangeError(`e2e-cnn003: --${name}: expected an integer in [${min}, ${max}], got '${v}'`);
    return k;
  };
  return {
    backend,
    config: opts.config ?? join(here, 'cnn003-20-silos.json'),
    silos: int('silos', 2, 20),
    rounds: int('rounds', 1, 1000),
    test: int('test', 10, 10_000),
    train: int('train', 10, 60_000),
  };
}

const sum = (o: Record<string, number> | undefined, pick: (k: string) => boolean) =>
  Object.entries(o ?? {}).reduce((s, [k, v]) => s + (pick(k) ? v : 0), 0);

export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<Row> {
  const o = parse(argv);
  const cfg = JSON.parse(readFileSync(o.config, 'utf8')) as {
    silos: number;
    rounds: number;
    data: { trainSize: number; testSize: number };
    comparison: { reference: string };
  };
  // The reference's estimator (MR-SV in bench/cnn003-20-silos.json): its timings and evaluations.
  const reference = cfg.comparison.reference;
  if (o.silos !== undefined) cfg.silos = o.silos;
  if (o.rounds !== undefined) cfg.rounds = o.rounds;
  if (o.test !== undefined) cfg.data.testSize = o.test;
  if (o.train !== undefined) cfg.data.trainSize = o.train;
  const dir = mkdtempSync(join(tmpdir(), 'fedscore-e2e-'));
  try {
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify(cfg, null, 2));
    const out = join(dir, 'out');
    const bin = join(here, '..', 'bin', 'fedscore.mjs');
    const t0 = performance.now();
    const r = spawnSync(
      process.execPath,
      [
        bin,
        'experiment',
        '--config',
        config,
        '--out',
        out,
        '--backend',
        o.backend,
        '--workers',
        '1',
        '--seeds',
        '1',
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    const wallS = (performance.now() - t0) / 1000;
    if (r.status !== 0) throw new Error(`e2e-cnn003: fedscore experiment exited ${r.status ?? r.signal}`);
    const res = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as {
      backend: string;
      kernels?: string;
      runs: { timingsMs: Record<string, number>; evaluations: Record<string, number> }[];
    };
    const run = res.runs[0]!;
    const row: Row = {
      backend: res.backend,
      kernels: res.kernels ?? '—',
      cores: availableParallelism(),
      silos: cfg.silos,
      rounds: cfg.rounds,
      test: cfg.data.testSize,
      train: cfg.data.trainSize,
      wallS,
      trainingS: sum(run.timingsMs, (k) => k === 'training') / 1000,
      mrsvS: sum(run.timingsMs, (k) => k === reference) / 1000,
      coalitions: sum(run.evaluations, (k) => k === reference),
    };
    console.log(
      '\n| backend | kernels | cores | silos | rounds | train / test images | MR-SV coalitions | training s | MR-SV s | wall s |',
    );
    console.log('|---|---|---:|---:|---:|---|---:|---:|---:|---:|');
    console.log(
      `| ${row.backend} | ${row.kernels} | ${row.cores} of ${cpus().length} | ${row.silos} | ${row.rounds} | ${row.train} / ${row.test} | ${row.coalitions} | ${row.trainingS.toFixed(1)} | ${row.mrsvS.toFixed(1)} | ${row.wallS.toFixed(1)} |`,
    );
    return row;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
