import crypto from 'node:crypto';
import pg from 'pg';
import { confirmHearing, DeafListenerError } from './listen-check.js';
import type { Config } from '../config/config.js';
import { startEmbeddedPostgres } from './embedded.js';

export interface Database {
  /** Connection URL of the application database. Carries the password: never log it. */
  url: string;
  /**
   * A session connection to the same database (DATABASE_DIRECT_URL, else `url`), for what needs
   * one: migrations, LISTEN, the demo data. Carries the password: never log it.
   */
  directUrl: string;
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
    const directUrl = config.DATABASE_DIRECT_URL ?? config.DATABASE_URL;
    const directName = config.DATABASE_DIRECT_URL ? 'DATABASE_DIRECT_URL' : 'DATABASE_URL';
    await Promise.all([
      checkDatabaseUrl(config.DATABASE_URL, 'DATABASE_URL'),
      directUrl !== config.DATABASE_URL ? checkDatabaseUrl(directUrl, 'DATABASE_DIRECT_URL') : undefined,
    ]);
    await checkSession(directUrl, directName);
    return { url: config.DATABASE_URL, directUrl, embedded: false, close: async () => undefined };
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
  const url = server.url(EMBEDDED_DATABASE_NAME);
  return { url, directUrl: url, embedded: true, close: () => server.stop() };
}

/** DATABASE_URL (or DATABASE_DIRECT_URL) names a server this process cannot use: the message says which (password hidden) and why. */
export class DatabaseUrlError extends Error {
  override name = 'DatabaseUrlError';
}

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Connects once to the operator's server before anything else does, so that an unreachable host,
 * a refused password or a missing database is one line naming DATABASE_URL and the cause rather
 * than whichever stack the first query happens to throw.
 */
async function checkDatabaseUrl(url: string, name: 'DATABASE_URL' | 'DATABASE_DIRECT_URL'): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  // A connection error after the attempt was given up must not become an unhandled 'error' event.
  client.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseUrlError(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`)), CONNECT_TIMEOUT_MS);
  });
  try {
    await Promise.race([client.connect().then(() => client.query('SELECT 1')), timedOut]);
  } catch (error) {
    throw new DatabaseUrlError(`${name} ${redactedUrl(url)}: ${connectionFailure(error)}`);
  } finally {
    clearTimeout(timer);
    void client.end().catch(() => undefined);
  }
}

/**
 * The direct connection must be a session of its own: migrations hold an advisory lock across
 * statements (through a transaction pooler it would be taken on one server connection and
 * released on another, or never), and LISTEN hears nothing through one. A transaction pooler is
 * told apart the way that matters: a notification sent to a LISTEN made through it never arrives.
 */
async function checkSession(url: string, name: 'DATABASE_URL' | 'DATABASE_DIRECT_URL'): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined);
  const channel = `session_check_${crypto.randomBytes(6).toString('hex')}`;
  try {
    await client.connect();
    await client.query(`LISTEN ${channel}`);
    await confirmHearing(client, url, channel, { connectMs: CONNECT_TIMEOUT_MS });
  } catch (error) {
    if (!(error instanceof DeafListenerError)) throw new DatabaseUrlError(`${name} ${redactedUrl(url)}: ${connectionFailure(error)}`);
    const fix =
      name === 'DATABASE_URL'
        ? 'set DATABASE_DIRECT_URL to the PostgreSQL server itself (or a session-mode pooler) and keep DATABASE_URL on the pooler'
        : 'point DATABASE_DIRECT_URL at the PostgreSQL server itself (or a session-mode pooler)';
    throw new DatabaseUrlError(
      `${name} ${redactedUrl(url)} is not a session connection: a LISTEN through it heard nothing (a transaction pooler, such as PgBouncer with pool_mode = transaction?). ` +
        `Migrations and LISTEN need a session: ${fix}`,
    );
  } finally {
    void client.end().catch(() => undefined);
  }
}

/** The URL with its password (in the user part or a `password` parameter) replaced by ***. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/** Why a connection failed, in words and on one line. */
function connectionFailure(error: unknown): string {
  if (error instanceof DatabaseUrlError) return error.message;
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
  }
  // PostgreSQL's own words (wrong password, no such database or role), which never quote the password.
  const message = error instanceof Error && error.message ? error.message : String(error);
  return message.split('\n')[0]!.trim();
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
