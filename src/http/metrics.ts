import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { poolStats } from '../db/prisma.js';
import type { RateLimitStore } from '../ratelimit/store.js';

/** The Prometheus registry served at /metrics; one per app, so tests and instances never mix. */
export function createMetrics(store: RateLimitStore, pool: () => ReturnType<typeof poolStats>) {
  const registry = new Registry();
  const httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route pattern and method',
    labelNames: ['route', 'method'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const rateLimitRejections = new Counter({
    name: 'ratelimit_rejections_total',
    help: 'Requests answered 429 by the request rate limit, by bucket kind',
    labelNames: ['policy'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'ratelimit_store_fallback',
    help: '1 while Redis is unreachable and limits are counted in process memory',
    registers: [registry],
    collect() {
      this.set(store.usingFallback ? 1 : 0);
    },
  });
  new Gauge({
    name: 'ratelimit_store_fallback_hits',
    help: 'Hits decided in process memory because Redis failed, since start',
    registers: [registry],
    collect() {
      this.set(store.fallbackHits);
    },
  });
  new Gauge({
    name: 'ratelimit_store_redis_errors',
    help: 'Redis calls that failed, since start',
    registers: [registry],
    collect() {
      this.set(store.redisErrors);
    },
  });
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections by state (in_use, idle, waiting requests, max)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const stats = pool();
      if (!stats) return;
      this.set({ state: 'in_use' }, stats.total - stats.idle);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
      this.set({ state: 'max' }, stats.max);
    },
  });
  return { registry, rateLimitRejections, httpRequests, httpDuration };
}

export type Metrics = ReturnType<typeof createMetrics>;
