/**
 * What the silo's code reads of an experiment configuration: the narrow, structural type src/fl
 * and src/client take instead of the configuration schema's `ExperimentConfig`
 * (src/records/config-schema.ts), so that the silo reaches neither the schema nor the estimator
 * registry the parser loads, not even through a type import (issue 33; test/arch/silo-graph.test.ts
 * follows type imports too). Every `ExperimentConfig` is a `RunConfig` (TypeScript checks it where
 * the simulation and the CLI pass one, and test/fl/run-config.test.ts states it); the values are
 * checked by the parser (`parseConfig`) before they get here.
 */
import type { EmptyCoalition } from '../../scoring/empty-coalition.js';
import type { Convention } from '../consortium/convention.js';
import type { PartitionOptions } from '../data/partition-registry.js';
import type { UtilityName } from './learner/learner.js';

/** `data`: the data set, its sizes and split, and the data sets' option blocks (`data.synthetic`). */
export interface RunDataConfig {
  readonly dataset?: string;
  readonly trainSize?: number;
  readonly testSize?: number;
  readonly split?: string;
  readonly longTail?: { readonly imbalance: number; readonly order?: 'index' | 'random' };
  readonly [datasetOptions: string]: unknown;
}

/** `training`: each silo's local training. */
export interface RunTrainingConfig {
  readonly optimizer?: 'adam' | 'sgd';
  readonly learningRate?: number;
  readonly weightDecay?: number;
  readonly epochs?: number;
  readonly batchSize?: number;
}

/** `secureAggregation`: the protocol's threshold, tolerance, clipping and weight bounds. */
export interface RunSecureAggregationConfig {
  readonly enabled?: boolean;
  readonly threshold?: number;
  readonly corruptSilos?: number;
  readonly weakThreshold?: boolean;
  readonly clip?: number;
  readonly weightFloor?: number;
  readonly maxWeightShare?: number;
  readonly minEffectiveSilos?: number;
}

/** A simulated misbehaving silo (`attacks[k]`): a kind of src/data/misbehaviors/. */
export interface RunAttackConfig {
  readonly silo: number;
  readonly kind: string;
  readonly factor?: number;
}

/** The part of an experiment configuration a run of the silo's code reads. */
export interface RunConfig {
  readonly silos: number;
  readonly rounds: number;
  readonly data?: RunDataConfig;
  readonly partition?: PartitionOptions & { readonly kind: string };
  readonly labelNoise?: { readonly maxRate?: number; readonly silos?: Readonly<Record<string, number>> };
  readonly attacks?: readonly RunAttackConfig[];
  /** A registered model kind and its options (`{ kind: 'mlp', hidden: [200] }`). */
  readonly model?: { readonly kind: string; readonly [option: string]: unknown };
  readonly training?: RunTrainingConfig;
  readonly aggregation?: { readonly convention?: Convention };
  readonly secureAggregation?: RunSecureAggregationConfig;
  /** `{ name, ...parameters }`, checked against the strategy registry when the run builds it. */
  readonly strategy?: { readonly name: string; readonly [parameter: string]: unknown };
  readonly scoring?: {
    readonly utility?: UtilityName;
    readonly emptyCoalition?: EmptyCoalition;
    readonly quarantine?: boolean;
  };
}
