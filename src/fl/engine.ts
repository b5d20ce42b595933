/**
 * The round engine: one seed of a consortium experiment (docs/architecture.md, "One round, private
 * mode", and "Full-visibility mode").
 *
 * Per round: the strategy selects silos; they train locally; their updates are summed by the real
 * secure-aggregation protocol (in process, with the configured dropouts); the server forms M; each
 * surviving silo evaluates its singleton and leave-one-out models and sends a signed report; the
 * server verifies the reports and computes LOO, IOI, FP, EE and EE-median. Separately, the
 * comparison harness, which may read individual updates, computes the Shapley-family references on
 * the same coalition game.
 */

import type { DropPoint } from '../../protocol/simulate.js';
import { simulatedIdentities } from '../../protocol/simulate.js';
import { type MemoGame, type MemoVectorGame, memoize, memoizeVector } from '../../scoring/game.js';
import type { RoundTable } from '../../scoring/multi-round.js';
import { createRng } from '../../scoring/random.js';
import { classCounts } from '../data/dataset.js';
import { applyUpdateMisbehavior } from '../data/misbehavior.js';
import type { ExperimentConfig } from './config.js';
import { DEFAULT_ESTIMATORS, harnessRound, initialHarnessState } from './harness.js';
import type { Learner } from './learner.js';
import { utilityValue } from './learner.js';
import { PRIVATE_METHODS, scoreReports, signedReport, siloCoalitionModels } from './private-scoring.js';
import type { RoundRecord } from './results.js';
import { plaintextAggregate, secureAggregate } from './secure-round.js';
import { buildConsortium, type Consortium, deriveSeed } from './setup.js';
import { createStrategy } from './strategies/registry.js';
import {
  emptyHistory,
  type FullVisibility,
  recordRound,
  type Strategy,
  type StrategySetup,
} from './strategies/strategy.js';

/** Progress of a running experiment, for the CLI's progress lines. */
export interface ProgressEvent {
  seed: number;
  round: number;
  rounds: number;
  phase: 'setup' | 'training' | 'secure-aggregation' | 'private-scoring' | 'harness' | 'done';
  detail?: string;
}

/** What one seed's run produces before it is summarized into a `RunRecord`. */
export interface SeedRun {
  seed: number;
  consortium: Pick<Consortium, 'roles' | 'source' | 'numClasses'> & { examples: number[] };
  rounds: RoundRecord[];
  /** Every round's exact table (for MR-SV/TMR folding). */
  harnessTables: RoundTable[];
  /** Accumulated values of the cumulative-by-construction methods after each round. */
  cumulativeByRound: Record<string, Float64Array>[];
  finalParameters: Float32Array;
  finalAccuracy: number;
  finalLoss: number;
}

export interface EngineOptions {
  learner: Learner;
  onProgress?: (e: ProgressEvent) => void;
}

/** The configured strategy (default FedAvg over all silos). Throws RangeError naming `strategy.…`. */
export function strategyOf(cfg: ExperimentConfig): Strategy {
  return createStrategy((cfg.strategy ?? { name: 'fedavg' }) as Parameters<typeof createStrategy>[0]);
}

const nullable = (n: number, silos: readonly number[], values: ArrayLike<number>) => {
  const out: (number | null)[] = Array.from({ length: n }, () => null);
  silos.forEach((s, b) => {
    out[s] = values[b]!;
  });
  return out;
};

const finiteOrNull = (x: Float64Array) => Array.from(x, (v) => (Number.isFinite(v) ? v : null));

