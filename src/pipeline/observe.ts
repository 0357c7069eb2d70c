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

/** The request's id: the client's X-Request-ID when it is short and plain (a string: a WebSocket handshake's), else one of ours. */
export function requestIdOf(request: Request | string | undefined): string {
  const given = typeof request === 'string' || request === undefined ? request : request.headers.get('x-request-id');
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
}

export interface ObserveDeps {
  logger: Logger;
  metrics: Metrics;
  /** A low-cardinality name for the path: the route pattern, e.g. /api/products/:slug. */
  routeOf: (url: URL) => string;
  /** Tracing is on (OTEL_*, src/tracing/sdk.ts): each request gets its span, named by its route. */
  tracing?: boolean;
}

/** One answered request, as the access log and the request metrics take it. */
export interface AnsweredRequest {
  requestId: string;
  method: string;
  /** The path, without the query string (it may carry search terms or keys). */
  path: string;
  /** The route pattern, for the metrics' labels. */
  route: string;
  status: number;
  seconds: number;
  /** Anything else the log line says (that it came over a WebSocket). */
  fields?: Record<string, unknown>;
}

/** Writes the access log line and the request metrics of an answered request (over HTTP, or a WebSocket's, src/pipeline/websocket.ts). */
export function recordRequest({ logger, metrics }: Pick<ObserveDeps, 'logger' | 'metrics'>, answered: AnsweredRequest): void {
  const { requestId, method, path, route, status, seconds, fields } = answered;
  metrics.httpRequests.inc({ route, method, status: String(status) });
  metrics.httpDuration.observe({ route, method }, seconds);
  // No query string and no headers in the log: they may carry search terms or keys.
  logger.info({ requestId, method, path: path.slice(0, 200), route, status, ms: Math.round(seconds * 1000), ...fields }, 'request');
}

/** The first plugin: the request's id and arrival time go on its state (its server context). */
export function useObservability(deps: ObserveDeps): Plugin {
  const spans = deps.tracing ? createRequestSpans() : undefined;
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
      const route = deps.routeOf(url);
      // The trace id goes in the log line of a traced request.
      const traced = spans?.answered(request, route, response.status, requestId);
      recordRequest(deps, {
        requestId,
        method: request.method,
        path: url.pathname,
        route,
        status: response.status,
        seconds,
        // An operation sent over a WebSocket is answered as a request too: its log line says so.
        fields: state.transport || traced ? { ...(state.transport ? { transport: state.transport } : {}), ...traced } : undefined,
      });
    },
  };
}
