/**
 * The service's runtime module graph (issue 26): the REST service validates, stores and sums; it
 * never trains, reads data sets or runs Shapley estimators, so src/server/app.ts must not load them.
 * Before the contract had its own folder, one import (the networked plan → setup.ts's re-export of
 * deriveSeed) made the service load the configuration schema, every estimator, the model registry
 * and the data readers: at a97a877, 153 project modules from app.ts, 18 of them estimators, the
 * model registry, data readers or the configuration schema; after the split, 117 and none.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { moduleGraph } from './module-graph.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** What the service must not load: estimators, the model registry, TensorFlow.js glue, data readers. */
const FORBIDDEN: readonly [RegExp, string][] = [
  [/(^|\/)estimators\//, 'a Shapley-family estimator'],
  [
    /^src\/ml\/(model-registry|models|backend|train|evaluate|coalition|layers-files)\.ts$/,
    'the model registry or TensorFlow.js glue',
  ],
  [
    /^src\/data\/(registry|fashion-mnist|cifar10|idx|npy|csv|image-folder|synthetic|local-data|partition)\.ts$/,
    'a data reader',
  ],
  [/(^|\/)config-schema\.ts$/, 'the experiment configuration schema'],
];

describe("the service's module graph (src/server/app.ts)", () => {
  const graph = moduleGraph(root, 'src/server/app.ts');

  it('reaches the contract, the protocol and the scoring it serves', () => {
    expect(graph.has('src/consortium/schemas.ts')).toBe(true);
    expect(graph.has('protocol/server.ts')).toBe(true);
    expect(graph.has('scoring/private.ts')).toBe(true);
  });

  it('holds no estimator, model registry, TensorFlow.js glue, data reader or experiment schema', () => {
    const found = [...graph].flatMap((m) =>
      FORBIDDEN.filter(([re]) => re.test(m)).map(([, what]) => `${m} (${what})`),
    );
    expect(found).toEqual([]);
  });
});
