import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { eventually } from './helpers/eventually.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';
import { startRelay } from './helpers/pgbouncer.js';
import { HAS_REDIS_SERVER, startRedisServer, type RedisServer } from './helpers/redis.js';
import { as, sent } from './helpers/sent.js';

// The response cache as its users meet it, over real HTTP on a real database: a repeated read is
// answered without a statement, with the same bytes; the first read after any write — through
// the API, straight in the database, through another instance — answers the new state; one
// key's answer never reaches another key, of its account or another, nor the key itself once
// its scopes change; Redis shares answers between instances; RESPONSE_CACHE=off keeps nothing.

const SHIP_TO = { fullName: 'Ana Pop', phone: '0700000000', address: 'Str. 1', city: 'Cluj-Napoca', county: 'Cluj', postalCode: '400001' };
const NESTED = `query Nested($limit: Int) { products(limit: $limit) { items { id name price supplier { companyName } category { name } } meta { total } } }`;

let db: TestDatabase;
let a: TestApp;
let b: TestApp;
let f: OrderFixture;
let reader: TestKey;
let member: TestKey;

beforeAll(async () => {
  db = await createTestDatabase('seeded');
  // Two instances on one database, each with its own in-memory cache.
  a = await startTestApp({ url: db.url, env: { ORDER_CREATE_LIMIT: '1000' } });
  b = await startTestApp({ url: db.url, env: { ORDER_CREATE_LIMIT: '1000' } });
  f = await makeOrderFixture(a.sql);
  reader = await createTestKey(db.url, { owner: 'cache-reader@example.com', scopes: ['read:products', 'read:orders', 'write:orders', 'read:stock'] });
  member = await createTestKey(db.url, { owner: 'cache-clerk@supplier.example', scopes: ['read:orders', 'write:products', 'read:prices'] });
  await a.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [member.accountId, f.supplierId]);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await db?.drop();
});

const gql = (app: TestApp, key: TestKey | null, query: string, variables: Record<string, unknown> = {}) =>
  sent(app, '/graphql', as(key, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) }));

/** A counter of the app's /metrics, summed over the label values matching `labels`. */
async function counter(app: TestApp, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${app.base}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name) && line.includes(labels) && !line.startsWith('#'))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

