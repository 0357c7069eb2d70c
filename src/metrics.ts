import { Counter, Gauge, Registry } from 'prom-client';
import type { RateLimitStore } from './ratelimit/store.js';

/** The Prometheus registry served at /metrics; one per app, so tests and instances never mix. */
export function createMetrics(store: RateLimitStore) {
  const registry = new Registry();
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
  return { registry, rateLimitRejections };
}

export type Metrics = ReturnType<typeof createMetrics>;
