import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { createResponseCache, type ResponseCache } from './cache/response-cache.js';
import { createChangeKnowledge, createRevisionSource, type RevisionSource } from './cache/freshness.js';
import { keyTag } from './cache/dependencies.js';
import { createReplicas, type Replica } from './db/replicas.js';
import { createReadRouting } from './pipeline/read-routing.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createKeyCache } from './auth/key-cache.js';
import { authenticateKey, type CheckedKey } from './auth/key-check.js';
import { createLastUsedRecorder } from './auth/last-used.js';
import { createPrisma, DB_TIMEOUTS, poolStats, type PrismaClient } from './db/prisma.js';
import { createContextFactory, type ApiContext } from './context/context.js';
import type { RequestState } from './pipeline/request-state.js';
import { IDEMPOTENCY_HEADER } from './domain/orders/idempotency.js';
import { createRepresentation } from './domain/representations.js';
import { createGate } from './pipeline/gate.js';
import { renderLocalGraphiQL, serveGraphiQLAsset } from './http/graphiql.js';
import { createMaskError, graphqlMethodNotAllowed, useContractErrorCodes } from './pipeline/graphql-errors.js';
import { graphqlHardening } from './pipeline/graphql-limits.js';
import { useGraphqlResponseCache } from './pipeline/graphql-response-cache.js';
import { useCostBudget } from './pipeline/graphql-cost-budget.js';
import { useGraphqlHttpCaching } from './pipeline/graphql-http-caching.js';
import { createPersistedQueryStore, loadTrustedDocuments, PERSISTED_PARAM_NAMES, useAutomaticPersistedQueries, useTrustedDocuments } from './pipeline/graphql-persisted.js';
import { createHealthHandler } from './http/health.js';
import { useIdempotentReplayHeader } from './pipeline/idempotent-replay.js';
import { createMetrics } from './http/metrics.js';
import type { Registry } from 'prom-client';
import { useObservability } from './pipeline/observe.js';
import { createOverloadLog } from './http/overload-log.js';
import { createRouteNamer, createRouteTable, useRouteTable } from './pipeline/route-table.js';
import { cursorSealSource } from './graphql/cursors.js';
import { createListTotals } from './domain/products/list-totals.js';
import { schema } from './domain/schema.js';
import { createDocsHandler } from './openapi/serve.js';
import { createFieldLimiter, createFieldRateLimiter } from './ratelimit/field-limits.js';
import { createRateLimitStore } from './ratelimit/create-store.js';
import type { RateLimitStore } from './ratelimit/store.js';
import { useCompiledRestQueries } from './rest/compiled.js';
import { createRestRouter, type GetEnveloped } from './rest/router.js';
import { createOutbox } from './domain/webhooks/outbox.js';
import { outboxBacklog, startWebhookWorker } from './background/webhook-worker.js';
import { createLiveHub } from './background/live-hub.js';
import { restRoutes } from './rest/routes.js';
import { webhookPolicyOf, type Config } from './config/config.js';
import type { Logger } from './config/logger.js';
import { createClientIpResolver, createHttpsDetector } from './shared/client-ip.js';
import { createDashboard } from './dashboard/router.js';
import { createUsageRecorder, type UsageRecorder } from './usage/recorder.js';
import { Response } from './shared/fetch-api.js';

/**
 * What the server hands Yoga with each request (the Node request and response; nothing when
 * Yoga is called in-process), and the request's state, which the plugins add to it.
 */
export interface ServerContext extends RequestState {
  req?: IncomingMessage;
  res?: ServerResponse;
}

