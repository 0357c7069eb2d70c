import type { IncomingMessage, ServerResponse } from 'node:http';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { tracingOf } from './config/config.js';
import type { ApiContext } from './context/context.js';
import { IDEMPOTENCY_HEADER } from './domain/orders/idempotency.js';
import { schema } from './domain/schema.js';
import { corsOptions } from './http/cors.js';
import { createGraphiQLSchemaHandler, graphiqlOptions, renderLocalGraphiQL, serveGraphiQLAsset } from './http/graphiql.js';
import { createGraphqlWebSocket, type GraphqlWebSocket, type WebSocketSettings } from './pipeline/websocket.js';
import { createDocsHandler } from './openapi/serve.js';
import { graphqlMethodNotAllowed } from './pipeline/graphql-errors.js';
import { graphqlHardening, graphqlLimitsFrom } from './pipeline/graphql-limits.js';
import { PERSISTED_PARAM_NAMES } from './pipeline/graphql-persisted.js';
import { requestPipeline } from './pipeline/pipeline.js';
import type { RequestState } from './pipeline/request-state.js';
import { createRouteNamer, createRouteTable } from './pipeline/route-table.js';
import type { GetEnveloped } from './rest/router.js';
import { restRoutes } from './rest/routes.js';
import { createServices, type ServiceDeps, type Services } from './services.js';
import { Response } from './shared/fetch-api.js';

/**
 * What the server hands Yoga with each request (the Node request and response; nothing when
 * Yoga is called in-process), and the request's state, which the plugins add to it.
 */
export interface ServerContext extends RequestState {
  req?: IncomingMessage;
  res?: ServerResponse;
}

/** The app, and its GraphQL WebSocket server (src/pipeline/websocket.ts: attachWebSocket puts it on an HTTP server). */
export type App = YogaServerInstance<ServerContext, ApiContext> & { readonly websocket: GraphqlWebSocket };

/**
 * What a process that serves requests starts: the service graph (src/services.ts) and the app over
 * it. `websocket`: other bounds for its WebSocket connections (tests shorten the times).
 */
export async function startApp(deps: ServiceDeps & { websocket?: Partial<WebSocketSettings> }): Promise<App> {
  return createApp(await createServices(deps), deps.websocket);
}

/**
 * Declares the whole HTTP surface over the built services: /graphql (with GraphiQL) and the REST
 * adapter under /api, both behind one gate (authentication, rate limits), and the routes beside
 * them, and GraphQL over WebSocket on /graphql (src/pipeline/websocket.ts). `app.dispose()` closes
 * the WebSocket connections, then the services.
 */
export function createApp(services: Services, websocketSettings?: Partial<WebSocketSettings>): App {
  const { config, logger, now, contexts, store, metrics, metricsText, maskError, clientIp, gate, dashboard, rest, health, readRouting, responseCache, persisted } = services;
  const routes = createRouteTable({
    health,
    metrics: async () => new Response(await metricsText(), { headers: { 'content-type': metrics.registry.contentType } }),
    docs: createDocsHandler(),
    graphiqlAsset: serveGraphiQLAsset,
    graphiqlSchema: createGraphiQLSchemaHandler(schema, !config.PERSISTED_ONLY && graphqlLimitsFrom(config).introspection),
    rest: (request, url, state) => rest.handle(request, url, state),
    graphqlMethod: graphqlMethodNotAllowed,
    landing: (request) => dashboard.landing(request),
    favicon: (request) => dashboard.favicon(request),
    dashboard: (request, url, state) => dashboard.handle(request, url, state),
  });
  const routeOf = createRouteNamer(routes, restRoutes.map((r) => r.path));
  const hardening = graphqlHardening(config);
  const observe = { logger, metrics, routeOf: (url: URL) => routeOf(url.pathname), tracing: tracingOf(config) !== undefined };
  const cors = corsOptions(config.CORS_ORIGINS);

  const yoga = createYoga<ServerContext, ApiContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // Off with trusted documents only: it could run nothing typed into it.
    graphiql: config.PERSISTED_ONLY ? false : graphiqlOptions(config.ANON_RATE_LIMIT),
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
        actor: initial.admission?.actor,
        anonymous: () => ({ kind: 'anonymous', ip: clientIp(initial.request, initial) }),
        requestId: initial.requestId,
        idempotencyKey: initial.request.headers.get(IDEMPOTENCY_HEADER),
      }),
    maskedErrors: { isDev: false, maskError },
    ...hardening.yogaOptions,
    cors,
    plugins: [
      // The request's stages, in their order (src/pipeline/pipeline.ts).
      ...requestPipeline({
        observe,
        routes,
        gate,
        hardening,
        persisted,
        schema,
        cost: { maxCost: config.GRAPHQL_MAX_COST, store, now, onRejected: (policy) => metrics.rateLimitRejections.inc({ policy }) },
        restDocuments: rest.documents,
        readRouting,
        responseCache,
      }),
      // Disposing of the app closes its WebSocket connections, then the services it was declared over.
      {
        onDispose: async () => {
          await websocket.dispose();
          await services.close();
        },
      },
    ],
  });
  // REST runs its routes' operations through the same plugins as /graphql's.
  rest.runThrough(yoga.getEnveloped as GetEnveloped);
  // GraphQL over WebSocket runs each operation as a request to /graphql, through every stage.
  const websocket = createGraphqlWebSocket({
    fetch: (request, state) => yoga.fetch(request, state),
    schema,
    gate,
    clientIp,
    allowedOrigins: cors.origin,
    observe,
    settings: websocketSettings,
  });
  return Object.assign(yoga, { websocket });
}

