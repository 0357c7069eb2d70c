import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { authenticateKey } from './auth/keys.js';
import { createLastUsedRecorder } from './auth/last-used.js';
import type { Config } from './runtime/config.js';
import type { Caller } from './auth/identity.js';
import { createContextFactory, type Context } from './graphql/context.js';
import { createListTotals } from './modules/products/list-totals.js';
import { databaseUnavailable, poolStats, type PrismaClient } from './db/prisma.js';
import { AppError, isClientAbort } from './shared/errors.js';
import { createClientIpResolver } from './shared/client-ip.js';
import { useGate } from './http/gate.js';
import { useIdempotentReplayHeader } from './http/idempotent-replay.js';
import { requestIdOf, useObservability } from './http/observe.js';
import { createRouteNamer } from './rest/paths.js';
import { createMaskError, graphqlMethodNotAllowed, useContractErrorCodes } from './http/graphql-errors.js';
import { createOverloadLog } from './http/overload-log.js';
import { renderLocalGraphiQL, serveGraphiQLAsset } from './http/graphiql.js';
import { graphqlHardening } from './http/graphql-limits.js';
import { createHealthHandler } from './http/health.js';
import { createDocsHandler } from './openapi/serve.js';
import type { Logger } from './runtime/logger.js';
import { createMetrics } from './http/metrics.js';
import { createFieldRateLimiter } from './ratelimit/field-limits.js';
import { createRateLimitStore } from './ratelimit/create-store.js';
import { errorResponse } from './rest/envelope.js';
import { createRestRouter } from './rest/router.js';
import { restRoutes } from './rest/routes.js';
import { schema } from './modules/schema.js';

/** What the Node adapter hands Yoga with each request; absent when Yoga is called in-process. */
export interface ServerContext {
  req?: IncomingMessage;
  res?: ServerResponse;
}

export interface AppDeps {
  prisma: PrismaClient;
  /** The database behind `prisma`, for the readiness probe's migration check. */
  databaseUrl: string;
  logger: Logger;
  config: Config;
  /** Clock of the rate-limit windows, Unix ms (default Date.now); tests pass a manual one. */
  now?: () => number;
}

export type App = YogaServerInstance<ServerContext, Context>;

/**
 * Builds the whole HTTP surface: /graphql (with GraphiQL) and the REST adapter under /api, both
 * behind one gate (authentication, rate limits). `app.dispose()` releases what it holds.
 */
export async function createApp({ prisma, databaseUrl, logger, config, now }: AppDeps): Promise<App> {
  const requestIds = new WeakMap<Request, string>();
  const overload = createOverloadLog(logger);
  const logUnexpected = (error: unknown, request: Request) => {
    const where = { requestId: requestIds.get(request), method: request.method, path: new URL(request.url).pathname };
    // An unavailable database is expected now and then (answered 503): counted, not an error each time.
    if (databaseUnavailable(error)) overload.report(error);
    // A client that hung up mid-body is no failure of ours.
    else if (request.signal.aborted || isClientAbort(error)) logger.debug(where, 'client aborted the request');
    else logger.error({ err: error, ...where }, 'unexpected error');
  };

  const resolveIp = createClientIpResolver(config.TRUSTED_PROXIES);
  const clientIp = (request: Request, server: unknown) =>
    resolveIp((server as ServerContext).req?.socket.remoteAddress, request.headers.get('x-forwarded-for'));
  const store = createRateLimitStore({
    redisUrl: config.REDIS_URL,
    onEvent: (e) => (e.type === 'recovered' ? logger.info(e.message) : logger.error(e.message)),
    now,
  });
  // Start counting in Redis from the first request rather than in the fallback while it connects;
  // an unreachable Redis does not stop the start (the store says so and counts in memory).
  await store.waitUntilReady();
  const metrics = createMetrics(store, () => poolStats(prisma));
  const newContext = createContextFactory({
    prisma,
    fieldLimiter: createFieldRateLimiter(store, { now }),
    fieldLimits: { createOrder: { max: config.ORDER_CREATE_LIMIT, windowMs: 60_000, unit: 'orders' } },
    listTotals: createListTotals(prisma),
  });
  const lastUsed = createLastUsedRecorder(prisma, {
    onError: (error: unknown) => logger.error({ err: error }, 'recording key last use failed'),
  });

  // Context per request, shared by both interfaces; REST requests pass through here too.
  const callers = new WeakMap<Request, Caller>();
  const contexts = new WeakMap<Request, Context>();
  const contextFor = (request: Request, server: unknown) => {
    let ctx = contexts.get(request);
    if (!ctx) {
      const caller = callers.get(request) ?? { kind: 'anonymous' as const, ip: clientIp(request, server) };
      ctx = newContext(request, caller, requestIds.get(request) ?? requestIdOf(request));
      contexts.set(request, ctx);
    }
    return ctx;
  };
  const routeOf = createRouteNamer(
    restRoutes.map((r) => r.path),
    ['/graphql', '/metrics', '/healthz', '/readyz', '/api/openapi.json', '/api/docs'],
  );

  const rest = createRestRouter({ schema, routes: restRoutes, onUnexpectedError: logUnexpected });
  const hardening = graphqlHardening(config);
  const docs = createDocsHandler();
  const health = createHealthHandler({ prisma, databaseUrl, logger });

  return createYoga<ServerContext, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: { title: 'Marketplace API — GraphiQL', defaultQuery: DEFAULT_QUERY },
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
    context: ({ request, ...server }) => contextFor(request, server),
    maskedErrors: { isDev: false, maskError: createMaskError(logger, overload) },
    ...hardening.yogaOptions,
    cors: corsOptions(config.CORS_ORIGINS),
    plugins: [
      useObservability({ logger, metrics, routeOf: (_request, url) => routeOf(url.pathname), requestIds }),
      useGate(
        {
          authenticate: (key, ip) => authenticateKey(prisma, key, ip),
          clientIp,
          store,
          policy: { anonymousLimit: config.ANON_RATE_LIMIT },
          onKeyUsed: (keyId) => lastUsed.touch(keyId),
          onRejected: (policy) => metrics.rateLimitRejections.inc({ policy }),
          onKeyCheckFailed: logUnexpected,
        },
        callers,
      ),
      useContractErrorCodes(),
      useIdempotentReplayHeader(),
      // After the gate: a refused document is still a counted request with rate-limit headers.
      ...hardening.plugins,
      {
        async onRequest({ request, url, endResponse, serverContext }) {
          // Probes, metrics and documentation first: none of them is metered or authenticated.
          const unmetered = (await health(request, url)) ?? (await serveGraphiQLAsset(request, url)) ?? (await docs(request, url));
          if (unmetered) {
            endResponse(unmetered);
          } else if (url.pathname === '/metrics' && request.method === 'GET') {
            endResponse(new Response(await metrics.registry.metrics(), { headers: { 'content-type': metrics.registry.contentType } }));
          } else if (url.pathname === '/api' || url.pathname.startsWith('/api/')) {
            endResponse(await rest(request, url, () => contextFor(request, serverContext)));
          } else if (url.pathname === '/graphql') {
            const refused = graphqlMethodNotAllowed(request);
            if (refused) endResponse(refused);
          } else {
            endResponse(errorResponse(new AppError('NOT_FOUND', 'Not found: the REST API is under /api, GraphQL at /graphql')));
          }
        },
        async onDispose() {
          overload.close();
          await lastUsed.stop();
          await store.close();
        },
      },
    ],
  });
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
    methods: ['GET', 'HEAD', 'POST', 'OPTIONS'],
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
