import fs from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { expect, inject } from 'vitest';
import { startApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { createPrisma, type DbTimeouts } from '../../src/db/prisma.js';
import { attachWebSocket, type WebSocketSettings } from '../../src/pipeline/websocket.js';
import { createHttpServer } from '../../src/pipeline/request-target.js';
import type { RateLimitStore } from '../../src/ratelimit/store.js';
import { createLogger, type Logger } from '../../src/config/logger.js';
import type { UsageRecorder } from '../../src/usage/recorder.js';
import { createTestDatabase } from './db.js';
import { HAS_PGBOUNCER, startPgbouncer, type Pgbouncer } from './pgbouncer.js';
import { APP_STARTS_DIR } from '../setup/durations-reporter.js';

const root = path.resolve(import.meta.dirname, '../..');
/** Notes a whole app's start under its test file, for the run's report (scripts/slowest-tests.ts shows the counts). */
function noteAppStart(): void {
  const dir = path.join(root, APP_STARTS_DIR);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.relative(root, expect.getState().testPath ?? 'unknown').split(path.sep).join('/');
  fs.appendFileSync(path.join(dir, `${process.pid}.txt`), `${file}\n`);
}

/**
 * TEST_POOLER=1 (`npm run test:pooler`, the files of test/pooler-files.ts) runs every app of a file
 * behind Debian's PgBouncer in transaction mode with its default settings (DATABASE_URL on the
 * pooler, DATABASE_DIRECT_URL on the server), as docs/deploy.md has it: each of its tests then
 * proves its behaviour holds behind the pooler. One pooler per test file and server, in front of the
 * suite's server (and a server of the test's own given `pooled`); the tests' own SQL (`sql`) stays direct.
 */
const BEHIND_POOLER = process.env.TEST_POOLER === '1';
if (BEHIND_POOLER && !HAS_PGBOUNCER) throw new Error('TEST_POOLER=1 needs Debian\'s pgbouncer (/usr/sbin/pgbouncer; .ci/run installs it)');
/** One pooler per server (host:port), started on first use. */
const poolers = new Map<string, Promise<Pgbouncer>>();
/**
 * Stops the file's poolers: after each file (test/setup/per-file.ts). A worker runs many files in
 * one process, and its end is a signal, so no 'exit' handler of a pooler's own would run.
 */
export async function stopPoolers(): Promise<void> {
  const stopping = [...poolers.values()];
  poolers.clear();
  await Promise.all(stopping.map(async (p) => (await p).stop()));
}
const serverOf = (url: string) => new URL(url).host;
/**
 * `url` through a pooler when it is on the suite's own server, or on a working server of the
 * test's own that it says may be pooled (`pooled`); a test's other servers (one that is down, one
 * that never answers) are reached as the test set them up.
 */
const throughPooler = async (url: string, pooled = false) => {
  const server = serverOf(url);
  if (!pooled && server !== serverOf(inject('pgAdminUrl'))) return url;
  let pooler = poolers.get(server);
  if (!pooler) poolers.set(server, (pooler = startPgbouncer(url)));
  return (await pooler).url(url);
};

export interface TestApp {
  /** http://127.0.0.1:<port> */
  base: string;
  /** The app's database. */
  url: string;
  /** Direct SQL on the same database, to check what the API answers against the rows. */
  sql: pg.Pool;
  /** SQL statements the app has sent so far. */
  statements: string[];
  get(path: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: any }>;
  graphql(query: string, variables?: Record<string, unknown>): Promise<{ status: number; body: any }>;
  /**
   * The app called in-process (no socket, no Node request), as an embedding server would. Such a
   * request has no client address: X-Forwarded-For is believed only from a trusted proxy's
   * socket, so every anonymous in-process request is charged to one "unknown" bucket (60 per
   * minute, the whole file's). Tests that send more send a key (the key's bucket is charged).
   */
  fetchInProcess(path: string, init?: RequestInit): Promise<Response>;
  /** fetchInProcess, answered like `get`: status, headers, and the body parsed as JSON when it is. */
  getInProcess(path: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  template?: 'seeded' | 'migrated';
  /** Environment for loadConfig, e.g. { ANON_RATE_LIMIT: '30' }. */
  env?: Record<string, string>;
  /** Use this database instead of a fresh copy (e.g. two instances on one database). */
  url?: string;
  /** The app's session connection (DATABASE_DIRECT_URL; default `url`), e.g. the server behind a pooler at `url`. */
  directUrl?: string;
  logger?: Logger;
  /** Overrides of the pool's timeouts (DB_TIMEOUTS). */
  dbTimeouts?: Partial<DbTimeouts>;
  /** The rate limits' clock (e.g. a manualClock's `now`); default the real one. */
  now?: () => number;
  /** The usage recorder the gate counts into (the test stops it); default the app's own. */
  usage?: UsageRecorder;
  /** The rate-limit store the gate counts in (the test closes it); default the app's own. */
  rateLimitStore?: RateLimitStore;
  /** With TEST_POOLER=1, `url` is on a working server of the test's own (a replication primary) that goes behind a pooler too. */
  pooled?: boolean;
  /** Other bounds for GraphQL WebSocket connections (shorter heartbeats, fewer sockets). */
  websocket?: Partial<WebSocketSettings>;
}

/** The real app over real HTTP on a fresh copy of the seeded database. */
export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const db = opts.url ? { url: opts.url, drop: async () => undefined } : await createTestDatabase(opts.template ?? 'seeded');
  const statements: string[] = [];
  const requestUrl = BEHIND_POOLER && !opts.directUrl ? await throughPooler(db.url, opts.pooled) : db.url;
  const directUrl = requestUrl !== db.url ? db.url : opts.directUrl;
  // The suite sends far more anonymous requests than one IP may (60/min). Requests come through
  // a trusted proxy (loopback), each with its own client address unless a test sets one.
  const config = loadConfig({ NODE_ENV: 'test', TRUSTED_PROXIES: 'loopback', ...opts.env });
  // Five connections unless a test sets DB_POOL_MAX (one that sends many statements at once).
  const prisma = createPrisma({ url: requestUrl, poolMax: opts.env?.DB_POOL_MAX ? config.DB_POOL_MAX : 5, timeouts: opts.dbTimeouts, onQuery: (sql) => statements.push(sql) });
  const logger = opts.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  noteAppStart();
  const app = await startApp({ prisma, databaseUrl: requestUrl, directUrl, logger, config, now: opts.now, usage: opts.usage, rateLimitStore: opts.rateLimitStore, websocket: opts.websocket });
  const server: Server = createHttpServer(app);
  attachWebSocket(server, app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sql = new pg.Pool({ connectionString: db.url, max: 2 });
  // pg-pool's end() resolves before its connections have finished closing, so the DROP … WITH
  // (FORCE) after it can still terminate one: the pool reports that as an 'error' event, which
  // unheard would crash the test process. The service's own pools are heard by Prisma's adapter.
  sql.on('error', () => undefined);

  let clientSeq = 0;
  const get = async (path: string, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    if (!headers.has('x-forwarded-for')) {
      const n = ++clientSeq;
      headers.set('x-forwarded-for', `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`);
    }
    return answer(await fetch(base + path, { ...init, headers }));
  };
  const fetchInProcess = async (path: string, init?: RequestInit) => app.fetch(new Request(base + path, init));

  return {
    base,
    url: db.url,
    sql,
    statements,
    get,
    graphql: async (query, variables) => {
      const res = await get('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      return { status: res.status, body: res.body };
    },
    fetchInProcess,
    getInProcess: async (path, init) => answer(await fetchInProcess(path, init)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.dispose();
      await prisma.$disconnect();
      await sql.end();
      await db.drop();
    },
  };
}

/** A response as the tests read it: status, headers, and the body parsed as JSON when it is. */
async function answer(res: Response): Promise<{ status: number; headers: Headers; body: any }> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the test sees the raw text
  }
  return { status: res.status, headers: res.headers, body };
}
