import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { defineEstimator } from '../../src/estimators/estimator.js';
import {
  BUILT_IN_ESTIMATORS,
  comparedPerRound,
  defaultEstimators,
  defaultReferenceEstimator,
  estimatorDefinitions,
  estimatorFolds,
  estimatorOf,
  estimatorsToRun,
  needsReferenceUpdate,
  registerEstimator,
} from '../../src/estimators/registry.js';
import {
  configuredEstimators,
  describeEstimators,
  wantsTrueShapley,
} from '../../src/records/comparison-config.js';
import {
  ConfigError,
  EstimatorsSchema,
  type ExperimentConfig,
  parseConfig,
} from '../../src/records/config.js';
import * as harness from '../../src/sim/comparison-harness.js';

const base = { silos: 9, rounds: 2 };
const names = (uses: { definition: { name: string } }[]) => uses.map((u) => u.definition.name);

/** A minimal valid definition to vary in the rejection tests. */
const probe = (over: Record<string, unknown>) =>
  ({
    name: 'probe',
    title: 'probe',
    schema: Type.Object({}, { additionalProperties: false }),
    stream: [0xe5, 0xfff],
    compare: 'round',
    run: async () => ({ values: [] }),
    ...over,
  }) as never;

describe('built-in estimators', () => {
  it('run in the historical order (the order of every round record)', () => {
    expect(BUILT_IN_ESTIMATORS.map((e) => e.name)).toEqual([
      'mrsv',
      'tmr',
      'gtg',
      'mc',
      'owen',
      'banzhaf',
      'cos',
      'maverick',
      'tsv',
    ]);
    expect(estimatorDefinitions().slice(0, BUILT_IN_ESTIMATORS.length)).toEqual([...BUILT_IN_ESTIMATORS]);
  });

  it('keep the seed streams the harness once derived from their names (frozen for reproducibility)', () => {
    // The old harness: deriveSeed(seed, round, name.length, name.charCodeAt(0)); Maverick: (seed, round, 7).
    const old = (name: string) => [name.length, name.charCodeAt(0)];
    const streams = Object.fromEntries(BUILT_IN_ESTIMATORS.map((e) => [e.name, e.stream]));
    expect(streams).toEqual({
      mrsv: [4, 109],
      tmr: [0xe5, 1], // its old value was tsv's
      gtg: [3, 103],
      mc: [2, 109],
      owen: [4, 111],
      banzhaf: [7, 98],
      cos: [3, 99],
      maverick: [7],
      tsv: [3, 116],
    });
    for (const name of ['mrsv', 'gtg', 'mc', 'owen', 'banzhaf', 'cos', 'tsv'])
      expect(streams[name]).toEqual(old(name));
    expect(old('tmr')).toEqual(old('tsv')); // the collision the registry now refuses
  });

  it('the configuration schema is derived from the registry', () => {
    expect(Object.keys(EstimatorsSchema.properties)).toEqual(BUILT_IN_ESTIMATORS.map((e) => e.name));
    for (const e of BUILT_IN_ESTIMATORS) expect(EstimatorsSchema.properties[e.name]).toMatchObject(e.schema);
  });

  it('budgeted estimators (Maverick-Shapley included) accept `budget`; the others reject it', () => {
    for (const e of BUILT_IN_ESTIMATORS) {
      // trueShapley: a reference that runs besides the estimator under test (9 silos: not by default)
      const cfg = { ...base, comparison: { estimators: { [e.name]: { budget: 64 } }, trueShapley: true } };
      if (['gtg', 'mc', 'owen', 'banzhaf', 'maverick', 'tsv'].includes(e.name))
        expect(() => parseConfig(cfg)).not.toThrow();
      else expect(() => parseConfig(cfg)).toThrow(`comparison.estimators.${e.name}.budget: unknown key`);
    }
  });

  it('defaults, comparison mode, needs and folds', () => {
    expect(defaultEstimators()).toEqual({ mrsv: {}, cos: {} });
    expect(harness.DEFAULT_ESTIMATORS).toEqual({ mrsv: {}, cos: {} });
    expect(configuredEstimators(parseConfig(base))).toEqual({ mrsv: {}, cos: {} });
    expect(BUILT_IN_ESTIMATORS.filter((e) => comparedPerRound(e.name)).map((e) => e.name)).toEqual([
      'gtg',
      'mc',
      'owen',
      'banzhaf',
    ]);
    expect(comparedPerRound('loo')).toBe(false); // private scores are experiment.ts's business
    expect(defaultReferenceEstimator()).toBe('mrsv');
    // TMR folds MR-SV's per-round tables: MR-SV runs with it, but only TMR is folded.
    expect(names(estimatorsToRun({ tmr: {}, gtg: { budget: 8 } }))).toEqual(['mrsv', 'tmr', 'gtg']);
    expect(estimatorsToRun({ tmr: {} })[0]!.config).toEqual({});
    expect(names(estimatorFolds({ tmr: { decay: 0.5 }, gtg: {} }))).toEqual(['tmr']);
    expect(names(estimatorFolds({ cos: {}, tmr: {}, mrsv: {} }))).toEqual(['mrsv', 'tmr']);
    expect(() => estimatorsToRun({ nope: {} } as never)).toThrow(
      /comparison\.estimators\.nope: unknown estimator/,
    );
  });

  it('needsReferenceUpdate: only Trajectory Shapley needs it, also through the harness module', () => {
    expect(needsReferenceUpdate({ tsv: {} })).toBe(true);
    expect(needsReferenceUpdate({ mrsv: {}, gtg: {}, maverick: {} })).toBe(false);
    expect(needsReferenceUpdate(defaultEstimators())).toBe(false);
    expect(harness.needsReferenceUpdate({ cos: {}, tsv: { budget: 9 } })).toBe(true);
  });

  it('describes the configured estimators and the true-Shapley rule as the CLI used to', () => {
    const cfg = (comparison: ExperimentConfig['comparison'], silos = 9) =>
      parseConfig({ ...base, silos, ...(comparison ? { comparison } : {}) });
    expect(describeEstimators(cfg(undefined))).toBe('mrsv, cos');
    expect(
      describeEstimators(cfg({ estimators: { mrsv: {}, gtg: { budget: 128 }, maverick: { budget: 5 } } })),
    ).toBe('mrsv, gtg(budget 128), maverick(budget 5)');
    expect(wantsTrueShapley(cfg(undefined, 6))).toBe(true);
    expect(wantsTrueShapley(cfg(undefined, 7))).toBe(false);
    expect(wantsTrueShapley(cfg({ trueShapley: true }, 7))).toBe(true);
    expect(wantsTrueShapley(cfg({ trueShapley: false }, 3))).toBe(false);
  });
});

