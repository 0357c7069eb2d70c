import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db/migrate.js';
import { loadConfig } from '../src/config/config.js';
import { REPLICA_FIELDS } from '../src/db/replicas.js';
import { schema } from '../src/domain/schema.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { eventually as pollUntil } from './helpers/eventually.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';
import { HAS_PG15, PASSWORD, startReplication, type Replication } from './helpers/replication.js';
import { isKeyFlush, isChangePrune, sentSince } from './helpers/statements.js';

// DATABASE_READ_URLS with a real streaming replica: Debian's PostgreSQL 15 primary and a
// pg_basebackup -R replica of it (test/helpers/replication.ts), two instances of the app in this
// process (A and B) on them. Needs /usr/lib/postgresql/15/bin (package postgresql-15, installed by
// .ci/run); reported skipped without it.

const SHIP_TO = { fullName: 'Ana Pop', phone: '0700000000', address: 'Str. 1', city: 'Cluj-Napoca', county: 'Cluj', postalCode: '400001' };
const MAX_LAG = 5;

/** Replicas catch up on their own time: up to 20 s, read every 0.1 s. */
const eventually = <T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, ms = 20_000) => pollUntil(what, read, ok, ms, 100);

describe('the replica rule', () => {
  it('names only Query fields, and every Query field not named reads the primary (a new field must be placed)', () => {
    const fields = Object.keys(schema.getQueryType()!.getFields());
    for (const field of REPLICA_FIELDS) expect(fields).toContain(field);
    expect(fields.filter((f) => !REPLICA_FIELDS.has(f)).sort()).toEqual(
      [
        'me', 'node', 'nodes', 'order', 'orders', 'ordersConnection', 'priceRecord', 'priceRecords', 'stockRecord', 'stockRecords',
        'supplierOrder', 'supplierOrders', 'supplierOrdersConnection', 'webhookDeliveries', 'webhookEndpoint', 'webhookEndpoints',
      ].sort(),
    );
  });

  it('validates DATABASE_READ_URLS like DATABASE_URL, each, without echoing them, and needs DATABASE_URL', () => {
    const primary = 'postgresql://u@h/db';
    expect(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URLS: 'postgresql://u:p@r1/db, postgres://u@r2:5433/db' }).DATABASE_READ_URLS).toEqual([
      'postgresql://u:p@r1/db',
      'postgres://u@r2:5433/db',
    ]);
    expect(loadConfig({ DATABASE_URL: primary }).DATABASE_REPLICA_MAX_LAG_SECONDS).toBe(5);
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (error) {
        return String(error);
      }
      return 'accepted';
    };
    const bad = refused({ DATABASE_URL: primary, DATABASE_READ_URLS: 'postgresql://u:p@r1/db,mysql://u:hunter2@r2/db' });
    expect(bad).toMatch(/DATABASE_READ_URLS: URL 2: must be a postgresql:\/\/ or postgres:\/\/ URL/);
    expect(bad).not.toContain('hunter2');
    expect(refused({ DATABASE_READ_URLS: 'postgresql://u@r1/db' })).toMatch(/DATABASE_READ_URLS: set DATABASE_URL too/);
  });
});

