/**
 * The scoring service: a thin facade over its parts in ./, one concern per file, each with
 * its own queries —
 *   consortia.ts   consortia (created once, cached decoded)   models.ts   global model versions
 *   rounds.ts      the round lifecycle: open, read, close stages on deadline or operator request
 *   aggregation.ts secure aggregation in the store: rebuild the protocol state, close its stages
 *   secagg.ts      silos' stage messages, their inbox, the published aggregate
 *   messages.ts    the stored client messages and server outbox   round-rows.ts  the rounds table
 *   reports.ts     signed score reports    scoring.ts  utilities and scoring a round
 *   scores.ts      published scores        audit.ts    the manipulation audit
 *   nonces.ts      request nonces          context.ts  the store, clock and evaluator they share
 *   selection.ts   the strategy's selection of a round's silos
 *   schedule.ts    the operator's schedule: rounds 1 … R opened by the service itself
 *   external.ts    reports-only consortia: rounds opened by the operator's utilities
 *
 * Why a facade rather than decorating each part: the parts depend on one another (closing a stage
 * may score a round; posting a message may close a stage), and this constructor is the one place
 * that wires them; the app decorates one `service` (app.ts), which the route plugins, the
 * dashboard and the tests use. Every method here is one call into a part: no logic, no queries.
 *
 * Durability: every change is one database transaction, committed before the route answers 2xx;
 * steps on one round are serialized by its row (round-rows.ts). Errors are {@link ServiceError}s
 * with catalogue codes (errors.ts); no HTTP here. All methods are safe to call from several
 * processes sharing one store.
 */

import type { AuditResult } from '../../audit/manipulation-audit.js';
import { DEFAULT_UTILITY } from '../../consortium/defaults.js';
import { clipUtility } from '../../consortium/private-scoring.js';
import type {
  Consortium,
  ConsortiumInput,
  CumulativeScores,
  Round,
  RoundScores,
  RoundStage,
} from '../../consortium/schemas.js';
import type { ServiceError } from '../errors.js';
import type { StoreHandle } from '../store/database.js';
import { Aggregation } from './aggregation.js';
import { Consortia } from './consortia.js';
import { type Evaluator, type RoundEvent, type ServiceContext, storeAnswers } from './context.js';
import { ExternalRounds } from './external.js';
import { Models } from './models.js';
import { Nonces } from './nonces.js';
import { Reports } from './reports.js';
import { RoundAudits } from './round-audits.js';
import { RoundRows } from './round-rows.js';
import { Rounds, type StageWaiting } from './rounds.js';
import { Schedule } from './schedule.js';
import { Scores } from './scores.js';
import { Scoring } from './scoring.js';
import { SecAgg } from './secagg.js';

// The type of ServiceOptions.evaluate; app.ts, cli/actions/serve.ts and the tests import it from here.
export type { Evaluator, RoundEvent } from './context.js';

/** Options of {@link ScoringService}. */
export interface ServiceOptions {
  readonly store: StoreHandle;
  /** Clock in ms since the epoch (tests pass a fake one). */
  readonly now?: () => number;
  /**
   * Computes v(M) and v(M0) when a round's sum is known. Without it the operator posts the two
   * utilities (PUT …/rounds/:round/utilities) before the round can be scored.
   */
  readonly evaluate?: Evaluator;
  /** Where evaluator failures are reported. */
  readonly onWarning?: (message: string, error: unknown) => void;
  /** Where round events are reported (round opened, stage closed, round scored/closed/aborted). */
  readonly onRoundEvent?: (e: RoundEvent) => void;
  /** The largest upload the service accepts (default 64 MiB): a consortium's round must fit. */
  readonly maxVectorBytes?: number;
}

/** The scoring service over a store (see the file header for which part does what). */
export class ScoringService {
  private readonly ctx: ServiceContext;
  private readonly rows: RoundRows;
  private readonly consortia: Consortia;
  private readonly models: Models;
  private readonly lifecycle: Rounds;
  private readonly scoring: Scoring;
  private readonly secagg: SecAgg;
  private readonly reports: Reports;
  private readonly scores: Scores;
  private readonly auditor: RoundAudits;
  private readonly nonces: Nonces;
  private readonly schedule: Schedule;
  private readonly external: ExternalRounds;

