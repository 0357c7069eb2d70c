import pg from 'pg';
import type { Config } from '../runtime/config.js';
import { startEmbeddedPostgres } from './embedded.js';

export interface Database {
  /** Connection URL of the application database. Carries the password: never log it. */
  url: string;
  /** True when the database is the embedded server under DATA_DIR. */
  embedded: boolean;
  /** Stops the embedded server if this process started it; otherwise does nothing. Idempotent. */
  close(): Promise<void>;
}

/** The application's database inside the embedded cluster. */
export const EMBEDDED_DATABASE_NAME = 'marketplace';

/**
 * The database the service should use: DATABASE_URL when set (used as given: that server's
 * database is the operator's to create), otherwise the embedded server under DATA_DIR, started
 * or joined as needed, with its application database created on first use.
 */
export async function openDatabase(config: Config, opts: { log?: (msg: string) => void } = {}): Promise<Database> {
  if (config.DATABASE_URL) {
    return { url: config.DATABASE_URL, embedded: false, close: async () => undefined };
  }
  const server = await startEmbeddedPostgres({
    dataDir: config.DATA_DIR,
    port: config.EMBEDDED_PG_PORT,
    verbose: config.LOG_LEVEL === 'debug' || config.LOG_LEVEL === 'trace',
    log: opts.log,
  });
  try {
    await ensureDatabase(server.url('postgres'), EMBEDDED_DATABASE_NAME);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return { url: server.url(EMBEDDED_DATABASE_NAME), embedded: true, close: () => server.stop() };
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return;
    try {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
    } catch (err) {
      // Two processes creating it at once: the loser sees duplicate_database (or, racing inside
      // the catalog insert, unique_violation). Either way the database now exists.
      const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
      if (code !== '42P04' && code !== '23505') throw err;
    }
  } finally {
    await client.end();
  }
}
