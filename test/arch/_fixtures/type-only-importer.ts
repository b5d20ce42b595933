/** A fixture of test/arch/silo-graph.test.ts: a module that names the configuration only by type. */
import type { ExperimentConfig } from '../../../src/records/config.js';

export const silosOf = (config: ExperimentConfig): number => config.silos;
