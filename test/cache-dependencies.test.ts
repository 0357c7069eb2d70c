import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';
import { startRelay } from './helpers/pgbouncer.js';
import { HAS_REDIS_SERVER, startRedisServer, type RedisServer } from './helpers/redis.js';
import { as, sent } from './helpers/sent.js';

// The response cache invalidates only what a write changed (src/cache/dependencies.ts), over real
// HTTP on a real database: an order makes stale the answers that show the products it took and
// its accounts' own views, nothing else; a profile change only its account's; a write that changes
// nothing, nothing; writes in plain SQL count as any other. A key revoked, expired, narrowed or
// moved to another plan by a commit is refused by the very next request, though its instance has
// not heard of the change. With Redis the cache stays within its bound, however the data moves.

const SHIP_TO = { fullName: 'Ana Pop', phone: '0700000000', address: 'Str. 1', city: 'Cluj-Napoca', county: 'Cluj', postalCode: '400001' };

let db: TestDatabase;
let app: TestApp;
let f: OrderFixture;
let buyer: TestKey;
let other: TestKey;

beforeAll(async () => {
  db = await createTestDatabase('seeded');
  app = await startTestApp({ url: db.url, env: { ORDER_CREATE_LIMIT: '1000' } });
  f = await makeOrderFixture(app.sql);
  buyer = await createTestKey(db.url, { owner: 'deps-buyer@example.com', scopes: ['read:products', 'read:orders', 'write:orders'] });
  other = await createTestKey(db.url, { owner: 'deps-other@example.com', scopes: ['read:products', 'read:orders', 'write:orders'] });
});
afterAll(async () => {
  await app?.close();
  await db?.drop();
});

const gql = (on: TestApp, key: TestKey | null, query: string, variables: Record<string, unknown> = {}) =>
  sent(on, '/graphql', as(key, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) }));

const revision = async () => Number((await app.sql.query<{ revision: string }>(`SELECT "revision"::text AS revision FROM "DataRevision"`)).rows[0]!.revision);

async function order(key: TestKey, productId: string) {
  const placed = await sent(app, '/api/orders', as(key, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ supplierId: f.supplierId, items: [{ productId, quantity: 1 }], shippingAddress: SHIP_TO }) }));
  expect(placed.status, placed.text).toBe(201);
}

/** Reads every path, then reads it again: the second read must be a kept answer. */
async function warm(paths: [TestKey | null, string][]) {
  for (const [key, path] of paths) expect((await sent(app, path, as(key))).status, path).toBe(200);
  for (const [key, path] of paths) expect((await sent(app, path, as(key))).statements, `${path} is kept`).toBe(0);
}

describe('an order', () => {
  it('makes stale only the answers that show the products it took, and its accounts’ own views', async () => {
    const ordered = `/api/products/${f.a.slug}`;
    const listWith = `/api/products?supplierId=${f.supplierId}&limit=100`;
    const untouched: [TestKey | null, string][] = [
      [null, `/api/products/${f.b.slug}`],
      [null, `/api/products?supplierId=${f.otherSupplierId}&limit=20`],
      [null, '/api/categories'],
      [null, '/api/categories?includeProducts=true'],
      [null, '/api/suppliers'],
      [null, `/api/suppliers/${f.supplierId}`],
      [null, `/api/products/${f.a.slug}/reviews`],
      [other, '/api/orders'],
      [other, '/api/me'],
    ];
    await warm([[null, ordered], [null, listWith], [buyer, '/api/orders'], ...untouched]);
    const stockOf = async (path: string) => JSON.parse((await sent(app, path)).text).data;
    const before = (await stockOf(ordered)).stock as number;

    await order(buyer, f.a.id);

    // The ordered product's page and the list that shows it are made afresh, with the new stock.
    const page = await sent(app, ordered);
    expect(page.statements).toBeGreaterThan(0);
    expect(JSON.parse(page.text).data.stock).toBe(before - 1);
    const list = await sent(app, listWith);
    expect(list.statements).toBeGreaterThan(0);
    expect(JSON.parse(list.text).data.find((p: { id: string }) => p.id === f.a.id).stock).toBe(before - 1);
    // The buyer's own orders show the new one.
    expect((await sent(app, '/api/orders', as(buyer))).statements).toBeGreaterThan(0);
    // Nothing else: another product, lists without it, categories, suppliers, reviews, another account.
    for (const [key, path] of untouched) expect((await sent(app, path, as(key))).statements, `${path} is still kept`).toBe(0);
  });

  it('records what it changed as tags: the products it took and the accounts that see it', async () => {
    const from = await revision();
    await order(buyer, f.b.id);
    const { rows } = await app.sql.query<{ tag: string }>(`SELECT tag FROM "CacheChange" WHERE revision > $1 ORDER BY tag`, [from]);
    expect(rows.map((r) => r.tag)).toEqual([`Product:${f.b.id}`, 'Product:*', `account:${buyer.accountId}`].sort());
    expect(await revision()).toBe(from + 1);
  });
});

