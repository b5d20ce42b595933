/**
 * src/consortium/consortium-file.ts and consortium-of-run.ts: the consortium file silos pin — its schema,
 * its canonical digest, the comparison with the server's view (the first differing field is
 * named) and the silo's local checks.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import {
  type ConsortiumFile,
  ConsortiumMismatchError,
  compareWithServed,
  consortiumFileDigest,
  parseConsortiumFile,
  readConsortiumFile,
} from '../../src/consortium/consortium-file.js';
import { checkLocalAgainstFile, consortiumBodyOf, consortiumFileOf } from '../../src/fl/consortium-of-run.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { networkedLearner, networkedRun } from '../../src/fl/networked.js';
import type { ExperimentConfig } from '../../src/records/config.js';

const config: ExperimentConfig = {
  silos: 3,
  rounds: 2,
  data: {
    dataset: 'synthetic',
    trainSize: 60,
    testSize: 30,
    synthetic: { features: 4, classes: 3, examples: 200 },
  },
  model: { kind: 'mlp', hidden: [5] },
};
const run = networkedRun(config, 1);
const keys = [1, 2, 3].map((i) =>
  Buffer.from(signingKeyPairFromSeed(new Uint8Array(32).fill(i)).publicKey).toString('hex'),
);
const dir = mkdtempSync(join(tmpdir(), 'fedscore-consortium-file-'));
let learner: Learner;
let file: ConsortiumFile;
beforeAll(async () => {
  learner = await networkedLearner(config, { backend: 'cpu' });
  file = consortiumFileOf(run, 'c1', keys, learner);
});
afterAll(async () => {
  await learner.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What the service serves for a consortium created from `f` (GET /v1/consortia/:cid). */
function servedOf(f: ConsortiumFile) {
  const body = consortiumBodyOf(f);
  return {
    ...body,
    corruptSilos: f.corruptSilos,
    weakThreshold: f.weakThreshold,
    encoding: { ...body.encoding },
    minimumThreshold: 3,
    createdAt: 1,
  };
}

