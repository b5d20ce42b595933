/**
 * src/fl/run-config.ts: the silo's narrow view of an experiment configuration. Checked by the type
 * checker (`npm run typecheck` compiles the tests): every parsed configuration is a RunConfig, so the
 * simulation and the CLI can hand one to src/fl without a cast; and a block the schema types more
 * loosely than the silo reads it would fail here.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { RunConfig } from '../../src/fl/run-config.js';
import type { ExperimentConfig } from '../../src/records/config.js';

describe('RunConfig', () => {
  it('every ExperimentConfig is a RunConfig', () => {
    expectTypeOf<ExperimentConfig>().toExtend<RunConfig>();
    expectTypeOf<NonNullable<ExperimentConfig['secureAggregation']>>().toExtend<
      NonNullable<RunConfig['secureAggregation']>
    >();
    expectTypeOf<NonNullable<ExperimentConfig['data']>>().toExtend<NonNullable<RunConfig['data']>>();
  });
});
