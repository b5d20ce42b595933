/**
 * Strategies over the network (issue 14): a networked run — the service with its schedule
 * (`rounds: 3`) and four in-process silos (src/client/silo.ts over the HTTP API) — of a
 * configuration with random selection of 3 of 4 silos, and of one with EE-weighted aggregation
 * (papers/003 §5.4) on top of it, and of one selecting by cumulative private scores, gives the
 * in-process engine's selections, and scores equal to
 * the engine's (`toEqual`, exact). The unselected silo of each round sits it out; the service
 * refuses its messages (FEDSCORE_ERR_NOT_SELECTED).
 *
 * Same pattern as the multi-process e2e test (e2e.test.ts), in one process: the silos' requests go
 * to the app through `inject` (./_inject.ts), the service evaluates v(M) and v(M0) on the
 * configuration's test set (networked.ts `testSetEvaluator`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SiloHttp } from '../../src/client/http.js';
import { type RoundOutcome, runSilo } from '../../src/client/silo.js';
import { PRIVATE_METHODS } from '../../src/consortium/private-scoring.js';
import { consortiumBodyOf, consortiumFileOf } from '../../src/fl/consortium-of-run.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import {
  consortiumInput,
  initialModel,
  networkedLearner,
  networkedRun,
  testSetEvaluator,
} from '../../src/fl/networked.js';
import type { ExperimentConfig } from '../../src/records/config.js';
import {
  type LeaderboardEntry,
  leaderboardOfPublished,
  type PublishedScores,
} from '../../src/records/leaderboard.js';
import { runSeed } from '../../src/sim/round-loop.js';
import { adminInject, type Harness, harness } from '../server/_harness.js';
import { injectFetch } from './_inject.js';
import { tempJournal } from './_journal.js';

const base: ExperimentConfig = {
  name: 'networked-strategies',
  seed: 3,
  silos: 4,
  rounds: 3,
  data: {
    dataset: 'synthetic',
    trainSize: 240,
    testSize: 90,
    synthetic: { features: 8, classes: 3, separation: 0.8, examples: 400 },
  },
  partition: { kind: 'quantity-skew', beta: 2 },
  model: { kind: 'mlp', hidden: [8] },
  training: { optimizer: 'adam', learningRate: 0.01, epochs: 1, batchSize: 32 },
  comparison: { estimators: {}, trueShapley: false },
};

/** A strategy configuration (the schema types `strategy` as its name only). */
const strategy = (s: { name: string; [k: string]: unknown }) => s as ExperimentConfig['strategy'];

const learners: Learner[] = [];
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const l of learners.splice(0)) await l.close();
});

async function learner(cfg: ExperimentConfig): Promise<Learner> {
  const l = await networkedLearner(cfg, { backend: 'cpu' });
  learners.push(l);
  return l;
}

