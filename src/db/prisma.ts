import net from 'node:net';
import { PrismaPg } from '@prisma/adapter-pg';
import { GraphQLError } from 'graphql';
import pg from 'pg';
import { DB_CONNECT_TIMEOUT_DEFAULT_MS, DB_STATEMENT_TIMEOUT_DEFAULT_MS } from '../config/config.js';
import { serviceUnavailable, type AppError } from '../shared/errors.js';
import { PrismaClient } from '../generated/prisma/client.js';

export type { PrismaClient };

export interface PrismaOptions {
  url: string;
  poolMax: number;
  /** Called once per SQL statement; used for statement counts and metrics. */
  onQuery?: (sql: string, durationMs: number) => void;
  /** Overrides of DB_TIMEOUTS, e.g. from configuration. */
  timeouts?: Partial<DbTimeouts>;
}

export interface DbTimeouts {
  /** Opening a connection. A stopped server refuses at once; this bounds an unreachable host. */
  connectMs: number;
  /** Waiting for a free connection of the pool when all are busy. */
  checkoutMs: number;
  /**
   * A statement still running after this long is cancelled on the server (SQLSTATE 57014): the
   * client sends PostgreSQL's cancel request (see createPrisma for why not statement_timeout).
   */
  statementMs: number;
  /**
   * Client-side bound on one query, a little above statementMs: the server's cancel comes first
   * and keeps the connection; this one catches a server that stopped answering at all (half-open
   * socket), and the pool then drops that connection.
   */
  queryMs: number;
  /** An idle connection is closed after this long, so a broken socket does not linger in the pool. */
  idleMs: number;
  /** Every connection is replaced after this long, whatever happened to it. */
  maxLifetimeSeconds: number;
}

/**
 * Why these values: no request should hang on the database. A server that is down is answered at
 * once (connection refused) or after connectMs (unreachable host); a saturated pool sheds load
 * after checkoutMs instead of queueing without end; a statement is cancelled after statementMs,
 * so a one-statement request ends within about 5 s even when the database is stuck. Each of these
 * is SERVICE_UNAVAILABLE with Retry-After (see databaseUnavailable), never a 500, and the pool
 * opens fresh connections by itself when the server is back. connectMs and statementMs are settings
 * (DB_CONNECT_TIMEOUT_MS, DB_STATEMENT_TIMEOUT_MS: configuredTimeouts). checkoutMs stays above 1 s because
 * concurrent orders for one product legitimately queue for the pool (orders-concurrency test).
 */
export const DB_TIMEOUTS: Readonly<DbTimeouts> = Object.freeze({
  connectMs: DB_CONNECT_TIMEOUT_DEFAULT_MS,
  checkoutMs: 3_000,
  statementMs: DB_STATEMENT_TIMEOUT_DEFAULT_MS,
  queryMs: 5_000,
  idleMs: 10_000,
  maxLifetimeSeconds: 300,
});

/** The two an operator sets (config: DB_CONNECT_TIMEOUT_MS, DB_STATEMENT_TIMEOUT_MS). */
export interface DbTimeoutSettings {
  DB_CONNECT_TIMEOUT_MS: number;
  DB_STATEMENT_TIMEOUT_MS: number;
}

/**
 * DB_TIMEOUTS with the configured connect and statement timeouts: what every pool, listener and
 * check of the service is given, so one setting reaches all of them.
 */
export const configuredTimeouts = (settings: DbTimeoutSettings): DbTimeouts => ({
  ...DB_TIMEOUTS,
  connectMs: settings.DB_CONNECT_TIMEOUT_MS,
  statementMs: settings.DB_STATEMENT_TIMEOUT_MS,
  // Above the statement timeout, as createPrisma would derive it.
  queryMs: settings.DB_STATEMENT_TIMEOUT_MS + 1_000,
});

/** Seconds a client is told to wait (Retry-After) when the database is unavailable. */
export const DB_RETRY_AFTER_SECONDS = 5;