  constructor(options: ServiceOptions) {
    const evaluate = options.evaluate;
    const ctx: ServiceContext = {
      db: options.store.db,
      dialect: options.store.dialect,
      now: options.now ?? Date.now,
      // v(M) and v(M0) lie in the consortium's declared range, like the silos' reports.
      evaluate:
        evaluate &&
        (async (c, params) => clipUtility(c.utility ?? DEFAULT_UTILITY, await evaluate(c, params))),
      warn: options.onWarning ?? (() => {}),
      event: (e) => {
        // a scored round is audited once, off the request path (service/round-audits.ts)
        if (e.event === 'scored') this.auditor.enqueue(e.consortium, e.round);
        options.onRoundEvent?.(e);
      },
    };
    const rows = new RoundRows(ctx);
    this.ctx = ctx;
    this.rows = rows;
    this.consortia = new Consortia(ctx, options.maxVectorBytes ?? 64 * 1024 * 1024);
    this.models = new Models(ctx, this.consortia);
    const aggregation = new Aggregation(ctx, this.models, rows);
    this.scoring = new Scoring(this.consortia, rows);
    this.lifecycle = new Rounds(ctx, this.consortia, this.models, rows, aggregation, this.scoring);
    this.secagg = new SecAgg(this.consortia, rows, this.lifecycle, aggregation);
    this.reports = new Reports(this.consortia, this.lifecycle, this.scoring);
    this.scores = new Scores(this.consortia, rows, this.lifecycle);
    this.auditor = new RoundAudits(ctx, this.consortia, rows);
    this.nonces = new Nonces(ctx);
    this.schedule = new Schedule(ctx, this.consortia, this.models, rows, this.lifecycle);
    this.external = new ExternalRounds(ctx, this.consortia, rows, this.lifecycle);
  }

  /** {@link Schedule.tick}: one pass of the operator's schedules (opens and closes what is due). */
  runSchedule(): Promise<void> {
    return this.schedule.tick();
  }

  /** Whether the store answers (readiness). */
  ping(): Promise<boolean> {
    return storeAnswers(this.ctx.db);
  }

  // ── consortia and models ─────────────────────────────────────────────────────────────────

  /** {@link Consortia.create}. @throws {@link ServiceError} INVALID_CONSORTIUM, CONSORTIUM_EXISTS. */
  createConsortium(input: ConsortiumInput): Promise<Consortium> {
    return this.consortia.create(input);
  }

  /** {@link Consortia.get}. @throws ServiceError CONSORTIUM_NOT_FOUND. */
  consortium(id: string): Promise<Consortium> {
    return this.consortia.get(id);
  }

  /** {@link Consortia.roster}: the registered Ed25519 public keys (silo id = index). */
  roster(id: string): Promise<readonly Uint8Array[]> {
    return this.consortia.roster(id);
  }

  /** {@link Models.setInitial}. @throws ServiceError WRONG_MODEL_LENGTH, MODEL_LOCKED. */
  setInitialModel(id: string, bytes: Uint8Array): Promise<void> {
    return this.models.setInitial(id, bytes);
  }

  /** {@link Models.get}: `version`, or the latest. @throws ServiceError MODEL_NOT_FOUND / MODEL_MISSING. */
  model(id: string, version?: number): Promise<{ version: number; bytes: Buffer }> {
    return this.models.get(id, version);
  }

  // ── rounds ───────────────────────────────────────────────────────────────────────────────

  /** {@link Rounds.open}. @throws ServiceError MODEL_MISSING, ROUND_OPEN. */
  openRound(id: string): Promise<Round> {
    return this.lifecycle.open(id);
  }

  /** {@link RoundRows.exists}: whether the round exists (no stage is closed on the way). */
  roundExists(id: string, round: number): Promise<boolean> {
    return this.rows.exists(id, round);
  }

  /** {@link Rounds.list}. */
  rounds(id: string): Promise<Round[]> {
    return this.lifecycle.list(id);
  }

  /** {@link Rounds.get}. @throws ServiceError ROUND_NOT_FOUND. */
  round(id: string, round: number): Promise<Round> {
    return this.lifecycle.get(id, round);
  }

  /** {@link Rounds.get}: closes the current stage if its deadline has passed; returns the round. */
  tick(id: string, round: number): Promise<Round> {
    return this.lifecycle.get(id, round);
  }

  /** {@link Rounds.forceAdvance}. @throws ServiceError ROUND_CLOSED, STAGE_MISMATCH. */
  forceAdvance(id: string, round: number, expected: RoundStage): Promise<Round> {
    return this.lifecycle.forceAdvance(id, round, expected);
  }

