import crypto from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { databaseUrl, type TemplateName } from '../setup/global.js';

export interface TestDatabase {
  /** Superuser URL of a database of this test's own. */
  url: string;
  /** Drops it, ending any session still connected to it. Idempotent. */
  drop(): Promise<void>;
}

let counter = 0;

/** A fresh database cloned from one of the run's templates (see test/setup/global.ts). */
export async function createTestDatabase(template: TemplateName = 'seeded'): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const name = `${inject('pgTestDatabasePrefix')}${process.pid}_${++counter}_${crypto.randomBytes(3).toString('hex')}`;
  const source = inject('pgTemplates')[template];
  // FILE_COPY copies the template's files instead of writing every page through the WAL: about
  // 2.5x faster when test files clone at the same time (the test server runs without fsync).
  await withAdmin(adminUrl, (admin) =>
    admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)} TEMPLATE ${admin.escapeIdentifier(source)} STRATEGY FILE_COPY`),
  );
  let dropping: Promise<void> | undefined;
  return {
    url: databaseUrl(adminUrl, name),
    drop: () => {
      dropping ??= withAdmin(adminUrl, async (admin) => {
        await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
      });
      return dropping;
    },
  };
}

async function withAdmin<T>(adminUrl: string, fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}
