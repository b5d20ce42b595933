/**
 * Tables of the service's store (Kysely types). One schema for SQLite and PostgreSQL: text,
 * integer, double precision (timestamps in ms since the epoch; exact up to 2^53) and blobs
 * (`bytea` on PostgreSQL). JSON values are stored as text.
 */
import type { ColumnType } from 'kysely';

/** A blob column: written as a Buffer, read back as a Buffer (better-sqlite3 and pg both do). */
type Blob = ColumnType<Buffer, Buffer, Buffer>;

/** Consortium configuration (JSON of `ConsortiumConfig`). */
export interface ConsortiaTable {
  id: string;
  config: string;
  created_at: number;
}

/** Global models: version 0 is the operator's initial model, version r the result of round r. */
export interface ModelsTable {
  consortium: string;
  version: number;
  /** Float32 little-endian parameters. */
  params: Blob;
}

/** One row per round: the service stage and everything the round has produced so far. */
export interface RoundsTable {
  consortium: string;
  round: number;
  /** A protocol/server.ts stage while aggregating, then reporting | scored | closed | aborted. */
  stage: string;
  /** When the current stage closes (ms since the epoch). */
  deadline: number;
  base_version: number;
  /** JSON: U_1 … U_k of the closed protocol stages. */
  sets: string;
  /** JSON number[] | null: U_3 once the sum is known. */
  survivors: string | null;
  dropped: string | null;
  /** Float64 little-endian Σ w_iΔ_i over the survivors. */
  weighted_sum: Buffer | null;
  total_weight: number | null;
  full_utility: number | null;
  empty_utility: number | null;
  /** JSON of the round's scores (service/scoring.ts; `RoundScores` without round and utilities). */
  scores: string | null;
  /** JSON { code, detail } when aborted or closed without scores. */
  error: string | null;
  /** JSON Fault[] (protocol/errors.ts) the secure-aggregation server recorded, or null. */
  faults: string | null;
  /** JSON number[] | null: the silos the strategy selected (null: every silo). */
  selected: string | null;
  opened_at: number;
}

/** Client messages the protocol server accepted (binary codec), one per stage and silo. */
export interface MessagesTable {
  consortium: string;
  round: number;
  stage: string;
  silo: number;
  body: Blob;
}

/** Server messages produced when a stage closed, one per kind and recipient. */
export interface OutboxTable {
  consortium: string;
  round: number;
  kind: string;
  silo: number;
  body: Blob;
}

/** Signed score reports (protocol/score-report.ts encoding). */
export interface ReportsTable {
  consortium: string;
  round: number;
  silo: number;
  body: Blob;
}

/** Request nonces seen within the freshness window (replay protection across processes). */
export interface NoncesTable {
  consortium: string;
  silo: number;
  nonce: string;
  expires_at: number;
}

/** The stored audit of a scored round (service/round-audits.ts). */
export interface RoundAuditsTable {
  consortium: string;
  round: number;
  /** SHA-256 (hex) of the scores row it audited. */
  scores_digest: string;
  /** One round's entry of the audit (src/audit/manipulation-audit.ts `RoundAuditEntry`), JSON. */
  audit: string;
  /** The part of it the summary reads (src/audit/manipulation-audit.ts `auditSummaryPart`), JSON. */
  summary: string;
  computed_at: number;
}

/** The whole database. */
export interface Database {
  consortia: ConsortiaTable;
  models: ModelsTable;
  rounds: RoundsTable;
  messages: MessagesTable;
  outbox: OutboxTable;
  reports: ReportsTable;
  nonces: NoncesTable;
  round_audits: RoundAuditsTable;
}
