import type { Plugin } from 'graphql-yoga';
import type { HttpRoute, RequestState } from './request-state.js';
import { AppError } from '../shared/errors.js';
import { errorResponse } from '../rest/envelope.js';
import { pathPattern, withoutTrailingSlash } from '../shared/paths.js';

// Every path the process answers, in one table. A request is matched here first (the route
// stage); a metered route's request passes the gate (./gate.ts) before its handler answers (the
// answer stage); a handler that returns nothing leaves the request to Yoga's GraphQL handling
// (only /graphql). Yoga answers two things before this table: CORS preflights (OPTIONS) and its
// own liveness probe at /health.

export interface RouteHandlers {
  health: (request: Request, url: URL) => Promise<Response | null>;
  metrics: () => Promise<Response>;
  docs: (request: Request, url: URL) => Promise<Response | null>;
  graphiqlAsset: (request: Request, url: URL) => Promise<Response | null>;
  /** The schema as GraphiQL loads it; null when introspection is off. */
  graphiqlSchema: (request: Request) => Promise<Response | null>;
  rest: (request: Request, url: URL, state: RequestState) => Promise<Response>;
  /** /graphql's refusal of a method it does not answer; undefined lets Yoga answer. */
  graphqlMethod: (request: Request) => Response | undefined;
  /** The landing page at /. */
  landing: (request: Request) => Response;
  /** The site's icon at /favicon.ico. */
  favicon: (request: Request) => Response;
  /** The developer dashboard (its pages, forms and assets). */
  dashboard: (request: Request, url: URL, state: RequestState) => Promise<Response>;
}

const notFound = (message: string) => new AppError('NOT_FOUND', message);
const outsideApi = () => notFound('Not found: the REST API is under /api, GraphQL at /graphql');

/**
 * GraphiQL's page is a browser's GET for HTML without a query (text, persisted hash or trusted
 * document id): it is free, like the docs. With trusted documents only GraphiQL is off, and such
 * a GET runs its document.
 */
const wantsGraphiQL = (request: Request, url: URL) =>
  request.method === 'GET' &&
  !['query', 'extensions', 'documentId'].some((name) => url.searchParams.has(name)) &&
  (request.headers.get('accept') ?? '').includes('text/html');

const isRead = (request: Request) => request.method === 'GET' || request.method === 'HEAD';

export function createRouteTable(h: RouteHandlers): HttpRoute[] {
  return [
    { path: '/healthz', metered: false, face: 'rest', handle: h.health },
    { path: '/readyz', metered: false, face: 'rest', handle: h.health },
    { path: '/metrics', metered: false, face: 'rest', handle: (request) => (request.method === 'GET' ? h.metrics() : errorResponse(outsideApi())) },
    // The API's own documentation is free to read, like health and metrics.
    { path: '/api/openapi.json', metered: false, face: 'rest', handle: h.docs },
    { path: '/api/docs/*', metered: false, face: 'rest', handle: async (request, url) => (await h.docs(request, url)) ?? errorResponse(notFound(`No endpoint at ${request.method} ${url.pathname.slice(0, 200)}`)) },
    { path: '/api/*', metered: true, face: 'rest', handle: h.rest },
    { path: '/graphql', metered: (request, url) => !wantsGraphiQL(request, url), face: 'graphql', handle: (request) => h.graphqlMethod(request) },
    { path: '/graphiql/schema.json', metered: false, face: 'rest', handle: async (request, url) => (await h.graphiqlSchema(request)) ?? h.graphiqlAsset(request, url) },
    { path: '/graphiql/*', metered: false, face: 'rest', handle: h.graphiqlAsset },
    // Pages for people: free, and never accepting an API key or charging its bucket. The
    // dashboard's session is read by the dashboard alone, so it is never accepted as a key.
    { path: '/', metered: false, face: 'rest', handle: (request) => (isRead(request) ? h.landing(request) : errorResponse(outsideApi())) },
    { path: '/favicon.ico', metered: false, face: 'rest', handle: (request) => (isRead(request) ? h.favicon(request) : errorResponse(outsideApi())) },
    { path: '/dashboard/*', metered: false, face: 'rest', handle: h.dashboard },
  ];
}

/** The route answering `pathname`: exact paths first, then the longest prefix. */
export function routeFor<R extends Pick<HttpRoute, 'path'>>(table: readonly R[], pathname: string): R | undefined {
  const path = withoutTrailingSlash(pathname);
  const exact = table.find((r) => r.path === path);
  if (exact) return exact;
  return table
    .filter((r) => r.path.endsWith('/*') && (path === r.path.slice(0, -2) || path.startsWith(r.path.slice(0, -1))))
    .sort((a, b) => b.path.length - a.path.length)[0];
}

/**
 * A low-cardinality name for a request path, for metrics and logs (never the raw path, which a
 * client could vary without end), read from the two tables so that a route is named once added:
 * a REST route's pattern (/api/products/:slug), `/api/other` for any other path under the REST
 * routes' prefix, elsewhere the path of the route answering it (a prefix route names its whole
 * subtree: /dashboard), and "other" where no route answers.
 */
export function createRouteNamer(table: readonly Pick<HttpRoute, 'path'>[], restPaths: readonly string[]) {
  const patterns = [...new Set(restPaths)].map((path) => ({ path, ...pathPattern(path) }));
  const restHome = new Set(restPaths.map((path) => routeFor(table, path)));
  return (pathname: string): string => {
    const path = withoutTrailingSlash(pathname);
    const route = routeFor(table, path);
    if (!route) return 'other';
    const name = route.path.endsWith('/*') ? route.path.slice(0, -2) : route.path;
    if (!restHome.has(route)) return name;
    return patterns.find((p) => p.pattern.test(path))?.path ?? `${name}/other`;
  };
}

/** Whether the gate meters this request of `route`. */
export const isMetered = (route: HttpRoute, request: Request, url: URL) =>
  typeof route.metered === 'function' ? route.metered(request, url) : route.metered;

/** The route stage: the route answering the path goes on the request's state (the one place it is written); any other path is a 404. */
export function useRoute(table: readonly HttpRoute[]): Plugin {
  return {
    onRequest({ url, serverContext, endResponse }) {
      const route = routeFor(table, url.pathname);
      if (!route) endResponse(errorResponse(outsideApi()));
      else (serverContext as RequestState).route = route;
    },
  };
}

/** The answer stage: the route's handler answers (REST, the dashboard, probes, docs); /graphql's leaves the request to Yoga. */
export function useRouteAnswer(): Plugin {
  return {
    async onRequest({ request, url, serverContext, endResponse }) {
      const state = serverContext as RequestState;
      const response = await state.route?.handle(request, url, state);
      if (response) endResponse(response);
    },
  };
}