/** Runs `cfg` networked (service + 4 silos, the schedule opening the rounds) and in the engine. */
async function both(cfg: ExperimentConfig) {
  const seed = cfg.seed!;
  const run = networkedRun(cfg, seed);
  const server = await learner(cfg);
  h = await harness({
    n: 4,
    app: { evaluate: testSetEvaluator(run, server), scheduleIntervalMs: 10 },
  });
  const x = h;
  // Each silo pins the consortium file (roster, t, d, digests, strategy, rounds); the service is
  // registered from it, with the strategy, its public seed and the schedule.
  const keys = x.keys.map((k) => Buffer.from(k.publicKey).toString('hex'));
  const pinned = consortiumFileOf(run, 'c1', keys, server);
  const body = consortiumBodyOf(pinned);
  expect(body).toMatchObject({
    strategy: consortiumInput(run, 'c1', keys, server.parameterCount).strategy,
    seed,
    rounds: cfg.rounds,
  });
  const created = await adminInject(x, 'POST', '/v1/consortia', body);
  expect(created.statusCode, created.body).toBe(201);
  const m0 = initialModel(run, server);
  await adminInject(x, 'PUT', '/v1/consortia/c1/model', new Uint8Array(m0.buffer));
  const adapters = [0, 1, 2, 3].map(() => injectFetch(x.app));
  const logs: string[][] = [[], [], [], []];
  const outcomes = await Promise.all(
    [0, 1, 2, 3].map(async (i) => {
      const secretKey = x.keys[i]!.secretKey;
      const http = new SiloHttp({
        server: 'http://service.test',
        consortium: 'c1',
        silo: i,
        secretKey,
        fetch: adapters[i]!.fetch,
        now: x.clock.now,
      });
      return runSilo({
        journal: tempJournal(),
        // Compared with the engine's scores: the engine's training seeds.
        deterministicTraining: true,
        http,
        run,
        learner: await learner(cfg),
        secretKey,
        pinned,
        firstRound: 1,
        lastRound: cfg.rounds,
        poll: { initialMs: 5, maxMs: 30 },
        waitTimeoutMs: 60_000,
        log: (line) => logs[i]!.push(line),
      });
    }),
  );
  const served = (await adminInject(x, 'GET', '/v1/consortia/c1/scores')).json() as {
    rounds: PublishedScores[];
    cumulative: Record<string, number[]>;
  };
  const rounds = (await adminInject(x, 'GET', '/v1/consortia/c1/rounds')).json().rounds as {
    round: number;
    stage: string;
    selected: number[] | null;
  }[];
  const engineLearner = await learner(cfg);
  const engine = await runSeed(cfg, seed, { learner: engineLearner });
  return { outcomes, served, rounds, engine, adapters, logs, harness: x };
}

/** The engine's scores as JSON carries them: non-finite → null, and −0 → 0 (JSON has no −0). */
const finite = (xs: readonly (number | null)[]) =>
  xs.map((v) => (v !== null && Number.isFinite(v) ? v + 0 : null));

function expectEngineScores(r: Awaited<ReturnType<typeof both>>) {
  const { served, rounds, engine, outcomes } = r;
  expect(rounds.map((x) => x.stage)).toEqual(['scored', 'scored', 'scored']);
  // The service's selection is the engine's, round by round, and 3 of the 4 silos.
  expect(rounds.map((x) => x.selected)).toEqual(engine.rounds.map((x) => x.selected));
  for (const x of rounds) expect(x.selected).toHaveLength(3);
  // Each silo took part exactly when selected.
  outcomes.forEach((o: RoundOutcome[], i) => {
    expect(
      o.map((x) => x.status),
      `silo ${i}`,
    ).toEqual(engine.rounds.map((x) => (x.selected.includes(i) ? 'reported' : 'not-selected')));
  });
  expect(served.rounds.map((x) => x.round)).toEqual([1, 2, 3]);
  for (const [k, rd] of engine.rounds.entries()) {
    const s = served.rounds[k]!;
    expect(s.withOnly).toEqual(rd.utilities.withOnly);
    expect(s.without).toEqual(rd.utilities.without);
    for (const m of PRIVATE_METHODS)
      expect(s.schemes[m], `round ${rd.round} ${m}`).toEqual(finite(rd.scores[m]!));
  }
}

/**
 * Issue 37: a silo the strategy left out of a round owes no report. The published round carries
 * `selected`; the service's leaderboard (the dashboard's), the leaderboard of the published rounds
 * and each silo's own leaderboard line flag no silo `missing-reports`, though silos sat out rounds.
 */
