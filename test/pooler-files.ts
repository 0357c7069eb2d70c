// The files `npm run test:pooler` runs a second time with every test app behind Debian's PgBouncer
// in transaction mode (TEST_POOLER=1, test/helpers/app.ts; vitest.pooler.config.ts): those whose
// subject is the database connection or a feature that depends on what a connection carries —
// transactions and row locks, transaction-local settings, LISTEN/NOTIFY, cancel requests. The
// rest of the suite sends its requests through the same pool and code, and runs once.
//
// Left out on purpose: test/pooler.test.ts and test/subscriptions-redis.test.ts start their own
// PgBouncer in every pass; files that start no app through test/helpers/app.ts (the CLI, server,
// cluster, shutdown, migrations and services-on-a-database files) are not changed by TEST_POOLER.
// A listed file must start its apps through startTestApp (test/unit/pooler-files.test.ts checks).

/** Path from the repository's root → why it runs behind the pooler. */
export const POOLER_FILES: Readonly<Record<string, string>> = {
  'test/orders.test.ts': 'transactions: an order, its stock taken under SELECT … FOR UPDATE and its idempotency claim in one transaction',
  'test/orders-concurrency.test.ts': 'transactions: concurrent orders queue on row locks and the pool, exactly one stock count wins',
  'test/order-lifecycle.test.ts': 'transactions: status changes under FOR UPDATE, racing changes leave one winner',
  'test/idempotent-replay.test.ts': 'idempotency: the first answer stored in the write\'s transaction and replayed',
  'test/stock-price-writes.test.ts': 'transactions: stock and price writes under FOR UPDATE, seen at once by a second instance',
  'test/response-cache.test.ts': 'freshness: the revision a trigger bumps once per transaction (set_config(…, true)), a deaf listener',
  'test/cache-dependencies.test.ts': 'freshness: triggers gather what a write changed in transaction-local settings (set_config(…, true))',
  'test/list-totals.test.ts': 'transactions: totals counted in a REPEATABLE READ snapshot, saved with a transaction-local setting',
  'test/search-pages.test.ts': 'transaction-local settings: the page\'s plan imposed with SET LOCAL inside its transaction',
  'test/subscriptions.test.ts': 'listeners and transactions: the live hub LISTENs on the direct connection for writes committed through the pooler; a stream\'s place is claimed under a transaction-level advisory lock',
  'test/key-cache.test.ts': 'listeners: key changes heard by LISTEN, last-use times flushed through the pool',
  'test/webhooks.test.ts': 'listeners and transactions: the outbox\'s NOTIFY on commit, deliveries claimed FOR UPDATE SKIP LOCKED',
  'test/key-check-faults.test.ts': 'the connection: pool exhausted, statements cancelled on the server through the pooler',
  'test/health.test.ts': 'the connection: readiness of the pooled and the direct connection',
  'test/replicas.test.ts': 'replicas: read-your-writes announced by NOTIFY with the WAL position, through a pooler in front of the primary',
};
