import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import {
  BUILTIN_MODELS,
  createModel,
  DEFAULT_MODEL,
  findModel,
  fixedInitialParameters,
  type LayerSpec,
  modelNames,
  modelSpec,
  registerModel,
} from '../../src/ml/model-registry.js';

/** A two-layer perceptron with a `width` option: a model the built-ins do not have. */
const tinyMlp = {
  kind: 'registry-test-tiny',
  description: 'flatten → dense(width) → dense(classes)',
  options: Type.Object(
    { width: Type.Optional(Type.Integer({ minimum: 1 })) },
    { additionalProperties: false },
  ),
  build: (
    o: { width?: number },
    d: { inputShape: readonly [number, number, number]; numClasses: number },
  ) => {
    const f = d.inputShape[0] * d.inputShape[1] * d.inputShape[2];
    const w = o.width ?? 4;
    const layers: LayerSpec[] = [
      { kind: 'flatten' },
      { kind: 'dense', inputs: f, units: w, relu: true },
      { kind: 'dense', inputs: w, units: d.numClasses, relu: false },
    ];
    return modelSpec(
      'registry-test-tiny',
      `tiny-${f}-${w}-${d.numClasses}`,
      d.inputShape,
      d.numClasses,
      layers,
    );
  },
};

describe('model registry', () => {
  it('lists the built-ins in one list, mlp the default', () => {
    expect(modelNames().slice(0, 4)).toEqual(['mlp', 'cnn003', 'lenet5', 'tfjs-layers']);
    expect(BUILTIN_MODELS.map((m) => m.kind)).toEqual(['mlp', 'cnn003', 'lenet5', 'tfjs-layers']);
    expect(DEFAULT_MODEL).toEqual({ kind: 'mlp' });
    expect(Object.isFrozen(DEFAULT_MODEL)).toBe(true);
    for (const m of BUILTIN_MODELS)
      for (const [key, schema] of Object.entries(m.options.properties))
        expect((schema as { description?: string }).description, `${m.kind}.${key}`).toBeTruthy();
  });

  it("createModel checks the options against the model's schema and names the bad one", () => {
    expect(createModel('mlp', { hidden: [16], inputShape: [4, 4, 1] }).name).toBe('mlp-16-16-10');
    expect(createModel('cnn003', { pool: true }).name).toBe('cnn003-pool-28x28x1-10');
    expect(() => createModel('mlp', { hidden: [0] })).toThrow('hidden[0]: must be >= 1');
    expect(() => createModel('mlp', { hidden: 64 })).toThrow('hidden: must be array');
    expect(() => createModel('lenet5', { hidden: [10] })).toThrow("hidden: not an option of 'lenet5'");
    expect(() => createModel('cnn003', { pool: 'yes' })).toThrow('pool: must be boolean');
    expect(() => createModel('resnet')).toThrow(
      "kind: expected one of 'mlp', 'cnn003', 'lenet5', 'tfjs-layers', 'external', got 'resnet'",
    );
  });

  it('registers a new model; rejects a taken kind, bad definitions and a builder that lies about its kind', () => {
    registerModel(tinyMlp);
    expect(modelNames()).toContain('registry-test-tiny');
    expect(findModel('registry-test-tiny')).toBe(tinyMlp);
    const spec = createModel('registry-test-tiny', { width: 3, inputShape: [2, 2, 1], numClasses: 2 });
    expect(spec).toMatchObject({
      kind: 'registry-test-tiny',
      name: 'tiny-4-3-2',
      paramCount: 4 * 3 + 3 + 3 * 2 + 2,
    });
    // plain data: survives structured cloning (what the training workers receive) unchanged
    expect(structuredClone(spec)).toEqual(spec);
    expect(() => registerModel(tinyMlp)).toThrow("kind: model 'registry-test-tiny' is already registered");
    expect(() => registerModel({ ...tinyMlp, kind: 'a b' })).toThrow(/^kind: /);
    expect(() =>
      registerModel({ ...tinyMlp, kind: 'registry-test-x', options: Type.Integer() as never }),
    ).toThrow(/^options: /);
    registerModel({ ...tinyMlp, kind: 'registry-test-liar' });
    expect(() => createModel('registry-test-liar')).toThrow(
      "build: model 'registry-test-liar' returned a spec of kind 'registry-test-tiny'",
    );
  });

  it('initializes from the seed unless the model has fixed initial parameters, which it checks', () => {
    const spec = createModel('mlp', { hidden: [2], inputShape: [1, 2, 1], numClasses: 2 });
    expect(fixedInitialParameters('mlp', {}, spec)).toBeUndefined();
    const fixed = new Float32Array(spec.paramCount).fill(0.5);
    registerModel({ ...tinyMlp, kind: 'registry-test-fixed', initialParameters: () => fixed });
    expect(fixedInitialParameters('registry-test-fixed', {}, spec)).toBe(fixed);
    registerModel({ ...tinyMlp, kind: 'registry-test-short', initialParameters: () => new Float32Array(3) });
    expect(() => fixedInitialParameters('registry-test-short', {}, spec)).toThrow(
      `initialParameters: model 'registry-test-short' returned 3 values, ${spec.name} has ${spec.paramCount} parameters`,
    );
    expect(() => fixedInitialParameters('nope', {}, spec)).toThrow(/^kind: expected one of/);
    expect(() =>
      registerModel({ ...tinyMlp, kind: 'registry-test-bad-init', initialParameters: 3 as never }),
    ).toThrow('initialParameters: expected a function');
  });

  it("'tfjs-layers' needs the path of model.json and names a missing file", () => {
    expect(() => createModel('tfjs-layers', {})).toThrow('options: must have required properties path');
    expect(() => createModel('tfjs-layers', { path: '/nonexistent/model.json' })).toThrow(
      'model: model file /nonexistent/model.json cannot be read (ENOENT)',
    );
  });

  it('modelSpec checks that the layers chain and names the layer that does not', () => {
    const flat: LayerSpec = { kind: 'flatten' };
    expect(() =>
      modelSpec('x', 'x', [2, 2, 1], 3, [flat, { kind: 'dense', inputs: 5, units: 3, relu: false }]),
    ).toThrow('layers[1]: dense expects 5 inputs, gets 4');
    expect(() => modelSpec('x', 'x', [2, 2, 1], 3, [{ kind: 'dropout' } as never])).toThrow(
      /^layers\[0\]\.kind: /,
    );
    expect(() =>
      modelSpec('x', 'x', [2, 2, 1], 3, [flat, { kind: 'dense', inputs: 4, units: 2, relu: false }]),
    ).toThrow(/^layers: the last layer must output 3 class scores/);
  });
});
