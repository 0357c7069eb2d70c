import type { Plugin as YogaPlugin } from 'graphql-yoga';
import type { IncomingMessage } from 'node:http';
import type { Registry } from 'prom-client';
import { createKeyCache } from './auth/key-cache.js';
import { authenticateKey, type CheckedKey } from './auth/key-check.js';
import { createLastUsedRecorder } from './auth/last-used.js';
import { outboxBacklog, startWebhookWorker } from './background/webhook-worker.js';
import { createLiveHub } from './background/live-hub.js';
import { keyTag } from './cache/dependencies.js';
import { createChangeKnowledge, createRevisionSource, type ChangeKnowledge, type RevisionSource } from './cache/freshness.js';
import { createResponseCache } from './cache/response-cache.js';
import type { Config } from './config/config.js';
import type { Logger } from './config/logger.js';
import type { ContextFactory } from './context/context.js';
import { createContexts } from './contexts.js';
import { createDashboard } from './dashboard/router.js';
import { configuredTimeouts, createPrisma, poolStats, type PrismaClient } from './db/prisma.js';
import { createReplicas, type Replica, type Replicas } from './db/replicas.js';
import { schema } from './domain/schema.js';
import { createHealthHandler } from './http/health.js';
import { createMetrics, type Metrics } from './http/metrics.js';
import { createOverloadLog } from './http/overload-log.js';
import { createGate } from './pipeline/gate.js';
import { createMaskError } from './pipeline/graphql-errors.js';
import { createPersistedQueryStore, loadTrustedDocuments, useAutomaticPersistedQueries, useTrustedDocuments } from './pipeline/graphql-persisted.js';
import { createReadRouting } from './pipeline/read-routing.js';
import { createRateLimitStore } from './ratelimit/create-store.js';
import type { RateLimitStore } from './ratelimit/store.js';
import { createRestRouter } from './rest/router.js';
import { restRoutes } from './rest/routes.js';
import { createClientIpResolver, createHttpsDetector } from './shared/client-ip.js';
import { createUsageRecorder, type UsageRecorder } from './usage/recorder.js';

// The composition root: the service graph, built once from the configuration and what the process
// hands it (the database, the logger, the clock). src/app.ts declares the HTTP pipeline over it;
// the keys CLI builds only its context side (src/contexts.ts).

export interface ServiceDeps {
  prisma: PrismaClient;
  /** The database behind `prisma` (DATABASE_URL: the server, or a transaction pooler in front of it). */
  databaseUrl: string;
  /**
   * A session connection to the same database (DATABASE_DIRECT_URL; default `databaseUrl`), for
   * what a transaction pooler cannot carry: LISTEN (key changes, the outbox) and the readiness
   * probe's migration check.
   */
  directUrl?: string;
  logger: Logger;
  config: Config;
  /** Clock of the rate-limit windows and of the usage hours, Unix ms (default Date.now); tests pass a manual one. */
  now?: () => number;
  /**
   * Where the gate counts each key's requests per hour. Give one to read or flush it from outside
   * (the dashboard, a test); otherwise the services make their own. They stop only one they made:
   * whoever creates a recorder stops it, after closing the services.
   */
  usage?: UsageRecorder;
  /**
   * The rate-limit store the gate counts in. Give one to read the windows from outside (the
   * dashboard's currentWindow); otherwise the services make their own from config.REDIS_URL. As
   * with `usage`, they close only a store they made.
   */
  rateLimitStore?: RateLimitStore;
  /**
   * What /metrics answers, given this process's registry; default that registry's own text. A
   * worker of several (WEB_CONCURRENCY, src/cluster.ts) answers the whole instance's
   * (src/http/cluster-metrics.ts).
   */
  metricsText?: (registry: Registry) => () => Promise<string>;
  /** Aborted when the server begins to shut down: open subscription streams end cleanly then, before the drain. */
  stopping?: AbortSignal;
}

/** The deps with the session connection settled. */
type Settings = ServiceDeps & { directUrl: string };

export type Services = Awaited<ReturnType<typeof createServices>>;

/** Connections of the webhook worker's pool: a claim, and the outcomes of attempts being recorded. */
const WEBHOOK_POOL_MAX = 3;

