import cluster from 'node:cluster';
import net from 'node:net';
import type { App } from './app.js';
import { ConfigError, loadConfig, tracingOf, type Config } from './config/config.js';
import { DatabaseUrlError, openDatabase } from './db/database.js';
import { attachWebSocket } from './pipeline/websocket.js';
import { createHttpServer } from './pipeline/request-target.js';
import { createLogger, writeBesideLogs, type Logger } from './config/logger.js';
import { recordServerAddress } from './config/running-server.js';

// Process entry point: configuration, database, HTTP listener, and an orderly shutdown.
// Run as compiled JavaScript (`npm start` = node dist/server.js). With WEB_CONCURRENCY above 1
// the same program is the cluster's primary (start-up work once, then src/cluster.ts) and each of
// its workers (serveAsWorker).

const SHUTDOWN_GRACE_MS = 10_000;
/** Aborted as shutdown begins: the app ends its open subscription streams, which would otherwise hold the drain for the whole grace period. */
const shutdownBegun = new AbortController();

/** A start-up failure the operator can fix from the message alone: printed without a stack. */
class StartupError extends Error {}

async function main() {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL, config.NODE_ENV, { traceIds: tracingOf(config) !== undefined });
  // A worker of several (WEB_CONCURRENCY): the primary has done the start-up work below.
  if (cluster.isWorker) return serveAsWorker(config, logger);
  const single = config.WEB_CONCURRENCY === 1;
  // A port in use is reported before a database is started or a data directory created for it,
  // and the port stays held until the service (or its first worker) listens on it.
  const reserved = await reservePort(config);
  // The service's modules load while PostgreSQL starts: neither waits for the other. A primary
  // serves nothing itself: it needs only what migrates and seeds.
  const modules = loadServiceModules();
  modules.catch(() => undefined);
  const appModule = single ? import('./app.js') : undefined;
  appModule?.catch(() => undefined);
  const primaryModule = single ? undefined : import('./cluster.js');
  primaryModule?.catch(() => undefined);
  const db = await openDatabase(config, { log: (msg) => logger.info(msg) }).catch(async (error: unknown) => {
    await closeServer(reserved.server);
    throw error;
  });
  const { createPrisma, configuredTimeouts, migrate, MigrationError } = await modules;
  const prisma = createPrisma({ url: db.url, poolMax: single ? config.DB_POOL_MAX : 1, timeouts: configuredTimeouts(config) });
  let stopTracing = async (): Promise<void> => undefined;
  const closeData = async () => {
    await prisma.$disconnect();
    await db.close();
    await stopTracing();
  };

  let demoKey: DemoKey | undefined;
  let app: App | undefined;
  try {
    // Migrations hold an advisory lock for their whole run: a session, so the direct connection.
    const { applied } = await migrate(db.directUrl, { log: (msg) => logger.info(msg) });
    if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
    if (config.DEMO_DATA && (await prisma.product.count({ take: 1 })) === 0) {
      logger.info({ seed: config.SEED, products: config.SEED_PRODUCTS }, 'empty catalogue: seeding the demo data');
      const started = Date.now();
      const { seedDatabase, createApiKey, SELF_SERVICE_SCOPES, createContexts } = await loadDemoModules();
      await seedDatabase(db.directUrl, { seed: config.SEED, products: config.SEED_PRODUCTS });
      logger.info({ ms: Date.now() - started }, 'demo data seeded');
      // One Pro key with the self-service scopes: a newcomer can try every endpoint.
      const scopes = SELF_SERVICE_SCOPES;
      // The service acts for itself here, through the same factory as every face.
      const system = createContexts({ prisma, logger, config }).contexts.forSystem('demo data');
      const { key } = await createApiKey(system, { owner: DEMO_KEY_OWNER, plan: 'PRO', scopes, name: 'demo key (first start)' });
      demoKey = { key, owner: DEMO_KEY_OWNER, scopes };
    }
    if (appModule) stopTracing = await startTracingIfSet(config, logger);
    if (appModule) app = await (await appModule).startApp({ prisma, databaseUrl: db.url, directUrl: db.directUrl, logger, config, stopping: shutdownBegun.signal });
    await closeServer(reserved.server);
  } catch (error) {
    await closeServer(reserved.server);
    await closeData();
    // A migration history that does not match the code: the message says what to do.
    throw error instanceof MigrationError ? new StartupError(error.message) : error;
  }

  /** Once the service listens: where it can be reached, for `keys invite`, the log and the demo key. */
  const announce = async (port: number, fields: Record<string, unknown> = {}) => {
    const base = baseUrl(config.HOST, port);
    // Before the "listening" line: a command run on seeing it finds the address.
    const forget = await recordServerAddress(config.DATA_DIR, base, (error) =>
      logger.warn({ err: error }, 'could not record the listening address in DATA_DIR: `keys invite` links fall back to PUBLIC_URL or PORT'),
    );
    logger.info({ port, ...fields, rest: `${base}/api`, graphql: `${base}/graphql` }, 'marketplace API listening');
    if (demoKey) printDemoKey(logger, demoKey, base);
    return forget;
  };

  if (!app) {
    // The primary of several workers: they open their own pools on the database resolved here.
    await prisma.$disconnect();
    let forgetAddress: () => Promise<void> = async () => undefined;
    const { runPrimary } = await primaryModule!;
    await runPrimary({
      workers: config.WEB_CONCURRENCY,
      logger,
      databaseUrl: db.url,
      directUrl: db.directUrl,
      port: reserved.port,
      shareRateLimits: !config.REDIS_URL,
      onListening: async () => {
        forgetAddress = await announce(reserved.port, { workers: config.WEB_CONCURRENCY });
      },
      // The embedded PostgreSQL is stopped only now, after every worker has answered its last request.
      onStopped: async () => {
        await forgetAddress();
        await db.close();
      },
    }).catch((error: unknown) => {
      throw new StartupError(error instanceof Error ? error.message : String(error));
    });
    return;
  }

  const serving = await serve(app, { port: reserved.port, host: config.HOST, logger, closeData, stoppedMessage: 'stopped' });
  serving.beforeDispose = await announce(serving.port);
}

