/**
 * The silo runtime: one silo of a consortium taking part in rounds over HTTP
 * (docs/architecture.md, "One round, private mode", the silo's side of steps 1–5).
 *
 * Per round: wait until the operator opens it, derive the base model from its model chain and
 * check the served one against it (./model-chain.ts), train locally, drive the
 * client state machine of protocol/client.ts through AdvertiseKeys → ShareKeys →
 * MaskedInputCollection → ConsistencyCheck → Unmasking over the stage endpoints and the inbox, signing
 * the digests of its model and of the round's weights (protocol/round-context.ts)
 * (polling with backoff while the server's stage is not ready), then read the published
 * aggregate, evaluate the silo's two coalitions on the common test set and submit the signed
 * score report. The data, training and coalition arithmetic are src/fl/networked.ts's, the same
 * as the in-process engine's.
 *
 * Before any round the runtime checks the consortium against its own setup: its public key is
 * the registered one for its id, the model size matches, the common test set's digest is the
 * consortium's `testSetDigest`, and the threshold meets the active-security bound for the silo's
 * own n_C, and the weight floor and largest share are the silo's own — otherwise it refuses to
 * take part ({@link SiloSetupError}). Before it masks, it checks its round's plan against them
 * ({@link WeightBoundsError}, issue 27 A1).
 *
 * Issue 32 (R1): the silo journals what it trains, masks and unmasks beside its key (./journal.ts)
 * and sends at most one Unmasking response per base model (./replay-guard.ts); its training
 * randomness is fresh (./training-seed.ts); a history that loses a result it accepted is fatal
 * (./model-chain.ts).
 *
 * The protocol's randomness (key seeds, the self-mask seed b_u, Shamir coefficients, nonces)
 * comes from the operating system's CSPRNG ({@link siloDeps}) and cannot be replaced: the
 * engine's seed-derived randomness (protocol/simulation-random.ts) is public-seed randomness and
 * no module the silo imports can reach it (test/arch/layers.ts).
 */
import { systemRandom } from '../../crypto/random-bytes.js';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import {
  type ClientState,
  clientHandle,
  clientStart,
  createClient,
  type SecAggDeps,
} from '../../protocol/client.js';
import { decodeServerMessage, encodeClientMessage } from '../../protocol/codec.js';
import { minimumThreshold, type RoundConfig } from '../../protocol/config.js';
import type { ClientMessage, RoundContext } from '../../protocol/messages.js';
import { modelContextDigest, weightsContextDigest } from '../../protocol/round-context.js';
import { signScoreReport } from '../../protocol/score-report.js';
import { STAGE_MESSAGE_TYPES as INBOX, isCollectingStage } from '../../protocol/server.js';
import {
  type ConsortiumFile,
  compareWithServed,
  consortiumFileDigest,
} from '../consortium/consortium-file.js';
import { DEFAULT_MIN_WEIGHT, DEFAULT_UTILITY } from '../consortium/defaults.js';
import { inertText } from '../consortium/inert-text.js';
import { clipUtility } from '../consortium/private-scoring.js';
import type { Aggregate, Consortium, Round } from '../consortium/schemas.js';
import type { Learner } from '../fl/learner/learner.js';
import {
  localUpdate,
  type NetworkedRun,
  siloInput,
  siloPlan,
  siloUtilities,
  weightOf,
} from '../fl/networked.js';
import { paramsDigest } from '../ml/layers-model.js';
import { leaderboardOfPublished, type PublishedScores } from '../records/leaderboard.js';
import { leaderboardLine } from '../report/leaderboard-table.js';
import type { PublishedRound, RoundPlan } from '../strategies/networked-plan.js';
import { parseAnswerJson } from './answers.js';
import { ServiceResponseError, type SiloHttp } from './http.js';
import type { SiloJournal } from './journal.js';
import { ModelChain } from './model-chain.js';
import { poller, responseError } from './poller.js';
import { ReplayGuard } from './replay-guard.js';
import { SiloSetupError } from './silo-errors.js';
import { trainingSeed } from './training-seed.js';
import { checkRoundWeights, checkServedWeightBounds } from './weight-check.js';

/** The consortium, a round and a round's aggregate as the service returns them (src/consortium/schemas.ts). */
export type ConsortiumView = Consortium;
type RoundView = Round;
type AggregateView = Aggregate;

