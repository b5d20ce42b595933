import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/fl/config.js';

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
    expect(
      issues({ silos: 4, rounds: 3, attacks: [{ silo: 4, kind: 'free-rider' }], comparison: { at: 5 } }),
    ).toEqual(['attacks[0].silo: must be < silos (4)', 'comparison.at: must be ≤ rounds (3)']);
    expect(issues({ silos: 4, rounds: 3, comparison: { at: 'last' } })).toEqual([
      "comparison.at: expected 'cumulative' or a round number ≥ 1",
    ]);
    expect(issues({ rounds: 3 })).toEqual(['silos: required']);
    expect(issues({ silos: 4, rounds: 3, aggregation: { convention: 'additive' } })).toEqual([]);
    expect(issues([1, 2])).toEqual([': expected a JSON object']);
  });

  it('puts the paths in the error message', () => {
    expect(() => parseConfig({ silos: 'many', rounds: 1 }, 'examples/x.json')).toThrow(
      /^examples\/x\.json: invalid configuration\n {2}silos: must be integer/,
    );
  });
});
