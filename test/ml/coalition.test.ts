import { beforeAll, describe, expect, it } from 'vitest';
import { coalitionOf, emptyCoalition, grandCoalition, maskToCoalition } from '../../scoring/coalition.js';
import { coalitionTable } from '../../scoring/game.js';
import { siloCoalitionModels } from '../../src/consortium/private-scoring.js';
import { loadBlasKernels, useBlasKernels } from '../../src/ml/_blas_kernels.js';
import { initBackend } from '../../src/ml/backend.js';
import {
  type CoalitionSetup,
  classwiseGame,
  coalitionGame,
  coalitionParams,
  createCoalitionEvaluator,
} from '../../src/ml/coalition.js';
import { evaluate } from '../../src/ml/evaluate.js';
import { cnn003, initParams, type ModelSpec, mlp, paramLayout } from '../../src/ml/models.js';
import { trainLocal } from '../../src/ml/train.js';
import { expectNaiveAccuracies } from './_naive_accuracies.js';
import { gaussianMixture, maxAbsDiff, randomVector, sameBits } from './_synthetic.js';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

/** Silo i trains on its own class-skewed shard (classes i and i+1 mostly), so updates differ. */
async function trainedSetup(
  spec: ModelSpec,
  n: number,
  extra: Partial<CoalitionSetup> = {},
): Promise<CoalitionSetup> {
  const m0 = initParams(spec, 1);
  const pool = gaussianMixture(400 + 60 * n, spec.inputShape, spec.numClasses, 9);
  const f = pool.x.length / pool.n;
  const test = { ...pool, n: 300, x: pool.x.subarray(0, 300 * f), y: pool.y.subarray(0, 300) };
  const updates: Float32Array[] = [];
  for (let i = 0; i < n; i++) {
    const idx = Array.from({ length: pool.n - 300 }, (_, k) => 300 + k).filter(
      (k) => pool.y[k] === i % 10 || pool.y[k] === (i + 1) % 10 || k % 7 === i,
    );
    const x = new Float32Array(idx.length * f);
    for (const [j, k] of idx.entries()) x.set(pool.x.subarray(k * f, (k + 1) * f), j * f);
    const shard = { ...pool, n: idx.length, x, y: Int32Array.from(idx, (k) => pool.y[k]!) };
    updates.push(
      (await trainLocal(spec, m0, shard, { seed: i, epochs: 2, batchSize: 8, learningRate: 3e-3 })).delta,
    );
  }
  return { spec, m0, updates, data: test, ...extra };
}

function setupFor(spec: ModelSpec, n: number, extra: Partial<CoalitionSetup> = {}): CoalitionSetup {
  return {
    spec,
    m0: initParams(spec, 1),
    updates: Array.from({ length: n }, (_, i) => randomVector(spec.paramCount, 100 + i, 0.15)),
    data: gaussianMixture(300, spec.inputShape, spec.numClasses, 9),
    ...extra,
  };
}

const all = (n: number) => Array.from({ length: 2 ** n }, (_, m) => maskToCoalition(n, m));

describe('combined coalition evaluation agrees with evaluating each coalition model on its own', () => {
  const cases: [string, ModelSpec, Partial<CoalitionSetup>][] = [
    ['FedAvg with weights', mlp({ inputShape: [8, 8, 1], hidden: [24] }), { weights: [5, 1, 2, 8, 3] }],
    [
      'additive convention, two hidden layers',
      mlp({ inputShape: [8, 8, 1], hidden: [16, 8] }),
      { convention: 'additive' },
    ],
  ];
  for (const [title, spec, extra] of cases)
    it(title, async () => {
      const setup = await trainedSetup(spec, 5, extra);
      const combined = createCoalitionEvaluator(setup);
      const naive = createCoalitionEvaluator(setup, { mode: 'naive' });
      expect(combined.mode).toBe('combined');
      const c = await combined.values(all(5));
      const v = await naive.values(all(5));
      expectNaiveAccuracies(
        setup,
        all(5).map((_, m) => m),
        c,
        v,
      );
      for (let b = 0; b < 32; b++)
        expect(Math.abs(c.negLoss[b]! - v.negLoss[b]!) / Math.abs(v.negLoss[b]!)).toBeLessThan(1e-5);
      // Not a degenerate game: coalition models differ.
      expect(new Set(c.accuracy).size).toBeGreaterThan(5);
      // And the naive side is `evaluate` on M_S.
      const s = [0, 3];
      const direct = evaluate(spec, coalitionParams(setup, s), setup.data);
      expect(v.accuracy[0b1001]).toBe(direct.accuracy);
      combined.dispose();
    });

  it('gives the same values whatever the batch order and composition', async () => {
    const setup = setupFor(mlp({ inputShape: [8, 8, 1], hidden: [12] }), 4);
    const a = createCoalitionEvaluator(setup);
    const b = createCoalitionEvaluator(setup);
    const coalitions = all(4);
    const full = await a.values(coalitions);
    const reversed = [...coalitions].reverse();
    const parts = [await b.values(reversed.slice(0, 5)), await b.values(reversed.slice(5))];
    const got = [...parts[0]!.negLoss, ...parts[1]!.negLoss].reverse();
    expect(got).toEqual(Array.from(full.negLoss));
  });
});

