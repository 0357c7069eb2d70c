// Applies prisma/migrations the way `prisma migrate deploy` does, without Prisma's schema engine
// (which cannot be downloaded on these machines). The bookkeeping is Prisma's own: the same
// `_prisma_migrations` table, rows, checksums and advisory lock, so `prisma migrate deploy` and
// `prisma migrate status` accept a database migrated here, and the other way round.
//
// Differences, both on the safe side: each migration runs in a transaction (unless the script
// manages transactions itself, as Prisma's enum rewrites do), so a failure leaves nothing half
// applied and is recorded as rolled back; and nothing is applied while the history is suspect
// (an applied migration edited or missing, or a failed one unresolved).

import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

/** Prisma's key: holding it also keeps a concurrent `prisma migrate deploy` out. */
const PRISMA_ADVISORY_LOCK_KEY = 72707369;

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export interface LocalMigration {
  /** Folder name, `<timestamp>_<name>`; the migration's identity in `_prisma_migrations`. */
  name: string;
  file: string;
  script: string;
  /** SHA-256 of the file, lower-case hex, as Prisma records it. */
  checksum: string;
}

/** A row of Prisma's `_prisma_migrations` table. */
export interface MigrationRow {
  id: string;
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  logs: string | null;
  rolled_back_at: Date | null;
  started_at: Date;
  applied_steps_count: number;
}

export async function migrate(
  url: string,
  opts: { dir?: string; log?: (msg: string) => void } = {},
): Promise<{ applied: string[] }> {
  const log = opts.log ?? (() => undefined);
  const local = await readMigrations(opts.dir ?? MIGRATIONS_DIR);
  const client = await connect(url, { createSchema: true });
  try {
    const locked = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [PRISMA_ADVISORY_LOCK_KEY]);
    if (!locked.rows[0]?.ok) {
      log('Waiting for another process to finish migrating');
      await client.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK_KEY]);
    }
    try {
      await ensureMigrationsTable(client);
      const rows = await appliedRows(client);
      checkHistory(local, rows);
      const done = new Set(rows.filter((r) => r.rolled_back_at === null).map((r) => r.migration_name));
      const applied: string[] = [];
      for (const migration of local.filter((m) => !done.has(m.name))) {
        const started = Date.now();
        await applyMigration(client, migration);
        log(`Applied migration ${migration.name} (${Date.now() - started} ms)`);
        applied.push(migration.name);
      }
      return { applied };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    await client.end();
  }
}

/** Names of the migrations in the folder that the database has not applied yet, in order. */
export async function pendingMigrations(url: string, opts: { dir?: string } = {}): Promise<string[]> {
  const local = await readMigrations(opts.dir ?? MIGRATIONS_DIR);
  const client = await connect(url, { createSchema: false });
  try {
    const exists = await client.query<{ found: string | null }>(`SELECT to_regclass('_prisma_migrations')::text AS found`);
    if (!exists.rows[0]?.found) return local.map((m) => m.name);
    const done = new Set(
      (await appliedRows(client)).filter((r) => r.finished_at !== null && r.rolled_back_at === null).map((r) => r.migration_name),
    );
    return local.filter((m) => !done.has(m.name)).map((m) => m.name);
  } finally {
    await client.end();
  }
}

export async function readMigrations(dir: string): Promise<LocalMigration[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  await checkLockFile(dir);
  // Prisma treats every sub-directory as a migration and orders them by name.
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  return Promise.all(
    names.map(async (name) => {
      const file = path.join(dir, name, 'migration.sql');
      let bytes: Buffer;
      try {
        bytes = await fs.readFile(file);
      } catch (err) {
        throw new MigrationError(`Migration folder ${path.join(dir, name)} has no readable migration.sql: ${message(err)}`);
      }
      return { name, file, script: bytes.toString('utf8'), checksum: sha256(bytes) };
    }),
  );
}

async function checkLockFile(dir: string): Promise<void> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, 'migration_lock.toml'), 'utf8');
  } catch {
    return;
  }
  const provider = /^provider\s*=\s*"([^"]*)"/m.exec(text)?.[1];
  if (provider !== undefined && provider !== 'postgresql') {
    throw new MigrationError(`${path.join(dir, 'migration_lock.toml')} is for provider "${provider}", not "postgresql"`);
  }
}

/** Refuses, before anything is applied, a history that the folder does not explain. */
function checkHistory(local: LocalMigration[], rows: MigrationRow[]): void {
  const failed = rows.filter((r) => r.finished_at === null && r.rolled_back_at === null);
  if (failed.length) {
    const details = failed
      .map((r) => `  ${r.migration_name} (started ${r.started_at.toISOString()})${r.logs?.trim() ? `: ${r.logs.trim()}` : ''}`)
      .join('\n');
    throw new MigrationError(
      `The database records failed migrations; fix the database by hand, then mark them resolved ` +
        `(\`prisma migrate resolve --rolled-back <name>\` or \`--applied <name>\`, or set rolled_back_at in _prisma_migrations):\n${details}`,
    );
  }
  const byName = new Map(local.map((m) => [m.name, m]));
  for (const row of rows) {
    if (row.rolled_back_at !== null) continue;
    const migration = byName.get(row.migration_name);
    if (!migration) {
      throw new MigrationError(
        `The database has applied migration ${row.migration_name}, but the migrations folder has no ${row.migration_name}/migration.sql ` +
          `(the database is newer than this code, or the folder was renamed or deleted)`,
      );
    }
    if (!checksumMatches(migration.script, row.checksum)) {
      throw new MigrationError(
        `${migration.file} was changed after it was applied to this database (checksum ${row.checksum} recorded, ` +
          `${migration.checksum} now). Applied migrations must not be edited: restore the file and put the change in a new migration.`,
      );
    }
  }
}