  /** {@link Rounds.abort}. @throws ServiceError ROUND_NOT_FOUND, ROUND_CLOSED. */
  abortRound(id: string, round: number): Promise<Round> {
    return this.lifecycle.abort(id, round);
  }

  /** {@link Rounds.progress}: who the current stage waits for. @throws ServiceError ROUND_NOT_FOUND. */
  stageProgress(id: string, round: number): Promise<StageWaiting> {
    return this.lifecycle.progress(id, round);
  }

  // ── secure aggregation ───────────────────────────────────────────────────────────────────

  /** {@link SecAgg.post}. @throws ServiceError WRONG_MESSAGE_TYPE, FORBIDDEN, ROUND_CLOSED, SECAGG_*. */
  postMessage(
    id: string,
    round: number,
    stage: Parameters<SecAgg['post']>[2],
    silo: number,
    bytes: Uint8Array,
  ): Promise<Round> {
    return this.secagg.post(id, round, stage, silo, bytes);
  }

  /** {@link SecAgg.inbox}. @throws ServiceError NOT_READY, SECAGG_ABORTED. */
  inbox(id: string, round: number, kind: Parameters<SecAgg['inbox']>[2], silo: number): Promise<Buffer> {
    return this.secagg.inbox(id, round, kind, silo);
  }

  /** {@link SecAgg.aggregate}. @throws ServiceError NOT_READY. */
  aggregate(id: string, round: number): Promise<{ view: Round; weightedSum: Buffer }> {
    return this.secagg.aggregate(id, round);
  }

  // ── reports, scores, audit ───────────────────────────────────────────────────────────────

  /** {@link Reports.submit}. @throws ServiceError REPORT_*, FORBIDDEN, NOT_REPORTING, NOT_A_SURVIVOR. */
  submitReport(
    id: string,
    round: number,
    silo: number,
    bytes: Uint8Array,
  ): Promise<{ duplicate: boolean; round: Round }> {
    return this.reports.submit(id, round, silo, bytes);
  }

  /** {@link Scoring.release}. @throws ServiceError NOT_READY, NOT_QUARANTINED. */
  releaseReport(id: string, round: number, silo: number): Promise<RoundScores> {
    return this.scoring.release(id, round, silo);
  }

  /** {@link Scoring.setUtilities}. @throws ServiceError NOT_REPORTING, UTILITIES_SET. */
  setUtilities(id: string, round: number, full: number, empty: number): Promise<Round> {
    return this.scoring.setUtilities(id, round, full, empty);
  }

  /**
   * {@link ExternalRounds.postUtilities}: a reports-only consortium's round opened with its v(M), v(M0).
   * @throws ServiceError NOT_EXTERNAL, UTILITY_OUT_OF_RANGE, ROUND_NUMBER, ROUND_OPEN, UTILITIES_SET.
   */
  postExternalUtilities(
    id: string,
    round: number,
    full: number,
    empty: number,
  ): Promise<{ created: boolean; round: Round }> {
    return this.external.postUtilities(id, round, full, empty);
  }

  /** {@link Scores.round}. @throws ServiceError NOT_READY before scoring. */
  roundScores(id: string, round: number): Promise<RoundScores> {
    return this.scores.round(id, round);
  }

  /** {@link Scores.cumulative}. */
  cumulativeScores(id: string): Promise<CumulativeScores> {
    return this.scores.cumulative(id);
  }

  /**
   * {@link RoundAudits.run}: the manipulation audit of the scored rounds (docs/audit.md) as JSON text —
   * the stored rounds' JSON spliced in, never parsed on the request path.
   */
  auditJson(id: string): Promise<string> {
    return this.auditor.run(id);
  }

  /** {@link auditJson}, parsed (for callers in the process; the route sends the text). */
  async audit(id: string): Promise<AuditResult> {
    return JSON.parse(await this.auditor.run(id)) as AuditResult;
  }

  /** {@link RoundAudits.idle}: resolves once every scored round queued for its audit is audited. */
  auditsIdle(): Promise<void> {
    return this.auditor.idle();
  }

  /** Stops the background work (the audit thread); the app calls it when it closes. */
  close(): Promise<void> {
    return this.auditor.close();
  }

  // ── request nonces ───────────────────────────────────────────────────────────────────────

  /** {@link Nonces.use}: false when the nonce was already used within its lifetime. */
  useNonce(id: string, silo: number, nonce: string, expiresAt: number): Promise<boolean> {
    return this.nonces.use(id, silo, nonce, expiresAt);
  }
}