const blas = loadBlasKernels();

describe.runIf(blas.ok)('the native coalition kernel', () => {
  beforeAll(() => {
    useBlasKernels(true);
  });
  const eq = (x: ArrayLike<number>, y: ArrayLike<number>) => expect(Array.from(x)).toEqual(Array.from(y));

  it('gives the tfjs path the same bits and naive evaluation the same accuracies: FedAvg, additive, class-wise, n ≤ 8', async () => {
    const cases: [ModelSpec, number, Partial<CoalitionSetup>, boolean][] = [
      [mlp({ inputShape: [8, 8, 1], hidden: [24] }), 6, { weights: [5, 1, 2, 8, 3, 4] }, true],
      [mlp({ inputShape: [8, 8, 1], hidden: [40] }), 8, { convention: 'additive' }, true],
      // 293 test rows: OpenBLAS's Haswell and Zen kernels (processors without AVX-512) sum the
      // last 293 mod 12 = 5 rows of an [N×H]·[H×10] product in another order than one FMA chain;
      // the tfjs path's output layer (native/narrow.c) must not (issue 26).
      [
        mlp({ inputShape: [6, 6, 1], hidden: [17] }),
        7,
        { weights: [3, 9, 1, 1, 4, 2, 7], data: gaussianMixture(293, [6, 6, 1], 10, 9) },
        false,
      ],
      // 14 classes: two class groups (the unfused path)
      [mlp({ inputShape: [6, 6, 1], hidden: [9], numClasses: 14 }), 5, { convention: 'additive' }, false],
    ];
    for (const [spec, n, extra, trained] of cases) {
      const setup = trained ? await trainedSetup(spec, n, extra) : setupFor(spec, n, extra);
      const native = createCoalitionEvaluator(setup);
      const tfjs = createCoalitionEvaluator(setup, { native: false });
      const naive = createCoalitionEvaluator(setup, { mode: 'naive' });
      expect([native.native, tfjs.native, naive.native]).toEqual([true, false, false]);
      const accuracy = await native.table('accuracy');
      const perClass = await classwiseGame(native).table!();
      const negLoss = await native.table('negLoss');
      const t = await tfjs.values(all(n));
      eq(accuracy, t.accuracy);
      eq(perClass, t.perClassAccuracy);
      eq(negLoss, t.negLoss);
      const v = await naive.values(all(n));
      expectNaiveAccuracies(
        setup,
        all(n).map((_, m) => m),
        { accuracy, perClassAccuracy: perClass },
        v,
      );
      for (let m = 0; m < 2 ** n; m++)
        expect(Math.abs(negLoss[m]! - v.negLoss[m]!)).toBeLessThan(1e-5 * Math.abs(v.negLoss[m]!));
      expect(new Set(accuracy).size).toBeGreaterThan(n);
      // Batches (any order) give the table's numbers.
      const fresh = createCoalitionEvaluator(setup);
      const shuffled = all(n).reverse();
      const b = await fresh.values(shuffled);
      eq(b.accuracy, [...accuracy].reverse());
      eq(b.negLoss, [...negLoss].reverse());
      native.dispose();
      tfjs.dispose();
    }
  });

  it('breaks exact ties to the lower class, as the tfjs path and naive evaluation do', async () => {
    // Classes 0 and 1 have the same output weights and bias in M0 and every update: their logits
    // are equal bit for bit, so class 1 is never predicted.
    const spec = mlp({ inputShape: [6, 6, 1], hidden: [12], numClasses: 4 });
    const setup = setupFor(spec, 5, { weights: [1, 2, 3, 4, 5] });
    const out = paramLayout(spec).slice(2);
    for (const p of [setup.m0, ...setup.updates]) {
      const [w, b] = [out[0]!, out[1]!];
      for (let k = 0; k < 12; k++) p[w.offset + k * 4 + 1] = p[w.offset + k * 4]!;
      p[b.offset + 1] = p[b.offset]!;
    }
    const native = await createCoalitionEvaluator(setup).table('perClassAccuracy');
    const tfjs = (await createCoalitionEvaluator(setup, { native: false }).values(all(5))).perClassAccuracy;
    const naive = await createCoalitionEvaluator(setup, { mode: 'naive' }).values(all(5));
    eq(native, tfjs);
    for (let m = 0; m < 32; m++)
      expect([native[m * 4 + 1], naive.perClassAccuracy[m * 4 + 1]]).toEqual([0, 0]);
    const accuracy = (await createCoalitionEvaluator(setup).table('accuracy')) as Float64Array;
    expectNaiveAccuracies(
      setup,
      all(5).map((_, m) => m),
      { accuracy, perClassAccuracy: native },
      naive,
      true,
    );
    expect(native.some((x) => x > 0)).toBe(true);
  });

  it('n = 15: the whole table at once; a sample of it agrees with the tfjs path and naive evaluation', async () => {
    const spec = mlp({ inputShape: [6, 6, 1], hidden: [20] });
    const setup = await trainedSetup(spec, 15, { weights: Array.from({ length: 15 }, (_, i) => 10 + i) });
    const ev = createCoalitionEvaluator(setup);
    const game = coalitionGame(ev);
    const table = await coalitionTable(game);
    expect(ev.evaluations).toBe(2 ** 15);
    expect(game.evaluations).toBe(2 ** 15);
    const sample = Array.from({ length: 96 }, (_, k) => (k * 2731 + 5) % 2 ** 15);
    const coalitions = sample.map((m) => maskToCoalition(15, m));
    const t = await createCoalitionEvaluator(setup, { native: false }).values(coalitions);
    const v = await createCoalitionEvaluator(setup, { mode: 'naive' }).values(coalitions);
    eq(
      sample.map((m) => table[m]!),
      t.accuracy,
    );
    const perClass = await classwiseGame(ev).table!();
    expectNaiveAccuracies(
      setup,
      sample,
      {
        accuracy: sample.map((m) => table[m]!),
        perClassAccuracy: sample.flatMap((m) => [...perClass.subarray(m * 10, m * 10 + 10)]),
      },
      v,
    );
    // Later batches are read from the table.
    const again = await ev.values(coalitions);
    eq(again.accuracy, t.accuracy);
    expect(ev.evaluations).toBe(2 ** 15);
  });
});

