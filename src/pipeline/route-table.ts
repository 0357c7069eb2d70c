import type { Plugin } from 'graphql-yoga';
import type { RequestState } from './request-state.js';
import { AppError } from '../shared/errors.js';
import { errorResponse } from '../rest/envelope.js';
import { pathPattern, withoutTrailingSlash } from '../shared/paths.js';
import type { ErrorShape, Gate } from './gate.js';

// Every path the process answers, in one table. A request is matched here first; a metered
// route's request passes the gate (authentication, rate limit) before its handler runs; a
// handler that returns nothing leaves the request to Yoga's GraphQL handling (only /graphql).
// Yoga answers two things before this table: CORS preflights (OPTIONS) and its own liveness
// probe at /health.

export interface HttpRoute {
  /** An exact path, or a prefix when it ends in `/*` (`/api/*` matches /api and below). */
  path: string;
  /** Charged to a rate-limit bucket, and answered with its headers. */
  metered: boolean | ((request: Request, url: URL) => boolean);
  /** The shape of this path's errors: the REST envelope, or a GraphQL response. */
  errors: ErrorShape;
  handle(request: Request, url: URL, state: RequestState): Promise<Response | null | undefined> | Response | null | undefined;
}

export interface RouteHandlers {
  health: (request: Request, url: URL) => Promise<Response | null>;
  metrics: () => Promise<Response>;
  docs: (request: Request, url: URL) => Promise<Response | null>;
  graphiqlAsset: (request: Request, url: URL) => Promise<Response | null>;
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
    { path: '/healthz', metered: false, errors: 'rest', handle: h.health },
    { path: '/readyz', metered: false, errors: 'rest', handle: h.health },
    { path: '/metrics', metered: false, errors: 'rest', handle: (request) => (request.method === 'GET' ? h.metrics() : errorResponse(outsideApi())) },
    // The API's own documentation is free to read, like health and metrics.
    { path: '/api/openapi.json', metered: false, errors: 'rest', handle: h.docs },
    { path: '/api/docs/*', metered: false, errors: 'rest', handle: async (request, url) => (await h.docs(request, url)) ?? errorResponse(notFound(`No endpoint at ${request.method} ${url.pathname.slice(0, 200)}`)) },
    { path: '/api/*', metered: true, errors: 'rest', handle: h.rest },
    { path: '/graphql', metered: (request, url) => !wantsGraphiQL(request, url), errors: 'graphql', handle: (request) => h.graphqlMethod(request) },
    { path: '/graphiql/*', metered: false, errors: 'rest', handle: h.graphiqlAsset },
    // Pages for people: free, and never accepting an API key or charging its bucket. The
    // dashboard's session is read by the dashboard alone, so it is never accepted as a key.
    { path: '/', metered: false, errors: 'rest', handle: (request) => (isRead(request) ? h.landing(request) : errorResponse(outsideApi())) },
    { path: '/favicon.ico', metered: false, errors: 'rest', handle: (request) => (isRead(request) ? h.favicon(request) : errorResponse(outsideApi())) },
    { path: '/dashboard/*', metered: false, errors: 'rest', handle: h.dashboard },
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

const isMetered = (route: HttpRoute, request: Request, url: URL) =>
  typeof route.metered === 'function' ? route.metered(request, url) : route.metered;

/** The table as a Yoga plugin: match, gate, answer; and the gate's headers on every response. */
export function useRouteTable(table: readonly HttpRoute[], gate: Gate): Plugin {
  return {
    async onRequest({ request, url, serverContext, endResponse }) {
      const state = serverContext as RequestState;
      const route = routeFor(table, url.pathname);
      if (!route) {
        endResponse(errorResponse(outsideApi()));
        return;
      }
      if (isMetered(route, request, url)) {
        const refused = await gate.admit(request, state, route.errors);
        if (refused) {
          endResponse(refused);
          return;
        }
      }
      const response = await route.handle(request, url, state);
      if (response) endResponse(response);
    },
    async onResponse({ request, response, serverContext }) {
      const url = new URL(request.url);
      const route = routeFor(table, url.pathname);
      // A preflight gets the headers of the request it announces (the gate peeks, never charges).
      if (route && isMetered(route, request, url)) {
        await gate.decorate(request, response, serverContext as RequestState);
      }
    },
  };
}
