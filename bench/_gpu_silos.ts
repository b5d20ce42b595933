/**
 * `bench gpu`'s row for several silos in the same dispatches (issue 36; src/ml/train-silos.ts,
 * webgpu, the fused MLP step): what a round-step costs when k silos train from the same model,
 * batched (the default, `FEDSCORE_GPU_SILOS` ≥ k) against one after another
 * (`FEDSCORE_GPU_SILOS=1`):
 *  - dispatches and readbacks per round-step (one optimizer step of every silo) for k = 1, 4, 8,
 *    counted as bench/_gpu_counts.ts counts a step (the difference of a 2- and a 4-step call);
 *  - wall time per round-step for k = 4, the two modes interleaved in one run (`reps` each,
 *    alternating, after a warm-up of both), with the median of each;
 *  - that both modes return the same Δ for every silo, to the bit.
 * Each silo holds 256 seeded synthetic images (four batches of 64: a pass end never falls inside
 * the counted steps).
 */
import { type Examples, initParams, type ModelSpec } from '../src/ml/models.js';
import { trainSilos } from '../src/ml/train-silos.js';
import { stepCost } from './_gpu_counts.js';

/** One k's counts per round-step. */
export interface SiloCounts {
  k: number;
  batched: { dispatches: number; readbacks: number };
  separate: { dispatches: number; readbacks: number };
}

export interface SilosBench {
  counts: SiloCounts[];
  /** k = 4: ms per round-step, each run, and the medians. */
  wall: { k: number; steps: number; batchedMs: number[]; separateMs: number[]; ratio: number };
  /** Every silo's Δ, batched against one after another: equal bits. */
  sameBits: boolean;
}

/** Runs `f` with FEDSCORE_GPU_SILOS set to `v` (undefined: the default), then restores it. */
async function withSilos<T>(v: string | undefined, f: () => Promise<T>): Promise<T> {
  const old = process.env.FEDSCORE_GPU_SILOS;
  if (v === undefined) delete process.env.FEDSCORE_GPU_SILOS;
  else process.env.FEDSCORE_GPU_SILOS = v;
  try {
    return await f();
  } finally {
    if (old === undefined) delete process.env.FEDSCORE_GPU_SILOS;
    else process.env.FEDSCORE_GPU_SILOS = old;
  }
}

const equalBits = (a: Float32Array, b: Float32Array) =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** The row, on the active webgpu backend, for `spec` (a dense network). */
export async function siloRows(
  spec: ModelSpec,
  images: (n: number, seed: number) => Examples,
  reps: number,
): Promise<SilosBench> {
  const m0 = initParams(spec, 1);
  const data = Array.from({ length: 8 }, (_, k) => images(256, 50 + k));
  const round = (k: number) => (steps: number) =>
    trainSilos(
      spec,
      m0,
      data.slice(0, k).map((d, i) => ({ data: d, options: { seed: i, steps, weightDecay: 1e-3 } })),
    );
  const counts: SiloCounts[] = [];
  for (const k of [1, 4, 8]) {
    const b = await withSilos(String(Math.max(k, 2)), () => stepCost(round(k), 2, 4));
    const s = await withSilos('1', () => stepCost(round(k), 2, 4));
    counts.push({
      k,
      batched: { dispatches: b.perStep.dispatches, readbacks: b.perStep.readbacks },
      separate: { dispatches: s.perStep.dispatches, readbacks: s.perStep.readbacks },
    });
  }
  const k = 4;
  const steps = 8; // two passes: the calls' setup and final read weigh less
  const timed = async (mode: string) => {
    const t = performance.now();
    const r = await withSilos(mode, () => round(k)(steps));
    return { ms: (performance.now() - t) / steps, r };
  };
  await timed('4');
  await timed('1');
  const batchedMs: number[] = [];
  const separateMs: number[] = [];
  let sameBits = true;
  for (let i = 0; i < reps; i++) {
    const b = await timed('4');
    const s = await timed('1');
    batchedMs.push(b.ms);
    separateMs.push(s.ms);
    for (const [j, x] of b.r.entries()) sameBits &&= equalBits(x.delta, s.r[j]!.delta);
  }
  return {
    counts,
    wall: { k, steps, batchedMs, separateMs, ratio: median(separateMs) / median(batchedMs) },
    sameBits,
  };
}

/** The row's tables, as `bench gpu` prints them. */
export function printSiloRows(r: SilosBench): void {
  console.log(
    '\n| webgpu, k silos from one model (MLP 784-200-10, Adam, batch 64), per round-step | dispatches batched | dispatches one after another | readbacks batched / one after another |',
  );
  console.log('|---|---:|---:|---|');
  for (const c of r.counts)
    console.log(
      `| k = ${c.k} | ${c.batched.dispatches} | ${c.separate.dispatches} | ${c.batched.readbacks} / ${c.separate.readbacks} |`,
    );
  const f = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(', ');
  console.log(
    `\nk = ${r.wall.k}, ms per round-step (${r.wall.steps}-step calls, interleaved): batched ${f(r.wall.batchedMs)} (median ${median(r.wall.batchedMs).toFixed(1)}); one after another ${f(r.wall.separateMs)} (median ${median(r.wall.separateMs).toFixed(1)}); one after another ÷ batched ${r.wall.ratio.toFixed(2)}×; Δ batched = one after another, bit for bit: ${r.sameBits ? 'yes' : 'NO'}`,
  );
}
