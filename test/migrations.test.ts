import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { MIGRATIONS_DIR, migrate, pendingMigrations, readMigrations, type MigrationRow } from '../src/db/migrate.js';
import { prismaMigrateDiff, SCHEMA_FILE, SNAPSHOT_FILE } from '../scripts/new-migration.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';

const databases: TestDatabase[] = [];
async function freshDatabase(template: 'empty' | 'migrated' = 'empty'): Promise<TestDatabase> {
  const db = await createTestDatabase(template);
  databases.push(db);
  return db;
}
afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
});

async function query<R extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

let localNames: string[];
beforeAll(async () => {
  localNames = (await readMigrations(MIGRATIONS_DIR)).map((m) => m.name);
  expect(localNames.length).toBeGreaterThan(0);
});

// ---------------------------------------------------------------------------------------------
// Schema drift

/**
 * Everything about a database's schema that Prisma's model determines, as "kind name" → a
 * readable description, so two databases compare as two maps and a difference reads as a line.
 * Column order is left out on purpose: a column added by a later migration comes last, while a
 * database built in one go follows the model's order.
 */
async function describeSchema(url: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = async <R extends pg.QueryResultRow>(sql: string) => (await client.query<R>(sql)).rows;
    // Objects of an extension (pg_trgm's functions and operators) and Prisma's bookkeeping table.
    const notOurs = `NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = %s AND d.deptype = 'e')`;
    const userTable = `t.relnamespace = 'public'::regnamespace AND t.relname <> '_prisma_migrations'`;

    for (const r of await rows<{ extname: string; schema: string }>(
      `SELECT e.extname, e.extnamespace::regnamespace::text AS schema FROM pg_extension e WHERE e.extname <> 'plpgsql'`,
    )) {
      out.set(`extension ${r.extname}`, `in schema ${r.schema}`);
    }

    for (const r of await rows<{ typname: string; labels: string[] }>(
      `SELECT t.typname, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
         FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
        WHERE t.typnamespace = 'public'::regnamespace GROUP BY t.typname`,
    )) {
      out.set(`enum ${r.typname}`, r.labels.join(', '));
    }

    for (const r of await rows<{ relname: string; relkind: string }>(
      `SELECT t.relname, t.relkind::text FROM pg_class t
        WHERE ${userTable} AND t.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND ${notOurs.replace('%s', 't.oid')}`,
    )) {
      const kinds: Record<string, string> = { r: 'table', p: 'partitioned table', v: 'view', m: 'materialized view', S: 'sequence', f: 'foreign table' };
      out.set(`relation ${r.relname}`, kinds[r.relkind] ?? r.relkind);
    }

    for (const r of await rows<{
      relname: string; attname: string; type: string; attnotnull: boolean; def: string | null;
      attidentity: string; attgenerated: string; collation: string | null;
      data_type: string; udt_name: string; character_maximum_length: number | null; numeric_precision: number | null;
      numeric_scale: number | null; datetime_precision: number | null;
    }>(
      `SELECT t.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull,
              pg_get_expr(ad.adbin, ad.adrelid) AS def, a.attidentity::text, a.attgenerated::text,
              CASE WHEN a.attcollation <> 0 AND a.attcollation <> 'pg_catalog.default'::regcollation
                   THEN a.attcollation::regcollation::text END AS collation,
              c.data_type, c.udt_name, c.character_maximum_length, c.numeric_precision, c.numeric_scale, c.datetime_precision
         FROM pg_attribute a
         JOIN pg_class t ON t.oid = a.attrelid
         LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
         JOIN information_schema.columns c ON c.table_schema = 'public' AND c.table_name = t.relname AND c.column_name = a.attname
        WHERE ${userTable} AND t.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped`,
    )) {
      const parts = [
        r.type,
        r.attnotnull ? 'NOT NULL' : 'NULL',
        r.def !== null ? `DEFAULT ${r.def}` : '',
        r.attidentity ? `IDENTITY ${r.attidentity}` : '',
        r.attgenerated ? `GENERATED ${r.attgenerated}` : '',
        r.collation ? `COLLATE ${r.collation}` : '',
        // information_schema's view of the same type, for precision, scale and array element type
        `[${r.data_type}/${r.udt_name}${r.character_maximum_length !== null ? ` len=${r.character_maximum_length}` : ''}` +
          `${r.numeric_precision !== null ? ` precision=${r.numeric_precision}` : ''}` +
          `${r.numeric_scale !== null ? ` scale=${r.numeric_scale}` : ''}` +
          `${r.datetime_precision !== null ? ` datetime_precision=${r.datetime_precision}` : ''}]`,
      ];
      out.set(`column ${r.relname}.${r.attname}`, parts.filter(Boolean).join(' '));
    }

    for (const r of await rows<{
      name: string; relname: string; unique: boolean; primary: boolean; method: string;
      keys: string[]; opclasses: string[]; options: number[]; predicate: string | null; nkeys: number;
    }>(
      `SELECT i.relname AS name, t.relname, x.indisunique AS unique, x.indisprimary AS primary, am.amname AS method,
              ARRAY(SELECT pg_get_indexdef(x.indexrelid, k, true) FROM generate_series(1, x.indnatts) k ORDER BY k) AS keys,
              ARRAY(SELECT oc.opcname::text FROM unnest(x.indclass::oid[]) WITH ORDINALITY u(oid, n)
                      JOIN pg_opclass oc ON oc.oid = u.oid ORDER BY u.n) AS opclasses,
              x.indoption::int2[]::int[] AS options, pg_get_expr(x.indpred, x.indrelid) AS predicate, x.indnkeyatts AS nkeys
         FROM pg_index x
         JOIN pg_class i ON i.oid = x.indexrelid
         JOIN pg_class t ON t.oid = x.indrelid
         JOIN pg_am am ON am.oid = i.relam
        WHERE ${userTable}`,
    )) {
      const columns = r.keys.map((key, k) => {
        if (k >= r.nkeys) return `${key} (INCLUDE)`;
        const option = r.options[k] ?? 0;
        // indoption bit 0: DESC, bit 1: NULLS FIRST
        return `${key} ${r.opclasses[k] ?? '?'} ${option & 1 ? 'DESC' : 'ASC'}${option & 2 ? ' NULLS FIRST' : ''}`;
      });
      out.set(
        `index ${r.name}`,
        `on ${r.relname}${r.primary ? ' PRIMARY KEY' : r.unique ? ' UNIQUE' : ''} USING ${r.method} (${columns.join(', ')})` +
          (r.predicate ? ` WHERE ${r.predicate}` : ''),
      );
    }

    for (const r of await rows<{
      conname: string; relname: string; contype: string; def: string; confupdtype: string; confdeltype: string; deferrable: boolean;
    }>(
      // contype 'n' (PostgreSQL 18's NOT NULL constraints) is already covered by the columns.
      `SELECT con.conname, t.relname, con.contype::text, pg_get_constraintdef(con.oid) AS def,
              con.confupdtype::text, con.confdeltype::text, con.condeferrable AS deferrable
         FROM pg_constraint con JOIN pg_class t ON t.oid = con.conrelid
        WHERE ${userTable} AND con.contype <> 'n'`,
    )) {
      const actions: Record<string, string> = { a: 'NO ACTION', r: 'RESTRICT', c: 'CASCADE', n: 'SET NULL', d: 'SET DEFAULT' };
      const fk = r.contype === 'f' ? ` [on update ${actions[r.confupdtype]}, on delete ${actions[r.confdeltype]}]` : '';
      out.set(`constraint ${r.relname}.${r.conname}`, `${r.def}${fk}${r.deferrable ? ' DEFERRABLE' : ''}`);
    }

    for (const r of await rows<{ proname: string; args: string; def: string }>(
      `SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args, pg_get_functiondef(p.oid) AS def
         FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.prokind IN ('f', 'p') AND ${notOurs.replace('%s', 'p.oid')}`,
    )) {
      out.set(`function ${r.proname}(${r.args})`, r.def.replace(/\s+/g, ' '));
    }

    for (const r of await rows<{ tgname: string; relname: string; def: string }>(
      `SELECT tg.tgname, t.relname, pg_get_triggerdef(tg.oid) AS def
         FROM pg_trigger tg JOIN pg_class t ON t.oid = tg.tgrelid WHERE ${userTable} AND NOT tg.tgisinternal`,
    )) {
      out.set(`trigger ${r.relname}.${r.tgname}`, r.def);
    }
    return out;
  } finally {
    await client.end();
  }
}