/** Runs one seed of an experiment. */
export async function runSeed(cfg: ExperimentConfig, seed: number, o: EngineOptions): Promise<SeedRun> {
  const { learner } = o;
  const strategy = strategyOf(cfg);
  const n = cfg.silos;
  const progress = (round: number, phase: ProgressEvent['phase'], detail?: string) =>
    o.onProgress?.({ seed, round, rounds: cfg.rounds, phase, ...(detail ? { detail } : {}) });
  progress(0, 'setup');
  const consortium = buildConsortium(cfg, seed);
  const { silos, test, validation } = consortium;
  const examples = silos.map((s) => s.n);
  const identities = simulatedIdentities(n, deriveSeed(seed, 0x1d) >>> 0);
  const roster = identities.map((k) => k.publicKey);
  const utility = cfg.scoring?.utility ?? 'accuracy';
  const convention = cfg.aggregation?.convention ?? 'fedavg';
  const sa = cfg.secureAggregation ?? {};
  const estimators = cfg.comparison?.estimators ?? DEFAULT_ESTIMATORS;
  const session = `${cfg.name ?? 'experiment'}/seed-${seed}`;
  const setup: StrategySetup = {
    numSilos: n,
    numClasses: consortium.numClasses,
    rounds: cfg.rounds,
    seed,
    silos: silos.map((s) => ({ examples: s.n, labelHistogram: classCounts(s.y, consortium.numClasses) })),
  };
  let state = strategy.init(setup);
  let history = emptyHistory(n);
  let harness = initialHarnessState();
  let params = learner.initialParameters(deriveSeed(seed, 0x1417));
  const rounds: RoundRecord[] = [];
  const cumulativeByRound: Record<string, Float64Array>[] = [];

  for (let r = 1; r <= cfg.rounds; r++) {
    const timings: Record<string, number> = {};
    const tick = () => performance.now();
    // 1. Selection (public information only).
    const selected = strategy.select(state, {
      round: r,
      setup,
      history,
      rng: createRng(deriveSeed(seed, r, 0x5e1)),
    });
    // 2. Local training, then update-side misbehaviour (attack simulation wraps `train`).
    progress(r, 'training', `${selected.length} silos`);
    let t0 = tick();
    const honest = await learner.trainMany(
      params,
      selected.map((s) => ({ data: silos[s]!, seed: deriveSeed(seed, r, s) })),
    );
    const updates = honest.map((u, b) => {
      const attack = consortium.updateAttacks[selected[b]!];
      return attack ? applyUpdateMisbehavior(u, attack) : u;
    });
    timings.training = tick() - t0;
    // 3. Aggregation weights: private strategies read public history only; full-visibility ones
    //    (FedTSV, FedMS, FedOwen, S-FedAvg, GreedyFed) also get the updates and the coalition game.
    let referenceUpdate: Float32Array | undefined;
    // The validation reference update (papers/002 Eq. 10) is needed by Trajectory Shapley only.
    if (estimators.tsv || strategy.name === 'fedtsv')
      [referenceUpdate] = await learner.trainMany(params, [
        { data: validation, seed: deriveSeed(seed, r, 0x7e5) },
      ]);
    let visibility: FullVisibility | undefined;
    let fullGames: ReturnType<Learner['coalitionGames']> | undefined;
    // The strategy's own valuation cost (papers/004's budget parity): distinct coalitions it evaluated.
    let strategyGames: { game: MemoGame; perClass: MemoVectorGame } | undefined;
    if (strategy.requiresFullVisibility) {
      fullGames = learner.coalitionGames({
        base: params,
        updates,
        weights: selected.map((s) => examples[s]!),
        convention,
        test,
        utility,
      });
      strategyGames = { game: memoize(fullGames.game), perClass: memoizeVector(fullGames.perClass) };
      visibility = {
        updates,
        game: strategyGames.game,
        perClass: strategyGames.perClass,
        ...(referenceUpdate ? { referenceUpdate } : {}),
      };
    }
    const aggregation = await strategy.aggregationWeights(state, {
      round: r,
      setup,
      history,
      selected,
      rng: createRng(deriveSeed(seed, r, 0xa66)),
      ...(visibility ? { full: visibility } : {}),
    });
    fullGames?.dispose();
    state = aggregation.state;
    const weights = Array.from(aggregation.weights);
    // 4. Secure aggregation.
    progress(r, 'secure-aggregation');
    t0 = tick();
    const dropouts = new Map<number, DropPoint>();
    for (const d of sa.dropouts ?? []) if (d.round === r) dropouts.set(d.silo, d.at);
    let survivors: number[];
    let dropped: number[];
    let weightedSum: Float64Array;
    let totalWeight: number;
    let average: Float64Array;
    if (sa.enabled ?? true) {
      const sum = await secureAggregate({
        session,
        round: r,
        seed,
        selected,
        updates,
        weights,
        identities,
        clip: sa.clip ?? 1,
        ...(sa.threshold !== undefined ? { threshold: sa.threshold } : {}),
        dropouts,
      });
      ({ survivors, dropped, weightedSum, totalWeight, average } = sum);
    } else {
      survivors = selected.filter((s) => !dropouts.has(s));
      dropped = selected.filter((s) => dropouts.has(s));
      ({ weightedSum, totalWeight, average } = plaintextAggregate(
        selected,
        survivors,
        updates,
        weights,
        params.length,
      ));
    }
    timings.secureAggregation = tick() - t0;
    const base = params;
    const next = new Float32Array(base.length);
    for (let j = 0; j < base.length; j++) next[j] = base[j]! + average[j]!;
    // 5. Private scoring: each survivor evaluates its two coalitions; the server scores the signed reports.
    progress(r, 'private-scoring', `${survivors.length} reports`);
    t0 = tick();
    const fullU = await learner.evaluate(next, test);
    const emptyU = await learner.evaluate(base, test);
    const full = utilityValue(fullU, utility);
    const empty = utilityValue(emptyU, utility);
    const reports: Uint8Array[] = [];
    for (const s of survivors) {
      const b = selected.indexOf(s);
      const models = siloCoalitionModels(
        base,
        weightedSum,
        totalWeight,
        { update: updates[b]!, weight: weights[b]! },
        convention,
      );
      const single = utilityValue(await learner.evaluate(models.singleton, test), utility);
      const complement = utilityValue(await learner.evaluate(models.complement, test), utility);
      reports.push(signedReport(session, r, s, single, complement, identities[s]!));
    }
    const scored = survivors.length >= 2 ? scoreReports(session, r, reports, roster, full, empty) : undefined;
    timings.privateScoring = tick() - t0;
    const scores: Record<string, (number | null)[]> = {};
    if (scored) for (const m of PRIVATE_METHODS) scores[m] = nullable(n, scored.silos, scored.scores[m]);
    // 6. Comparison harness (full visibility), on the coalition game of the survivors.
    progress(r, 'harness');
    const evaluations: Record<string, number> = {};
    if (strategyGames)
      evaluations.strategy = strategyGames.game.evaluations + strategyGames.perClass.evaluations;
    const cumulativeNow: Record<string, Float64Array> = {};
    if (survivors.length >= 2) {
      const localUpdates = survivors.map((s) => updates[selected.indexOf(s)]!);
      const localWeights = survivors.map((s) => weights[selected.indexOf(s)]!);
      // A zero aggregation weight (FedTSV's max(0, φ), FedMS outside its coreset) leaves M_S undefined
      // for coalitions of such silos alone; the harness game gives them a vanishing weight instead.
      const maxW = Math.max(...localWeights);
      const games = learner.coalitionGames({
        base,
        updates: localUpdates,
        weights: localWeights.map((w) => (maxW > 0 ? Math.max(w, 1e-9 * maxW) : 1)),
        convention,
        test,
        utility,
      });
      const h = await harnessRound(
        harness,
        {
          round: r,
          seed,
          numSilos: n,
          numClasses: consortium.numClasses,
          participants: survivors,
          game: games.game,
          perClass: games.perClass,
          updates: localUpdates,
          aggregate: average,
          ...(referenceUpdate ? { referenceUpdate } : {}),
        },
        estimators,
      );
      games.dispose();
      harness = h.state;
      for (const [m, v] of Object.entries(h.output.scores)) scores[m] = finiteOrNull(v);
      Object.assign(evaluations, h.output.evaluations);
      Object.assign(timings, h.output.timingsMs);
      Object.assign(cumulativeNow, h.output.cumulative);
    }
    cumulativeByRound.push(cumulativeNow);
    const record: RoundRecord = {
      round: r,
      selected,
      dropped,
      aggregationWeights: nullable(n, selected, weights),
      testAccuracy: fullU.accuracy,
      testLoss: fullU.loss,
      utilities: {
        full,
        empty,
        withOnly: scored ? nullable(n, scored.silos, scored.withOnly) : Array(n).fill(null),
        without: scored ? nullable(n, scored.silos, scored.without) : Array(n).fill(null),
      },
      scores,
      evaluations,
      timingsMs: timings,
    };
    rounds.push(record);
    const outcome = { round: r, selected, dropped, scores };
    history = recordRound(history, outcome);
    state = strategy.observe(state, outcome);
    params = next;
    progress(r, 'done', `accuracy ${fullU.accuracy.toFixed(4)}`);
  }
  const final = await learner.evaluate(params, test);
  return {
    seed,
    consortium: {
      roles: consortium.roles,
      source: consortium.source,
      numClasses: consortium.numClasses,
      examples,
    },
    rounds,
    harnessTables: harness.tables,
    cumulativeByRound,
    finalParameters: params,
    finalAccuracy: final.accuracy,
    finalLoss: final.loss,
  };
}