describe('a repeated read', () => {
  it('is answered again without a statement, byte for byte, with the same ETag; a 304 to If-None-Match', async () => {
    const { rows } = await a.sql.query<{ categoryId: string }>(`SELECT "categoryId" FROM "Product" WHERE id = $1`, [f.a.id]);
    const categoryId = rows[0]!.categoryId;
    const path = `/api/products?limit=7&sortBy=price_asc&categoryId=${categoryId}`;
    const hitsBefore = await counter(a, 'response_cache_hits_total', 'face="rest"');
    const first = await sent(a, path);
    const again = await sent(a, path);
    expect(first.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(again.headers.get('cache-control')).toBe(first.headers.get('cache-control'));
    expect(again.statements).toBe(0);
    // The same query spelt in another order is the same request.
    const reordered = await sent(a, `/api/products?categoryId=${categoryId}&sortBy=price_asc&limit=7`);
    expect([reordered.text, reordered.statements]).toEqual([first.text, 0]);
    const conditional = await sent(a, path, { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect([conditional.status, conditional.text, conditional.statements]).toEqual([304, '', 0]);
    expect(await counter(a, 'response_cache_hits_total', 'face="rest"')).toBeGreaterThanOrEqual(hitsBefore + 3);
  });

  it('over GraphQL too, whatever the variables’ spelling of the same query, and not for a mutation', async () => {
    const first = await gql(a, null, NESTED, { limit: 5 });
    const again = await gql(a, null, NESTED, { limit: 5 });
    expect(JSON.parse(first.text).data.products.items).toHaveLength(5);
    // The same answer, but for the cost budget it reports (charged again: src/pipeline/graphql-cost-budget.ts).
    const withoutCost = (text: string) => ({ ...JSON.parse(text), extensions: undefined });
    expect([withoutCost(again.text), again.statements]).toEqual([withoutCost(first.text), 0]);
    expect(JSON.parse(again.text).extensions.cost.requested).toBe(JSON.parse(first.text).extensions.cost.requested);
    const other = await gql(a, null, NESTED, { limit: 6 });
    expect(JSON.parse(other.text).data.products.items).toHaveLength(6);
    expect(other.statements).toBeGreaterThan(0);
    expect(await counter(a, 'response_cache_hits_total', 'face="graphql"')).toBeGreaterThan(0);

    // Two identical orders are two orders, never a kept answer.
    const order = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }`;
    const input = { supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }], shippingAddress: SHIP_TO };
    const one = JSON.parse((await gql(a, reader, order, { input })).text);
    const two = JSON.parse((await gql(a, reader, order, { input })).text);
    expect(one.data.createOrder.id).not.toBe(two.data.createOrder.id);
  });
});

describe('never stale', () => {
  it('answers a price written through the API on the very next read, on this instance and on the other', async () => {
    const path = `/api/products/${f.b.slug}`;
    const query = `query($slug: String!) { product(slug: $slug) { price } }`;
    const before = JSON.parse((await sent(a, path)).text).data.price;
    await sent(b, path);
    await gql(a, null, query, { slug: f.b.slug });
    expect((await sent(a, path)).statements).toBe(0);

    const price = (Number(before) + 1.25).toFixed(2);
    const written = await sent(a, `/api/v1/prices/${f.b.id}`, as(member, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ price: Number(price) }) }));
    expect(written.status, written.text).toBe(200);
    expect(JSON.parse((await sent(a, path)).text).data.price).toBe(Number(price));
    expect(JSON.parse((await sent(b, path)).text).data.price).toBe(Number(price));
    expect(Number(JSON.parse((await gql(a, null, query, { slug: f.b.slug })).text).data.product.price)).toBe(Number(price));
  });

  it('answers a change made straight in the database (psql, another application) on the very next read', async () => {
    const path = `/api/products/${f.c.slug}`;
    await sent(a, path);
    expect((await sent(a, path)).statements).toBe(0);
    const invalidations = await counter(a, 'response_cache_invalidations_total');
    await a.sql.query(`UPDATE "Product" SET name = 'Renamed by hand' WHERE id = $1`, [f.c.id]);
    expect(JSON.parse((await sent(a, path)).text).data.name).toBe('Renamed by hand');
    expect(await counter(a, 'response_cache_invalidations_total')).toBeGreaterThan(invalidations);
  });

  it('answers an order placed on the other instance in the buyer’s very next list', async () => {
    const path = '/api/orders?limit=100';
    const count = () => sent(a, path, as(reader)).then((r) => JSON.parse(r.text).meta.total as number);
    const before = await count();
    expect((await sent(a, path, as(reader))).statements).toBe(0);
    const placed = await sent(b, '/api/orders', as(reader, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }], shippingAddress: SHIP_TO }) }));
    expect(placed.status, placed.text).toBe(201);
    expect(await count()).toBe(before + 1);
  });
});

describe('whose answer it is', () => {
  it('keeps one account’s orders from another, and a key’s answer from a key with other scopes', async () => {
    const other = await createTestKey(db.url, { owner: 'cache-other@example.com', scopes: ['read:orders', 'read:stock'] });
    const mine = await sent(a, '/api/orders?limit=5', as(reader));
    const theirs = await sent(a, '/api/orders?limit=5', as(other));
    expect(JSON.parse(mine.text).meta.total).toBeGreaterThan(0);
    expect(JSON.parse(theirs.text).meta.total).toBe(0);
    expect(theirs.statements).toBeGreaterThan(0);

    // The same account, another key without read:stock: refused, not answered from the first key's view.
    const stock = `/api/v1/stock?productId=${f.a.id}`;
    expect((await sent(a, stock, as(reader))).status).toBe(200);
    expect((await sent(a, stock, as(reader))).statements).toBe(0);
    const narrow = await createTestKey(db.url, { owner: 'cache-reader@example.com', scopes: ['read:orders'] });
    const refused = await sent(a, stock, as(narrow));
    expect(refused.status).toBe(403);
    // Anonymous callers share the catalogue's answers, never a key's.
    expect((await sent(a, stock)).status).toBe(401);

    // Two keys of one account with the same scopes: /api/me is each key's own view.
    const twin = await createTestKey(db.url, { owner: 'cache-reader@example.com', scopes: ['read:products', 'read:orders', 'write:orders', 'read:stock'] });
    const meOf = async (key: TestKey) => JSON.parse((await sent(a, '/api/me', as(key))).text).data;
    const first = await meOf(reader);
    expect(JSON.stringify(await meOf(reader))).toBe(JSON.stringify(first));
    expect(JSON.stringify(await meOf(twin))).not.toBe(JSON.stringify(first));
    expect(JSON.stringify(await meOf(twin))).toContain(twin.prefix);
  });

  it('refuses a key narrowed by a commit on its very next request, though its instance has not heard of the change', async () => {
    // The key's instance hears of key changes through a relay that can hold them back: the change
    // commits, the instance's key cache still holds the key as it was, and the notification has
    // not arrived. The request's freshness read (the one the response cache makes anyway) learns
    // that the key changed, so the key is read again and refused at once.
    const relay = await startRelay(db.url);
    const c = await startTestApp({ url: db.url, directUrl: relay.url(db.url) });
    try {
      const key = await createTestKey(db.url, { owner: 'cache-reader@example.com', scopes: ['read:orders'] });
      const orders = '/api/orders?limit=2';
      expect((await sent(c, orders, as(key))).status).toBe(200);
      expect((await sent(c, orders, as(key))).statements).toBe(0);
      relay.hold();
      await c.sql.query(`UPDATE "ApiKey" SET "scopes" = ARRAY['read:stock'] WHERE id = $1`, [key.id]);
      const unheard = await sent(c, orders, as(key));
      expect(unheard.status).toBe(403);
      expect(JSON.parse(unheard.text).error.code).toBe('FORBIDDEN');
      // And the other way: a scope granted is used at once, not shadowed by a kept refusal.
      await c.sql.query(`UPDATE "ApiKey" SET "scopes" = ARRAY['read:orders'] WHERE id = $1`, [key.id]);
      expect((await sent(c, orders, as(key))).status).toBe(200);
      relay.release();
    } finally {
      relay.release();
      await c.close();
      await relay.close();
    }
  });

  it('never keeps a webhook endpoint’s answers (its delivery log is written by the worker)', async () => {
    const hooks = await createTestKey(db.url, { owner: 'cache-reader@example.com', scopes: ['read:orders', 'write:webhooks'] });
    const lookups = async () => (await counter(a, 'response_cache_hits_total')) + (await counter(a, 'response_cache_misses_total'));
    const before = await lookups();
    await sent(a, '/api/webhooks', as(hooks));
    const again = await sent(a, '/api/webhooks', as(hooks));
    expect(again.statements).toBeGreaterThan(0);
    expect(await lookups()).toBe(before);
  });
});

describe('RESPONSE_CACHE_MAX_BYTES', () => {
  it('bounds the memory cache: the least recently used answer goes first', async () => {
    const small = await startTestApp({ url: db.url, env: { RESPONSE_CACHE_MAX_BYTES: String(1024 * 1024) } });
    try {
      // Pages of 100 products: about 100 KB of text each, 200 KB kept; 1 MiB holds five.
      const page = (n: number) => `/api/products?limit=100&page=${n}`;
      const first = await sent(small, page(1));
      expect(first.text.length).toBeGreaterThan(50_000);
      for (let n = 2; n <= 8; n++) await sent(small, page(n));
      expect((await sent(small, page(8))).statements).toBe(0);
      expect((await sent(small, page(1))).statements).toBeGreaterThan(0);
    } finally {
      await small.close();
    }
  });
});

describe('RESPONSE_CACHE=off', () => {
  it('keeps nothing: every read runs', async () => {
    const off = await startTestApp({ url: db.url, env: { RESPONSE_CACHE: 'off' } });
    try {
      await sent(off, '/api/categories');
      expect((await sent(off, '/api/categories')).statements).toBeGreaterThan(0);
      expect(await counter(off, 'response_cache_hits_total')).toBe(0);
    } finally {
      await off.close();
    }
  });
});

describe.skipIf(!HAS_REDIS_SERVER)('with Redis (REDIS_URL)', () => {
  let redis: RedisServer;
  let r1: TestApp;
  let r2: TestApp;
  beforeAll(async () => {
    redis = await startRedisServer();
    r1 = await startTestApp({ url: db.url, env: { REDIS_URL: redis.url } });
    r2 = await startTestApp({ url: db.url, env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await r1?.close();
    await r2?.close();
    await redis?.stop();
  });

  it('shares answers between instances, and a write still shows on the very next read on each', async () => {
    const path = `/api/products/${f.d.slug}`;
    const first = await sent(r1, path);
    const shared = await sent(r2, path);
    expect([shared.text, shared.statements]).toEqual([first.text, 0]);
    await r1.sql.query(`UPDATE "Product" SET name = 'Renamed for Redis' WHERE id = $1`, [f.d.id]);
    expect(JSON.parse((await sent(r2, path)).text).data.name).toBe('Renamed for Redis');
    expect(JSON.parse((await sent(r1, path)).text).data.name).toBe('Renamed for Redis');
  });

  it('answers afresh, never fails, when Redis goes away', async () => {
    await redis.stop();
    const path = `/api/products/${f.e.slug}`;
    const res = await sent(r1, path);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).data.slug).toBe(f.e.slug);
  });
});
