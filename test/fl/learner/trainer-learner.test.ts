/**
 * The trainer-process learner against a fake trainer (./_fake_trainer.py, plain Python): what a
 * well-behaved trainer gives, and one clear error for each way a trainer can break the protocol —
 * nothing hangs, nothing is masked, and the trainer is killed.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { coalitionOf } from '../../../scoring/coalition.js';
import type { Dataset } from '../../../src/data/dataset.js';
import { createTrainerLearner } from '../../../src/fl/learner/trainer-learner.js';
import { MAX_VECTOR_MAGNITUDE } from '../../../src/fl/learner/trainer-protocol.js';

const FAKE = fileURLToPath(new URL('./_fake_trainer.py', import.meta.url));
const PY = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const fake = (mode: string) => `${PY} ${FAKE} ${mode}`;

const data: Dataset = {
  x: Float32Array.from({ length: 12 }, (_, i) => i / 12),
  y: Int32Array.from([0, 1, 0]),
  n: 3,
  shape: [1, 4, 1],
  numClasses: 2,
  name: 'tiny',
  source: 'test',
};
const base = new Float32Array(10).fill(0.5);

const learnerOf = (mode: string, train = 5) =>
  createTrainerLearner({
    command: fake(mode),
    inputShape: [1, 4, 1],
    numClasses: 2,
    timeouts: { train },
    log: () => {},
  });

describe('trainer-process learner', () => {
  it('trains, evaluates in batches, initializes from a seed and plays coalition games', async () => {
    const l = await learnerOf('ok');
    try {
      expect(l.parameterCount).toBe(10);
      expect(l.backend).toBe('trainer');
      expect(l.kernels).toBe('fake 1 on cpu');
      const [u1, u2] = await l.trainMany(base, [
        { data, seed: 1 },
        { data, seed: 2 },
      ]);
      expect(Array.from(u1!)).toEqual(Array.from({ length: 10 }, (_, i) => Math.fround(0.01 * (i + 1))));
      expect(u2).toEqual(u1);
      const e = await l.evaluate(base, data);
      expect(e.accuracy).toBeCloseTo(0.505, 6);
      expect(Array.from(e.perClass)).toEqual([e.accuracy, e.accuracy]);
      // init through a second, short-lived trainer (initialParameters is synchronous)
      const m0 = l.initialParameters(3);
      expect(m0[0]).toBeCloseTo(3.1, 5);
      // …and the same through the running trainer.
      expect(await l.initialize(3)).toEqual(m0);
      const { game, perClass } = l.coalitionGames({
        base,
        updates: [u1!, new Float32Array(10).fill(1)],
        weights: [1, 3],
        convention: 'fedavg',
        test: data,
        utility: 'accuracy',
      });
      const v = await game.values([
        coalitionOf(2, []),
        coalitionOf(2, [0]),
        coalitionOf(2, [1]),
        coalitionOf(2, [0, 1]),
      ]);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const u = Array.from(u1!);
      expect(v[0]).toBeCloseTo(0.505, 6);
      expect(v[1]).toBeCloseTo(0.5 + (0.5 + mean(u)) / 100, 6);
      expect(v[2]).toBeCloseTo(0.5 + 1.5 / 100, 6);
      expect(v[3]).toBeCloseTo(0.5 + (0.5 + (mean(u) + 3) / 4) / 100, 6);
      expect((await perClass.values([coalitionOf(2, [1])]))[1]).toBeCloseTo(0.515, 6);
    } finally {
      await l.close();
    }
  });

  const broken: [string, RegExp][] = [
    [
      'exit',
      /^trainer train: the trainer '.*' exited with code 7; its last stderr lines: fake trainer: out of memory$/,
    ],
    ['garbage', /^trainer train: the trainer printed a line that is not JSON: "loss 0.42 epoch 1"/],
    ['print', /^trainer train: the trainer printed a line that is not JSON: "training silo data ..."/],
    ['wrongid', /^trainer train: answer id \d+, expected \d+$/],
    ['short', /^trainer train: the update has 9 values, the model's layout 10$/],
    ['nan', /^trainer train: the update\[3\] is NaN: NaN \(a diverged or broken trainer\)/],
    [
      'huge',
      new RegExp(
        `^trainer train: the update\\[5\\] is 1\\.0000000150474662e\\+30: beyond ±${MAX_VECTOR_MAGNITUDE.toExponential().replace('+', '\\+')}`,
      ),
    ],
    [
      'big',
      /^trainer train: the update file is 2147483648 bytes; 10 float32 values and a header take at most 4136: refused unread$/,
    ],
    ['sleep', /^trainer train: no answer within its timeout of 1 s; the trainer is stopped$/],
  ];
  for (const [mode, message] of broken)
    it(`a trainer that breaks the protocol (${mode}) gets one clear error, is killed, and stays refused`, async () => {
      const l = await learnerOf(mode, 1);
      const t0 = Date.now();
      try {
        const err = await l.trainMany(base, [{ data, seed: 1 }]).then(
          () => undefined,
          (e: Error) => e,
        );
        expect(err?.name).toBe('TrainerProtocolError');
        expect(err?.message).toMatch(message);
        // The same error for anything after it: the trainer is gone, nothing hangs.
        await expect(l.evaluate(base, data)).rejects.toThrow(err!.message);
      } finally {
        await l.close();
      }
      expect(Date.now() - t0).toBeLessThan(5000);
    });

  it("a trainer's own error is one answer, and the trainer stays up", async () => {
    const l = await learnerOf('error');
    try {
      await expect(l.trainMany(base, [{ data, seed: 1 }])).rejects.toThrow(
        /^trainer train: the trainer reports: CUDA out of memory$/,
      );
      expect((await l.evaluate(base, data)).accuracy).toBeCloseTo(0.505, 6);
    } finally {
      await l.close();
    }
  });

  it('a command that does not start, or does not answer layout, is refused naming layout', async () => {
    await expect(
      createTrainerLearner({ command: 'exit 4', inputShape: [1, 4, 1], numClasses: 2, log: () => {} }),
    ).rejects.toThrow(/^trainer layout: the trainer 'exit 4' exited with code 4$/);
    await expect(
      createTrainerLearner({
        command: 'echo hello; sleep 5',
        inputShape: [1, 4, 1],
        numClasses: 2,
        log: () => {},
      }),
    ).rejects.toThrow(/^trainer layout: the trainer printed a line that is not JSON: "hello"/);
  });
});