describe('other writes', () => {
  it('a profile change makes stale only its own account’s answers', async () => {
    await warm([[buyer, '/api/me'], [other, '/api/me'], [null, `/api/products/${f.b.slug}`], [other, '/api/orders']]);
    await app.sql.query(`UPDATE "Account" SET name = 'Renamed buyer' WHERE id = $1`, [buyer.accountId]);
    const mine = await sent(app, '/api/me', as(buyer));
    expect(mine.statements).toBeGreaterThan(0);
    expect(JSON.parse(mine.text).data.name).toBe('Renamed buyer');
    for (const [key, path] of [[other, '/api/me'], [null, `/api/products/${f.b.slug}`], [other, '/api/orders']] as const) {
      expect((await sent(app, path, as(key))).statements, path).toBe(0);
    }
  });

  it('a write that changes nothing bumps nothing and leaves every kept answer', async () => {
    await warm([[null, `/api/products/${f.c.slug}`], [null, '/api/categories'], [buyer, '/api/me']]);
    const from = await revision();
    await app.sql.query(`UPDATE "Product" SET name = name, "updatedAt" = now() WHERE id = $1`, [f.c.id]);
    await app.sql.query(`UPDATE "Category" SET name = name`);
    await app.sql.query(`UPDATE "Account" SET name = name, "updatedAt" = now() WHERE id = $1`, [buyer.accountId]);
    await app.sql.query(`UPDATE "ApiKey" SET "lastUsedAt" = now() WHERE id = $1`, [buyer.id]);
    expect(await revision()).toBe(from);
    expect((await sent(app, `/api/products/${f.c.slug}`)).statements).toBe(0);
    expect((await sent(app, '/api/categories')).statements).toBe(0);
    expect((await sent(app, '/api/me', as(buyer))).statements).toBe(0);
  });

  it('stock written in plain SQL shows on the very next read, over REST and GraphQL, with or without the product’s id', async () => {
    const withId = `query($slug: String!) { product(slug: $slug) { id stock } }`;
    const withoutId = `query($supplierId: ID) { products(supplierId: $supplierId, limit: 100) { items { stock } } }`;
    const path = `/api/products/${f.d.slug}`;
    await sent(app, path);
    await gql(app, null, withId, { slug: f.d.slug });
    await gql(app, null, withoutId, { supplierId: f.supplierId });
    expect((await gql(app, null, withoutId, { supplierId: f.supplierId })).statements).toBe(0);
    await app.sql.query(`UPDATE "Product" SET stock = 4321 WHERE id = $1`, [f.d.id]);
    expect(JSON.parse((await sent(app, path)).text).data.stock).toBe(4321);
    expect(JSON.parse((await gql(app, null, withId, { slug: f.d.slug })).text).data.product.stock).toBe(4321);
    expect(JSON.parse((await gql(app, null, withoutId, { supplierId: f.supplierId })).text).data.products.items.map((p: { stock: number }) => p.stock)).toContain(4321);
  });

  it('a price changed in plain SQL shows in every list and page on the very next read', async () => {
    const path = `/api/products?supplierId=${f.supplierId}&limit=100&sortBy=price_asc`;
    await warm([[null, path], [null, `/api/categories?includeProducts=true`]]);
    await app.sql.query(`UPDATE "Product" SET price = 0.01 WHERE id = $1`, [f.e.id]);
    const list = JSON.parse((await sent(app, path)).text).data as { id: string; price: number }[];
    expect(list[0]).toMatchObject({ id: f.e.id, price: 0.01 });
  });
});