describe('coalitionParams', () => {
  it('is M0 + Σ_S wᵢΔᵢ / Σ_S wᵢ (FedAvg), M0 + Σ_S wᵢΔᵢ / Σ_all w (additive; ΣΔᵢ/N for equal weights), M0 for ∅', () => {
    const spec = mlp({ inputShape: [2, 2, 1], hidden: [3], numClasses: 2 });
    const base = setupFor(spec, 3, { weights: [1, 2, 3] });
    const [d0, d1, d2] = base.updates as [Float32Array, Float32Array, Float32Array];
    const fedavg = coalitionParams(base, [2, 0]);
    const want = base.m0.map((m, k) => m + (1 * d0[k]! + 3 * d2[k]!) / 4);
    expect(maxAbsDiff(fedavg, want)).toBeLessThan(1e-6);
    const add = coalitionParams({ ...base, convention: 'additive' }, [1, 2]);
    expect(
      maxAbsDiff(
        add,
        base.m0.map((m, k) => m + (2 * d1[k]! + 3 * d2[k]!) / 6),
      ),
    ).toBeLessThan(1e-6);
    const equal = coalitionParams({ ...base, weights: [1, 1, 1], convention: 'additive' }, [1, 2]);
    expect(
      maxAbsDiff(
        equal,
        base.m0.map((m, k) => m + (d1[k]! + d2[k]!) / 3),
      ),
    ).toBeLessThan(1e-6);
    expect(sameBits(coalitionParams(base, []), base.m0)).toBe(true);
  });

  it('rejects bad setups, naming the field', () => {
    const spec = mlp({ inputShape: [2, 2, 1], hidden: [3], numClasses: 2 });
    const base = setupFor(spec, 2);
    expect(() => coalitionParams(base, [2])).toThrow(/^members: 2 is not a player/);
    expect(() => coalitionParams({ ...base, weights: [1, -1] }, [0])).toThrow(/^weights\[1\]: /);
    expect(() => coalitionParams({ ...base, weights: [1] }, [0])).toThrow(/^weights: /);
    expect(() => coalitionParams({ ...base, updates: [new Float32Array(2)] }, [0])).toThrow(
      /^updates\[0\]: /,
    );
    expect(() => coalitionParams({ ...base, convention: 'mean' as never }, [0])).toThrow(/^convention: /);
  });
});