export interface AppDeps {
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
   * (the dashboard, a test); otherwise the app makes its own. The app stops only one it made:
   * whoever creates a recorder stops it, after disposing of the app.
   */
  usage?: UsageRecorder;
  /**
   * The rate-limit store the gate counts in. Give one to read the windows from outside (the
   * dashboard's currentWindow); otherwise the app makes its own from config.REDIS_URL. As with
   * `usage`, the app closes only a store it made.
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

export type App = YogaServerInstance<ServerContext, ApiContext>;

/** Connections of the webhook worker's pool: a claim, and the outcomes of attempts being recorded. */
const WEBHOOK_POOL_MAX = 3;

/**
 * Builds the whole HTTP surface: /graphql (with GraphiQL) and the REST adapter under /api, both
 * behind one gate (authentication, rate limits). `app.dispose()` releases what it holds.
 */
export async function createApp({ prisma, databaseUrl, directUrl = databaseUrl, logger, config, now, ...injected }: AppDeps): Promise<App> {
  const overload = createOverloadLog(logger);
  const maskError = createMaskError(logger, overload);

  const resolveIp = createClientIpResolver(config.TRUSTED_PROXIES);
  const clientIp = (request: Request, server: unknown) =>
    resolveIp((server as ServerContext).req?.socket.remoteAddress, request.headers.get('x-forwarded-for'));
  const store =
    injected.rateLimitStore ??
    createRateLimitStore({
      redisUrl: config.REDIS_URL,
      onEvent: (e) => (e.type === 'recovered' ? logger.info(e.message) : logger.error(e.message)),
      now,
    });
  // Start counting in Redis from the first request rather than in the fallback while it connects;
  // an unreachable Redis does not stop the start (the store says so and counts in memory).
  await store.waitUntilReady();
  // Read replicas (DATABASE_READ_URLS): the catalogue's reads go to them (src/db/replicas.ts).
  const replicas = config.DATABASE_READ_URLS
    ? createReplicas({
        urls: config.DATABASE_READ_URLS,
        primaryUrl: databaseUrl,
        directUrl,
        maxLagSeconds: config.DATABASE_REPLICA_MAX_LAG_SECONDS,
        poolMax: config.DB_POOL_MAX,
        onEvent: (e) => logger[e.level](e.message),
      })
    : undefined;
  // As with the key cache: replicas are used from the first request once their first check is in.
  await replicas?.ready;
  const metrics = createMetrics(store, () => poolStats(prisma), () => outboxBacklog(prisma), replicas && (() => replicas.status()));
  const metricsText = injected.metricsText?.(metrics.registry) ?? (() => metrics.registry.metrics());
  // What changed since when (src/cache/freshness.ts): read once per request that needs it, by the
  // gate for a kept key and by the response cache, from the primary or the request's replica.
  const knowledge = createChangeKnowledge();
  const revisionOptions = { connectMs: DB_TIMEOUTS.connectMs, queryMs: DB_TIMEOUTS.queryMs, knowledge };
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
  // GraphQL subscriptions (src/domain/live/).
  const live = createLiveHub({ databaseUrl: directUrl, prisma, redisUrl: config.REDIS_URL, perKey: config.SUBSCRIPTIONS_PER_KEY, connectMs: DB_TIMEOUTS.connectMs, logger });
  injected.stopping?.addEventListener('abort', () => live.drain(), { once: true });
  const webhookPolicy = webhookPolicyOf(config);
  const listTotals = createListTotals(prisma, (error) => logger.error({ err: error }, 'saving list totals failed'));
  // The one context factory of every face this process serves (API, dashboard, webhook worker).
  const contexts = createContextFactory(
    { prisma, logger, webhookPolicy, now },
    {
      // An event's data is its resource's representation, read in the event's transaction as the
      // event's reader would be answered over the API.
      events: (factory) => createOutbox(createRepresentation(schema, factory.forEvent)),
      limitField: createFieldLimiter(createFieldRateLimiter(store, { now }), { createOrder: config.ORDER_CREATE_LIMIT }),
      listTotals,
      cursors: cursorSealSource(config.CURSOR_SECRETS, prisma),
      live,
    },
  );
  const lastUsed = createLastUsedRecorder(prisma, {
    onError: (error: unknown) => logger.error({ err: error }, 'recording key last use failed'),
  });
  const usage =
    injected.usage ??
    createUsageRecorder(prisma, {
      onError: (error: unknown) => logger.error({ err: error }, 'recording key usage failed'),
      now,
    });
  const keyCache = createKeyCache<CheckedKey>({
    databaseUrl: directUrl,
    maxAgeMs: config.KEY_CACHE_SECONDS * 1000,
    connectMs: DB_TIMEOUTS.connectMs,
    onEvent: (e) => (e.type === 'listening' ? logger.info(e.message) : e.type === 'unheard' ? logger.error(e.message) : logger.warn(e.message)),
  });
  // As with the store: keep keys from the first request, not only once the listener is up; and
  // subscriptions hear changes from the first request on.
  await Promise.all([keyCache.ready, live.ready]);
  const gate = createGate({
    authenticate: (key, ip, requestRevision) =>
      authenticateKey(prisma, key, ip, keyCache, { revision: requestRevision, unchanged: (id, readAt) => knowledge.fresh([keyTag(id)], readAt) }),
    revision: revision.current,
    clientIp,
    store,
    policy: { anonymousLimit: config.ANON_RATE_LIMIT },
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
    logger,
    clientIp,
    isHttps: (request, server) => httpsFrom((server as ServerContext).req?.socket.remoteAddress, request.headers.get('x-forwarded-proto')),
  });

  // The worker has a small pool of its own: deliveries never wait for, nor hold, a request's connection.
  const webhookPrisma = config.WEBHOOK_WORKER ? createPrisma({ url: databaseUrl, poolMax: WEBHOOK_POOL_MAX }) : undefined;
  const webhooks = webhookPrisma && startWebhookWorker({
    ctx: contexts.forSystem('webhook worker', webhookPrisma),
    databaseUrl: directUrl,
    metrics: { attempt: (outcome) => metrics.webhookAttempts.inc({ outcome }), finished: (outcome) => metrics.webhookDeliveries.inc({ outcome }) },
    retrySchedule: config.WEBHOOK_RETRY_SCHEDULE,
    timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
    connectMs: DB_TIMEOUTS.connectMs,
  });
  // As with the key cache: events committed from the first request on wake the worker at once.
  await webhooks?.ready;

  const responseCache: ResponseCache | undefined =
    config.RESPONSE_CACHE === 'on'
      ? createResponseCache({
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
        })
      : undefined;
  const rest = createRestRouter({ schema, routes: restRoutes, maskError, responseCache, revisionFor: readRouting?.revisionOf });
  const health = createHealthHandler({ prisma, databaseUrl: directUrl, logger, replicas: replicas && (() => replicas.status()) });
  const routes = createRouteTable({
    health,
    metrics: async () => new Response(await metricsText(), { headers: { 'content-type': metrics.registry.contentType } }),
    docs: createDocsHandler(),
    graphiqlAsset: serveGraphiQLAsset,
    rest: (request, url, state) => rest.handle(request, url, state),
    graphqlMethod: graphqlMethodNotAllowed,
    landing: (request) => dashboard.landing(request),
    favicon: (request) => dashboard.favicon(request),
    dashboard: (request, url, state) => dashboard.handle(request, url, state),
  });
  const routeOf = createRouteNamer(routes, restRoutes.map((r) => r.path));
  const hardening = graphqlHardening(config);
  // Trusted documents only, or automatic persisted queries (src/pipeline/graphql-persisted.ts).
  const persisted = config.PERSISTED_ONLY
    ? useTrustedDocuments(loadTrustedDocuments(config.PERSISTED_DOCUMENTS ?? failStart('PERSISTED_ONLY=true needs PERSISTED_DOCUMENTS (the manifest path)')))
    : useAutomaticPersistedQueries(createPersistedQueryStore(prisma, config.PERSISTED_QUERIES_MAX));

  return createYoga<ServerContext, ApiContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // Off with trusted documents only: it could run nothing typed into it.
    graphiql: config.PERSISTED_ONLY ? false : { title: 'Marketplace API — GraphiQL', defaultQuery: DEFAULT_QUERY },
    extraParamNames: PERSISTED_PARAM_NAMES,
    // GraphiQL from our own server, not a CDN: the playground works offline.
    renderGraphiQL: renderLocalGraphiQL,
    // Yoga reports the caller's mistakes (bad JSON, missing query) as errors; they are not ours.
    // Unexpected failures are logged by maskError below.
    logging: {
      debug: (...args) => logger.debug(args.map(String).join(' ')),
      info: (...args) => logger.debug(args.map(String).join(' ')),
      warn: (...args) => logger.debug(args.map(String).join(' ')),
      error: (...args) => logger.debug(args.map(String).join(' ')),
    },
    // The request's state (its server context) is the base of its context: Yoga extends it.
    // The face reads what services need of the request (the Idempotency-Key); the factory does the rest.
    context: (initial) =>
      contexts.forApi({
        actor: initial.actor,
        anonymous: () => ({ kind: 'anonymous', ip: clientIp(initial.request, initial) }),
        requestId: initial.requestId,
        idempotencyKey: initial.request.headers.get(IDEMPOTENCY_HEADER),
      }),
    maskedErrors: { isDev: false, maskError },
    ...hardening.yogaOptions,
    cors: corsOptions(config.CORS_ORIGINS),
    plugins: [
      useObservability({ logger, metrics, routeOf: (url) => routeOf(url.pathname) }),
      { onYogaInit: ({ yoga }) => rest.usePipeline(yoga.getEnveloped as GetEnveloped) },
      useRouteTable(routes, gate),
      useContractErrorCodes(),
      useCompiledRestQueries(schema, rest.documents),
      useIdempotentReplayHeader(),
      persisted,
      // After the gate: a refused document is still a counted request with rate-limit headers.
      ...hardening.plugins,
      // Before the response cache, so that its answers are marked and charged like executed ones.
      useGraphqlHttpCaching(schema),
      useCostBudget({ maxCost: config.GRAPHQL_MAX_COST, store, now, onRejected: (policy) => metrics.rateLimitRejections.inc({ policy }) }),
      // Before the response cache: the request's reads are routed, and its revision read, alike.
      ...(readRouting ? [readRouting.plugin] : []),
      // Last: a kept answer is looked up once the document has passed every rule above.
      ...(responseCache ? [useGraphqlResponseCache(responseCache, schema, readRouting?.revisionOf)] : []),
      {
        async onDispose() {
          overload.close();
          await live.close();
          if (webhooks) await webhooks.stop();
          await webhookPrisma?.$disconnect();
          await keyCache.close();
          await (responseCache ? responseCache.close() : revision.close());
          await Promise.all([...replicaRevisions.values()].map((r) => r.close()));
          await replicas?.close();
          await lastUsed.stop();
          await listTotals.close();
          if (!injected.usage) await usage.stop();
          if (!injected.rateLimitStore) await store.close();
        },
      },
    ],
  });
}