async function expectNoFalseMissingReports(r: Awaited<ReturnType<typeof both>>) {
  const satOut = [0, 1, 2, 3].filter((i) => r.rounds.some((x) => x.selected && !x.selected.includes(i)));
  expect(satOut.length).toBeGreaterThan(1);
  expect(r.served.rounds.map((x) => x.selected)).toEqual(r.rounds.map((x) => x.selected));
  const charts = await adminInject(r.harness, 'GET', '/dashboard/c1/charts');
  expect(charts.statusCode, charts.body).toBe(200);
  const board = (charts.json() as { leaderboard: { entries: LeaderboardEntry[] } }).leaderboard.entries;
  expect(board).toHaveLength(4);
  const missing = (entries: readonly LeaderboardEntry[]) =>
    entries.filter((e) => e.flags.some((f) => f.kind === 'missing-reports')).map((e) => e.name);
  expect(missing(board)).toEqual([]);
  expect(missing(leaderboardOfPublished(['silo-0', 'silo-1', 'silo-2', 'silo-3'], r.served.rounds))).toEqual(
    [],
  );
  // Each silo's own line after its last round (src/client/silo.ts logOwnLines).
  r.logs.forEach((lines, i) => {
    const own = lines.filter((l) => l.startsWith(`silo ${i} leaderboard`));
    expect(own.length, `silo ${i}: ${lines.join('\n')}`).toBeGreaterThan(0);
    for (const l of own) expect(l).not.toContain('missing-reports');
  });
}

describe('strategies over the network equal the engine', () => {
  it('random selection of 3 of 4 silos (FedAvg)', async () => {
    const r = await both({ ...base, strategy: strategy({ name: 'fedavg', clientsPerRound: 3 }) });
    expectEngineScores(r);
    // The selections differ between rounds (else the test would not exercise the seed).
    expect(new Set(r.rounds.map((x) => JSON.stringify(x.selected))).size).toBeGreaterThan(1);
  }, 120_000);

  it('EE-weighted aggregation with random selection of 3 of 4', async () => {
    const r = await both({
      ...base,
      strategy: strategy({ name: 'score-weighted', score: 'ee', clientsPerRound: 3 }),
    });
    expectEngineScores(r);
    // From round 2 on the weights are the EE scores' (not all equal).
    const w = r.engine.rounds[2]!.aggregationWeights.filter((x): x is number => x !== null);
    expect(new Set(w).size).toBeGreaterThan(1);
    await expectNoFalseMissingReports(r);
  }, 120_000);

  it('selection by cumulative private scores (EE), 3 of 4', async () => {
    const r = await both({
      ...base,
      strategy: strategy({ name: 'score-selection', score: 'ee', clientsPerRound: 3 }),
    });
    expectEngineScores(r);
    // Round 2 takes the silo round 1 left out (unscored first), round 3 the best by cumulative EE.
    const [one, two] = r.rounds.map((x) => x.selected!);
    expect(one).toEqual([0, 1, 2]);
    expect(two).toContain(3);
  }, 120_000);
});

describe('an unselected silo', () => {
  it('is refused by the service with FEDSCORE_ERR_NOT_SELECTED', async () => {
    const { Silo } = await import('../server/_harness.js');
    h = await harness({ n: 4, app: { scheduleIntervalMs: false } });
    const x = h;
    const { consortiumBody, f32bytes, INITIAL } = await import('../server/_harness.js');
    const created = await adminInject(x, 'POST', '/v1/consortia', {
      ...consortiumBody(x.keys),
      strategy: { name: 'fedavg', parameters: { clientsPerRound: 3 } },
      seed: 7,
    });
    expect(created.statusCode, created.body).toBe(201);
    await adminInject(x, 'PUT', '/v1/consortia/c1/model', f32bytes(INITIAL));
    const round = (await adminInject(x, 'POST', '/v1/consortia/c1/rounds')).json();
    expect(round.selected).toHaveLength(3);
    const out = [0, 1, 2, 3].find((i) => !round.selected.includes(i))!;
    const silo = new Silo(x, 'c1', 1, out, 3);
    await expect(silo.start()).rejects.toThrow(/advertise: 403 .*FEDSCORE_ERR_NOT_SELECTED/);
    // The selected ones are accepted, and the stage closes once all three have advertised.
    for (const i of round.selected as number[]) await new Silo(x, 'c1', 1, i, 3).start();
    expect((await adminInject(x, 'GET', '/v1/consortia/c1/rounds/1')).json().stage).toBe('share');
  });
});