export { checkPlanWeights, TooFewSilosError, WeightBoundsError } from './weight-check.js';
export { SiloSetupError };

/** How one round ended for this silo. */
export type RoundOutcome =
  | {
      readonly round: number;
      readonly status: 'reported';
      readonly singleton: number;
      readonly complement: number;
    }
  | {
      readonly round: number;
      readonly status: 'missed' | 'dropped' | 'aborted' | 'not-selected';
      readonly detail: string;
      /**
       * `'server'`: the server ended the round after this silo's Unmasking response (it may hold
       * the sum; recorded in the journal, code FEDSCORE_ERR_ABORT_AFTER_UNMASKING).
       */
      readonly fault?: 'server';
    };

/** Options of {@link runSilo}. */
export interface SiloOptions {
  readonly http: SiloHttp;
  readonly run: NetworkedRun;
  readonly learner: Learner;
  /**
   * The consortium file this silo agreed to (src/consortium/consortium-file.ts): the server's view must
   * equal it field by field before the silo sends anything.
   */
  readonly pinned?: ConsortiumFile;
  /**
   * Take part without a pinned consortium file, trusting the server's roster and threshold
   * (`--insecure-unpinned`): a malicious server can then unmask this silo's input.
   */
  readonly insecureUnpinned?: boolean;
  /** The silo's Ed25519 secret key (32 bytes; owned by the caller). */
  readonly secretKey: Uint8Array;
  /**
   * The silo's masking journal (./journal.ts, beside its key): what it trained, masked and unmasked
   * on which base model. The silo refuses a round on a base it already sent an Unmasking response
   * for (./replay-guard.ts, issue 32 R1).
   */
  readonly journal: SiloJournal;
  /**
   * Train with the engine's seed `deriveSeed(seed, round, silo)` instead of fresh randomness
   * (./training-seed.ts): replayable, for tests and reproductions only.
   */
  readonly deterministicTraining?: boolean;
  /** First and last round to take part in. */
  readonly firstRound: number;
  readonly lastRound: number;
  /** Progress lines (each made inert first: they quote the server's words; issue 32, T1). */
  readonly log?: (line: string) => void;
  /** Polling backoff (default 20 ms growing ×1.5 to 500 ms). */
  readonly poll?: { readonly initialMs: number; readonly maxMs: number };
  /**
   * While it waits (the consortium not created yet, a round not open, a stage waiting for the
   * others), a heartbeat line every this many ms saying what it waits for (default 5000).
   */
  readonly heartbeatMs?: number;
  /** Give up waiting for the server after this long (default 1 h). */
  readonly waitTimeoutMs?: number;
  /** After a reported round, wait at most this long for its scores (the leaderboard line; default 60 s). */
  readonly scoreWaitMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/**
 * The protocol dependencies of a silo: randomness from the OS CSPRNG (crypto/random-bytes.ts
 * `systemRandom`, crypto.getRandomValues), fresh for every round.
 */
export function siloDeps(): SecAggDeps {
  return { random: systemRandom() };
}

/**
 * Checks that this silo can take part in `c`.
 * @throws SiloSetupError naming the mismatching field.
 */
export function checkConsortium(
  c: Pick<
    ConsortiumView,
    'id' | 'participants' | 'threshold' | 'corruptSilos' | 'model' | 'testSetDigest' | 'convention'
  > & {
    readonly encoding: Pick<
      ConsortiumView['encoding'],
      'clip' | 'weightRange' | 'weightFloor' | 'maxWeightShare' | 'minEffectiveSilos'
    > & { readonly minWeight?: number };
    readonly utility?: ConsortiumView['utility'];
  },
  run: NetworkedRun,
  silo: number,
  secretKey: Uint8Array,
  parameters: number,
): void {
  const mine = hex(signingKeyPairFromSeed(secretKey).publicKey);
  const registered = c.participants[silo]?.publicKey;
  if (registered === undefined)
    throw new SiloSetupError(
      'silo',
      `consortium ${c.id} has ${c.participants.length} participants; there is no silo ${silo}`,
    );
  if (registered !== mine)
    throw new SiloSetupError(
      'key',
      `this key's public key ${mine} is not the one registered for silo ${silo} (${registered})`,
    );
  if (c.testSetDigest !== run.testSetDigest)
    throw new SiloSetupError(
      'testSetDigest',
      `the consortium's test set is ${c.testSetDigest}, the local one is ${run.testSetDigest}; refusing to report utilities on another test set`,
    );
  if (c.model.parameters !== parameters)
    throw new SiloSetupError(
      'model.parameters',
      `the consortium's model has ${c.model.parameters} parameters, the local one ${parameters}`,
    );
  if (c.participants.length !== run.config.silos)
    throw new SiloSetupError(
      'participants',
      `${c.participants.length} participants, the configuration has ${run.config.silos} silos`,
    );
  if (c.convention !== run.convention)
    throw new SiloSetupError(
      'convention',
      `the consortium uses '${c.convention}' coalitions, the configuration '${run.convention}'`,
    );
  const utility = c.utility ?? DEFAULT_UTILITY;
  if (utility.name !== run.utility)
    throw new SiloSetupError(
      'utility',
      `the consortium scores '${utility.name}', the configuration '${run.utility}'; refusing to report another utility`,
    );
  // The weight bounds (issues 27 A1, 32 W1): public parameters in range, and the ones this
  // silo's plans use (a service without them runs the defaults): ./weight-check.ts.
  checkServedWeightBounds(c.encoding, run.weightBounds);
  const w = weightOf(run, silo).weight / run.weightScale;
  if (w > c.encoding.weightRange)
    throw new SiloSetupError(
      'encoding.weightRange',
      `the silo's weight ${w} exceeds ${c.encoding.weightRange}`,
    );
  if (w < (c.encoding.minWeight ?? DEFAULT_MIN_WEIGHT))
    throw new SiloSetupError(
      'encoding.minWeight',
      `the silo's weight ${w} is below the consortium's minimum ${c.encoding.minWeight}`,
    );
  // The threshold is the server's word: the silo checks it against its own n_C and its own
  // opt-in, not the consortium's (a malicious server could lower both).
  const n = c.participants.length;
  const minimum = minimumThreshold(n, Math.min(run.corruptSilos, n - 1));
  if (c.threshold < minimum && !run.weakThreshold)
    throw new SiloSetupError(
      'threshold',
      `t = ${c.threshold} is below ⌊(n + n_C)/2⌋ + 1 = ${minimum} for this silo's n_C = ${run.corruptSilos}; refusing to take part (set secureAggregation.weakThreshold to accept a weaker threshold)`,
    );
}

/** The round configuration this silo runs: the consortium's threshold, its own n_C and opt-in. */
export function siloRoundConfig(c: ConsortiumView, run: NetworkedRun, round: number): RoundConfig {
  const roster = c.participants.map((p) => Uint8Array.from(Buffer.from(p.publicKey, 'hex')));
  return {
    session: c.id,
    round,
    threshold: c.threshold,
    length: c.model.parameters + 1,
    roster,
    corruptTolerated: Math.min(run.corruptSilos, roster.length - 1),
    ...(run.weakThreshold ? { weakThreshold: true } : {}),
  };
}

/**
 * Takes part in rounds `firstRound` … `lastRound`.
 *
 * @returns each round's outcome.
 * @throws SiloSetupError before the first round when the consortium does not match; UnreachableError
 *   when the service stays unreachable; ServiceResponseError for an answer the silo cannot go on from.
 */
export async function runSilo(options: SiloOptions): Promise<RoundOutcome[]> {
  // Issue 32, T1: every progress line quotes the server's words (a stage, a detail, a message), so
  // each is made inert (no escape, no line break) before the caller's sink sees it.
  const sink = options.log;
  const o: SiloOptions = sink ? { ...options, log: (line) => sink(inertText(line)) } : options;
  const { http, run, learner } = o;
  const silo = http.silo;
  const log = o.log ?? (() => {});
  if (o.pinned === undefined && o.insecureUnpinned !== true)
    throw new SiloSetupError(
      'consortium-file',
      'no pinned consortium file: the roster and threshold would be the server’s word (pass --consortium-file, or --insecure-unpinned to accept the risk)',
    );
  // A silo may start before the operator has created the consortium: wait for it.
  const consortium = await poller(o)(`consortium ${http.consortium} to exist`, async () => {
    const a = await http.send('GET', http.path());
    if (a.status === 404) return undefined;
    // Reads are signed: a key the service does not know for this silo id is refused at once.
    const refused = a.status === 401 ? responseError(a, `GET ${http.path()}`) : undefined;
    if (refused?.is('FEDSCORE_ERR_BAD_REQUEST_SIGNATURE'))
      throw new SiloSetupError(
        'key',
        `the service refuses this key's signature for silo ${silo} (${refused.detail}): it is not the key registered for silo ${silo}`,
      );
    if (a.status !== 200) throw responseError(a, `GET ${http.path()}`);
    return parseAnswerJson(a.bytes, `GET ${http.path()}`) as ConsortiumView;
  });
  // Trust issue, finding 1: the roster, t, d, the model and the test set are the pinned file's,
  // not the server's word — compared before anything is sent.
  if (o.pinned) compareWithServed(o.pinned, consortium);
  checkConsortium(consortium, run, silo, o.secretKey, learner.parameterCount);
  log(
    `silo ${silo}: consortium ${consortium.id} checked (test set ${consortium.testSetDigest.slice(0, 12)}…, ${consortium.participants.length} silos, t = ${consortium.threshold})`,
  );
  // Issue 27: the silo trains only on models it derives from M_0 and the published aggregates
  // (./model-chain.ts); kept across rounds, rebuilt from M_0 by a silo that starts late.
  // Issue 32, R1: the journal's record of what this silo masked and unmasked, across restarts.
  const guard = new ReplayGuard(
    o.journal,
    o.pinned ? consortiumFileDigest(o.pinned) : `unpinned:${consortium.id}`,
  );
  const chain = new ModelChain(
    http,
    consortium.model.parameters,
    o.pinned?.model.initialWeightsDigest,
    guard.accepted(),
  );
  const out: RoundOutcome[] = [];
  const pending: number[] = [];
  for (let r = o.firstRound; r <= o.lastRound; r++) {
    const outcome = await oneRound(o, consortium, r, chain, guard);
    log(
      outcome.status === 'reported'
        ? `silo ${silo} round ${r}: report accepted (v(M0+U_i) = ${outcome.singleton}, v(M−U_i) = ${outcome.complement})`
        : `silo ${silo} round ${r}: ${outcome.status} (${outcome.detail})`,
    );
    out.push(outcome);
    // The silo's own leaderboard line once the round is scored: looked up without waiting after
    // each round (a round is not delayed), waited for (bounded) after the last one.
    if (outcome.status === 'reported') pending.push(r);
    await logOwnLines(o, consortium, pending, log, false);
  }
  await logOwnLines(o, consortium, pending, log, true);
  return out;
}

/**
 * Logs the silo's own leaderboard line (src/records/leaderboard.ts, cumulative over the scored rounds
 * up to that round) for each `pending` round the service has scored, and removes it from
 * `pending`; with `wait`, waits at most `o.scoreWaitMs` (default 60 s) for the rest.
 */
async function logOwnLines(
  o: SiloOptions,
  c: ConsortiumView,
  pending: number[],
  log: (line: string) => void,
  wait: boolean,
): Promise<void> {
  if (pending.length === 0) return;
  const { http } = o;
  const names = c.participants.map((_, i) => `silo-${i}`);
  const fetch = async () => (await http.getJson<{ rounds: PublishedScores[] }>(http.path('/scores'))).rounds;
  let rounds: PublishedScores[];
  try {
    rounds = wait
      ? await poller({ ...o, waitTimeoutMs: o.scoreWaitMs ?? 60_000 })(
          `the scores of round ${pending.join(', ')}`,
          async () => {
            const got = await fetch();
            return pending.every((r) => got.some((x) => x.round === r)) ? got : undefined;
          },
        )
      : await fetch();
  } catch (e) {
    if (wait)
      log(`silo ${http.silo}: no leaderboard line for round ${pending.join(', ')} (${(e as Error).message})`);
    return;
  }
  for (const r of [...pending]) {
    if (!rounds.some((x) => x.round === r)) continue;
    pending.splice(pending.indexOf(r), 1);
    const board = leaderboardOfPublished(
      names,
      rounds.filter((x) => x.round <= r),
      c.emptyCoalition,
    );
    const own = board.find((e) => e.silo === http.silo);
    if (own) log(`silo ${http.silo} ${leaderboardLine(own, board.length, r)}`);
  }
}

async function oneRound(
  o: SiloOptions,
  c: ConsortiumView,
  r: number,
  chain: ModelChain,
  guard: ReplayGuard,
): Promise<RoundOutcome> {
  const { http, run, learner } = o;
  const silo = http.silo;
  const log = o.log ?? (() => {});
  const waiter = poller(o);
  const roundPath = http.path(`/rounds/${r}`);

  // 1. The round is open and still collecting advertisements.
  const round = await waiter(`round ${r} to open`, async () => {
    const a = await http.send('GET', roundPath);
    if (a.status === 404) return undefined;
    if (a.status !== 200) throw responseError(a, `GET ${roundPath}`);
    return parseAnswerJson(a.bytes, `GET ${roundPath}`) as RoundView;
  });
  // The strategy's plan (src/strategies/networked-plan.ts), from the seed and the published rounds:
  // only the selected silos take part, each with its own weight; the service must agree.
  const plan = await siloPlan(run, r, await publishedRounds(http, r));
  if (plan && !sameSilos(plan.selected, round.selected ?? null))
    return {
      round: r,
      status: 'aborted',
      detail: `the service selected silos ${round.selected?.join(', ') ?? 'all'}, the strategy selects ${plan.selected.join(', ')}; refusing to take part`,
    };
  if (plan && !plan.selected.includes(silo))
    return {
      round: r,
      status: 'not-selected',
      detail: `the strategy selected silos ${plan.selected.join(', ')}`,
    };
  if (round.stage !== 'advertise')
    return { round: r, status: 'missed', detail: `joined when the round was in stage ${round.stage}` };
  // Issues 27 A1, 32 W1: ≥ 3 selected silos, weights within the bounds (./weight-check.ts).
  checkRoundWeights(run, r, plan);

  // 2. Local training from the round's base model — the model chain's, or the silo refuses
  // (ModelChainError naming the round).
  const base = await chain.baseOf(r, round.baseModel);
  // Issue 32, R1: no round on a base this silo already unmasked on (ReplayRefusedError); the
  // training randomness is fresh unless asked otherwise, and journaled.
  const rg = guard.begin(r, paramsDigest(base));
  const seed = rg.trained(
    trainingSeed({ deterministic: o.deterministicTraining === true, seed: run.seed, round: r, silo }),
  );
  const t0 = performance.now();
  const update = await localUpdate(run, learner, silo, r, base, seed);
  log(
    `silo ${silo} round ${r}: trained on ${run.data.silos[silo]!.n} examples in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  // 3. Secure aggregation (Bonawitz et al. 2017, rounds 0–4).
  const input = siloInput(run, silo, update, { ...c.encoding, n: c.participants.length }, plan);
  const config = siloRoundConfig(c, run, r);
  const deps = siloDeps();
  let state: ClientState = createClient(config, silo, o.secretKey, input, roundContextOf(run, base, plan));
  const post = async (m: ClientMessage) => {
    rg.beforeSend(m.type);
    await http.expect('POST', `${roundPath}/${m.type}`, [202], { body: encodeClientMessage(m) });
    log(`silo ${silo} round ${r}: ${m.type} accepted`);
  };
  const first = clientStart(state, deps);
  state = first.state;
  if (first.reply.type !== 'send') throw new Error('protocol: the client did not advertise keys');
  try {
    await post(first.reply.message);
    for (const kind of INBOX) {
      const got = await waiter(`the other silos: ${kind} of round ${r}`, async () => {
        const a = await http.send('GET', `${roundPath}/inbox/${kind}`);
        if (a.status === 200) return a.bytes;
        const e = responseError(a, `GET inbox/${kind}`);
        if (e.is('FEDSCORE_ERR_SECAGG_ABORTED')) return e;
        if (!e.is('FEDSCORE_ERR_NOT_READY')) throw e;
        const now = await http.getJson<RoundView>(roundPath);
        return isCollectingStage(now.stage) ? undefined : now;
      });
      if (got instanceof ServiceResponseError)
        return { round: r, status: 'aborted', detail: got.detail || got.code };
      if (!(got instanceof Uint8Array))
        return {
          round: r,
          status: 'dropped',
          detail: `no ${kind} message for this silo; the round is ${got.stage}`,
        };
      const step = await clientHandle(state, decodeServerMessage(Uint8Array.from(got)), deps);
      state = step.state;
      if (step.reply.type === 'abort')
        return {
          round: r,
          status: 'aborted',
          detail: `this silo aborted: ${step.reply.code} (${step.reply.detail})`,
        };
      if (step.reply.type === 'send') await post(step.reply.message);
    }
  } catch (e) {
    // The service refused a message because the stage had moved on without this silo.
    if (e instanceof ServiceResponseError && e.status === 409)
      return { round: r, status: 'dropped', ...rg.endedWithoutSum(`closed to it (${e.message})`, e.message) };
    throw e;
  }

  // 4. The published aggregate.
  const done = await waiter(`the sum of round ${r}`, async () => {
    const now = await http.getJson<RoundView>(roundPath);
    return isCollectingStage(now.stage) ? undefined : now;
  });
  if (done.stage === 'aborted' || done.stage === 'closed') {
    const detail = `round ${done.stage}: ${done.error?.code ?? ''}`;
    const how = `${done.stage} (${done.error?.code ?? 'no code'})`;
    return { round: r, status: 'aborted', ...rg.endedWithoutSum(how, detail) };
  }
  const aggregate = await http.getJson<AggregateView>(`${roundPath}/aggregate`);
  if (!aggregate.survivors.includes(silo))
    return { round: r, status: 'dropped', detail: 'not in the aggregate' };
  const sumBytes = await http.expect('GET', `${roundPath}/aggregate/sum`, [200]);
  const weightedSum = new Float64Array(Uint8Array.from(sumBytes.bytes).buffer);

  // 5. The two private utilities — in the consortium's declared range: a loss above negLoss's
  // bound L is reported as −L (the service refuses anything outside the range) — and the report.
  const evaluated = await siloUtilities(
    run,
    learner,
    silo,
    base,
    update,
    { weightedSum, totalWeight: aggregate.totalWeight },
    plan,
  );
  const declared = c.utility ?? DEFAULT_UTILITY;
  const u = {
    singleton: clipUtility(declared, evaluated.singleton),
    complement: clipUtility(declared, evaluated.complement),
  };
  // The silo accepts the round's result: its chain and journal will refuse a history without it.
  rg.accepted(chain.accept(r, base, weightedSum, aggregate.totalWeight));
  const report = signScoreReport({ session: c.id, round: r, silo, ...u }, o.secretKey);
  try {
    await http.expect('POST', `${roundPath}/reports`, [200, 201], { body: report });
  } catch (e) {
    if (e instanceof ServiceResponseError && e.status === 409)
      return { round: r, status: 'dropped', detail: e.message };
    throw e;
  }
  return { round: r, status: 'reported', ...u };
}

/**
 * What this silo signs for the round and requires of every peer (protocol/round-context.ts):
 * the digest of the model it trained on and of the round's weight vector — the plan's (selected
 * silos and their weights, as planRound returned them: the same for every silo, since they come
 * from the seed and the published rounds). Without a strategy every silo takes part with its own
 * example count, which no other silo knows (a silo on its own data) and the server does not
 * serve: the digest then binds the selection (every silo) and the public scale, each silo's
 * entry being the consortium's weight scale.
 */
export function roundContextOf(run: NetworkedRun, base: Float32Array, plan?: RoundPlan): RoundContext {
  const everyone = Array.from({ length: run.config.silos }, (_, i) => i);
  const weights = plan
    ? weightsContextDigest(plan.selected, plan.weights ?? [])
    : weightsContextDigest(
        everyone,
        everyone.map(() => run.weightScale),
      );
  return { model: modelContextDigest(base), weights };
}

/** Whether two selections name the same silos (null: every silo). */
function sameSilos(a: readonly number[], b: readonly number[] | null): boolean {
  return b !== null && a.length === b.length && a.every((s, k) => s === b[k]);
}

/** The rounds before `r` as the service publishes them: selection, survivors, private scores. */
async function publishedRounds(http: SiloHttp, r: number): Promise<PublishedRound[]> {
  if (r <= 1) return [];
  const { rounds } = await http.getJson<{ rounds: RoundView[] }>(http.path('/rounds'));
  const scored = await http.getJson<{
    rounds: { round: number; schemes: Record<string, (number | null)[]> }[];
  }>(http.path('/scores'));
  const scores = new Map(scored.rounds.map((s) => [s.round, s.schemes]));
  return rounds
    .filter((x) => x.round < r)
    .map((x) => ({
      round: x.round,
      selected: x.selected ?? null,
      survivors: x.survivors ?? null,
      scores: scores.get(x.round) ?? null,
    }));
}
