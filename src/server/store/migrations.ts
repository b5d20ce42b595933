/**
 * Schema migrations, in order. Each is written once and never edited; a change is a new
 * migration. Types differ per dialect only for blobs (`blob` / `bytea`).
 */
import { type Kysely, type Migration, type MigrationProvider, sql } from 'kysely';

/** The two supported dialects. */
export type Dialect = 'sqlite' | 'postgres';

function initial(dialect: Dialect): Migration {
  const blob = dialect === 'postgres' ? sql`bytea` : sql`blob`;
  const float = dialect === 'postgres' ? sql`double precision` : sql`real`;
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('consortia')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('config', 'text', (c) => c.notNull())
        .addColumn('created_at', float, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('models')
        .addColumn('consortium', 'text', (c) => c.notNull().references('consortia.id'))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('params', blob, (c) => c.notNull())
        .addPrimaryKeyConstraint('models_pk', ['consortium', 'version'])
        .execute();
      await db.schema
        .createTable('rounds')
        .addColumn('consortium', 'text', (c) => c.notNull().references('consortia.id'))
        .addColumn('round', 'integer', (c) => c.notNull())
        .addColumn('stage', 'text', (c) => c.notNull())
        .addColumn('deadline', float, (c) => c.notNull())
        .addColumn('base_version', 'integer', (c) => c.notNull())
        .addColumn('sets', 'text', (c) => c.notNull())
        .addColumn('survivors', 'text')
        .addColumn('dropped', 'text')
        .addColumn('weighted_sum', blob)
        .addColumn('total_weight', float)
        .addColumn('full_utility', float)
        .addColumn('empty_utility', float)
        .addColumn('scores', 'text')
        .addColumn('error', 'text')
        .addColumn('opened_at', float, (c) => c.notNull())
        .addPrimaryKeyConstraint('rounds_pk', ['consortium', 'round'])
        .execute();
      await db.schema
        .createTable('messages')
        .addColumn('consortium', 'text', (c) => c.notNull())
        .addColumn('round', 'integer', (c) => c.notNull())
        .addColumn('stage', 'text', (c) => c.notNull())
        .addColumn('silo', 'integer', (c) => c.notNull())
        .addColumn('body', blob, (c) => c.notNull())
        .addPrimaryKeyConstraint('messages_pk', ['consortium', 'round', 'stage', 'silo'])
        .execute();
      await db.schema
        .createTable('outbox')
        .addColumn('consortium', 'text', (c) => c.notNull())
        .addColumn('round', 'integer', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('silo', 'integer', (c) => c.notNull())
        .addColumn('body', blob, (c) => c.notNull())
        .addPrimaryKeyConstraint('outbox_pk', ['consortium', 'round', 'kind', 'silo'])
        .execute();
      await db.schema
        .createTable('reports')
        .addColumn('consortium', 'text', (c) => c.notNull())
        .addColumn('round', 'integer', (c) => c.notNull())
        .addColumn('silo', 'integer', (c) => c.notNull())
        .addColumn('body', blob, (c) => c.notNull())
        .addPrimaryKeyConstraint('reports_pk', ['consortium', 'round', 'silo'])
        .execute();
      await db.schema
        .createTable('nonces')
        .addColumn('consortium', 'text', (c) => c.notNull())
        .addColumn('silo', 'integer', (c) => c.notNull())
        .addColumn('nonce', 'text', (c) => c.notNull())
        .addColumn('expires_at', float, (c) => c.notNull())
        .addPrimaryKeyConstraint('nonces_pk', ['consortium', 'silo', 'nonce'])
        .execute();
      await db.schema.createIndex('nonces_expiry').on('nonces').column('expires_at').execute();
    },
  };
}

/**
 * `rounds.faults`: JSON of the misbehaviour the secure-aggregation server detected in a round
 * (protocol/errors.ts Fault[]: bad shares, bad dealing, bad corrections, each naming a silo).
 */
const roundFaults: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('rounds').addColumn('faults', 'text').execute();
  },
};

/**
 * PostgreSQL: the columns holding vectors (masked inputs, models, the aggregate: megabytes each)
 * are stored out of line uncompressed (`STORAGE EXTERNAL`). pglz finds little to compress in
 * masked words or float parameters, yet tried on every write and, where it saved a few percent,
 * decompressed on every read. SQLite has no such setting.
 */
function externalVectors(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== 'postgres') return;
      for (const [table, column] of [
        ['messages', 'body'],
        ['outbox', 'body'],
        ['models', 'params'],
        ['rounds', 'weighted_sum'],
      ] as const)
        await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} set storage external`.execute(
          db,
        );
    },
  };
}

/**
 * `rounds.selected`: JSON number[] of the silos the consortium's strategy selected for the round
 * (null: every silo), fixed when the round opens (service/selection.ts).
 */
const roundSelection: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('rounds').addColumn('selected', 'text').execute();
  },
};

/**
 * `round_audits`: the manipulation audit of each scored round (src/audit/manipulation-audit.ts, one round's entry
 * as JSON) and the part of it the audit's summary reads (`summary`), computed once off the
 * request path when the round is scored (service/round-audits.ts); `scores_digest` is the SHA-256 of the
 * scores it audited, so a round scored again is audited again.
 */
function roundAudits(dialect: Dialect): Migration {
  const float = dialect === 'postgres' ? sql`double precision` : sql`real`;
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('round_audits')
        .addColumn('consortium', 'text', (c) => c.notNull())
        .addColumn('round', 'integer', (c) => c.notNull())
        .addColumn('scores_digest', 'text', (c) => c.notNull())
        .addColumn('audit', 'text', (c) => c.notNull())
        .addColumn('summary', 'text', (c) => c.notNull())
        .addColumn('computed_at', float, (c) => c.notNull())
        .addPrimaryKeyConstraint('round_audits_pk', ['consortium', 'round'])
        .execute();
    },
  };
}

/** The migrations of `dialect`, keyed so that they sort in order. */
export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations() {
      return {
        '0001_initial': initial(dialect),
        '0002_round_faults': roundFaults,
        '0003_external_vectors': externalVectors(dialect),
        '0004_round_selection': roundSelection,
        '0005_round_audits': roundAudits(dialect),
      };
    },
  };
}
