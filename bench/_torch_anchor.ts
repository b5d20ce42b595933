/**
 * The PyTorch anchor of `bench gpu` (issue 36), run in the same process's run: bench/torch_anchor.py
 * with the bench's own sizes, on CUDA when torch sees a GPU, else on the CPU at the faster of one
 * thread and all cores (each row keeps its faster run and says which thread count it had).
 *
 * Python: `FEDSCORE_TORCH_PYTHON` when set, else the first of /usr/bin/python3 and `python3` on
 * PATH that can `import torch`. When none can, `runAnchor` returns `{ missing: <one line> }`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What bench/torch_anchor.py prints as JSON (one run). */
interface AnchorRun {
  torch: string;
  device: string;
  gpu?: string;
  threads: number;
  training: { model: string; samplesPerSecond: number }[];
  shapley: { n: number; coalitions: number; seconds: number }[];
}

/** The anchor's rows, each the faster of the runs made (`threads`: the run it came from). */
export interface Anchor {
  torch: string;
  device: string;
  python: string;
  training: { model: string; samplesPerSecond: number; threads: number }[];
  shapley: { n: number; seconds: number; threads: number }[];
  runs: AnchorRun[];
}

export interface AnchorSizes {
  /** Training samples per model, keyed by bench/gpu.ts's model names (torch_anchor.py's MODELS). */
  trainSamples: Readonly<Record<string, number>>;
  testImages: number;
  players: number[];
}

const here = dirname(fileURLToPath(import.meta.url));

/** bench/torch_anchor.py beside this file (checkout) or beside the bundle (gpu-check --pack). */
function script(): string | undefined {
  return [join(here, 'torch_anchor.py')].find((p) => existsSync(p));
}

/** The python that imports torch, or undefined. */
export function torchPython(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = env.FEDSCORE_TORCH_PYTHON
    ? [env.FEDSCORE_TORCH_PYTHON]
    : ['/usr/bin/python3', 'python3'];
  return candidates.find(
    (py) => spawnSync(py, ['-c', 'import torch'], { stdio: 'ignore', timeout: 60_000 }).status === 0,
  );
}

function runOnce(python: string, file: string, sizes: AnchorSizes, extra: string[]): AnchorRun {
  const args = [
    file,
    '--json',
    '--samples',
    Object.entries(sizes.trainSamples)
      .map(([model, count]) => `${model}=${count}`)
      .join(','),
    '--test',
    String(sizes.testImages),
    '--players',
    sizes.players.join(','),
    ...extra,
  ];
  const r = spawnSync(python, args, { encoding: 'utf8', timeout: 900_000 });
  if (r.status !== 0)
    throw new Error(
      `torch_anchor.py exited ${r.status ?? r.signal}: ${(r.stderr ?? '').trim().split('\n').pop()}`,
    );
  const last = r.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(last) as AnchorRun;
}

/**
 * Runs the anchor with the bench's sizes. `cores`: the CPU threads to try beside 1 (on CUDA one
 * run). Returns `{ missing }` when no python imports torch or the script is absent.
 */
export function runAnchor(sizes: AnchorSizes, cores: number): Anchor | { missing: string } {
  const file = script();
  if (file === undefined)
    return { missing: 'PyTorch anchor: bench/torch_anchor.py not found beside the bench' };
  const python = torchPython();
  if (python === undefined)
    return {
      missing:
        'PyTorch anchor: skipped, python3 cannot import torch (Debian: apt-get install python3-torch; or set FEDSCORE_TORCH_PYTHON)',
    };
  const first = runOnce(python, file, sizes, ['--threads', '1']);
  const runs = [first];
  if (first.device === 'cpu' && cores > 1)
    runs.push(runOnce(python, file, sizes, ['--threads', String(cores)]));
  const training = first.training.map((row, i) => {
    const best = runs.reduce((a, b) =>
      b.training[i]!.samplesPerSecond > a.training[i]!.samplesPerSecond ? b : a,
    );
    return { model: row.model, samplesPerSecond: best.training[i]!.samplesPerSecond, threads: best.threads };
  });
  const shapley = first.shapley.map((row, i) => {
    const best = runs.reduce((a, b) => (b.shapley[i]!.seconds < a.shapley[i]!.seconds ? b : a));
    return { n: row.n, seconds: best.shapley[i]!.seconds, threads: best.threads };
  });
  return {
    torch: first.torch,
    device: first.gpu ? `${first.device} (${first.gpu})` : first.device,
    python,
    training,
    shapley,
    runs,
  };
}