/**
 * Builds every part a request passes through, and the processes beside the requests (the live
 * hub, the webhook worker), ready to serve. `close()` releases what they hold; the caller then
 * closes `prisma`, and a recorder or store it gave.
 */
export async function createServices(deps: ServiceDeps) {
  const settings: Settings = { ...deps, directUrl: deps.directUrl ?? deps.databaseUrl };
  const { prisma, directUrl, logger, config } = settings;
  // Before anything opens: a start missing its documents fails with nothing to release.
  const { plugin: persisted, close: closePersisted } = persistedDocuments(config, prisma, logger);
  const overload = createOverloadLog(logger);
  const maskError = createMaskError(logger, overload);
  const store = await openRateLimitStore(settings);
  const replicas = await openReplicas(settings);
  const metrics = createMetrics(store, () => poolStats(prisma), () => outboxBacklog(prisma), replicas && (() => replicas.status()));
  const reads = createReadSide(settings, metrics, replicas);
  const live = startLiveHub(settings);
  const { contexts, close: closeContexts } = createContexts(settings, { schema, store, live });
  const callers = createCallerSide(settings, { store, metrics, reads, contexts, maskError });
  // As with the store: keep keys from the first request, not only once the listener is up; and
  // subscriptions hear changes from the first request on.
  await Promise.all([callers.keyCache.ready, live.ready]);
  const webhooks = await startWebhooks(settings, contexts, metrics);
  const rest = createRestRouter({ schema, routes: restRoutes, maskError, responseCache: reads.responseCache, revisionFor: reads.readRouting?.revisionOf });
  const health = createHealthHandler({ prisma, databaseUrl: directUrl, logger, replicas: replicas && (() => replicas.status()) });

  // The subscription streams and the worker first, while what they use is still open; the
  // recorders flush last (the caller closes `prisma` after them).
  const close = async () => {
    overload.close();
    await live.close();
    await webhooks?.stop();
    await callers.keyCache.close();
    await reads.close();
    await callers.lastUsed.stop();
    await closeContexts();
    // The uses counted since the last flush are written, so eviction keeps them.
    await closePersisted();
    if (!deps.usage) await callers.usage.stop();
    if (!deps.rateLimitStore) await store.close();
  };
  const metricsText = deps.metricsText?.(metrics.registry) ?? (() => metrics.registry.metrics());
  const { readRouting, responseCache } = reads;
  const { clientIp, gate, dashboard } = callers;
  return { config, logger, now: deps.now, contexts, store, metrics, metricsText, maskError, clientIp, gate, dashboard, rest, health, readRouting, responseCache, persisted, close };
}

/** Trusted documents only, or automatic persisted queries (src/pipeline/graphql-persisted.ts). */
function persistedDocuments(config: Config, prisma: PrismaClient, logger: Logger): { plugin: YogaPlugin; close: () => Promise<void> } {
  if (config.PERSISTED_ONLY) {
    const manifest = config.PERSISTED_DOCUMENTS ?? failStart('PERSISTED_ONLY=true needs PERSISTED_DOCUMENTS (the manifest path)');
    return { plugin: useTrustedDocuments(loadTrustedDocuments(manifest)), close: async () => undefined };
  }
  const store = createPersistedQueryStore(prisma, config.PERSISTED_QUERIES_MAX, config.PERSISTED_USE_FLUSH_MS);
  return { plugin: useAutomaticPersistedQueries(store, logger), close: () => store.close() };
}

function failStart(message: string): never {
  throw new Error(message);
}

async function openRateLimitStore({ rateLimitStore, config, logger, now }: Settings): Promise<RateLimitStore> {
  const store =
    rateLimitStore ??
    createRateLimitStore({
      redisUrl: config.REDIS_URL,
      onEvent: (e) => (e.type === 'recovered' ? logger.info(e.message) : logger.error(e.message)),
      now,
    });
  // Start counting in Redis from the first request rather than in the fallback while it connects;
  // an unreachable Redis does not stop the start (the store says so and counts in memory).
  await store.waitUntilReady();
  return store;
}

