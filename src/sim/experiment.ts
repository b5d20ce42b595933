/**
 * A whole experiment: every seed through the round engine, the multi-round folds (MR-SV, TMR),
 * the optional true Shapley value of the retraining game, the comparison with the reference and
 * the `results.json` record (docs/results.md).
 */

import { defaultCorruptTolerated, minimumThreshold, roundThreshold } from '../../protocol/config.js';
import { GUARD_BITS } from '../../protocol/weighted.js';
import { checkEmptyCoalition } from '../../scoring/empty-coalition.js';
import { exactShapley } from '../../scoring/shapley.js';
import { PRIVATE_METHODS, RAW_METHODS } from '../consortium/private-scoring.js';
import { weightBoundsOf } from '../consortium/weight-floor.js';
import { mrsv } from '../estimators/mrsv.js';
import { comparedPerRound, estimatorFolds } from '../estimators/registry.js';
import type { Consortium } from '../fl/consortium-data.js';
import type { Learner } from '../fl/learner/learner.js';
import type { AdapterInfo } from '../ml/adapter.js';
import { compareMethods, ROUND_SV, TRUE_SV } from '../records/compare.js';
import {
  configuredEstimators,
  configuredReferences,
  referenceProblem,
  wantsTrueShapley,
} from '../records/comparison-config.js';
import type { ExperimentConfig } from '../records/config.js';
import { HEADLINE, headlineAgreementOf, leaderboardOf } from '../records/leaderboard.js';
import {
  type ExperimentResults,
  type MethodComparison,
  RESULTS_SCHEMA_VERSION,
  type RunRecord,
  type SecureAggregationRecord,
} from '../records/results.js';
import { outcomesOf } from '../report/outcomes.js';
import { conventionOf } from './aggregator.js';
import type { HarnessTable } from './comparison-harness.js';
import { retrainingShapley } from './retraining-game.js';
import { type ProgressEvent, runSeed, type SeedRun, strategyOf } from './round-loop.js';

/**
 * Methods scored per round (compared at a round as they are): the private scores (and their raw
 * variants) and the estimators the registry marks `compare: 'round'`; the others accumulate by
 * definition.
 */
const isRoundMethod = (m: string) =>
  (PRIVATE_METHODS as readonly string[]).includes(m) || RAW_METHODS.includes(m) || comparedPerRound(m);

/**
 * roundSv: the exact Shapley value of round `round`'s own coalition game (papers/003 Eq. 1 on that
 * round's table, v(∅) as configured), by silo; silos not in the round get 0. The reference of the
 * authors' code (`games_local.py` `valores_por_rondas` → `utils.py` `shapley`).
 * @throws RangeError naming `comparison.at` when the round has no table (fewer than two survivors).
 */
export function roundShapley(tables: readonly HarnessTable[], round: number, n: number): number[] {
  const t = tables.find((x) => x.round === round);
  if (!t)
    throw new RangeError(
      `comparison.at: round ${round} has no coalition game (fewer than two survivors), so ${ROUND_SV} is undefined`,
    );
  const local = exactShapley(t.players.length, t.table);
  const out = new Array<number>(n).fill(0);
  t.players.forEach((p, b) => {
    out[p] = local[b]!;
  });
  return out;
}

export interface ExperimentOptions {
  learner: Learner;
  seeds: number[];
  fedscoreVersion: string;
  onProgress?: (e: ProgressEvent | { seed: number; phase: 'true-sv'; done: number; total: number }) => void;
  /**
   * The silos' data and the test set instead of the configuration's partition (the files of a
   * networked consortium); not with `comparison.trueShapley`, which retrains from the configuration.
   */
  data?: Consortium;
}

function sumRounds(run: SeedRun, method: string, upTo: number, n: number): number[] {
  const out = new Array<number>(n).fill(0);
  for (const rd of run.rounds.slice(0, upTo))
    for (const [i, v] of (rd.scores[method] ?? []).entries()) out[i]! += v ?? 0;
  return out;
}

