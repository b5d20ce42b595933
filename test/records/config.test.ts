import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { registerDataset } from '../../src/data/registry.js';
import { registerModel } from '../../src/ml/model-registry.js';
import { ConfigError, parseConfig } from '../../src/records/config.js';

function issues(value: unknown): string[] {
  try {
    parseConfig(value);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).issues.map((i) => `${i.path}: ${i.message}`);
  }
  return [];
}

describe('experiment configuration', () => {
  it('accepts a minimal and a full configuration', () => {
    expect(issues({ silos: 4, rounds: 3 })).toEqual([]);
    expect(
      issues({
        name: 'full',
        seed: 3,
        seeds: 2,
        silos: 9,
        rounds: 10,
        data: { dataset: 'fashion-mnist', trainSize: 9000, testSize: 2000 },
        partition: { kind: 'dirichlet', alpha: 0.5 },
        labelNoise: { maxRate: 1 },
        attacks: [{ silo: 8, kind: 'label-flip' }],
        model: { kind: 'mlp', hidden: [200] },
        training: { optimizer: 'adam', learningRate: 0.001, weightDecay: 0.001, epochs: 1, batchSize: 64 },
        aggregation: { convention: 'fedavg' },
        secureAggregation: {
          enabled: true,
          threshold: 6,
          clip: 1,
          dropouts: [{ round: 2, silo: 1, at: 'after-share' }],
        },
        strategy: { name: 'fedavg' },
        scoring: { utility: 'accuracy' },
        comparison: { reference: 'mrsv', at: 10, estimators: { mrsv: {}, gtg: { budget: 200 }, cos: {} } },
      }),
    ).toEqual([]);
  });

  it('rejects unknown keys and bad values with the path of the field', () => {
    expect(
      issues({
        silos: 4,
        rounds: 0,
        bogus: 1,
        model: { kind: 'mlp', hidden: [0] },
        comparison: { estimators: { gtg: { budget: 0, x: 1 } } },
      }),
    ).toEqual([
      'bogus: unknown key',
      'rounds: must be >= 1',
      'model.hidden[0]: must be >= 1',
      'comparison.estimators.gtg.x: unknown key',
      'comparison.estimators.gtg.budget: must be >= 1',
    ]);
  });

  it('names the allowed values and the cross-field rules', () => {
    expect(issues({ silos: 4, rounds: 3, partition: { kind: 'weird' } })).toEqual([
      'partition.kind: expected one of "iid", "dirichlet", "quantity-skew", "mavericks", "mixed"',
    ]);
    expect(issues({ silos: 10, rounds: 3, partition: { kind: 'mixed', nonIid: 2, alpha: 0.1 } })).toEqual([]);
    expect(issues({ silos: 4, rounds: 3, partition: { kind: 'mixed' } })).toEqual([
      "partition.alpha: required for kind 'mixed'",
      "partition.nonIid: required for kind 'mixed'",
    ]);
    expect(issues({ silos: 4, rounds: 3, partition: { kind: 'mixed', nonIid: 4, alpha: 1 } })).toEqual([
      'partition.nonIid: must be < silos (4)',
    ]);
    expect(issues({ silos: 4, rounds: 3, partition: { kind: 'dirichlet', alpha: 1, nonIid: 1 } })).toEqual([
      "partition.nonIid: applies only to kind 'mixed'",
    ]);
    expect(issues({ silos: 4, rounds: 3, partition: { kind: 'iid', mavericks: 1 } })).toEqual([
      "partition.mavericks: applies only to kind 'mavericks'",
    ]);
    expect(
      issues({ silos: 5, rounds: 3, partition: { kind: 'mavericks', mavericks: 1, alpha: 10 } }),
    ).toEqual([]);
    expect(issues({ silos: 4, rounds: 3, partition: { kind: 'dirichlet' } })).toEqual([
      "partition.alpha: required for kind 'dirichlet'",
    ]);
    expect(issues({ silos: 4, rounds: 3, partition: { kind: 'quantity-skew' } })).toEqual([
      "partition.beta: required for kind 'quantity-skew'",
    ]);
    expect(issues({ silos: 4, rounds: 3, partition: { kind: 'quantity-skew', beta: 0.5 } })).toEqual([]);
    expect(
      issues({ silos: 4, rounds: 3, attacks: [{ silo: 4, kind: 'free-rider' }], comparison: { at: 5 } }),
    ).toEqual(['attacks[0].silo: must be < silos (4)', 'comparison.at: must be ≤ rounds (3)']);
    // `factor` is checked by the attack's own entry (src/data/misbehaviors/).
    expect(
      issues({
        silos: 4,
        rounds: 3,
        attacks: [
          { silo: 0, kind: 'label-flip', factor: 2 },
          { silo: 1, kind: 'random-update', factor: -1 },
          { silo: 2, kind: 'scale', factor: 3 },
        ],
      }),
    ).toEqual([
      'attacks[0].factor: kind label-flip takes no factor',
      'attacks[1].factor: expected a number in [0, 1.7976931348623157e+308], got -1',
    ]);
    expect(issues({ silos: 4, rounds: 3, comparison: { at: 'last' } })).toEqual([
      "comparison.at: expected 'cumulative' or a round number ≥ 1",
    ]);
    expect(issues({ rounds: 3 })).toEqual(['silos: required']);
    expect(issues({ silos: 4, rounds: 3, aggregation: { convention: 'additive' } })).toEqual([]);
    expect(issues([1, 2])).toEqual([': expected a JSON object']);
  });

  it('refuses a threshold below ⌊(silos + corruptSilos)/2⌋ + 1 unless weakThreshold (Bonawitz et al. 2017 §6)', () => {
    const sa = (secureAggregation: Record<string, unknown>) =>
      issues({ silos: 5, rounds: 3, secureAggregation });
    expect(sa({ threshold: 3 })).toEqual([
      'secureAggregation.threshold: t = 3 is below ⌊(n + n_C)/2⌋ + 1 = 4 for n = 5 silos and n_C = 1 corrupted ones (Bonawitz et al. 2017, §6: a malicious server could show two survivor sets and unmask inputs); opt in to a weak threshold explicitly to run below the bound',
    ]);
    expect(sa({ threshold: 3, weakThreshold: true })).toEqual([]);
    expect(sa({ threshold: 3, corruptSilos: 0 })).toEqual([]);
    expect(sa({ threshold: 4 })).toEqual([]);
    expect(sa({ threshold: 4, corruptSilos: 3 })).toHaveLength(1); // ⌊8/2⌋ + 1 = 5
    expect(sa({ corruptSilos: 5 })).toEqual(['secureAggregation.corruptSilos: must be < silos (5)']);
    expect(sa({ corrections: 'fallback' })).toEqual([]);
    expect(sa({ corrections: 'sometimes' })[0]).toMatch(/^secureAggregation\.corrections: expected one of/);
  });

  it('checks scoring.emptyCoalition and scoring.raw', () => {
    expect(issues({ silos: 4, rounds: 3, scoring: { emptyCoalition: 'zero', raw: true } })).toEqual([]);
    expect(issues({ silos: 4, rounds: 3, scoring: { emptyCoalition: 'none', raw: 1 } })).toEqual([
      'scoring.emptyCoalition: expected one of "initialModel", "zero"',
      'scoring.raw: must be boolean',
    ]);
  });

  it('refuses a reference that would not be computed, before the run', () => {
    const base = { silos: 8, rounds: 3 };
    const est = { estimators: { mrsv: {}, cos: {} } };
    expect(issues({ ...base, comparison: { reference: 'roundSv', at: 3, ...est } })).toEqual([]);
    expect(
      issues({ ...base, comparison: { references: ['roundSv', 'mrsv', 'tmr'], at: 2, ...est } }),
    ).toEqual(['comparison.references[2]: expected one of "mrsv", "trueSv", "roundSv"']);
    expect(issues({ ...base, comparison: { reference: 'roundSv', ...est } })).toEqual([
      "comparison.reference: roundSv is the Shapley value of one round's game: set comparison.at to a round (it is 'cumulative')",
    ]);
    expect(issues({ ...base, comparison: { reference: 'roundSv', at: 2, estimators: { cos: {} } } })).toEqual(
      [
        "comparison.reference: roundSv reads the round's exact coalition table: add comparison.estimators.mrsv",
      ],
    );
    // tmr needs MR-SV's tables, so MR-SV runs and roundSv can read them; 'mrsv' itself is not configured
    expect(
      issues({ ...base, comparison: { references: ['roundSv', 'mrsv'], at: 2, estimators: { tmr: {} } } }),
    ).toEqual(["comparison.references[1]: 'mrsv' does not run: add comparison.estimators.mrsv"]);
    expect(issues({ ...base, comparison: { references: ['trueSv'] } })).toEqual([
      'comparison.references[0]: trueSv is not computed: set comparison.trueShapley',
    ]);
    expect(issues({ ...base, comparison: { references: ['trueSv'], trueShapley: true } })).toEqual([]);
    expect(issues({ ...base, comparison: { references: ['mrsv', 'mrsv'] } })).toEqual([
      'comparison.references: must not have duplicate items',
    ]);
    // None named: the default (MR-SV above 6 silos) must run too, or the run trained every round
    // and then failed without writing results.json.
    expect(issues({ ...base, comparison: { estimators: { cos: {} } } })).toEqual([
      "comparison.estimators: the default reference 'mrsv' would not be computed: 'mrsv' does not run: add comparison.estimators.mrsv",
    ]);
    expect(issues({ ...base, comparison: { estimators: { cos: {} }, trueShapley: true } })).toEqual([]);
    expect(issues({ silos: 4, rounds: 3, comparison: { estimators: { cos: {} } } })).toEqual([]); // trueSv
    expect(issues({ ...base, comparison: est })).toEqual([]);
  });

  it('puts the paths in the error message', () => {
    expect(() => parseConfig({ silos: 'many', rounds: 1 }, 'examples/x.json')).toThrow(
      /^examples\/x\.json: invalid configuration\n {2}silos: must be integer/,
    );
  });
});

