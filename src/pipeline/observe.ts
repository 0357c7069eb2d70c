import { randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import type { RequestState } from './request-state.js';
import { API_VERSION } from '../rest/envelope.js';
import type { Logger } from '../config/logger.js';
import type { Metrics } from '../http/metrics.js';
import { createRequestSpans } from './request-spans.js';

// Request ids, access logs, request metrics and common headers for every request the app answers;
// with tracing on, its span (./request-spans.ts).

/** Accepted from the client when short and plain; anything else is replaced by our own. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

export function requestIdOf(request: Request): string {
  const given = request.headers.get('x-request-id');
  return given !== null && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
}

export interface ObserveDeps {
  logger: Logger;
  metrics: Metrics;
  /** A low-cardinality name for the path: the route pattern, e.g. /api/products/:slug. */
  routeOf: (url: URL) => string;
  /** Tracing is on (OTEL_*, src/tracing/sdk.ts): each request gets its span, named by its route. */
  tracing?: boolean;
}

/** The first plugin: the request's id and arrival time go on its state (its server context). */
export function useObservability({ logger, metrics, routeOf, tracing }: ObserveDeps): Plugin {
  const spans = tracing ? createRequestSpans() : undefined;
  return {
    ...spans?.plugin,
    onRequest({ request, serverContext }) {
      const state = serverContext as RequestState;
      state.startedAt = process.hrtime.bigint();
      state.requestId = requestIdOf(request);
    },
    onResponse({ request, response, serverContext }) {
      const state = serverContext as RequestState;
      const requestId = state.requestId ?? requestIdOf(request);
      response.headers.set('x-request-id', requestId);
      response.headers.set('x-api-version', API_VERSION);
      // Yoga answers a disallowed origin with "null", which a sandboxed page's `Origin: null`
      // would match: say nothing instead.
      if (response.headers.get('access-control-allow-origin') === 'null') response.headers.delete('access-control-allow-origin');
      const seconds = state.startedAt === undefined ? 0 : Number(process.hrtime.bigint() - state.startedAt) / 1e9;
      const url = new URL(request.url);
      const route = routeOf(url);
      const labels = { route, method: request.method, status: String(response.status) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe({ route, method: request.method }, seconds);
      const traced = spans?.answered(request, route, response.status, requestId);
      // No query string and no headers in the log: they may carry search terms or keys.
      logger.info(
        { requestId, method: request.method, path: url.pathname.slice(0, 200), route, status: response.status, ms: Math.round(seconds * 1000), ...traced },
        'request',
      );
    },
  };
}