describe('one owner of the coalition model (convention.ts coalitionScale)', () => {
  it("gives the silo's private coalitions M0 + U_i and M − U_i the full-visibility models M_{i} and M_{N∖i}, zero weights included", () => {
    const spec = mlp({ inputShape: [2, 2, 1], hidden: [3], numClasses: 2 });
    for (const convention of ['fedavg', 'additive'] as const)
      for (const weights of [
        [1, 2, 3],
        [0, 2, 3],
        [1, 0, 0],
      ]) {
        const setup = { ...setupFor(spec, 3, { weights }), convention };
        const total = weights.reduce((a, b) => a + b, 0);
        const sum = new Float64Array(setup.m0.length);
        setup.updates.forEach((u, j) => {
          for (let k = 0; k < sum.length; k++) sum[k]! += weights[j]! * u[k]!;
        });
        for (let i = 0; i < 3; i++) {
          const own = { update: setup.updates[i] as Float32Array, weight: weights[i]! };
          const { singleton, complement } = siloCoalitionModels(setup.m0, sum, total, own, convention);
          const rest = [0, 1, 2].filter((j) => j !== i);
          const where = `${convention} weights [${weights}] silo ${i}`;
          expect(maxAbsDiff(complement, coalitionParams(setup, rest)), where).toBeLessThan(1e-6);
          // A weightless singleton under FedAvg: the private side's M0 + Δᵢ is the silo's own model;
          // the full-visibility M_{i} is M0 (s(S) = 0). Every other singleton agrees.
          if (!(convention === 'fedavg' && weights[i] === 0))
            expect(maxAbsDiff(singleton, coalitionParams(setup, [i])), where).toBeLessThan(1e-6);
          else expect(sameBits(coalitionParams(setup, [i]), setup.m0), where).toBe(true);
        }
      }
  });
});

describe('games', () => {
  it('a memoized scalar game and a class-wise game sharing one evaluator', async () => {
    const spec = mlp({ inputShape: [8, 8, 1], hidden: [12] });
    const setup = setupFor(spec, 3);
    const ev = createCoalitionEvaluator(setup);
    const acc = coalitionGame(ev);
    const loss = coalitionGame(ev, 'negLoss');
    const cls = classwiseGame(ev);
    const s = coalitionOf(3, [0, 2]);
    const v = await acc.values([s, s, emptyCoalition(3), s]);
    expect(acc.evaluations).toBe(2);
    expect(acc.requests).toBe(4);
    expect(v[0]).toBe(v[3]);
    expect(v[2]).toBe(evaluate(spec, setup.m0, setup.data).accuracy);
    await loss.values([s, grandCoalition(3)]);
    const rows = await cls.values([s]);
    expect(rows.length).toBe(10);
    expect(cls.dims).toBe(10);
    // Three distinct models were computed, however many games asked.
    expect(ev.evaluations).toBe(3);
    const table = await coalitionTable(acc);
    expect(table.length).toBe(8);
    expect(ev.evaluations).toBe(8);
    await expect(acc.values([coalitionOf(4, [3])])).rejects.toThrow(/^coalitions\[0\]: player 3 is outside/);
  });

  it('falls back to naive evaluation for a CNN and refuses to combine it', async () => {
    const spec = cnn003({ inputShape: [6, 6, 1], hidden: 4 });
    const setup = setupFor(spec, 2);
    const ev = createCoalitionEvaluator(setup);
    expect(ev.mode).toBe('naive');
    const v = await ev.values([coalitionOf(2, [1])]);
    expect(v.accuracy[0]).toBe(evaluate(spec, coalitionParams(setup, [1]), setup.data).accuracy);
    expect(() => createCoalitionEvaluator(setup, { mode: 'combined' })).toThrow(
      /^mode: combined evaluation needs a dense first layer/,
    );
  });
});