/** Read replicas (DATABASE_READ_URLS): the catalogue's reads go to them (src/db/replicas.ts). */
async function openReplicas({ config, databaseUrl, directUrl, logger }: Settings): Promise<Replicas | undefined> {
  if (!config.DATABASE_READ_URLS) return undefined;
  const replicas = createReplicas({
    urls: config.DATABASE_READ_URLS,
    primaryUrl: databaseUrl,
    directUrl,
    maxLagSeconds: config.DATABASE_REPLICA_MAX_LAG_SECONDS,
    poolMax: config.DB_POOL_MAX,
    timeouts: configuredTimeouts(config),
    onEvent: (e) => logger[e.level](e.message),
  });
  // As with the key cache: replicas are used from the first request once their first check is in.
  await replicas.ready;
  return replicas;
}

/**
 * The database side of the reads: what changed since when (src/cache/freshness.ts), read once per
 * request that needs it, by the gate for a kept key and by the response cache, from the primary
 * or the request's replica; where a read goes; and the answers kept.
 */
function createReadSide({ prisma, databaseUrl, logger, config }: Settings, metrics: Metrics, replicas: Replicas | undefined) {
  const knowledge = createChangeKnowledge();
  const { connectMs, queryMs } = configuredTimeouts(config);
  const revisionOptions = { connectMs, queryMs, knowledge };
  const revision = createRevisionSource(databaseUrl, { ...revisionOptions, prune: { onError: (error) => logger.warn({ err: error }, 'pruning the response cache’s change log failed') } });
  const replicaRevisions = new Map<Replica, RevisionSource>(
    (config.RESPONSE_CACHE === 'on' ? (replicas?.replicas ?? []) : []).map((r) => [r, createRevisionSource(r.url, revisionOptions)]),
  );
  const readRouting =
    replicas &&
    createReadRouting({
      replicas,
      primary: prisma,
      revisions: replicaRevisions,
      onRead: (replica) => metrics.databaseReads.inc({ target: replica ? 'replica' : 'primary', replica: replica?.name ?? '' }),
      onFallback: (replica, error) => {
        metrics.replicaFallbacks.inc({ replica: replica.name });
        logger.warn({ err: error, replica: replica.name }, 'a read on a replica failed: answered by the primary');
      },
    });
  const responseCache = config.RESPONSE_CACHE === 'on' ? keepAnswers(config, metrics, revision, knowledge) : undefined;
  const close = async () => {
    await (responseCache ? responseCache.close() : revision.close());
    await Promise.all([...replicaRevisions.values()].map((r) => r.close()));
    await replicas?.close();
  };
  return { knowledge, revision, readRouting, responseCache, close };
}

function keepAnswers(config: Config, metrics: Metrics, revision: RevisionSource, knowledge: ChangeKnowledge) {
  return createResponseCache({
    revision,
    knowledge,
    maxBytes: config.RESPONSE_CACHE_MAX_BYTES,
    redisUrl: config.REDIS_URL,
    events: {
      hit: (face) => metrics.responseCacheHits.inc({ face }),
      miss: (face) => metrics.responseCacheMisses.inc({ face }),
      invalidated: (count) => metrics.responseCacheInvalidations.inc(count),
      storeError: () => metrics.responseCacheStoreErrors.inc(),
    },
  });
}

/** GraphQL subscriptions (src/domain/live/): the feed, ended before the drain once the server stops. */
function startLiveHub({ directUrl, prisma, config, logger, stopping }: Settings) {
  const live = createLiveHub({ databaseUrl: directUrl, prisma, redisUrl: config.REDIS_URL, perKey: config.SUBSCRIPTIONS_PER_KEY, connectMs: config.DB_CONNECT_TIMEOUT_MS, logger });
  stopping?.addEventListener('abort', () => live.drain(), { once: true });
  return live;
}

interface CallerParts {
  store: RateLimitStore;
  metrics: Metrics;
  reads: { knowledge: ChangeKnowledge; revision: RevisionSource };
  contexts: ContextFactory;
  maskError: (error: unknown) => Error;
}

/** The address a request came from: its Node socket's (none when Yoga is called in process). */
const peerOf = (server: unknown) => (server as { req?: IncomingMessage }).req?.socket.remoteAddress;