export function createPrisma({ url, poolMax, onQuery, timeouts }: PrismaOptions): PrismaClient {
  const t = { ...DB_TIMEOUTS, ...timeouts };
  // The client-side bound follows a changed statement timeout unless given: it must stay above it.
  if (timeouts?.statementMs !== undefined && timeouts.queryMs === undefined) t.queryMs = timeouts.statementMs + 1_000;
  // pg-pool uses one connectionTimeoutMillis both for opening a connection and for waiting for a
  // free one. A free one may reasonably take longer under load (orders queue for the pool), so
  // the pool gets checkoutMs and each new client its own, shorter, connectMs.
  //
  // The statement bound is not the statement_timeout startup parameter: DATABASE_URL may be a
  // transaction pooler, and PgBouncer refuses that parameter by default ("unsupported startup
  // parameter"), nor a session SET (a pooler hands the server connection to other clients). So
  // each client cancels its own statement after statementMs with PostgreSQL's cancel request,
  // which a pooler forwards to the server connection running it: the same 57014 on the server,
  // with no startup parameter, no session state and no extra round trip, direct or pooled.
  class Client extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: t.connectMs });
    }
    // Overloads of pg.Client#query are many; every form ends by calling back or settling.
    override query(...args: unknown[]): never {
      const [config] = args;
      // Submittable objects (cursors, streams) carry their own completion: left as they are.
      if (typeof config === 'object' && config !== null && typeof (config as { submit?: unknown }).submit === 'function') {
        return (super.query as (...a: unknown[]) => never)(...args);
      }
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const settle = () => {
        settled = true;
        clearTimeout(timer);
      };
      const last = args.length - 1;
      if (typeof args[last] === 'function') {
        const callback = args[last] as (...r: unknown[]) => void;
        args[last] = (...r: unknown[]) => {
          settle();
          callback(...r);
        };
      }
      const result = (super.query as (...a: unknown[]) => unknown)(...args);
      if (result && typeof (result as Promise<unknown>).then === 'function') (result as Promise<unknown>).then(settle, settle);
      if (!settled) timer = setTimeout(() => settled || cancelRunningStatement(this, t.connectMs), t.statementMs);
      return result as never;
    }
  }
  // Our own pool (rather than one the adapter makes) so its use can be reported: poolStats.
  const pool = new pg.Pool({
    connectionString: url,
    max: poolMax,
    Client,
    connectionTimeoutMillis: t.checkoutMs,
    query_timeout: t.queryMs,
    idleTimeoutMillis: t.idleMs,
    maxLifetimeSeconds: t.maxLifetimeSeconds,
    // Detects a peer that vanished without closing the socket on an otherwise idle connection.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle connection the server ends (a restart, a replica stopped, an administrator) is an
  // 'error' on the pool, which drops it; the next query opens a fresh one. Listened to here, not
  // only by the adapter once Prisma first connects: reads of our own (readDirect) may come first,
  // or alone (a replica serving catalogue reads), and an unheard 'error' would end the process.
  pool.on('error', () => undefined);
  const adapter = new PrismaPg(pool, { disposeExternalPool: true });
  let prisma: PrismaClient;
  if (onQuery) {
    const logging = new PrismaClient({ adapter, log: [{ emit: 'event', level: 'query' }] });
    logging.$on('query', (e) => onQuery(e.query, e.duration));
    prisma = logging;
  } else {
    prisma = new PrismaClient({ adapter });
  }
  pools.set(prisma, pool);
  if (onQuery) statementHooks.set(prisma, onQuery);
  return prisma;
}

const pools = new WeakMap<PrismaClient, pg.Pool>();
const statementHooks = new WeakMap<PrismaClient, NonNullable<PrismaOptions['onQuery']>>();

/**
 * PostgreSQL's text as the JS values Prisma's results hold, for the columns a direct read may
 * select (src/db/direct-reads.ts): timestamp(3) (Prisma's DateTime, stored in UTC) as a Date, bigint as a
 * BigInt; every other type as node-postgres reads it. Except numeric and timestamptz: as the
 * number and the ISO text the Decimal and DateTime scalars send (src/graphql/scalars.ts), since
 * a direct read's rows are only ever answered through the graph: a Prisma Decimal built per value,
 * to be printed and parsed back, was about 4 % of a product list's CPU, a Date about 4 %.
 */
const parseTimestampTz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (text: string) => Date;
/** "2026-11-28 13:52:26.1+00": a UTC session's text of a timestamptz, at most milliseconds, a four-digit year. */
const UTC_TEXT = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,3})?\+00$/;
/**
 * timestamptz as the DateTime scalar sends it (src/graphql/scalars.ts). The text a UTC session
 * sends is written as the ISO string Date#toISOString gives ("2026-11-28T13:52:26.100Z"), with no
 * Date parsed to be printed again; any other text (another time zone, microseconds, a year
 * beyond 9999 or BC, infinity) is a Date, read by node-postgres's own parser.
 */