/** Folds a seed's rounds into cumulative and compared vectors (see docs/results.md, `comparison.at`). */
async function summarize(cfg: ExperimentConfig, run: SeedRun): Promise<RunRecord> {
  const n = cfg.silos;
  const at = cfg.comparison?.at ?? 'cumulative';
  const upTo = at === 'cumulative' ? run.rounds.length : at;
  const methods = new Set(run.rounds.flatMap((rd) => Object.keys(rd.scores)));
  const estimators = configuredEstimators(cfg);
  const cumulative: Record<string, number[]> = {};
  const compared: Record<string, number[]> = {};
  const byRound = (m: string, upToRound: number) => {
    const acc = run.cumulativeByRound[upToRound - 1]?.[m];
    return acc ? Array.from(acc) : sumRounds(run, m, upToRound, n);
  };
  for (const m of methods) {
    cumulative[m] = byRound(m, run.rounds.length);
    compared[m] =
      at !== 'cumulative' && isRoundMethod(m)
        ? (run.rounds[at - 1]?.scores[m] ?? []).map((v) => v ?? 0)
        : byRound(m, upTo);
  }
  // The estimators that fold the rounds' exact tables (MR-SV, TMR) replace their per-round sums.
  if (run.harnessTables.length > 0)
    for (const { definition, config } of estimatorFolds(estimators)) {
      const fold = (tables: SeedRun['harnessTables']) => definition.fold!({ config, n, tables });
      cumulative[definition.name] = Array.from(await fold(run.harnessTables));
      // the tables of rounds 1..upTo (a round with fewer than two survivors has none)
      compared[definition.name] = Array.from(await fold(run.harnessTables.filter((t) => t.round <= upTo)));
    }
  // roundSv is compared only (a single round's value; it has no cumulative meaning).
  if (at !== 'cumulative' && configuredReferences(cfg).includes(ROUND_SV))
    compared[ROUND_SV] = roundShapley(run.harnessTables, at, n);
  const evaluations: Record<string, number> = {};
  const timingsMs: Record<string, number> = {};
  for (const rd of run.rounds) {
    for (const [k, v] of Object.entries(rd.evaluations)) evaluations[k] = (evaluations[k] ?? 0) + v;
    for (const [k, v] of Object.entries(rd.timingsMs)) timingsMs[k] = (timingsMs[k] ?? 0) + v;
  }
  const participation = new Array<number>(n).fill(0);
  for (const rd of run.rounds) for (const s of rd.selected) participation[s]!++;
  return {
    seed: run.seed,
    rounds: run.rounds,
    cumulative,
    compared,
    finalAccuracy: run.finalAccuracy,
    finalLoss: run.finalLoss,
    evaluations,
    timingsMs,
    participation,
  };
}

/**
 * A seed's record with the true Shapley value of the retraining game (a reference of its own, the
 * same cumulatively and compared): computed in the seed's run, or from a sweep's chunks
 * (src/sim/reference-chunks.ts) when it is collected.
 */
export function withTrueShapley(run: RunRecord, trueSv: ArrayLike<number>): RunRecord {
  return {
    ...run,
    cumulative: { ...run.cumulative, [TRUE_SV]: Array.from(trueSv) },
    compared: { ...run.compared, [TRUE_SV]: Array.from(trueSv) },
  };
}

/**
 * Misbehaviour detection (papers/003 Fig. 3): per method, the fraction of seeds in which the
 * lowest compared score belongs to a misbehaving silo.
 */
export function lowestScoreRates(
  runs: readonly RunRecord[],
  attackers: readonly number[],
): Record<string, number> {
  const methods = new Set(runs.flatMap((r) => Object.keys(r.compared)));
  const out: Record<string, number> = {};
  for (const m of methods) {
    let hits = 0;
    let seen = 0;
    for (const run of runs) {
      const v = run.compared[m];
      if (!v || v.length === 0) continue;
      seen++;
      const lowest = v.indexOf(Math.min(...v));
      if (attackers.includes(lowest)) hits++;
    }
    if (seen > 0) out[m] = hits / seen;
  }
  return out;
}

