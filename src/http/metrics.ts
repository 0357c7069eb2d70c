import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { poolStats } from '../db/prisma.js';
import type { ReplicaStatus } from '../db/replicas.js';
import type { RateLimitStore } from '../ratelimit/store.js';

/** What the webhook outbox holds now: deliveries not yet made, and how long the oldest has waited. */
export interface OutboxBacklog {
  pending: number;
  oldestSeconds: number;
}

/**
 * The Prometheus registry served at /metrics; one per app, so tests and instances never mix.
 * With several worker processes /metrics serves every worker's registry merged
 * (src/http/cluster-metrics.ts): counters, histograms and the gauges counting things (hits,
 * errors, pool connections: each worker has its own pool) are summed; `aggregator` says how the
 * others are merged.
 */
export function createMetrics(
  store: RateLimitStore,
  pool: () => ReturnType<typeof poolStats>,
  outbox: () => Promise<OutboxBacklog>,
  /** The read replicas' state (DATABASE_READ_URLS), when there are any. */
  replicas?: () => ReplicaStatus[],
) {
  const registry = new Registry();
  const databaseReads = new Counter({
    name: 'db_reads_total',
    help: 'Read-only API operations (GraphQL queries, REST GETs) executed, by where they read: target primary or replica (and which replica)',
    labelNames: ['target', 'replica'] as const,
    registers: [registry],
  });
  const replicaFallbacks = new Counter({
    name: 'db_replica_fallbacks_total',
    help: 'Reads that failed on a read replica (gone between two checks) and were answered by the primary, by replica',
    labelNames: ['replica'] as const,
    registers: [registry],
  });
  if (replicas) {
    new Gauge({
      name: 'db_replica_up',
      help: 'Per read replica: 1 while reads are sent to it, 0 while it is skipped (down, not a standby, or lagging beyond DATABASE_REPLICA_MAX_LAG_SECONDS)',
      labelNames: ['replica', 'state'] as const,
      registers: [registry],
      // Every worker checks the same replicas: their view, not a sum.
      aggregator: 'min',
      collect() {
        this.reset();
        for (const r of replicas()) this.set({ replica: r.name, state: r.state }, r.used ? 1 : 0);
      },
    });
    new Gauge({
      name: 'db_replica_lag_seconds',
      help: 'Per read replica: how far its replay is behind the primary, in seconds, at the last check (absent while unknown)',
      labelNames: ['replica'] as const,
      registers: [registry],
      aggregator: 'max',
      collect() {
        this.reset();
        for (const r of replicas()) if (r.lagSeconds !== null) this.set({ replica: r.name }, r.lagSeconds);
      },
    });
  }
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
    help: 'Requests answered 429 by the request rate limit or the GraphQL cost budget, by bucket kind (cost-<plan> for the budget)',
    labelNames: ['policy'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'ratelimit_store_fallback',
    help: '1 while Redis is unreachable and limits are counted in process memory',
    aggregator: 'max',
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
  const webhookAttempts = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts made by this instance, by outcome (success, http_error, timeout, connection_error, refused_target)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const webhookDeliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook deliveries this instance finished, by outcome: delivered, or failed after the whole retry schedule',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  // Read from the database at each scrape: the backlog is every instance's, not this one's.
  new Gauge({
    name: 'webhook_outbox_backlog',
    help: 'Webhook deliveries not yet made (due or waiting for a retry), all instances',
    aggregator: 'max',
    registers: [registry],
    async collect() {
      const now = await outbox().catch(() => null);
      if (now) this.set(now.pending);
    },
  });
  new Gauge({
    name: 'webhook_outbox_oldest_seconds',
    help: 'How long the oldest webhook delivery not yet made has waited, in seconds',
    aggregator: 'max',
    registers: [registry],
    async collect() {
      const now = await outbox().catch(() => null);
      if (now) this.set(now.oldestSeconds);
    },
  });
  const responseCacheHits = new Counter({
    name: 'response_cache_hits_total',
    help: 'Reads this instance answered from the response cache, by face (rest, graphql)',
    labelNames: ['face'] as const,
    registers: [registry],
  });
  const responseCacheMisses = new Counter({
    name: 'response_cache_misses_total',
    help: 'Cacheable reads this instance found no valid answer for and answered afresh, by face (rest, graphql)',
    labelNames: ['face'] as const,
    registers: [registry],
  });
  const responseCacheInvalidations = new Counter({
    name: 'response_cache_invalidations_total',
    help: 'Kept answers this instance dropped as stale: a write changed something they read',
    registers: [registry],
  });
  const responseCacheStoreErrors = new Counter({
    name: 'response_cache_store_errors_total',
    help: 'Response cache reads and writes that failed in Redis (each read answered afresh instead)',
    registers: [registry],
  });
  const websocketConnections = new Gauge({
    name: 'graphql_ws_connections',
    help: 'GraphQL WebSocket connections open now (graphql-transport-ws on /graphql)',
    registers: [registry],
  });
  const websocketCloses = new Counter({
    name: 'graphql_ws_closes_total',
    help: 'GraphQL WebSocket connections closed, by close code (1000 normal, 1001 server shutting down, 1006 dropped, 4403 refused key, 4408 no connection_init, …)',
    labelNames: ['code'] as const,
    registers: [registry],
  });
  return { registry, websocketConnections, websocketCloses, databaseReads, replicaFallbacks, rateLimitRejections, httpRequests, httpDuration, webhookAttempts, webhookDeliveries, responseCacheHits, responseCacheMisses, responseCacheInvalidations, responseCacheStoreErrors };
}

export type Metrics = ReturnType<typeof createMetrics>;