/**
 * Objects schema.prisma cannot express, written by hand into a migration: they exist only on the
 * migrated side. Listed by name so that anything else there is still drift.
 */
const HAND_WRITTEN = [
  'function advance_catalog_revision(changed bigint)',
  'function log_products_inserted()',
  'function log_products_deleted()',
  'function log_products_updated()',
  'function log_products_truncated()',
  'function start_catalog_lineage()',
  'trigger Product.Product_log_inserted',
  'trigger Product.Product_log_deleted',
  'trigger Product.Product_log_updated',
  'trigger Product.Product_log_truncated',
  'trigger CatalogRevision.CatalogRevision_new_lineage',
  'function api_key_changed()',
  'trigger ApiKey.ApiKey_changed',
  'trigger ApiKey.ApiKey_deleted',
  'trigger ApiKey.ApiKey_truncated',
  'function live_order_changed()',
  'function live_product_changed()',
  'trigger Order.Order_live_created',
  'trigger Order.Order_live_status',
  'trigger Product.Product_live_changed',
  // The response cache's dependencies (migration *_cache_dependencies): every table an API read
  // shows; a deferred trigger is a constraint too.
  'function cache_order_viewers(buyer text, supplier text)',
  'function cache_record(tags text[])',
  'function cache_changed()',
  'function cache_truncated()',
  'function cache_read(since bigint)',
  ...['Category', 'Supplier', 'Product', 'Review', 'Favorite', 'Account', 'SupplierMember', 'Address', 'Order', 'OrderEvent', 'OrderItem', 'Coupon', 'ApiKey'].flatMap((t) => [
    `trigger ${t}.${t}_cache_changed`,
    `constraint ${t}.${t}_cache_changed`,
    `trigger ${t}.${t}_cache_truncated`,
  ]),
  // Each category's active products (migration *_category_product_counts).
  'function add_category_product_counts(categories text[], deltas bigint[])',
  'function count_products_inserted()',
  'function count_products_deleted()',
  'function count_products_updated()',
  'function count_products_truncated()',
  'trigger Product.Product_tally_inserted',
  'trigger Product.Product_tally_deleted',
  'trigger Product.Product_tally_updated',
  'trigger Product.Product_tally_truncated',
];