function failStart(message: string): never {
  throw new Error(message);
}

/**
 * CORS for browser clients: the configured origins (default any: no cookies are involved, a key
 * is sent explicitly), the headers a client sends, and the ones it may read back.
 */
function corsOptions(origins: string) {
  const list = origins.split(',').map((o) => o.trim()).filter(Boolean);
  return {
    origin: list.includes('*') ? '*' : list,
    credentials: false,
    // /graphql's and every REST route's (PATCH for stock and prices).
    methods: [...new Set(['GET', 'HEAD', 'POST', 'OPTIONS', ...restRoutes.map((r) => r.method)])],
    allowedHeaders: ['Content-Type', 'Accept', 'Authorization', 'X-API-Key', 'Idempotency-Key', 'X-Request-ID', 'If-None-Match'],
    exposedHeaders: [
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'RateLimit-Policy',
      'RateLimit',
      'Retry-After',
      'X-Request-ID',
      'X-API-Version',
      'ETag',
      'Idempotent-Replayed',
    ],
    maxAge: 600,
  };
}

const DEFAULT_QUERY = /* GraphQL */ `# The marketplace catalogue. Try the REST API too: GET /api/products
query FeaturedProducts {
  products(featured: true, limit: 5, sortBy: POPULAR) {
    items {
      name
      nameEn
      price
      supplier { companyName city verified }
      category { name }
    }
    meta { total totalPages }
  }
}
`;