/** `results.json`'s record of the secure-aggregation parameters (none when it is off). */
function secureAggregationRecord(cfg: ExperimentConfig): { secureAggregation?: SecureAggregationRecord } {
  const sa = cfg.secureAggregation ?? {};
  if (sa.enabled === false) return {};
  const n = cfg.silos;
  const corruptSilos = sa.corruptSilos ?? defaultCorruptTolerated(n);
  const threshold = roundThreshold(n, {
    threshold: sa.threshold,
    corruptSilos,
    weakThreshold: sa.weakThreshold === true,
  });
  const minimum = minimumThreshold(n, corruptSilos);
  return {
    secureAggregation: {
      corruptSilos,
      threshold,
      minimumThreshold: minimum,
      weakThreshold: threshold < minimum,
      corrections: sa.corrections ?? 'off',
      guardBits: GUARD_BITS,
      ...weightBoundsOf(sa),
    },
  };
}

/**
 * One seed's share of an experiment: its run record and what results.json reports of the seed's
 * consortium and the learner that ran it. A pure function of (configuration, seed, data, code
 * version): a sweep job (src/sweep/) computes it on any machine and {@link assembleResults} folds
 * the seeds into the same results.json as {@link runExperiment}.
 */
export interface SeedRecord {
  run: RunRecord;
  consortium: { source: string; examples: number[]; testExamples: number; roles: string[] };
  learner: { backend: string; kernels?: string; adapter?: AdapterInfo; tfjsVersion: string };
}

/** Runs one seed (and its true Shapley value when configured, unless `trueShapley: 'chunked'`) and summarizes it. */
export async function runSeedRecord(
  cfg: ExperimentConfig,
  seed: number,
  o: Omit<ExperimentOptions, 'seeds' | 'fedscoreVersion'> & {
    /** 'chunked': leave the true Shapley value out; a sweep computes it in chunks and adds it at collection. */
    trueShapley?: 'chunked';
  },
): Promise<SeedRecord> {
  const wantTrueSv = wantsTrueShapley(cfg) && o.trueShapley !== 'chunked';
  if (wantTrueSv && o.data)
    throw new RangeError('comparison.trueShapley: retrains on the configuration’s data; not with given data');
  const run = await runSeed(cfg, seed, {
    learner: o.learner,
    ...(o.onProgress ? { onProgress: o.onProgress } : {}),
    ...(o.data ? { data: o.data } : {}),
  });
  const trueSv = wantTrueSv
    ? await retrainingShapley(cfg, seed, o.learner, (done, total) =>
        o.onProgress?.({ seed, phase: 'true-sv', done, total }),
      )
    : undefined;
  const summary = await summarize(cfg, run);
  return {
    run: trueSv ? withTrueShapley(summary, trueSv) : summary,
    consortium: {
      source: run.consortium.source,
      examples: run.consortium.examples,
      testExamples: run.consortium.testExamples,
      roles: run.consortium.roles,
    },
    learner: {
      backend: o.learner.backend,
      ...(o.learner.kernels !== undefined ? { kernels: o.learner.kernels } : {}),
      ...(o.learner.adapter !== undefined ? { adapter: o.learner.adapter } : {}),
      tfjsVersion: o.learner.tfjsVersion,
    },
  };
}

/** Runs every seed and assembles `results.json`. */
export async function runExperiment(cfg: ExperimentConfig, o: ExperimentOptions): Promise<ExperimentResults> {
  const t0 = performance.now();
  if (wantsTrueShapley(cfg) && o.data)
    throw new RangeError('comparison.trueShapley: retrains on the configuration’s data; not with given data');
  const records: SeedRecord[] = [];
  for (const seed of o.seeds) records.push(await runSeedRecord(cfg, seed, o));
  return assembleResults(cfg, records, {
    fedscoreVersion: o.fedscoreVersion,
    wallTimeMs: performance.now() - t0,
  });
}

/**
 * results.json from the seeds' records, in seed order (the last seed's consortium and learner
 * are the ones recorded, as a single-process run records them).
 * @throws RangeError naming `comparison.reference` when a configured reference was not computed.
 */