interface Serving {
  /** The port listened on. */
  port: number;
  /** Run at shutdown once the last request is answered, before the app is disposed of. */
  beforeDispose: () => Promise<void>;
}

/**
 * Listens on `port` and serves `app` until SIGTERM or SIGINT, then stops accepting, lets in-flight
 * requests finish (cutting idle keep-alive connections at once and every connection after the
 * grace period), disposes of the app, runs `closeData` and exits 0. The whole service does this
 * with WEB_CONCURRENCY=1; each worker does with more.
 */
async function serve(app: App, opts: { port: number; host: string; logger: Logger; closeData: () => Promise<void>; stoppedMessage: string }): Promise<Serving> {
  const { logger } = opts;
  const server = createHttpServer(app);
  attachWebSocket(server, app);
  const serving: Serving = { port: opts.port, beforeDispose: async () => undefined };
  let stopping = false;
  const shutdown = async (signal: string) => {
    // A second signal (npm relaying the Ctrl-C the terminal also sent to node) changes nothing.
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    shutdownBegun.abort();
    // Stop accepting, let in-flight requests finish, then cut idle keep-alive connections.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const timer = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    await closed;
    clearTimeout(timer);
    await serving.beforeDispose();
    await app.dispose();
    // The embedded PostgreSQL is stopped only now, after the last request has been answered.
    await opts.closeData();
    logger.info(opts.stoppedMessage);
    process.exit(0);
  };
  // Installed before the "listening" line: a Ctrl-C or SIGTERM sent on seeing it always meets them.
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  try {
    await listen(server, opts.port, opts.host);
  } catch (error) {
    stopping = true;
    await app.dispose();
    await opts.closeData();
    throw error;
  }
  const address = server.address();
  serving.port = typeof address === 'object' && address ? address.port : opts.port;
  return serving;
}

/**
 * A worker of several: the primary (src/cluster.ts) has migrated and seeded, resolved the
 * database and the port. Counts rate limits in the primary's store unless REDIS_URL is set, and
 * runs the webhook worker only as worker 1 (one per instance).
 */
async function serveAsWorker(config: Config, baseLogger: Logger) {
  const [{ startApp }, { createPrisma, configuredTimeouts }, { LISTENING, workerSettings }, { instanceMetrics }, { ClusterRateLimitStore }] = await Promise.all([
    import('./app.js'),
    import('./db/prisma.js'),
    import('./cluster.js'),
    import('./http/cluster-metrics.js'),
    import('./ratelimit/cluster-store.js'),
  ]);
  const { index, databaseUrl, directUrl } = workerSettings();
  const logger = baseLogger.child({ worker: index, pid: process.pid });
  const prisma = createPrisma({ url: databaseUrl, poolMax: config.DB_POOL_MAX, timeouts: configuredTimeouts(config) });
  const store = config.REDIS_URL ? undefined : new ClusterRateLimitStore();
  const stopTracing = await startTracingIfSet(config, logger);
  const closeData = async () => {
    await store?.close();
    await prisma.$disconnect();
    await stopTracing();
  };
  let app: App;
  try {
    app = await startApp({
      stopping: shutdownBegun.signal,
      prisma,
      databaseUrl,
      directUrl,
      logger,
      config: { ...config, WEBHOOK_WORKER: config.WEBHOOK_WORKER && index === 1 },
      rateLimitStore: store,
      metricsText: instanceMetrics,
    });
  } catch (error) {
    await closeData();
    throw error;
  }
  // PORT is the port the primary resolved.
  await serve(app, { port: config.PORT, host: config.HOST, logger, closeData, stoppedMessage: 'worker stopped' });
  process.send!(LISTENING);
}