describe('the consortium file', () => {
  it("is built from the run: roster, t, n_C, d, the model's digests, test set, weights, strategy, rounds", () => {
    expect(parseConsortiumFile(JSON.parse(JSON.stringify(file)))).toEqual(file);
    expect(file).toMatchObject({
      format: 'fedscore-consortium',
      version: 1,
      id: 'c1',
      participants: keys.map((publicKey) => ({ publicKey })),
      threshold: run.threshold,
      corruptSilos: run.corruptSilos,
      weakThreshold: false,
      parameters: learner.parameterCount,
      data: { inputShape: [1, 4, 1], numClasses: 3 },
      model: { kind: 'mlp' },
      testSetDigest: run.testSetDigest,
      weights: { kind: 'examples', scale: run.weightScale },
      strategy: { name: 'fedavg', parameters: {} },
      seed: 1,
      rounds: 2,
    });
    expect(file.encoding.minWeight).toBe(run.minWeight);
    expect(() => checkLocalAgainstFile(file, run, learner, 0)).not.toThrow();
  });

  it('has a digest independent of key order and whitespace, changed by any value', () => {
    const d = consortiumFileDigest(file);
    expect(d).toMatch(/^[0-9a-f]{64}$/);
    const reordered = Object.fromEntries(Object.entries(file).reverse()) as ConsortiumFile;
    expect(consortiumFileDigest(reordered)).toBe(d);
    writeFileSync(join(dir, 'pretty.json'), JSON.stringify(file, null, 4));
    expect(readConsortiumFile(join(dir, 'pretty.json'), d).digest).toBe(d);
    expect(consortiumFileDigest({ ...file, threshold: file.threshold - 1 })).not.toBe(d);
    expect(consortiumFileDigest({ ...file, rounds: 3 })).not.toBe(d);
  });

  it('a file whose digest is not the pinned one gives one clear error', () => {
    const path = join(dir, 'c.json');
    writeFileSync(path, JSON.stringify({ ...file, threshold: 2 }));
    const pinned = consortiumFileDigest(file);
    expect(() => readConsortiumFile(path, pinned)).toThrow(
      `${path}: its digest is ${consortiumFileDigest({ ...file, threshold: 2 })}, not the pinned ${pinned} (--consortium-digest): this is not the consortium file you agreed to`,
    );
  });

  it('names the problem of a malformed file', () => {
    const path = join(dir, 'bad.json');
    writeFileSync(path, '{"format": ');
    expect(() => readConsortiumFile(path)).toThrow(/^.*bad\.json: not JSON/);
    writeFileSync(
      path,
      JSON.stringify({ ...file, participants: [{ publicKey: 'zz' }, ...file.participants] }),
    );
    expect(() => readConsortiumFile(path)).toThrow(/bad\.json: participants\[0\]\.publicKey: /);
    writeFileSync(path, JSON.stringify({ ...file, threshold: 4 }));
    expect(() => readConsortiumFile(path)).toThrow('bad.json: threshold: t = 4 exceeds the 3 participants');
    writeFileSync(
      path,
      JSON.stringify({
        ...file,
        participants: [file.participants[0], ...file.participants.slice(1, 2), file.participants[0]],
      }),
    );
    expect(() => readConsortiumFile(path)).toThrow('bad.json: participants: a public key appears twice');
    expect(() => readConsortiumFile(join(dir, 'missing.json'))).toThrow(
      'missing.json: cannot be read (ENOENT)',
    );
  });

  it("equals the service's view of the consortium created from it", () => {
    expect(() => compareWithServed(file, servedOf(file))).not.toThrow();
  });

  it('says weakThreshold only when t is below the bound, as the service does (the opt-in alone is not weak)', async () => {
    const n4 = { ...config, silos: 4 };
    const keys4 = [
      ...keys,
      Buffer.from(signingKeyPairFromSeed(new Uint8Array(32).fill(9)).publicKey).toString('hex'),
    ];
    const l4 = await networkedLearner(n4, { backend: 'cpu' });
    try {
      // n = 4, n_C = 1: the bound is 3; the opt-in with t = 2 is raised to a strict majority, 3.
      const optIn = networkedRun({ ...n4, secureAggregation: { threshold: 2, weakThreshold: true } }, 1);
      const f = consortiumFileOf(optIn, 'c1', keys4, l4);
      expect(f).toMatchObject({ threshold: 3, weakThreshold: false });
      expect(consortiumBodyOf(f)).not.toHaveProperty('allowWeakThreshold');
      expect(() => compareWithServed(f, servedOf(f))).not.toThrow();
      // n_C = 2: the bound is 4; t = 3 is below it, with the opt-in.
      const weak = networkedRun(
        { ...n4, secureAggregation: { threshold: 3, corruptSilos: 2, weakThreshold: true } },
        1,
      );
      const w = consortiumFileOf(weak, 'c1', keys4, l4);
      expect(w).toMatchObject({ threshold: 3, weakThreshold: true });
      expect(consortiumBodyOf(w)).toMatchObject({ allowWeakThreshold: true });
    } finally {
      await l4.close();
    }
  });

  it('registers its strategy, seed and schedule; a service running another strategy or schedule is refused by name', () => {
    const seeded: ExperimentConfig = {
      ...config,
      seed: 7,
      strategy: { name: 'fedavg', clientsPerRound: 2 } as ExperimentConfig['strategy'],
    };
    const k3 = consortiumFileOf(networkedRun(seeded, 7), 'c1', keys, learner);
    expect(k3).toMatchObject({ strategy: { name: 'fedavg', parameters: { clientsPerRound: 2 } }, seed: 7 });
    const body = consortiumBodyOf(k3);
    expect(body).toMatchObject({ strategy: k3.strategy, seed: 7, rounds: 2 });
    expect(consortiumBodyOf(k3, undefined, { schedule: false })).not.toHaveProperty('rounds');
    expect(() => compareWithServed(k3, servedOf(k3))).not.toThrow();
    // A service without a strategy runs FedAvg over every silo: not the pinned k = 2 of 3.
    const { strategy: _s, seed: _d, ...plain } = servedOf(k3);
    expect(() => compareWithServed(k3, plain)).toThrow(
      'consortium file mismatch at strategy: the pinned consortium file says {"name":"fedavg","parameters":{"clientsPerRound":2}}, the server serves {"name":"fedavg","parameters":{}}',
    );
    // … which is what a file without a configured strategy pins (its seed then selects nothing).
    const { strategy: _fs, seed: _fd, ...unset } = servedOf(file);
    expect(() => compareWithServed(file, unset)).not.toThrow();
    expect(() => compareWithServed(k3, { ...servedOf(k3), seed: undefined })).toThrow(
      'consortium file mismatch at seed: the pinned consortium file says 7, the server serves 1',
    );
    expect(() => compareWithServed(k3, { ...servedOf(k3), rounds: 3 })).toThrow(
      'consortium file mismatch at rounds: the pinned consortium file says 2, the server serves 3',
    );
    // Without a schedule the operator opens the rounds (`fedscore rounds open`): not a mismatch.
    const { rounds: _r, ...manual } = servedOf(k3);
    expect(() => compareWithServed(k3, manual)).not.toThrow();
  });

  it('pins the weight floor, largest share and effective number (issues 27 A1, 32 W1): a service without them is read as the defaults', () => {
    expect(file.encoding).toMatchObject({ weightFloor: 0.1, maxWeightShare: 0.5, minEffectiveSilos: 3 });
    // FedAvg weights (capped: networked.ts): the smallest normalized weight is max(f, min n_i / max n_j).
    expect(file.encoding.minWeight).toBe(Math.max(0.1, Math.min(...run.weights) / run.weightScale));
    const served = structuredClone(servedOf(file));
    const { weightFloor: _f, maxWeightShare: _s, minEffectiveSilos: _m, ...older } = served.encoding;
    expect(() => compareWithServed(file, { ...served, encoding: older })).not.toThrow();
    const below = JSON.parse(JSON.stringify(file));
    below.encoding.minWeight = 0.05;
    expect(() => parseConsortiumFile(below)).toThrow(
      /encoding\.minWeight: 0\.05 must lie in \[weightFloor = 0\.1, weightRange = 1\]/,
    );
    const none = JSON.parse(JSON.stringify(file));
    none.encoding.weightFloor = 0;
    expect(() => parseConsortiumFile(none)).toThrow(/encoding.weightFloor/);
  });

  it('any one changed field of the served view is named (the first differing field)', () => {
    const changes: [string, (s: ReturnType<typeof servedOf>) => void][] = [
      [
        'id',
        (s) => {
          s.id = 'c2';
        },
      ],
      [
        'participants.length',
        (s) => {
          s.participants.pop();
        },
      ],
      [
        'participants[1].publicKey',
        (s) => {
          s.participants[1] = { publicKey: 'ab'.repeat(32) };
        },
      ],
      [
        'threshold',
        (s) => {
          s.threshold += 1;
        },
      ],
      [
        'corruptSilos',
        (s) => {
          s.corruptSilos += 1;
        },
      ],
      [
        'weakThreshold',
        (s) => {
          s.weakThreshold = true;
        },
      ],
      [
        'model.parameters',
        (s) => {
          s.model = { ...s.model, parameters: s.model.parameters + 1 };
        },
      ],
      [
        'model.kind',
        (s) => {
          s.model = { ...s.model, name: 'cnn003' };
        },
      ],
      [
        'testSetDigest',
        (s) => {
          s.testSetDigest = 'cd'.repeat(32);
        },
      ],
      [
        'schemes',
        (s) => {
          s.schemes.pop();
        },
      ],
      [
        'convention',
        (s) => {
          s.convention = 'additive' as never;
        },
      ],
      [
        'emptyCoalition',
        (s) => {
          s.emptyCoalition = 'zero' as never;
        },
      ],
      [
        'utility',
        (s) => {
          s.utility = { name: 'negLoss', maxLoss: 5 } as never;
        },
      ],
      [
        'encoding.clip',
        (s) => {
          s.encoding.clip *= 2;
        },
      ],
      [
        'encoding.weightRange',
        (s) => {
          s.encoding.weightRange = 2;
        },
      ],
      [
        'encoding.minWeight',
        (s) => {
          s.encoding.minWeight = 0;
        },
      ],
      [
        'encoding.weightFloor',
        (s) => {
          s.encoding.weightFloor = 1e-9;
        },
      ],
      [
        'encoding.maxWeightShare',
        (s) => {
          s.encoding.maxWeightShare = 0.999;
        },
      ],
      [
        'encoding.minEffectiveSilos',
        (s) => {
          s.encoding.minEffectiveSilos = 1;
        },
      ],
      [
        'strategy',
        (s) => {
          s.strategy = { name: 'fedavg', parameters: { clientsPerRound: 2 } };
        },
      ],
      [
        'strategy',
        (s) => {
          s.strategy = { name: 'score-weighted', parameters: {} };
        },
      ],
      [
        'seed',
        (s) => {
          s.seed = (s.seed ?? 1) + 1;
        },
      ],
      [
        'rounds',
        (s) => {
          s.rounds = 5;
        },
      ],
    ];
    fc.assert(
      fc.property(fc.integer({ min: 0, max: changes.length - 1 }), (k) => {
        const [field, change] = changes[k]!;
        const served = structuredClone(servedOf(file));
        change(served);
        let error: unknown;
        try {
          compareWithServed(file, served);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(ConsortiumMismatchError);
        expect((error as ConsortiumMismatchError).field).toBe(field);
        expect((error as Error).message).toMatch(
          new RegExp(`^consortium file mismatch at ${field.replace(/[[\].]/g, '\\$&')}: `),
        );
      }),
      { numRuns: 64 },
    );
  });

  it("the silo's local checks name the model, d and test set that are not the file's", () => {
    expect(() =>
      checkLocalAgainstFile(
        { ...file, model: { ...file.model, initialWeightsDigest: '00'.repeat(32) } },
        run,
        learner,
        0,
      ),
    ).toThrow(
      /^consortium file model\.initialWeightsDigest: the local initial model's digest is [0-9a-f]{64}, the file's 0{64}$/,
    );
    expect(() =>
      checkLocalAgainstFile(
        { ...file, model: { ...file.model, topologyDigest: '00'.repeat(32) } },
        run,
        learner,
        0,
      ),
    ).toThrow(/^consortium file model\.topologyDigest: /);
    expect(() => checkLocalAgainstFile({ ...file, parameters: 3 }, run, learner, 0)).toThrow(
      `consortium file parameters: the file's model has 3 parameters, the local one ${learner.parameterCount}`,
    );
    expect(() => checkLocalAgainstFile({ ...file, testSetDigest: 'ee'.repeat(32) }, run, learner, 0)).toThrow(
      /^consortium file testSetDigest: /,
    );
  });
});