/** Like Prisma, accept the file with either line ending: git may have converted it on checkout. */
function checksumMatches(script: string, recorded: string): boolean {
  return [script, script.replace(/\r\n/g, '\n'), script.replace(/\n/g, '\r\n')].some((variant) => sha256(variant) === recorded);
}

async function applyMigration(client: pg.Client, migration: LocalMigration): Promise<void> {
  const id = crypto.randomUUID();
  if (managesOwnTransactions(migration.script)) {
    // Run it as Prisma does: its own BEGIN/COMMIT would end a transaction of ours half-way.
    await client.query(`INSERT INTO _prisma_migrations (id, checksum, migration_name) VALUES ($1, $2, $3)`, [
      id,
      migration.checksum,
      migration.name,
    ]);
    try {
      await client.query(migration.script);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.query(`UPDATE _prisma_migrations SET logs = $2 WHERE id = $1`, [id, failureLog(migration, err)]);
      throw new MigrationError(`${failureLog(migration, err)}\nThe migration manages its own transactions, so part of it may have been applied.`);
    }
    await client.query(
      `UPDATE _prisma_migrations SET applied_steps_count = applied_steps_count + 1, finished_at = clock_timestamp() WHERE id = $1`,
      [id],
    );
    return;
  }
  await client.query('BEGIN');
  try {
    await client.query(`INSERT INTO _prisma_migrations (id, checksum, migration_name) VALUES ($1, $2, $3)`, [
      id,
      migration.checksum,
      migration.name,
    ]);
    await client.query(migration.script);
    await client.query(
      `UPDATE _prisma_migrations SET applied_steps_count = 1, finished_at = clock_timestamp() WHERE id = $1`,
      [id],
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    const logs = failureLog(migration, err);
    // Keep the failure on record the way Prisma shows a resolved one: rolled back, so it does not
    // block the next attempt (ours or `prisma migrate deploy`) once the file is fixed.
    await client
      .query(
        `INSERT INTO _prisma_migrations (id, checksum, migration_name, logs, rolled_back_at) VALUES ($1, $2, $3, $4, now())`,
        [id, migration.checksum, migration.name, logs],
      )
      .catch(() => undefined);
    throw new MigrationError(`${logs}\nNothing of it was applied.`);
  }
}

function managesOwnTransactions(script: string): boolean {
  const code = script.replace(/--.*$/gm, '');
  return /^\s*(BEGIN|COMMIT|ROLLBACK|START\s+TRANSACTION)\s*;/im.test(code);
}

function failureLog(migration: LocalMigration, err: unknown): string {
  const position = typeof err === 'object' && err !== null && 'position' in err ? Number(err.position) : NaN;
  const where = Number.isInteger(position) && position > 0 ? `:${migration.script.slice(0, position).split('\n').length}` : '';
  return `Migration ${migration.name} failed at ${migration.file}${where}: ${message(err)}`;
}

async function ensureMigrationsTable(client: pg.Client): Promise<void> {
  const exists = await client.query<{ found: string | null }>(`SELECT to_regclass('_prisma_migrations')::text AS found`);
  if (exists.rows[0]?.found) return;
  // Like `prisma migrate deploy`: a database with tables but no migration history was made some
  // other way (db push, by hand) and must be baselined, not migrated over.
  const occupied = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c
       WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
     UNION ALL
     SELECT t.typname FROM pg_type t WHERE t.typnamespace = current_schema()::regnamespace AND t.typtype = 'e'
     LIMIT 5`,
  );
  if (occupied.rowCount) {
    throw new MigrationError(
      `The database schema is not empty (${occupied.rows.map((r) => r.name).join(', ')}, …) but has no _prisma_migrations table. ` +
        `Baseline it (https://pris.ly/d/migrate-baseline) or use an empty database.`,
    );
  }
  // Prisma's own definition (schema engine, PostgreSQL flavour), column for column.
  await client.query(`
    CREATE TABLE _prisma_migrations (
      id                      VARCHAR(36) PRIMARY KEY NOT NULL,
      checksum                VARCHAR(64) NOT NULL,
      finished_at             TIMESTAMPTZ,
      migration_name          VARCHAR(255) NOT NULL,
      logs                    TEXT,
      rolled_back_at          TIMESTAMPTZ,
      started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
      applied_steps_count     INTEGER NOT NULL DEFAULT 0
    )`);
}

async function appliedRows(client: pg.Client): Promise<MigrationRow[]> {
  const result = await client.query<MigrationRow>(
    `SELECT id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count
       FROM _prisma_migrations ORDER BY started_at, migration_name`,
  );
  return result.rows;
}

/**
 * Prisma URLs may carry `?schema=name` (pg would ignore it): honour it the way Prisma does, by
 * working in that schema.
 */
async function connect(url: string, opts: { createSchema: boolean }): Promise<pg.Client> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  parsed.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: parsed.toString(), application_name: 'migrate' });
  await client.connect();
  try {
    if (schema) {
      const ident = client.escapeIdentifier(schema);
      if (opts.createSchema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${ident}`);
      await client.query(`SET search_path TO ${ident}`);
    }
  } catch (err) {
    await client.end();
    throw err;
  }
  return client;
}

function sha256(data: string | Buffer): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