/**
 * OpenTelemetry's SDK (src/tracing/sdk.ts) in a process that serves requests, when OTEL_* sets
 * an endpoint; not even loaded otherwise. Answers its shutdown, which sends the spans still
 * batched: run after the last request and the last statement.
 */
async function startTracingIfSet(config: Config, logger: Logger): Promise<() => Promise<void>> {
  const settings = tracingOf(config);
  if (!settings) return async () => undefined;
  const { startTracing } = await import('./tracing/sdk.js');
  const tracing = startTracing(settings, logger);
  // The collector's host only: its URL may carry a token.
  logger.info({ collector: new URL(settings.tracesUrl).host, service: settings.serviceName, sampler: settings.sampler }, 'tracing: spans are sent over OTLP');
  return () => tracing.shutdown();
}

/** What migrates the database and opens a pool on it, imported in parallel with starting it. */
async function loadServiceModules() {
  const [{ createPrisma, configuredTimeouts }, { migrate, MigrationError }] = await Promise.all([import('./db/prisma.js'), import('./db/migrate.js')]);
  return { createPrisma, configuredTimeouts, migrate, MigrationError };
}

/** Needed on a first start only: not loaded on the others. */
async function loadDemoModules() {
  const [{ seedDatabase }, { createApiKey }, { SELF_SERVICE_SCOPES }, { createContexts }] = await Promise.all([
    import('./seed/seed.js'),
    import('./accounts/api-keys.js'),
    import('./auth/scopes.js'),
    import('./contexts.js'),
  ]);
  return { seedDatabase, createApiKey, SELF_SERVICE_SCOPES, createContexts };
}

const DEMO_KEY_OWNER = 'buyer@example.com';

interface DemoKey {
  key: string;
  owner: string;
  scopes: readonly string[];
}

/** Printed once, to stdout, not logged: keys are stored hashed and never shown again. */
function printDemoKey(logger: Logger, { key, owner, scopes }: DemoKey, base: string) {
  writeBesideLogs(
    logger,
    `\nDemo API key for ${owner} (Pro plan; ${scopes.join(', ')}).\n` +
      `It is shown only this once; keys are stored hashed. Try:\n` +
      `  curl -H 'X-API-Key: ${key}' ${base}/api/orders\n\n`,
  );
}

/** The URL a client on this machine would use: a wildcard address is reached as localhost. */
function baseUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' ? 'localhost' : net.isIPv6(host) ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/**
 * Binds PORT (PORT=0: picks one) and holds it until the HTTP server takes it over. A client that
 * connects meanwhile is disconnected at once, as if nothing listened yet (and so that closing the
 * reservation does not wait for it).
 */
async function reservePort(config: Config): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer({ pauseOnConnect: true }, (socket) => socket.destroy());
  await listen(server, config.PORT, config.HOST);
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : config.PORT };
}

function listen(server: net.Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(listenError(error, port, host));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function listenError(error: NodeJS.ErrnoException, port: number, host: string): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return new StartupError(`PORT ${port} is already in use on ${host}: stop what uses it, or set PORT to another port`);
    case 'EACCES':
      return new StartupError(`not allowed to listen on port ${port} on ${host}: choose a PORT above 1023, or run with the right to bind it`);
    case 'EADDRNOTAVAIL':
      return new StartupError(`HOST ${host} is not an address of this machine: set one of its addresses, or 0.0.0.0 for all`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(`HOST ${host} does not resolve to an address`);
    default:
      return error;
  }
}

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
}

main().catch((error: unknown) => {
  // A configuration or start-up failure: say what, briefly, without a stack for expected cases.
  const expected = error instanceof ConfigError || error instanceof StartupError || error instanceof DatabaseUrlError;
  const message = expected ? error.message : error instanceof Error ? error.stack ?? error.message : String(error);
  process.stderr.write(`marketplace API failed to start: ${message}\n`);
  process.exit(1);
});
