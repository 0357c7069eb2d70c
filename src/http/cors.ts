import { restRoutes } from '../rest/routes.js';

/**
 * CORS for browser clients: the configured origins (default any: no cookies are involved, a key
 * is sent explicitly), the headers a client sends, and the ones it may read back.
 */
export function corsOptions(origins: string) {
  const list = origins.split(',').map((o) => o.trim()).filter(Boolean);
  return {
    origin: list.includes('*') ? ('*' as const) : list,
    credentials: false,
    // /graphql's and every REST route's (PATCH for stock and prices).
    methods: [...new Set(['GET', 'HEAD', 'POST', 'OPTIONS', ...restRoutes.map((r) => r.method)])],
    // traceparent and tracestate: a browser's OpenTelemetry continues its trace into the service's (W3C trace context).
    allowedHeaders: ['Content-Type', 'Accept', 'Authorization', 'X-API-Key', 'Idempotency-Key', 'X-Request-ID', 'If-None-Match', 'traceparent', 'tracestate'],
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
