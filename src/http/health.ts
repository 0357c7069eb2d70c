import { pendingMigrations } from '../db/migrate.js';
import type { PrismaClient } from '../db/prisma.js';
import type { ReplicaStatus } from '../db/replicas.js';
import type { Logger } from '../config/logger.js';
import { Response } from '../shared/fetch-api.js';

// Liveness and readiness for orchestrators and load balancers:
//
//   GET|HEAD /healthz  the process runs and its event loop answers: 200, no I/O at all, so a slow
//                      or lost database never gets a healthy process restarted.
//   GET|HEAD /readyz   the process can serve: the database answers `SELECT 1` and every migration
//                      in prisma/migrations is applied. 200, or 503 + Retry-After naming the
//                      failed check, so traffic is held back rather than the process killed.
//                      With read replicas, `replicas` lists each (host:port/database, state,
//                      whether used, lag): a skipped replica leaves the service ready.
//
// A probe must answer quickly and never hang, whatever the database does: the database check is
// bounded by `timeoutMs`, the whole probe by `deadlineMs`, and at most one query per check is ever
// outstanding (a database that stopped answering does not collect one hung query, and one
// pooled connection, per probe).
//
// The migration check runs only once the database has answered. pendingMigrations opens a
// connection of its own with no connect timeout: against a database that accepts connections
// and never answers, it would hang for good, and a shared check that never settles would keep
// the service unready after the database came back.

/** `unknown`: not checked, because the database did not answer. */
export type CheckStatus = 'ok' | 'failed' | 'timeout' | 'pending' | 'unknown';

export interface HealthDeps {
  prisma: PrismaClient;
  /**
   * A session connection to the database the app uses (DATABASE_DIRECT_URL): the migration check
   * opens its own short connection to it.
   */
  databaseUrl: string;
  /** Bound on the database's `SELECT 1`. Default 1000 ms. */
  timeoutMs?: number;
  /** Bound on the whole probe, the migration check included. Default 1400 ms. */
  deadlineMs?: number;
  /** Failed checks are logged (at warn) with their cause; the response only names the check. */
  logger?: Logger;
  /**
   * The read replicas (DATABASE_READ_URLS) as their last check found them: reported by /readyz,
   * never a reason to be unready (their reads go to the primary while they are skipped).
   */
  replicas?: () => ReplicaStatus[];
  /** Which migrations are not applied yet; defaults to src/db/migrate.ts on `databaseUrl`. */
  pendingMigrations?: () => Promise<string[]>;
}

export type HealthHandler = (request: Request, url: URL) => Promise<Response | null>;

const DEFAULT_TIMEOUT_MS = 1000;
const DEFAULT_DEADLINE_MS = 1400;

export function createHealthHandler(deps: HealthDeps): HealthHandler {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadlineMs = Math.max(deps.deadlineMs ?? DEFAULT_DEADLINE_MS, timeoutMs);
  const pending = deps.pendingMigrations ?? (() => pendingMigrations(deps.databaseUrl));

  // The query of each check still running, shared by every probe until it settles.
  let databaseQuery: Promise<unknown> | undefined;
  let migrationsQuery: Promise<string[]> | undefined;
  // Migrations are never un-applied by the running service, so once they are all in, the check
  // costs nothing more (pendingMigrations opens a connection of its own).
  let migrationsOk = false;

  const checkDatabase = async (): Promise<CheckStatus> => {
    databaseQuery ??= deps.prisma.$queryRaw`SELECT 1`.finally(() => (databaseQuery = undefined));
    const outcome = await bounded(databaseQuery, timeoutMs);
    if (outcome.kind !== 'value') report('database', outcome);
    return outcome.kind === 'value' ? 'ok' : outcome.kind;
  };

  const checkMigrations = async (ms: number): Promise<CheckStatus> => {
    if (migrationsOk) return 'ok';
    migrationsQuery ??= pending().finally(() => (migrationsQuery = undefined));
    const outcome = await bounded(migrationsQuery, ms);
    if (outcome.kind !== 'value') {
      report('migrations', outcome);
      return outcome.kind;
    }
    if (outcome.value.length > 0) {
      deps.logger?.warn({ check: 'migrations', pending: outcome.value }, 'not ready: migrations pending');
      return 'pending';
    }
    migrationsOk = true;
    return 'ok';
  };

  const report = (check: string, outcome: Failed) =>
    deps.logger?.warn(
      { check, outcome: outcome.kind, ...(outcome.kind === 'failed' ? { err: outcome.error } : {}) },
      `not ready: ${check} check ${outcome.kind === 'failed' ? 'failed' : 'timed out'}`,
    );

  return async (request, url) => {
    if (url.pathname !== '/healthz' && url.pathname !== '/readyz') return null;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return json(request, 405, { status: 'error', error: 'Method not allowed' }, { allow: 'GET, HEAD' });
    }
    if (url.pathname === '/healthz') return json(request, 200, { status: 'ok' });

    const started = performance.now();
    const database = await checkDatabase();
    // Usually a few milliseconds: the folder is read and one connection asks one question.
    const left = Math.max(0, deadlineMs - (performance.now() - started));
    const migrations = migrationsOk ? 'ok' : database === 'ok' ? await checkMigrations(left) : 'unknown';
    const checks = { database, migrations };
    const replicas = deps.replicas ? { replicas: deps.replicas() } : {};
    if (database === 'ok' && migrations === 'ok') return json(request, 200, { status: 'ready', checks, ...replicas });
    return json(request, 503, { status: 'not_ready', checks, ...replicas }, { 'retry-after': '1' });
  };
}

type Failed = { kind: 'failed'; error: unknown } | { kind: 'timeout' };
type Outcome<T> = { kind: 'value'; value: T } | Failed;

/** The promise's outcome, or `timeout` after `ms`; never rejects. */
function bounded<T>(promise: Promise<T>, ms: number): Promise<Outcome<T>> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ kind: 'timeout' }), ms);
    promise.then(
      (value) => resolve({ kind: 'value', value }),
      (error: unknown) => resolve({ kind: 'failed', error }),
    ).finally(() => clearTimeout(timer));
  });
}

function json(request: Request, status: number, body: unknown, headers: Record<string, string> = {}): Response {
  // Probes must see the state now, never a cached answer.
  const init = { status, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers } };
  return new Response(request.method === 'HEAD' ? null : JSON.stringify(body), init);
}