describe.skipIf(!HAS_PG15)('with a streaming replica (Debian PostgreSQL 15)', () => {
  let repl: Replication;
  let a: TestApp;
  let b: TestApp;
  let primarySql: pg.Pool;
  let replicaSql: pg.Pool;
  let f: OrderFixture;
  let buyer: TestKey;
  let writer: TestKey;
  let slugs: string[];

  beforeAll(async () => {
    repl = await startReplication(async (url) => {
      await migrate(url);
      const { seedDatabase } = await import('../src/seed/seed.js');
      await seedDatabase(url, { seed: 42, products: 300 });
    });
    primarySql = new pg.Pool({ connectionString: repl.primary.url(), max: 2 });
    replicaSql = new pg.Pool({ connectionString: repl.replica.url(), max: 2 });
    primarySql.on('error', () => undefined);
    replicaSql.on('error', () => undefined);
    f = await makeOrderFixture(primarySql);
    buyer = await createTestKey(repl.primary.url(), { owner: 'buyer@replicas.example', scopes: ['read:orders', 'write:orders', 'read:products'] });
    writer = await createTestKey(repl.primary.url(), { owner: 'prices@replicas.example', scopes: ['write:products', 'read:prices', 'read:products'] });
    await primarySql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [writer.accountId, f.supplierId]);
    slugs = (await primarySql.query<{ slug: string }>(`SELECT slug FROM "Product" WHERE "isActive" ORDER BY id LIMIT 20`)).rows.map((r) => r.slug);
    const env = { DATABASE_URL: repl.primary.url(), DATABASE_READ_URLS: repl.replica.url(), DATABASE_REPLICA_MAX_LAG_SECONDS: String(MAX_LAG), ORDER_CREATE_LIMIT: '1000' };
    // Under TEST_POOLER=1 both behind a PgBouncer in front of the primary (the replica stays direct).
    a = await startTestApp({ url: repl.primary.url(), env, pooled: true });
    b = await startTestApp({ url: repl.primary.url(), env, pooled: true });
    // The replica has replayed the fixture.
    await eventually('replica caught up', () => replicaSql.query(`SELECT count(*)::int AS n FROM "SupplierMember"`).then((r) => r.rows[0].n), (n) => n === 1);
  }, 240_000);

  afterAll(async () => {
    await b?.close();
    await a?.close();
    await primarySql?.end();
    await replicaSql?.end();
    repl?.close();
  });

  const setApplyDelay = async (delay: string) => {
    await replicaSql.query(`ALTER SYSTEM SET recovery_min_apply_delay = '${delay}'`);
    await replicaSql.query('SELECT pg_reload_conf()');
  };
  const readyz = async (app: TestApp) => (await app.get('/readyz')).body as { status: string; replicas: { name: string; state: string; used: boolean; lagSeconds: number | null }[] };
  const metrics = async (app: TestApp) => (await fetch(`${app.base}/metrics`)).text();
  const readsOn = (text: string, target: 'primary' | 'replica') =>
    [...text.matchAll(/^db_reads_total\{([^}]*)\} (\d+)/gm)].filter((m) => m[1]!.includes(`target="${target}"`)).reduce((sum, m) => sum + Number(m[2]), 0);
  const statements = async (sql: pg.Pool) =>
    (await sql.query<{ query: string; calls: string }>(`SELECT query, calls::text FROM pg_stat_statements WHERE query NOT ILIKE '%pg_stat_statements%'`)).rows;
  const diff = (before: { query: string; calls: string }[], after: { query: string; calls: string }[]) => {
    const was = new Map(before.map((r) => [r.query, Number(r.calls)]));
    return after.map((r) => ({ query: r.query, calls: Number(r.calls) - (was.get(r.query) ?? 0) })).filter((r) => r.calls > 0);
  };
  const product = async (app: TestApp, slug: string, key: TestKey | null) =>
    (await app.get(`/api/products/${slug}`, key ? { headers: { 'x-api-key': key.key } } : undefined)).body.data as { price: number; stock: number };

  it('reports the replica in /readyz and /metrics, by host, port and database only, never the password', async () => {
    const body = await readyz(a);
    expect(body.status).toBe('ready');
    expect(body.replicas).toEqual([{ name: `127.0.0.1:${repl.replica.port}/marketplace`, state: 'ok', used: true, lagSeconds: expect.any(Number), replayLsn: expect.any(String) }]);
    const text = await metrics(a);
    expect(text).toMatch(new RegExp(`db_replica_up\\{replica="127.0.0.1:${repl.replica.port}/marketplace",state="ok"\\} 1`));
    expect(text).toMatch(/db_replica_lag_seconds\{replica="[^"]+"\} \d/);
    expect(JSON.stringify(body) + text).not.toContain(PASSWORD);
  });

  it('under a burst of catalogue GETs (REST and GraphQL, anonymous and by key) the primary sees no write and no catalogue read; the replica serves them', async () => {
    // The key is checked once (on the primary: a key check must see a revocation), then kept.
    expect((await a.get('/api/categories?limit=1', { headers: { 'x-api-key': buyer.key } })).status).toBe(200);
    const primaryBefore = await statements(primarySql);
    const burstStarted = Date.now();
    const replicaBefore = await statements(replicaSql);
    const readsBefore = readsOn(await metrics(a), 'replica');
    const sentBefore = a.statements.length;
    const requests: Promise<{ status: number }>[] = [];
    for (let page = 1; page <= 10; page++) requests.push(a.get(`/api/products?page=${page}&limit=5`));
    for (const slug of slugs.slice(0, 10)) requests.push(a.get(`/api/products/${slug}`), a.get(`/api/products/${slug}/reviews`));
    requests.push(a.get('/api/categories'), a.get('/api/suppliers'), a.get(`/api/suppliers/${f.supplierId}`), a.get('/api/products?search=masina'));
    for (let page = 1; page <= 5; page++) {
      requests.push(a.graphql(`{ products(page: ${page}, limit: 7) { items { name price supplier { companyName } category { name } } meta { total } } }`));
      requests.push(a.get(`/api/products?page=${page}&limit=9`, { headers: { 'x-api-key': buyer.key } }));
    }
    const answers = await Promise.all(requests);
    expect(answers.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    // The app's primary client sent nothing for the requests (its timed flushes are writes).
    expect(sentSince(a.statements, sentBefore)).toEqual([]);
    // The keys' timed writes, of keys used earlier, fall whenever their timers do (isKeyFlush), and
    // so does the response cache's prune of its change log (isChangePrune).
    const onPrimary = diff(primaryBefore, await statements(primarySql)).filter((s) => !isKeyFlush(s.query) && !isChangePrune(s.query));
    const burstSeconds = Math.ceil((Date.now() - burstStarted) / 1000);
    expect(onPrimary.filter((s) => /^\s*(insert|update|delete|merge)\b/i.test(s.query))).toEqual([]);
    // A kept key is checked against the primary's freshness read (a revocation must stop the very
    // next request, and a replica may lag): at most one such read per keyed request, none for the rest.
    // (the function's own statements are counted too).
    const freshness = onPrimary.filter((s) => /"cache_read"|FROM "DataRevision" x |FROM "CacheChange" c /.test(s.query));
    const reads = freshness.filter((s) => /"cache_read"/.test(s.query)).reduce((n, s) => n + s.calls, 0);
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThanOrEqual(5);
    expect(onPrimary.filter((s) => !freshness.includes(s) && /"(Product|Category|Supplier|Review|DataRevision|CacheChange|CatalogRevision|CatalogChange|ListTotal)"/.test(s.query))).toEqual([]);
    // What is left is each instance's once-a-second WAL position check: two a second, however long
    // the burst took on a loaded machine.
    expect(onPrimary.reduce((n, s) => n + s.calls, 0)).toBeLessThan(30 + 2 * burstSeconds);
    const onReplica = diff(replicaBefore, await statements(replicaSql));
    expect(onReplica.filter((s) => /"Product"/.test(s.query)).reduce((n, s) => n + s.calls, 0)).toBeGreaterThanOrEqual(20);
    expect(readsOn(await metrics(a), 'replica') - readsBefore).toBeGreaterThanOrEqual(requests.length);
  });

  it('an order created through one instance is read at once through another by the same key, with the replica 4 s behind', async () => {
    // Behind for longer than the reads below take on a loaded machine (the replica is checked to
    // still be behind after them), and within MAX_LAG, so that the replica is in use meanwhile.
    await setApplyDelay('4s');
    try {
      const before = await product(b, f.a.slug, buyer);
      const placed = await a.get('/api/orders', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': buyer.key },
        body: JSON.stringify({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 3 }], shippingAddress: SHIP_TO }),
      });
      expect(placed.status).toBe(201);
      const id = placed.body.data.id as string;
      // At once, on the other instance: the order, the list, and the stock the order took.
      const one = await b.get(`/api/orders/${id}`, { headers: { 'x-api-key': buyer.key } });
      expect(one.status).toBe(200);
      expect(one.body.data.id).toBe(id);
      const list = await b.get('/api/orders', { headers: { 'x-api-key': buyer.key } });
      expect(list.body.data.map((o: { id: string }) => o.id)).toContain(id);
      expect((await product(b, f.a.slug, buyer)).stock).toBe(before.stock - 3);
      const gql = await b.get('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': buyer.key },
        body: JSON.stringify({ query: `{ order(id: "${id}") { id } product(slug: "${f.a.slug}") { stock } }` }),
      });
      expect(gql.body.data).toEqual({ order: { id }, product: { stock: before.stock - 3 } });
      // The replica was really behind: an anonymous reader (no write of its own) may still see the old stock.
      const replicaStock = (await replicaSql.query(`SELECT stock FROM "Product" WHERE id = $1`, [f.a.id])).rows[0].stock;
      expect(replicaStock).toBe(before.stock);
    } finally {
      await setApplyDelay('0');
    }
  });

  it('a price changed by key K is read back at once by K; other callers see it once the replica has it, never later than the bound', async () => {
    await setApplyDelay('2s');
    try {
      const price = 123.45;
      const changed = await a.get(`/api/v1/prices/${f.b.id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', 'x-api-key': writer.key },
        body: JSON.stringify({ price }),
      });
      expect(changed.status).toBe(200);
      const started = Date.now();
      expect((await product(b, f.b.slug, writer)).price).toBe(price);
      expect((await product(a, f.b.slug, writer)).price).toBe(price);
      const gql = await b.get('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': writer.key },
        body: JSON.stringify({ query: `{ product(slug: "${f.b.slug}") { price } }` }),
      });
      expect(gql.body.data.product.price).toBe(price);
      await eventually('anonymous readers see the new price', () => product(b, f.b.slug, null).then((p) => p.price), (p) => p === price, (MAX_LAG + 2) * 1000);
      expect(Date.now() - started).toBeLessThan((MAX_LAG + 1) * 1000);
    } finally {
      await setApplyDelay('0');
    }
  });

  it('a replica lagging beyond the bound is skipped (reads go to the primary, /readyz and /metrics say so), then used again', async () => {
    // Lagging from MAX_LAG after the write until it is replayed: long enough for the reads below
    // on a loaded machine, which the replica catching up meanwhile would send back to it.
    await setApplyDelay(`${MAX_LAG + 25}s`);
    try {
      await primarySql.query(`UPDATE "Category" SET "updatedAt" = now() WHERE id = (SELECT id FROM "Category" ORDER BY id LIMIT 1)`);
      const lagging = await eventually('replica lagging', () => readyz(a), (r) => r.replicas[0]!.state === 'lagging', 15_000);
      expect(lagging.status).toBe('ready');
      expect(lagging.replicas[0]!.used).toBe(false);
      expect(lagging.replicas[0]!.lagSeconds).toBeGreaterThanOrEqual(MAX_LAG);
      expect(await metrics(a)).toMatch(/db_replica_up\{replica="[^"]+",state="lagging"\} 0/);
      const sent = a.statements.length;
      const primaryReads = readsOn(await metrics(a), 'primary');
      const res = await a.get('/api/products?page=2&limit=11');
      expect(res.status).toBe(200);
      expect(a.statements.length).toBeGreaterThan(sent);
      expect(readsOn(await metrics(a), 'primary')).toBe(primaryReads + 1);
    } finally {
      await setApplyDelay('0');
    }
    await eventually('replica used again', () => readyz(a), (r) => r.replicas[0]!.state === 'ok', 20_000);
  });

  it('a replica stopped: reads fall back to the primary, no request fails, /readyz stays ready and says so; restarted, it is used again', async () => {
    repl.replica.stop();
    try {
      // Straight away, before any check has noticed: the read fails over to the primary.
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await a.get(`/api/products?page=${i + 1}&limit=13`)).status, (await b.graphql(`{ categories(limit: ${i + 1}) { items { name } } }`)).status);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      const down = await eventually('replica down', () => readyz(a), (r) => r.replicas[0]!.state === 'down');
      expect(down.status).toBe('ready');
      expect(down.replicas[0]!.used).toBe(false);
      expect(await metrics(a)).toMatch(/db_replica_up\{replica="[^"]+",state="down"\} 0/);
      expect((await a.get('/api/categories')).status).toBe(200);
    } finally {
      repl.replica.start();
    }
    await eventually('replica used again', () => readyz(a), (r) => r.replicas[0]!.state === 'ok' && r.replicas[0]!.used, 30_000);
    const before = readsOn(await metrics(a), 'replica');
    expect((await a.get('/api/products?page=3&limit=17')).status).toBe(200);
    expect(readsOn(await metrics(a), 'replica')).toBe(before + 1);
  });
});