describe('registerEstimator', () => {
  it('rejects a taken name or stream, reserved and malformed names, and other bad definitions', () => {
    expect(() => registerEstimator(probe({ name: 'gtg' }))).toThrow(
      "name: estimator 'gtg' is already registered",
    );
    expect(() => registerEstimator(probe({ name: 'fp' }))).toThrow("name: 'fp' is reserved");
    expect(() => registerEstimator(probe({ name: 'trueSv' }))).toThrow("name: 'trueSv' is reserved");
    expect(() => registerEstimator(probe({ name: 'a.b' }))).toThrow(RangeError);
    expect(() => registerEstimator(probe({ name: 3 }))).toThrow(TypeError);
    expect(() => registerEstimator(probe({ stream: [3, 103] }))).toThrow(
      "probe.stream: [3, 103] is already the stream of 'gtg'",
    );
    expect(() => registerEstimator(probe({ stream: [7] }))).toThrow(
      /probe\.stream: expected at least two parts/,
    );
    expect(() => registerEstimator(probe({ stream: [] }))).toThrow(TypeError);
    expect(() => registerEstimator(probe({ stream: [1.5, 2] }))).toThrow(TypeError);
    expect(() => registerEstimator(probe({ stream: [2 ** 32, 2] }))).toThrow(TypeError);
    expect(() => registerEstimator(probe({ byDefault: true }))).toThrow(/probe\.byDefault/);
    expect(() => registerEstimator(probe({ compare: 'sometimes' }))).toThrow(RangeError);
    expect(() => registerEstimator(probe({ schema: Type.String() }))).toThrow(TypeError);
    expect(() => registerEstimator(probe({ run: undefined }))).toThrow(TypeError);
    const stray = defineEstimator({
      ...(probe({ name: 'stray' }) as object),
      stream: [0xe5, 0xffe],
    } as never);
    expect(() => registerEstimator(probe({ needs: { estimators: [stray] } }))).toThrow(
      "probe.needs.estimators: 'stray' is not registered before it",
    );
    expect(estimatorOf('probe')).toBeUndefined(); // nothing half-registered
  });

  it('a user module adds an estimator: configurations may name it, validated by its own schema', () => {
    const constant = defineEstimator({
      name: 'userConstant',
      title: 'every participant scores `value` (test estimator)',
      schema: Type.Object({ value: Type.Optional(Type.Number()) }, { additionalProperties: false }),
      stream: [0xe5, 0x7e57],
      compare: 'round',
      run: async ({ participants, config }) => ({ values: participants.map(() => config.value ?? 1) }),
    });
    registerEstimator(constant);
    expect(() => registerEstimator(constant)).toThrow(/already registered/);
    expect(estimatorOf('userConstant')).toBe(constant);
    expect(estimatorDefinitions().at(-1)).toBe(constant);
    const cfg = parseConfig({
      ...base,
      comparison: { estimators: { userConstant: { value: 2 }, gtg: {} }, trueShapley: true },
    });
    expect(cfg.comparison?.estimators).toEqual({ userConstant: { value: 2 }, gtg: {} });
    expect(names(estimatorsToRun(cfg.comparison!.estimators!))).toEqual(['gtg', 'userConstant']);
    expect(comparedPerRound('userConstant')).toBe(true);
    expect(describeEstimators(cfg)).toBe('userConstant, gtg');
    let error: unknown;
    try {
      parseConfig({ ...base, comparison: { estimators: { userConstant: { value: 'x', other: 1 } } } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.map((i) => i.path).sort()).toEqual([
      'comparison.estimators.userConstant.other',
      'comparison.estimators.userConstant.value',
    ]);
    // The built-ins are still validated as before; an unregistered name is still an unknown key.
    expect(() => parseConfig({ ...base, comparison: { estimators: { gtg: { budget: 0 } } } })).toThrow(
      'comparison.estimators.gtg.budget: must be >= 1',
    );
    expect(() => parseConfig({ ...base, comparison: { estimators: { nobody: {} } } })).toThrow(
      'comparison.estimators.nobody: unknown key',
    );
    expect(defaultEstimators()).toEqual({ mrsv: {}, cos: {} }); // a user estimator never runs by default
  });
});