export function assembleResults(
  cfg: ExperimentConfig,
  records: readonly SeedRecord[],
  o: { fedscoreVersion: string; wallTimeMs: number; node?: string },
): ExperimentResults {
  const runs: RunRecord[] = records.map((r) => r.run);
  const last = records.at(-1);
  const strategy = strategyOf(cfg);
  // MR-SV by default; the true SV of the retraining game when it was computed (issue 5); every
  // configured reference gets its own table, the first is the primary one (`comparison.methods`).
  const references = configuredReferences(cfg);
  for (const reference of references)
    if (!runs.every((r) => r.compared[reference]))
      throw new RangeError(
        `comparison.reference: '${reference}' was not computed (${referenceProblem(cfg, reference) ?? 'no seed recorded it'})`,
      );
  const byReference: Record<string, Record<string, MethodComparison>> = {};
  for (const reference of references)
    byReference[reference] = compareMethods(
      runs.map((r) => r.compared),
      reference,
    );
  const reference = references[0]!;
  const names = Array.from({ length: cfg.silos }, (_, i) => `silo-${i}`);
  const fullVisibilityStrategy = strategy.requiresFullVisibility;
  const attackers = (cfg.attacks ?? []).map((a) => a.silo);
  const detection = attackers.length > 0 ? lowestScoreRates(runs, attackers) : undefined;
  const results: ExperimentResults = {
    schemaVersion: RESULTS_SCHEMA_VERSION,
    config: cfg,
    backend: last?.learner.backend ?? '',
    ...(last?.learner.kernels !== undefined ? { kernels: last.learner.kernels } : {}),
    ...(last?.learner.adapter !== undefined ? { adapter: last.learner.adapter } : {}),
    versions: {
      fedscore: o.fedscoreVersion,
      node: o.node ?? process.version,
      tfjs: last?.learner.tfjsVersion ?? '',
    },
    createdAt: new Date().toISOString(),
    dataSource: last?.consortium.source ?? '',
    dataUsed: {
      train: (last?.consortium.examples ?? []).reduce((a, b) => a + b, 0),
      test: last?.consortium.testExamples ?? 0,
    },
    visibility: {
      serverReadIndividualUpdates: fullVisibilityStrategy,
      harnessReadIndividualUpdates: true,
      note: fullVisibilityStrategy
        ? `strategy '${strategy.name}' needs individual updates, so this run is not private; the private scores still use only signed reports`
        : 'private mode: the server side saw only masked vectors, the securely aggregated sum and signed score reports; only the comparison harness read individual updates',
    },
    ...secureAggregationRecord(cfg),
    seeds: runs.map((r) => r.seed),
    silos: {
      count: cfg.silos,
      names,
      examples: last?.consortium.examples ?? [],
      roles: last?.consortium.roles ?? [],
    },
    scoring: {
      utility: cfg.scoring?.utility ?? 'accuracy',
      coalitions: conventionOf(cfg),
      emptyCoalition: checkEmptyCoalition(cfg.scoring?.emptyCoalition, 'scoring.emptyCoalition'),
      raw: cfg.scoring?.raw ?? false,
      quarantine: cfg.scoring?.quarantine ?? true,
    },
    runs,
    comparison: {
      reference,
      references,
      at: cfg.comparison?.at ?? 'cumulative',
      methods: byReference[reference]!,
      byReference,
      ...(detection ? { detection } : {}),
    },
    outcomes: outcomesOf(runs, last?.consortium.roles ?? []),
    headline: HEADLINE,
    leaderboard: leaderboardOf({
      names,
      emptyCoalition: checkEmptyCoalition(cfg.scoring?.emptyCoalition, 'scoring.emptyCoalition'),
      runs: runs.map((run) => ({
        cumulative: run.cumulative,
        rounds: run.rounds.map((rd) => ({
          ...rd,
          quarantined: (rd.quarantined ?? []).filter((q) => !q.released).map((q) => q.silo),
        })),
      })),
      roles: last?.consortium.roles ?? [],
      attacks: cfg.attacks ?? [],
      // the first reference recorded cumulatively (roundSv is a per-round reference: MR-SV sums it)
      ...((ref) => (ref ? { reference: ref } : {}))(
        [...references, mrsv.name].find((ref) => runs.every((run) => run.cumulative[ref])),
      ),
    }),
    wallTimeMs: o.wallTimeMs,
  };
  const agreement = headlineAgreementOf(results.leaderboard ?? []);
  return agreement.length > 0 ? { ...results, headlineAgreement: agreement } : results;
}
