/**
 * Opening the store: SQLite through better-sqlite3 (one file, WAL with `synchronous = FULL`, so a
 * committed transaction survives a kill -9 or power loss) or PostgreSQL through `pg` when a URL is
 * given. Migrations run on open; on PostgreSQL Kysely's migrator takes an advisory lock, so several
 * server processes may open the same database at once.
 */
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { privateFile, restrictIfPresent } from '../../data/private-files.js';
import { type Dialect, migrationProvider } from './migrations.js';
import type { Database } from './schema.js';

/** Where the store lives: a SQLite file (or ':memory:') or a PostgreSQL URL. */
export type StoreLocation = { readonly sqlite: string } | { readonly postgres: string };

/** An open store. */
export interface StoreHandle {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** Closes the connection(s). */
  close(): Promise<void>;
}

/**
 * Opens the store and applies pending migrations.
 *
 * @throws TypeError on a bad location; the driver's error when the database cannot be opened or
 *   a migration fails.
 */
export async function openStore(location: StoreLocation): Promise<StoreHandle> {
  let db: Kysely<Database>;
  let dialect: Dialect;
  if ('sqlite' in location) {
    if (typeof location.sqlite !== 'string' || location.sqlite.length === 0)
      throw new TypeError('location.sqlite: expected a file path');
    // Issue 32, P1: the store holds models, Σŵ_iΔ_i and reports: 0600 before SQLite opens it, so
    // the -wal and -shm it creates take that mode too (and 0600 for ones left by an older run).
    const onDisk = location.sqlite !== ':memory:' && !location.sqlite.startsWith('file:');
    if (onDisk) privateFile(location.sqlite);
    const file = new SQLite(location.sqlite);
    file.pragma('journal_mode = WAL');
    if (onDisk) for (const suffix of ['-wal', '-shm']) restrictIfPresent(`${location.sqlite}${suffix}`);
    file.pragma('synchronous = FULL');
    file.pragma('busy_timeout = 5000');
    file.pragma('foreign_keys = ON');
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: file }) });
    dialect = 'sqlite';
  } else if ('postgres' in location) {
    if (typeof location.postgres !== 'string' || location.postgres.length === 0)
      throw new TypeError('location.postgres: expected a connection URL');
    const pool = new pg.Pool({ connectionString: location.postgres, max: 10 });
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    dialect = 'postgres';
  } else throw new TypeError('location: expected { sqlite } or { postgres }');
  const migrator = new Migrator({ db, provider: migrationProvider(dialect) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`store: migration ${failed} failed: ${(error as Error).message ?? String(error)}`);
  }
  return { db, dialect, close: () => db.destroy() };
}
