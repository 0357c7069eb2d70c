// One PostgreSQL server for the whole run, and three template databases that each test file
// clones in milliseconds (test/helpers/db.ts) instead of migrating and seeding its own:
//   mp_empty     nothing at all
//   mp_migrated  prisma/migrations applied
//   mp_seeded    migrations + the demo catalogue (seed 42, 1200 products)
// With TEST_DATABASE_URL (a superuser URL of another server) that server is used instead of an
// embedded one; the templates and this run's databases are dropped from it afterwards.

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';

export type TemplateName = 'empty' | 'migrated' | 'seeded';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the test server's `postgres` database. Secret in real life; fine here. */
    pgAdminUrl: string;
    /** Template database for each kind of test database. */
    pgTemplates: Record<TemplateName, string>;
    /** Every database a test creates starts with this, so teardown can find the leftovers. */
    pgTestDatabasePrefix: string;
  }
}

const TEMPLATES: Record<TemplateName, string> = { empty: 'mp_empty', migrated: 'mp_migrated', seeded: 'mp_seeded' };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  let server: EmbeddedServer | undefined;
  let dataDir: string | undefined;
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mp-test-pg-'));
    const debug = process.env.TEST_PG_DEBUG === '1';
    server = await startEmbeddedPostgres({
      dataDir,
      ephemeral: true,
      // Two files at once, one of which may hold 64 connections of its own (the persisted-query
      // store under 64 registrations at once) beside its apps' pools and the other file's.
      maxConnections: 300,
      verbose: debug,
      log: (msg) => debug && process.stderr.write(`${msg}\n`),
    });
    adminUrl = server.url('postgres');
  }
  const prefix = `mp_t${Date.now().toString(36)}_`;
  const cleanup = async () => {
    if (server) {
      await server.stop();
      if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
    } else if (adminUrl) {
      await dropDatabases(adminUrl, prefix);
    }
  };

  try {
    const timings = await buildTemplates(adminUrl);
    process.stderr.write(`Test PostgreSQL ready in ${Date.now() - started} ms (${timings})\n`);
  } catch (err) {
    await cleanup();
    throw err;
  }
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplates', TEMPLATES);
  project.provide('pgTestDatabasePrefix', prefix);
  return cleanup;
}

async function buildTemplates(adminUrl: string): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const ident = (name: string) => admin.escapeIdentifier(name);
    // Left by an earlier run against the same TEST_DATABASE_URL server.
    for (const name of Object.values(TEMPLATES)) await dropDatabase(admin, name);
    await admin.query(`CREATE DATABASE ${ident(TEMPLATES.empty)}`);
    await admin.query(`CREATE DATABASE ${ident(TEMPLATES.migrated)}`);

    let t = Date.now();
    await migrate(databaseUrl(adminUrl, TEMPLATES.migrated));
    const migrateMs = Date.now() - t;

    t = Date.now();
    await admin.query(`CREATE DATABASE ${ident(TEMPLATES.seeded)} TEMPLATE ${ident(TEMPLATES.migrated)}`);
    // Imported here, not at the top: only this step needs it, and its import cost.
    const { seedDatabase } = await import('../../src/seed/seed.js');
    await seedDatabase(databaseUrl(adminUrl, TEMPLATES.seeded), { seed: 42, products: 1200 });
    const seedMs = Date.now() - t;

    for (const name of Object.values(TEMPLATES)) {
      await waitUntilUnused(admin, name);
      // Not connectable: a test that connected to a template by mistake would block every clone.
      await admin.query(`ALTER DATABASE ${ident(name)} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
    }
    return `migrate ${migrateMs} ms, seed ${seedMs} ms`;
  } finally {
    await admin.end();
  }
}

/** CREATE DATABASE … TEMPLATE refuses a template with sessions; pools must all be closed. */
async function waitUntilUnused(admin: pg.Client, name: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rows } = await admin.query<{ application_name: string; state: string | null }>(
      'SELECT application_name, state FROM pg_stat_activity WHERE datname = $1',
      [name],
    );
    if (!rows.length) return;
    if (Date.now() > deadline) {
      const who = rows.map((r) => `${r.application_name || '(no application_name)'} [${r.state ?? '?'}]`).join(', ');
      throw new Error(`Template database ${name} still has ${rows.length} open connection(s) after building it: ${who}. Close every pool/client used to build it.`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function dropDatabases(adminUrl: string, prefix: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE starts_with(datname, $1) OR datname = ANY($2)`,
      [prefix, Object.values(TEMPLATES)],
    );
    for (const { datname } of rows) await dropDatabase(admin, datname);
  } finally {
    await admin.end();
  }
}

async function dropDatabase(admin: pg.Client, name: string): Promise<void> {
  const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate', [name]);
  const ident = admin.escapeIdentifier(name);
  if (found.rowCount) await admin.query(`ALTER DATABASE ${ident} WITH IS_TEMPLATE false`);
  await admin.query(`DROP DATABASE IF EXISTS ${ident} WITH (FORCE)`);
}

export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}