/** Who calls, and what is kept of them: the gate (keys, limits) and the dashboard (sessions). */
function createCallerSide(settings: Settings, { store, metrics, reads, contexts, maskError }: CallerParts) {
  const { prisma, config, now } = settings;
  const resolveIp = createClientIpResolver(config.TRUSTED_PROXIES);
  const clientIp = (request: Request, server: unknown) => resolveIp(peerOf(server), request.headers.get('x-forwarded-for'));
  const { lastUsed, usage } = recordKeyUse(settings);
  const keyCache = keepKeys(settings);
  const gate = createGate({
    authenticate: (key, ip, requestRevision) =>
      authenticateKey(prisma, key, ip, keyCache, { revision: requestRevision, unchanged: (id, readAt) => reads.knowledge.fresh([keyTag(id)], readAt) }),
    revision: reads.revision.current,
    clientIp,
    store,
    policy: { anonymousLimit: config.ANON_RATE_LIMIT, publishableVisitorLimit: config.PUBLISHABLE_VISITOR_LIMIT },
    onKeyUsed: (keyId) => lastUsed.touch(keyId),
    onKeyCounted: (keyId, limited) => usage.count(keyId, { limited }),
    onRejected: (policy) => metrics.rateLimitRejections.inc({ policy }),
    onKeyCheckFailed: (error) => maskError(error),
    now,
  });
  const httpsFrom = createHttpsDetector(config.TRUSTED_PROXIES);
  const dashboard = createDashboard({
    contexts,
    store,
    onKeyRevoked: (keyId) => keyCache.forgetId(keyId),
    flushCounts: async () => {
      // Both writes finish before the page reads, even when one of them fails.
      const failed = (await Promise.allSettled([usage.flush(), lastUsed.flush()])).find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
    },
    publicUrl: config.PUBLIC_URL,
    clientIp,
    isHttps: (request, server) => httpsFrom(peerOf(server), request.headers.get('x-forwarded-proto')),
  });
  return { clientIp, lastUsed, usage, keyCache, gate, dashboard };
}

/** When each key was last used, and its requests per hour (a recorder given from outside, or the services' own). */
function recordKeyUse({ prisma, logger, now, usage }: Settings) {
  const lastUsed = createLastUsedRecorder(prisma, {
    onError: (error: unknown) => logger.error({ err: error }, 'recording key last use failed'),
  });
  const counts =
    usage ??
    createUsageRecorder(prisma, {
      onError: (error: unknown) => logger.error({ err: error }, 'recording key usage failed'),
      now,
    });
  return { lastUsed, usage: counts };
}

/** Checked keys, kept until a change to them is heard (LISTEN on the session connection). */
function keepKeys({ directUrl, config, logger }: Settings) {
  return createKeyCache<CheckedKey>({
    databaseUrl: directUrl,
    maxAgeMs: config.KEY_CACHE_SECONDS * 1000,
    connectMs: config.DB_CONNECT_TIMEOUT_MS,
    onEvent: (e) => (e.type === 'listening' ? logger.info(e.message) : e.type === 'unheard' ? logger.error(e.message) : logger.warn(e.message)),
  });
}

/**
 * The webhook worker (WEBHOOK_WORKER), on a small pool of its own: deliveries never wait for, nor
 * hold, a request's connection. `stop()` ends it and closes its pool.
 */
async function startWebhooks({ config, databaseUrl, directUrl }: Settings, contexts: ContextFactory, metrics: Metrics) {
  if (!config.WEBHOOK_WORKER) return undefined;
  const webhookPrisma = createPrisma({ url: databaseUrl, poolMax: WEBHOOK_POOL_MAX, timeouts: configuredTimeouts(config) });
  const webhooks = startWebhookWorker({
    ctx: contexts.forSystem('webhook worker', webhookPrisma),
    databaseUrl: directUrl,
    metrics: { attempt: (outcome) => metrics.webhookAttempts.inc({ outcome }), finished: (outcome) => metrics.webhookDeliveries.inc({ outcome }) },
    retrySchedule: config.WEBHOOK_RETRY_SCHEDULE,
    timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
    connectMs: config.DB_CONNECT_TIMEOUT_MS,
  });
  // As with the key cache: events committed from the first request on wake the worker at once.
  await webhooks.ready;
  return {
    stop: async () => {
      await webhooks.stop();
      await webhookPrisma.$disconnect();
    },
  };
}