describe('exact revocation', () => {
  // The instance hears of key changes through a relay that holds them back: every answer below
  // comes before the instance has heard, so only the request's freshness read can refuse it.
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let deaf: TestApp;
  beforeAll(async () => {
    relay = await startRelay(db.url);
    deaf = await startTestApp({ url: db.url, directUrl: relay.url(db.url) });
  });
  afterAll(async () => {
    relay?.release();
    await deaf?.close();
    await relay?.close();
  });

  let clients = 0;
  /** Warms the key on the instance, holds its notifications, commits `change`, then sends 200 requests at once. */
  async function after(change: (key: TestKey) => Promise<unknown>, path = '/api/orders?limit=1') {
    const key = await createTestKey(db.url, { owner: 'deps-revoked@example.com', scopes: ['read:orders'] });
    // Each case from a client of its own (a trusted proxy's header): an invalid key spends its client's anonymous bucket.
    const client = `192.0.2.${++clients}`;
    const from = () => as(key, { headers: { 'x-forwarded-for': client } });
    const warmed = await sent(deaf, path, from());
    expect(warmed.status, warmed.text).toBe(200);
    expect((await sent(deaf, path, from())).statements).toBe(0);
    relay.hold();
    try {
      await change(key);
      return await Promise.all(Array.from({ length: 200 }, () => fetch(deaf.base + path, from()).then(async (r) => ({ status: r.status, body: await r.text(), headers: r.headers }))));
    } finally {
      relay.release();
    }
  }

  // An invalid key is charged to its client's anonymous bucket: past its 60, a 429 instead of a 401.
  it('a revoked key: 0 of 200 requests sent right after the commit are answered', async () => {
    const answers = await after((key) => deaf.sql.query(`UPDATE "ApiKey" SET "revokedAt" = now() WHERE id = $1`, [key.id]));
    expect(answers.map((a) => a.status).filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect(answers.filter((a) => a.status === 401).length).toBeGreaterThan(0);
  });

  it('an expired key (its expiry moved to the past): 0 of 200', async () => {
    const answers = await after((key) => deaf.sql.query(`UPDATE "ApiKey" SET "expiresAt" = now() - interval '1 second' WHERE id = $1`, [key.id]));
    expect(answers.map((a) => a.status).filter((s) => s !== 401 && s !== 429)).toEqual([]);
  });

  it('a narrowed key: 0 of 200 answered with its old scopes', async () => {
    const answers = await after((key) => deaf.sql.query(`UPDATE "ApiKey" SET scopes = ARRAY['read:products'] WHERE id = $1`, [key.id]));
    expect(answers.map((a) => a.status).filter((s) => s !== 403)).toEqual([]);
  });

  it('a key moved to another plan: 0 of 200 answered or counted under the old plan', async () => {
    const answers = await after((key) => deaf.sql.query(`UPDATE "ApiKey" SET plan = 'BASIC' WHERE id = $1`, [key.id]), '/api/me');
    expect(answers.map((a) => a.status).filter((s) => s !== 200)).toEqual([]);
    expect(answers.map((a) => JSON.parse(a.body).data.key.plan).filter((plan) => plan !== 'BASIC')).toEqual([]);
    // BASIC's 1000 an hour, not PRO's 5000.
    expect(answers.map((a) => a.headers.get('x-ratelimit-limit')).filter((limit) => limit !== '1000')).toEqual([]);
  });
});

describe.skipIf(!HAS_REDIS_SERVER)('with Redis (REDIS_URL)', () => {
  let redis: RedisServer;
  let r1: TestApp;
  let r2: TestApp;
  const BOUND = 1024 * 1024;
  beforeAll(async () => {
    redis = await startRedisServer();
    r1 = await startTestApp({ url: db.url, env: { REDIS_URL: redis.url, RESPONSE_CACHE_MAX_BYTES: String(BOUND) } });
    r2 = await startTestApp({ url: db.url, env: { REDIS_URL: redis.url, RESPONSE_CACHE_MAX_BYTES: String(BOUND) } });
  });
  afterAll(async () => {
    await r1?.close();
    await r2?.close();
    await redis?.stop();
  });

  const redisCommand = async (...args: string[]) => {
    const { Redis } = await import('ioredis');
    const client = new Redis(redis.url);
    try {
      return await client.call(args[0]!, ...args.slice(1));
    } finally {
      client.disconnect();
    }
  };

  it('holds at most RESPONSE_CACHE_MAX_BYTES of answers, however many pages both instances keep, while profiles change', async () => {
    const enterprise = await createTestKey(db.url, { owner: 'deps-flood@example.com', scopes: ['read:products'], plan: 'enterprise', limit: 100_000, windowSeconds: 60 });
    for (let round = 0; round < 3; round++) {
      for (let page = 1; page <= 12; page++) {
        const on = page % 2 ? r1 : r2;
        expect((await sent(on, `/api/products?limit=100&page=${page}`, as(enterprise))).status).toBe(200);
        await r1.sql.query(`UPDATE "Account" SET name = $2 WHERE id = $1`, [buyer.accountId, `name ${round}-${page}`]);
        expect((await sent(on, '/api/me', as(buyer))).status).toBe(200);
      }
      const held = Number(await redisCommand('GET', 'rc:bytes'));
      expect(held).toBeGreaterThan(0);
      expect(held).toBeLessThanOrEqual(BOUND);
    }
    // The bookkeeping agrees with what is there: every answer counted is kept, and no more.
    const sizes = (await redisCommand('HVALS', 'rc:size')) as string[];
    expect(sizes.reduce((sum, size) => sum + Number(size), 0)).toBe(Number(await redisCommand('GET', 'rc:bytes')));
    expect(((await redisCommand('KEYS', 'rc:e:*')) as string[]).length).toBe(sizes.length);
  });

  it('drops an answer a change made stale, rather than leaving it to expire', async () => {
    const path = `/api/products/${f.a.slug}`;
    await sent(r1, path);
    expect((await sent(r2, path)).statements).toBe(0);
    const tagged = async () => ((await redisCommand('SMEMBERS', `rc:t:Product:${f.a.id}`)) as string[]).length;
    expect(await tagged()).toBeGreaterThan(0);
    const keys = ((await redisCommand('KEYS', 'rc:e:*')) as string[]).length;
    await r1.sql.query(`UPDATE "Product" SET stock = stock + 1 WHERE id = $1`, [f.a.id]);
    // Any request makes the instance learn of the change, and drop what it made stale.
    await sent(r2, `/api/products/${f.b.slug}`);
    expect(await tagged()).toBe(0);
    expect(((await redisCommand('KEYS', 'rc:e:*')) as string[]).length).toBeLessThan(keys + 1);
    const fresh = await sent(r1, path);
    expect(fresh.statements).toBeGreaterThan(0);
  });
});