function schemaDrift(migrated: Map<string, string>, fromSchema: Map<string, string>): string[] {
  const keys = [...new Set([...migrated.keys(), ...fromSchema.keys()])].sort();
  const lines: string[] = [];
  for (const key of keys) {
    const a = migrated.get(key);
    const b = fromSchema.get(key);
    if (a === b) continue;
    if (b === undefined && HAND_WRITTEN.includes(key)) continue;
    if (a === undefined) lines.push(`missing from the migrations: ${key}: ${b}`);
    else if (b === undefined) lines.push(`not in schema.prisma: ${key}: ${a}`);
    else lines.push(`${key}\n      migrations:    ${a}\n      schema.prisma: ${b}`);
  }
  return lines;
}

describe('migrations and schema.prisma', () => {
  it('a database migrated by migrate() matches one built straight from schema.prisma', async () => {
    const adminUrl = inject('pgAdminUrl');
    const [migrated, fromSchema, diff, snapshotDiff] = await Promise.all([
      freshDatabase('empty'),
      freshDatabase('empty'),
      prismaMigrateDiff({ from: null, to: SCHEMA_FILE, url: adminUrl }),
      prismaMigrateDiff({ from: SNAPSHOT_FILE, to: SCHEMA_FILE, url: adminUrl }),
    ]);
    await migrate(migrated.url);
    // The diff's GIN trigram indexes need the extension the migrations create first.
    await query(fromSchema.url, `CREATE EXTENSION IF NOT EXISTS pg_trgm;\n${diff}`);

    const migratedSchema = await describeSchema(migrated.url);
    const drift = schemaDrift(migratedSchema, await describeSchema(fromSchema.url));
    expect(HAND_WRITTEN.filter((key) => !migratedSchema.has(key)), 'hand-written objects the migrations no longer create').toEqual([]);
    expect(
      drift.length,
      `prisma/migrations do not produce the schema of prisma/schema.prisma:\n  ${drift.join('\n  ')}\n` +
        `Run \`npm run db:migration -- <name>\` after changing schema.prisma; never edit an applied migration.\n`,
    ).toBe(0);

    // The generator diffs from this snapshot; if it lagged behind the migrations the next
    // generated migration would repeat or miss changes.
    expect(
      snapshotDiff,
      `${SNAPSHOT_FILE} is not schema.prisma as of the last migration; the difference is:\n${snapshotDiff}`,
    ).toBe('');
  });
});