export const timestampTz = (text: string): Date | string => {
  if (!UTC_TEXT.test(text)) return parseTimestampTz(text);
  // After "HH:MM:SS" (index 19): "+00", or "." and 1-3 digits then "+00".
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${text.slice(20, -3).padEnd(3, '0')}Z`;
};

const PRISMA_VALUES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === pg.types.builtins.TIMESTAMP) return (text: string) => new Date(`${text.replace(' ', 'T')}Z`);
    if (oid === pg.types.builtins.TIMESTAMPTZ) return timestampTz;
    if (oid === pg.types.builtins.NUMERIC) return Number;
    if (oid === pg.types.builtins.INT8) return (text: string) => BigInt(text);
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * Sends one read of our own on `client`'s pool, past Prisma, and answers its rows as arrays of
 * Prisma's values, decimals and timestamps as the graph sends them (PRISMA_VALUES), or null when
 * `client` is not one createPrisma made (a transaction's client, whose statements must stay on
 * its connection). The statement is reported
 * to the client's onQuery as Prisma's are. For hot reads whose Prisma cost is most of the
 * request's (a list page: src/db/direct-reads.ts); the pool's bounds and cancellation apply as to Prisma's.
 */
export async function readDirect(client: unknown, text: string, values: unknown[]): Promise<unknown[][] | null> {
  const pool = pools.get(client as PrismaClient);
  if (!pool) return null;
  const started = performance.now();
  const result = await pool.query<unknown[]>({ text, values, rowMode: 'array', types: PRISMA_VALUES });
  statementHooks.get(client as PrismaClient)?.(text, performance.now() - started);
  return result.rows;
}

/** PostgreSQL's CancelRequest code (protocol 3): 1234 << 16 | 5678. */
const CANCEL_REQUEST_CODE = 80877102;
/** The longest a cancel request's connection is kept open waiting for the server to close it. */
const CANCEL_LINGER_MS = 10_000;

/**
 * Asks the server (or the pooler, which passes it on) to cancel what `client` is running: a
 * CancelRequest on a new connection, identified by the key the server gave the client at
 * start-up. Best effort, as in libpq: a failure to send it leaves the client-side bound.
 */
function cancelRunningStatement(client: pg.Client, connectMs: number): void {
  const { processID, secretKey } = client as unknown as { processID: number | null; secretKey: number | null };
  if (processID === null || secretKey === null) return;
  const { host, port } = client;
  const socket = host.startsWith('/') ? net.connect(`${host}/.s.PGSQL.${port}`) : net.connect(port, host);
  socket.setTimeout(connectMs, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.on('connect', () => {
    const message = Buffer.alloc(16);
    message.writeInt32BE(16, 0);
    message.writeInt32BE(CANCEL_REQUEST_CODE, 4);
    message.writeInt32BE(processID, 8);
    message.writeInt32BE(secretKey, 12);
    // Then wait for the other side to close, as libpq does: PgBouncer 1.18 crashes when the
    // requester hangs up while it is still passing the request on.
    socket.setTimeout(CANCEL_LINGER_MS, () => socket.destroy());
    socket.on('end', () => socket.destroy());
    socket.resume();
    socket.write(message);
  });
}

/** Connections of a client made by createPrisma: open, idle, and requests waiting for one. */
export function poolStats(prisma: PrismaClient): { total: number; idle: number; waiting: number; max: number } | undefined {
  const pool = pools.get(prisma);
  return pool && { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max ?? 10 };
}

// ---------------------------------------------------------------------------------------------
// Telling "the database is unavailable" from any other failure

/** Prisma's codes for a database it cannot reach or a connection it lost. */
const PRISMA_CODES = new Set([
  'P1001', // can't reach database server
  'P1002', // database server reached but timed out
  'P1008', // operations timed out (socket timeout)
  'P1017', // server has closed the connection
  'P2024', // timed out fetching a new connection from the pool
  'P2037', // too many database connections opened
]);

/** Driver adapter error kinds (meta.driverAdapterError.cause.kind) with the same meaning. */
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);

/** SQLSTATEs: the server is going away, not accepting connections, or cancelled a slow statement. */
function unavailableSqlState(code: string): boolean {
  return (
    code.startsWith('08') || // connection exception
    code === '57P01' || // admin_shutdown
    code === '57P02' || // crash_shutdown
    code === '57P03' || // cannot_connect_now (starting up, shutting down, recovering)
    code === '57P05' || // idle_session_timeout
    code === '57014' || // query_canceled: our statement bound (we cancel nothing else) or statement_timeout
    code === '53300' || // too_many_connections
    code === '55P03' // lock_not_available (lock_timeout)
  );
}

/** Socket errors of Node and the DNS resolver. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);

/**
 * Messages of node-postgres and pg-pool for a lost or impossible connection and for its own
 * timeouts. The adapter passes these errors on unconverted (they carry no code).
 */
const DRIVER_MESSAGES = [
  /^Connection terminated/, // "… unexpectedly", "… due to connection timeout"
  /^timeout exceeded when trying to connect$/,
  /^timeout expired$/,
  /^Query read timeout$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  // Prisma's interactive transaction could not get a connection within its maxWait.
  /Unable to start a transaction in the given time/,
];

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/**
 * True when `error` — as thrown by Prisma, by the driver, or wrapped by GraphQL — means the
 * database could not be used right now (down, unreachable, restarting, saturated, too slow),
 * rather than that the request or the code is wrong. Walks the chain of wrappers.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number): boolean => {
    if (!isRecord(value) || depth > 8 || seen.has(value)) return false;
    seen.add(value);
    const code = typeof value.code === 'string' ? value.code : undefined;
    const kind = typeof value.kind === 'string' ? value.kind : undefined;
    const message = typeof value.message === 'string' ? value.message : '';
    if (code && (PRISMA_CODES.has(code) || SOCKET_CODES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && unavailableSqlState(code)))) return true;
    if (kind && ADAPTER_KINDS.has(kind)) return true;
    if (kind === 'postgres' && typeof value.originalCode === 'string' && unavailableSqlState(value.originalCode)) return true;
    // A GraphQLError's message is the wrapper's (and may quote the caller's input): only the
    // errors it wraps are looked at.
    if (message && !(value instanceof GraphQLError) && DRIVER_MESSAGES.some((pattern) => pattern.test(message))) return true;
    const meta = isRecord(value.meta) ? value.meta : undefined;
    return (
      visit(value.originalError, depth + 1) ||
      visit(value.cause, depth + 1) ||
      visit(meta?.driverAdapterError, depth + 1) ||
      (Array.isArray(value.errors) && value.errors.some((inner) => visit(inner, depth + 1)))
    );
  };
  return visit(error, 0);
}

/** The SERVICE_UNAVAILABLE error to answer for `error`, or undefined when it is something else. */
export function databaseUnavailable(error: unknown): AppError | undefined {
  if (!isDatabaseUnavailable(error)) return undefined;
  return serviceUnavailable('The database is temporarily unavailable; retry later', DB_RETRY_AFTER_SECONDS);
}