describe('data sets and models come from their registries', () => {
  it('names the registered data sets and model kinds', () => {
    expect(issues({ silos: 4, rounds: 3, data: { dataset: 'cifar10' } })).toEqual([]);
    expect(issues({ silos: 4, rounds: 3, data: { dataset: 'mnist' } })).toEqual([
      "data.dataset: expected one of 'fashion-mnist', 'synthetic', 'cifar10', 'files'",
    ]);
    expect(issues({ silos: 4, rounds: 3, model: { kind: 'resnet18' } })).toEqual([
      "model.kind: expected one of 'mlp', 'cnn003', 'lenet5', 'tfjs-layers', 'external'",
    ]);
    expect(issues({ silos: 4, rounds: 3, model: {} })).toEqual(['model.kind: required']);
  });

  it("checks a data set's options block against its schema, and only for the chosen data set", () => {
    const data = { dataset: 'synthetic', synthetic: { features: 8, classes: 1, bogus: 2 } };
    expect(issues({ silos: 4, rounds: 3, data })).toEqual([
      'data.synthetic.bogus: unknown key',
      'data.synthetic.classes: must be >= 2',
    ]);
    expect(issues({ silos: 4, rounds: 3, data: { synthetic: { features: 8 } } })).toEqual([
      "data.synthetic: applies only to data.dataset 'synthetic'",
    ]);
    expect(issues({ silos: 4, rounds: 3, data: { cifar10: {} } })).toEqual(['data.cifar10: unknown key']);
  });

  it('accepts data.longTail (papers/004 §4.1) with an imbalance factor in (0, 1]', () => {
    expect(issues({ silos: 4, rounds: 3, data: { longTail: { imbalance: 0.01 } } })).toEqual([]);
    expect(issues({ silos: 4, rounds: 3, data: { longTail: { imbalance: 1, order: 'random' } } })).toEqual(
      [],
    );
    expect(issues({ silos: 4, rounds: 3, data: { longTail: { imbalance: 0, order: 'tail' } } })).toEqual([
      'data.longTail.imbalance: must be > 0',
      'data.longTail.order: expected one of "index", "random"',
    ]);
    expect(issues({ silos: 4, rounds: 3, data: { longTail: {} } })).toEqual([
      'data.longTail.imbalance: required',
    ]);
  });

  it("checks the model's options against its own schema, naming model.<key>", () => {
    expect(issues({ silos: 4, rounds: 3, model: { kind: 'cnn003', hidden: 64, pool: true } })).toEqual([]);
    expect(issues({ silos: 4, rounds: 3, model: { kind: 'cnn003', hidden: [64] } })).toEqual([
      'model.hidden: must be integer',
    ]);
    expect(issues({ silos: 4, rounds: 3, model: { kind: 'lenet5', hidden: [200] } })).toEqual([
      "model.hidden: applies only to kind 'mlp' or 'cnn003'",
    ]);
    expect(issues({ silos: 4, rounds: 3, model: { kind: 'mlp', pool: true, depth: 3 } })).toEqual([
      "model.pool: applies only to kind 'cnn003'",
      'model.depth: unknown key',
    ]);
  });

  it('checks the options of user-registered data sets and models the same way', () => {
    registerDataset({
      name: 'config-test-blobs',
      description: 'blobs',
      options: Type.Object({ n: Type.Integer({ minimum: 10 }) }, { additionalProperties: false }),
      shape: () => ({ inputShape: [1, 2, 1], numClasses: 2 }),
      load: () => {
        throw new Error('not loaded in this test');
      },
    });
    registerModel({
      kind: 'config-test-net',
      description: 'net',
      options: Type.Object(
        { width: Type.Optional(Type.Integer({ minimum: 1 })) },
        { additionalProperties: false },
      ),
      build: () => {
        throw new Error('not built in this test');
      },
    });
    const ok = {
      silos: 4,
      rounds: 3,
      data: { dataset: 'config-test-blobs', 'config-test-blobs': { n: 10 } },
      model: { kind: 'config-test-net', width: 3 },
    };
    expect(issues(ok)).toEqual([]);
    expect(
      issues({
        ...ok,
        rounds: 0,
        data: { dataset: 'config-test-blobs', 'config-test-blobs': { n: 1, m: 2 } },
        model: { kind: 'config-test-net', width: 0 },
      }),
    ).toEqual([
      'rounds: must be >= 1',
      'data.config-test-blobs.m: unknown key',
      'data.config-test-blobs.n: must be >= 10',
      'model.width: must be >= 1',
    ]);
    expect(issues({ ...ok, data: { dataset: 'config-test-blobs', 'config-test-blobs': 3 } })).toEqual([
      'data.config-test-blobs: must be object',
    ]);
  });
});