// ---------------------------------------------------------------------------------------------
// The runner

async function copyMigrations(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'migrations-'));
  await fs.cp(MIGRATIONS_DIR, dir, { recursive: true });
  return dir;
}

async function addMigration(dir: string, name: string, sql: string): Promise<void> {
  await fs.mkdir(path.join(dir, name));
  await fs.writeFile(path.join(dir, name, 'migration.sql'), sql);
}

async function tableExists(url: string, name: string): Promise<boolean> {
  const [row] = await query<{ found: string | null }>(url, 'SELECT to_regclass($1)::text AS found', [`"${name}"`]);
  return Boolean(row?.found);
}

const history = (url: string) => query<MigrationRow>(url, 'SELECT * FROM _prisma_migrations ORDER BY started_at, migration_name');

describe('migrate()', () => {
  const tempDirs: string[] = [];
  afterEach(async () => {
    await Promise.all(tempDirs.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
  });
  const tempMigrations = async () => {
    const dir = await copyMigrations();
    tempDirs.push(dir);
    return dir;
  };

  it('applies everything once, then nothing', async () => {
    const db = await freshDatabase('empty');
    expect(await pendingMigrations(db.url)).toEqual(localNames);
    expect(await migrate(db.url)).toEqual({ applied: localNames });
    expect(await pendingMigrations(db.url)).toEqual([]);
    expect(await migrate(db.url)).toEqual({ applied: [] });
    expect((await history(db.url)).map((r) => r.migration_name)).toEqual(localNames);
  });

  it('lets two concurrent runs apply each migration exactly once', async () => {
    const dir = await tempMigrations();
    await addMigration(dir, '29990101000000_concurrent_a', 'CREATE TABLE "ConcurrentA" (id int PRIMARY KEY);\nSELECT pg_sleep(0.2);\n');
    await addMigration(dir, '29990101000001_concurrent_b', 'CREATE TABLE "ConcurrentB" (id int PRIMARY KEY);\n');
    const all = [...localNames, '29990101000000_concurrent_a', '29990101000001_concurrent_b'];
    const db = await freshDatabase('empty');

    const results = await Promise.all([migrate(db.url, { dir }), migrate(db.url, { dir })]);

    expect(results.flatMap((r) => r.applied).sort()).toEqual(all);
    const rows = await history(db.url);
    expect(rows.map((r) => r.migration_name)).toEqual(all);
    expect(rows.every((r) => r.finished_at !== null && r.rolled_back_at === null)).toBe(true);
  });

  it('records each migration as Prisma does', async () => {
    const db = await freshDatabase('migrated');
    const rows = await history(db.url);
    expect(rows.map((r) => r.migration_name)).toEqual(localNames);
    for (const row of rows) {
      const file = await fs.readFile(path.join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row.checksum).toBe(crypto.createHash('sha256').update(file).digest('hex'));
      expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
      expect(row.rolled_back_at).toBeNull();
      expect(row.logs).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
    // The table itself, column for column as Prisma's schema engine creates it.
    const columns = await query(
      db.url,
      `SELECT column_name, data_type, character_maximum_length AS len, is_nullable, column_default
         FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(columns).toEqual([
      { column_name: 'id', data_type: 'character varying', len: 36, is_nullable: 'NO', column_default: null },
      { column_name: 'checksum', data_type: 'character varying', len: 64, is_nullable: 'NO', column_default: null },
      { column_name: 'finished_at', data_type: 'timestamp with time zone', len: null, is_nullable: 'YES', column_default: null },
      { column_name: 'migration_name', data_type: 'character varying', len: 255, is_nullable: 'NO', column_default: null },
      { column_name: 'logs', data_type: 'text', len: null, is_nullable: 'YES', column_default: null },
      { column_name: 'rolled_back_at', data_type: 'timestamp with time zone', len: null, is_nullable: 'YES', column_default: null },
      { column_name: 'started_at', data_type: 'timestamp with time zone', len: null, is_nullable: 'NO', column_default: 'now()' },
      { column_name: 'applied_steps_count', data_type: 'integer', len: null, is_nullable: 'NO', column_default: '0' },
    ]);
  });

  it('refuses an applied migration that was edited, naming the file, and changes nothing', async () => {
    const dir = await tempMigrations();
    const db = await freshDatabase('empty');
    await migrate(db.url, { dir });
    const before = await history(db.url);

    const edited = path.join(dir, localNames[0]!, 'migration.sql');
    await fs.appendFile(edited, '\n-- an afterthought\n');
    await addMigration(dir, '29990101000000_after_edit', 'CREATE TABLE "AfterEdit" (id int PRIMARY KEY);\n');

    await expect(migrate(db.url, { dir })).rejects.toThrow(edited);
    await expect(migrate(db.url, { dir })).rejects.toThrow(/changed after it was applied/);
    expect(await history(db.url)).toEqual(before);
    expect(await tableExists(db.url, 'AfterEdit')).toBe(false);
  });

  it('accepts an applied migration whose line endings git converted', async () => {
    const dir = await tempMigrations();
    const db = await freshDatabase('migrated');
    const file = path.join(dir, localNames[0]!, 'migration.sql');
    await fs.writeFile(file, (await fs.readFile(file, 'utf8')).replace(/\n/g, '\r\n'));
    expect(await migrate(db.url, { dir })).toEqual({ applied: [] });
  });

  it('refuses a history with a migration the folder does not have', async () => {
    const dir = await tempMigrations();
    const db = await freshDatabase('migrated');
    await query(
      db.url,
      `INSERT INTO _prisma_migrations (id, checksum, migration_name, finished_at, applied_steps_count)
       VALUES (gen_random_uuid(), repeat('0', 64), '29990101000000_from_the_future', now(), 1)`,
    );
    await addMigration(dir, '29990101000001_next', 'CREATE TABLE "Next" (id int PRIMARY KEY);\n');
    await expect(migrate(db.url, { dir })).rejects.toThrow(/29990101000000_from_the_future/);
    expect(await tableExists(db.url, 'Next')).toBe(false);
  });

  it('refuses a history with a failed migration that was never resolved', async () => {
    const db = await freshDatabase('migrated');
    await query(
      db.url,
      `INSERT INTO _prisma_migrations (id, checksum, migration_name, logs)
       VALUES (gen_random_uuid(), repeat('0', 64), $1, 'ERROR: boom')`,
      [localNames[0]],
    );
    await expect(migrate(db.url)).rejects.toThrow(new RegExp(`failed migrations[\\s\\S]*${localNames[0]}[\\s\\S]*boom`));
  });

  it('rolls a failing migration back completely, records it as rolled back, and applies it once fixed', async () => {
    const dir = await tempMigrations();
    const db = await freshDatabase('migrated');
    const name = '29990101000000_broken';
    await addMigration(dir, name, 'CREATE TABLE "Broken" (id int PRIMARY KEY);\nSELECT no_such_function();\n');

    await expect(migrate(db.url, { dir })).rejects.toThrow(`${path.join(dir, name, 'migration.sql')}:2`);
    expect(await tableExists(db.url, 'Broken')).toBe(false);
    const failed = (await history(db.url)).find((r) => r.migration_name === name);
    expect(failed).toMatchObject({ finished_at: null, applied_steps_count: 0 });
    expect(failed?.rolled_back_at).toBeInstanceOf(Date);
    expect(failed?.logs).toMatch(/no_such_function/);

    await fs.writeFile(path.join(dir, name, 'migration.sql'), 'CREATE TABLE "Broken" (id int PRIMARY KEY);\n');
    expect(await migrate(db.url, { dir })).toEqual({ applied: [name] });
    expect(await tableExists(db.url, 'Broken')).toBe(true);
  });

  it('refuses a non-empty database without migration history, as prisma migrate deploy does', async () => {
    const db = await freshDatabase('empty');
    await query(db.url, 'CREATE TABLE "Stray" (id int)');
    await expect(migrate(db.url)).rejects.toThrow(/not empty \(Stray/);
    expect(await tableExists(db.url, '_prisma_migrations')).toBe(false);
  });
});
