/**
 * What a run fixes before its first round (the setup step of the round pipeline, ../round-loop.ts):
 * the strategy, the consortium's data, the silos' identities, the `train` function (with whatever
 * wraps it), the aggregator, and the state the rounds carry forward.
 */
import type { SigningKeyPair } from '../../../crypto/signature.js';
import { simulatedIdentities } from '../../../protocol/simulate.js';
import { checkEmptyCoalition, type EmptyCoalition } from '../../../scoring/empty-coalition.js';
import type { Convention } from '../../consortium/convention.js';
import type { Dataset } from '../../data/dataset.js';
import { deriveSeed, SEED_STREAMS } from '../../data/seed.js';
import { buildConsortium, type Consortium } from '../../fl/consortium-data.js';
import type { Learner, UtilityName } from '../../fl/learner/learner.js';
import { strategySetupOf } from '../../fl/strategy-setup.js';
import { consortiumTrainer, type TrainFn } from '../../fl/trainer.js';
import type { ExperimentConfig } from '../../records/config.js';
import { createStrategy, DEFAULT_STRATEGY, type StrategyConfig } from '../../strategies/registry.js';
import { emptyHistory, type History, type Strategy, type StrategySetup } from '../../strategies/strategy.js';
import { type Aggregator, aggregatorOf, conventionOf } from '../aggregator.js';
import {
  DEFAULT_ESTIMATORS,
  type EstimatorConfig,
  type HarnessState,
  initialHarnessState,
} from '../comparison-harness.js';
import { referenceUpdateNeeded } from './references.js';

/** Progress of a running experiment, for the CLI's progress lines. */
export interface ProgressEvent {
  seed: number;
  round: number;
  rounds: number;
  phase: 'setup' | 'training' | 'secure-aggregation' | 'private-scoring' | 'harness' | 'done';
  detail?: string;
}

/** The configured strategy (the registry's default when none). Throws RangeError naming `strategy.…`. */
export function strategyOf(cfg: ExperimentConfig): Strategy {
  return createStrategy((cfg.strategy ?? DEFAULT_STRATEGY) as StrategyConfig);
}

/** Everything a run fixes at setup; the round steps read it and never change it. */
export interface Run {
  readonly cfg: ExperimentConfig;
  readonly seed: number;
  readonly learner: Learner;
  readonly strategy: Strategy;
  readonly setup: StrategySetup;
  readonly consortium: Consortium;
  /** Training examples per silo. */
  readonly examples: number[];
  readonly test: Dataset;
  /** The silos' local training, wrapped as configured (update-side attacks). */
  readonly train: TrainFn;
  /** Secure or plaintext, as configured. */
  readonly aggregator: Aggregator;
  /** Score-report session id, the silos' signing keys and their public keys (the roster). */
  readonly session: string;
  readonly identities: readonly SigningKeyPair[];
  readonly roster: readonly Uint8Array[];
  readonly utility: UtilityName;
  readonly convention: Convention;
  /** What v(∅) is in the private scores and the references' scalar games (`scoring.emptyCoalition`). */
  readonly emptyCoalition: EmptyCoalition;
  /** Whether rounds also record the ratio schemes' raw weights (`scoring.raw`). */
  readonly rawScores: boolean;
  /** Whether reports the detector flags are left out of the private scores (`scoring.quarantine`). */
  readonly quarantine: boolean;
  readonly estimators: EstimatorConfig;
  /** Whether the server trains its validation reference update each round (strategy or estimators). */
  readonly referenceUpdate: boolean;
  progress(round: number, phase: ProgressEvent['phase'], detail?: string): void;
}

/** What one round hands to the next. */
export interface RunState {
  /** The strategy's own state. */
  readonly strategy: unknown;
  readonly history: History;
  readonly harness: HarnessState;
  /** The global model M0 of the next round. */
  readonly params: Float32Array;
}

/**
 * Sets a run up: builds the strategy (before anything else, so a bad strategy fails fast), the
 * consortium's data, the silos' identities (`deriveSeed(seed, SEED_STREAMS.run.identities)`), and the initial state with
 * the initial model (`deriveSeed(seed, SEED_STREAMS.run.initialModel)`).
 * @throws RangeError naming the config field (strategy, data, partition).
 */
export function createRun(
  cfg: ExperimentConfig,
  seed: number,
  o: { learner: Learner; onProgress?: (e: ProgressEvent) => void; data?: Consortium },
): { run: Run; state: RunState } {
  const { learner } = o;
  const strategy = strategyOf(cfg);
  const n = cfg.silos;
  const progress = (round: number, phase: ProgressEvent['phase'], detail?: string) =>
    o.onProgress?.({ seed, round, rounds: cfg.rounds, phase, ...(detail ? { detail } : {}) });
  progress(0, 'setup');
  // Given data: the silos' own files (a networked consortium's, local-run.ts), as they hold them.
  const consortium = o.data ?? buildConsortium(cfg, seed);
  const identities = simulatedIdentities(n, deriveSeed(seed, SEED_STREAMS.run.identities) >>> 0);
  const estimators = cfg.comparison?.estimators ?? DEFAULT_ESTIMATORS;
  const session = `${cfg.name ?? 'experiment'}/seed-${seed}`;
  const setup = strategySetupOf(cfg, seed, consortium);
  const run: Run = {
    cfg,
    seed,
    learner,
    strategy,
    setup,
    consortium,
    examples: consortium.silos.map((s) => s.n),
    test: consortium.test,
    train: consortiumTrainer(learner, consortium, seed),
    aggregator: aggregatorOf(cfg, { session, seed, identities }),
    session,
    identities,
    roster: identities.map((k) => k.publicKey),
    utility: cfg.scoring?.utility ?? 'accuracy',
    convention: conventionOf(cfg),
    emptyCoalition: checkEmptyCoalition(cfg.scoring?.emptyCoalition, 'scoring.emptyCoalition'),
    rawScores: cfg.scoring?.raw ?? false,
    quarantine: cfg.scoring?.quarantine ?? true,
    estimators,
    referenceUpdate: referenceUpdateNeeded(strategy, estimators),
    progress,
  };
  const state: RunState = {
    strategy: strategy.init(setup),
    history: emptyHistory(n),
    harness: initialHarnessState(),
    params: learner.initialParameters(deriveSeed(seed, SEED_STREAMS.run.initialModel)),
  };
  return { run, state };
}
