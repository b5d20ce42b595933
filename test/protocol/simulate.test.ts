import { describe, expect, it } from 'vitest';
import { seededRandomFromInts } from '../../crypto/random-bytes.js';
import { encodeClientMessage, encodeServerMessage } from '../../protocol/codec.js';
import {
  type DropPoint,
  simulatedIdentities,
  simulateRound,
  type WireEvent,
} from '../../protocol/simulate.js';
import {
  decodeWeightedSum,
  encodeWeightedInput,
  valueErrorBound,
  weightErrorBound,
} from '../../protocol/weighted.js';
import { plainSum, randomInputs, tolerated } from './_inputs.js';

const POINTS: DropPoint[] = [
  'before-advertise',
  'after-advertise',
  'after-share',
  'after-mask',
  'after-consistency',
];

describe('protocol/simulate: Unmasking corrections', () => {
  const n = 9;
  const t = 5;
  const d = 257;
  const inputs = randomInputs(n, d, 11);
  const keys = simulatedIdentities(n, 11);
  // 2 silos drop before sending their input (their masks must be removed), 2 survivors vanish
  // after the consistency check (they send no correction: the server rebuilds their masks).
  const dropouts = new Map<number, DropPoint>([
    [1, 'after-share'],
    [6, 'after-share'],
    [2, 'after-consistency'],
    [8, 'after-consistency'],
  ]);
  const survivors = [0, 2, 3, 4, 5, 7, 8];

  it.each([
    ['recompute' as const, 'corrections from the responders, each recomputed; rebuilt masks for the rest'],
    ['off' as const, 'every mask rebuilt by the server'],
  ])('corrections %s: %s — the sum is exact', async (corrections, _what) => {
    let unmaskBytes = 0;
    const r = await simulateRound({
      session: 'corr',
      round: 3,
      threshold: t,
      corruptTolerated: tolerated(n, t),
      inputs,
      signingKeys: keys,
      random: (i) => seededRandomFromInts(78, i),
      dropouts,
      corrections,
      observe: (e) => {
        if (e.direction === 'up' && e.message.type === 'unmask') unmaskBytes += e.bytes;
      },
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.result.survivors).toEqual(survivors);
    expect(r.result.dropped).toEqual([1, 6]);
    expect(r.result.sum).toEqual(plainSum(inputs, survivors, d));
    expect(r.result.faults).toEqual([]);
    // 5 responders; with corrections each carries d more words
    if (corrections !== 'off') expect(unmaskBytes).toBeGreaterThan(5 * 4 * d);
    else expect(unmaskBytes).toBeLessThan(5 * 4 * d);
  });
});

describe('protocol/simulate: one secure-aggregation round in process', () => {
  describe.each(POINTS)('dropouts %s', (point) => {
    const n = 7;
    const t = 4;
    const d = 300;
    const inputs = randomInputs(n, d, 5);
    const keys = simulatedIdentities(n, 5);
    // the inputs in the sum: silos that sent a masked input (Bonawitz et al. 2017: U_3)
    const inSum = (k: number, dropped: number[]) =>
      point === 'after-mask' || point === 'after-consistency'
        ? [...Array(n).keys()]
        : [...Array(n).keys()].filter((i) => !dropped.includes(i) || k < 0);

    for (let k = 0; k <= n - t; k++) {
      it(`${k} of ${n} drop (${n - k} ≥ t = ${t} remain): the survivors' sum is exact`, async () => {
        const dropped = [...Array(k).keys()].map((i) => (3 * i + 1) % n);
        const r = await simulateRound({
          session: 'drop',
          round: 2,
          threshold: t,
          corruptTolerated: tolerated(n, t),
          inputs,
          signingKeys: keys,
          random: (i) => seededRandomFromInts(77, i),
          dropouts: new Map(dropped.map((i) => [i, point])),
        });
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        const expected = inSum(k, dropped);
        expect(r.result.survivors).toEqual(expected);
        expect(r.result.sum).toEqual(plainSum(inputs, expected, d));
        if (point === 'after-share') expect(r.result.dropped).toEqual([...dropped].sort((a, b) => a - b));
        else expect(r.result.dropped).toEqual([]);
      });
    }

    it(`${n - t + 1} of ${n} drop (t − 1 remain): the round aborts with BELOW_THRESHOLD`, async () => {
      const dropped = [...Array(n - t + 1).keys()];
      const r = await simulateRound({
        session: 'drop',
        round: 2,
        threshold: t,
        corruptTolerated: tolerated(n, t),
        inputs,
        signingKeys: keys,
        random: (i) => seededRandomFromInts(77, i),
        dropouts: new Map(dropped.map((i) => [i, point])),
      });
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.code).toBe('BELOW_THRESHOLD');
      expect(r.silo).toBeUndefined();
      const stageOfAbort = {
        'before-advertise': 'advertise',
        'after-advertise': 'share',
        'after-share': 'mask',
        'after-mask': 'consistency',
        'after-consistency': 'unmask',
      } as const;
      expect(r.stage).toBe(stageOfAbort[point]);
    });
  });

  it('mixed dropouts at several stages at once', async () => {
    const n = 10;
    const d = 500;
    const inputs = randomInputs(n, d, 9);
    const dropouts = new Map<number, DropPoint>([
      [0, 'before-advertise'],
      [3, 'after-advertise'],
      [5, 'after-share'],
      [8, 'after-mask'],
    ]);
    const r = await simulateRound({
      session: 'mixed',
      round: 1,
      threshold: 6,
      corruptTolerated: tolerated(n, 6),
      inputs,
      signingKeys: simulatedIdentities(n, 9),
      random: (i) => seededRandomFromInts(9, i),
      dropouts,
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.result.survivors).toEqual([1, 2, 4, 6, 7, 8, 9]);
    expect(r.result.dropped).toEqual([5]);
    expect(r.result.sets.map((s) => s.length)).toEqual([9, 8, 7, 6, 6]);
    expect(r.result.sum).toEqual(plainSum(inputs, [1, 2, 4, 6, 7, 8, 9], d));
  });

  it('replays exactly from the same seeds (byte-identical transcript) and differs with other seeds', async () => {
    const n = 5;
    const inputs = randomInputs(n, 64, 3);
    const run = async (seed: number) => {
      const log: string[] = [];
      const observe = (e: WireEvent) =>
        log.push(
          Buffer.from(
            e.direction === 'up' ? encodeClientMessage(e.message) : encodeServerMessage(e.message),
          ).toString('base64'),
        );
      const r = await simulateRound({
        session: 'replay',
        round: 4,
        threshold: 3,
        corruptTolerated: tolerated(n, 3),
        inputs,
        signingKeys: simulatedIdentities(n, 3),
        random: (i) => seededRandomFromInts(seed, i),
        dropouts: new Map([[2, 'after-share']]),
        observe,
      });
      return { r, log };
    };
    const a = await run(1);
    const b = await run(1);
    const c = await run(2);
    expect(a.log.length).toBeGreaterThan(10);
    expect(b.log).toEqual(a.log);
    expect(c.log).not.toEqual(a.log);
    expect(a.r.ok && c.r.ok && a.r.result.sum).toEqual(c.r.ok && c.r.result.sum);
  });

  it('weighted FedAvg: the server learns Σ w_iΔ_i and Σ w_i, within the quantization bound', async () => {
    const n = 5;
    const d = 200;
    const enc = { valueRange: 8, weightRange: 4, n };
    const rng = seededRandomFromInts(11)(4 * n * d);
    const updates = Array.from({ length: n }, (_, i) =>
      Float32Array.from({ length: d }, (_, j) => ((rng[i * d + j]! / 255) * 2 - 1) * 1.5),
    );
    const weights = [1, 0.5, 2, 3.25, 0.125];
    const inputs = updates.map((u, i) => encodeWeightedInput(u, weights[i]!, enc));
    const r = await simulateRound({
      session: 'fedavg',
      round: 1,
      threshold: 3,
      corruptTolerated: tolerated(n, 3),
      inputs,
      signingKeys: simulatedIdentities(n, 11),
      random: (i) => seededRandomFromInts(11, i),
      dropouts: new Map([[4, 'after-share']]),
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const members = [0, 1, 2, 3];
    const agg = decodeWeightedSum(r.result.sum, enc, members.length);
    const W = members.reduce((s, i) => s + weights[i]!, 0);
    expect(Math.abs(agg.totalWeight - W)).toBeLessThanOrEqual(members.length * weightErrorBound(enc));
    for (let j = 0; j < d; j++) {
      const exact = members.reduce((s, i) => s + weights[i]! * updates[i]![j]!, 0);
      expect(Math.abs(agg.weightedSum[j]! - exact)).toBeLessThanOrEqual(
        members.length * valueErrorBound(enc),
      );
    }
    expect(agg.average[0]).toBeCloseTo(agg.weightedSum[0]! / agg.totalWeight, 12);
  });

  it('with `seed`, silos draw per-round streams: two rounds share no key material', async () => {
    const n = 3;
    const keys = new Map<number, string[]>();
    for (const round of [1, 2]) {
      const r = await simulateRound({
        session: 'seeded',
        round,
        threshold: 2,
        corruptTolerated: tolerated(n, 2),
        inputs: randomInputs(n, 8, 1),
        signingKeys: simulatedIdentities(n, 1),
        seed: 5,
        observe: (e) => {
          if (e.direction === 'up' && e.message.type === 'advertise')
            keys.set(round, [...(keys.get(round) ?? []), Buffer.from(e.message.sPK).toString('hex')]);
        },
      });
      expect(r.ok).toBe(true);
    }
    const [a, b] = [keys.get(1)!, keys.get(2)!];
    expect(a.length).toBe(3);
    expect(a.filter((k) => b.includes(k))).toEqual([]);
  });

  it('moves a 10^5-element vector as binary: ≈ 4 bytes per element per masked input', async () => {
    const n = 3;
    const d = 100_000;
    let maskBytes = 0;
    const r = await simulateRound({
      session: 'size',
      round: 1,
      threshold: 2,
      corruptTolerated: tolerated(n, 2),
      inputs: randomInputs(n, d, 1),
      signingKeys: simulatedIdentities(n, 1),
      random: (i) => seededRandomFromInts(1, i),
      observe: (e) => {
        if (e.direction === 'up' && e.message.type === 'mask') maskBytes += e.bytes;
      },
    });
    expect(r.ok).toBe(true);
    expect(maskBytes).toBeGreaterThanOrEqual(n * 4 * d);
    expect(maskBytes).toBeLessThan(n * (4 * d + 100));
  });

  it('checks its options', async () => {
    const keys = simulatedIdentities(3, 1);
    const base = {
      session: 's',
      round: 1,
      threshold: 2,
      inputs: randomInputs(3, 4, 1),
      signingKeys: keys,
      random: () => seededRandomFromInts(1),
    };
    await expect(simulateRound({ ...base, threshold: 1 })).rejects.toThrow(/^config\.threshold/);
    await expect(simulateRound({ ...base, signingKeys: keys.slice(0, 2) })).rejects.toThrow(/^signingKeys/);
    await expect(simulateRound({ ...base, dropouts: new Map([[7, 'after-share']]) })).rejects.toThrow(
      /^dropouts/,
    );
    await expect(simulateRound({ ...base, seed: 3 })).rejects.toThrow(/^random/);
    const { random: _r, ...noRandom } = base;
    await expect(simulateRound(noRandom)).rejects.toThrow(/^random/);
    await expect(simulateRound({ ...noRandom, seed: -1 })).rejects.toThrow(/^seed/);
    expect(() => simulatedIdentities(1, 0)).toThrow(/^n/);
  });
});
