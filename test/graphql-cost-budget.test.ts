import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { manualClock } from './helpers/clock.js';
import { byTable } from './helpers/statements.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { HAS_REDIS_SERVER, startRedisServer, type RedisServer } from './helpers/redis.js';

// Calculated query costs (src/pipeline/graphql-cost-budget.ts): extensions.cost on every answer of an
// estimated operation, a budget per key (per client address without one) refilled per second by
// plan, 429 when it is spent. GRAPHQL_MAX_COST is small here so that budgets run out quickly:
// Basic holds 2 × 50, Pro 5 × 50, a client without a key 1 × 50 (LIMITS.costBudgets).

const MAX_COST = 50;
/** products (1) + 20 items: 21 points. */
const TWENTY = '{ products(limit: 20) { items { name } } }';
const FIVE = 'query Five($n: Int) { products(limit: $n) { items { name } } }';

const clock = manualClock();
let app: TestApp;
let basic: TestKey;
let pro: TestKey;
beforeAll(async () => {
  app = await startTestApp({ env: { GRAPHQL_MAX_COST: String(MAX_COST) }, now: clock.now });
  [basic, pro] = await Promise.all([
    createTestKey(app.url, { plan: 'basic', scopes: ['read:products'] }),
    createTestKey(app.url, { plan: 'pro', scopes: ['read:products'] }),
  ]);
});
afterAll(() => app?.close());

const ask = (query: string, headers: Record<string, string>, variables?: Record<string, unknown>) =>
  app.get('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query, variables }) });

describe('extensions.cost', () => {
  it('reports the estimate and a remaining budget that goes down, kept answers included', async () => {
    const headers = { 'x-api-key': basic.key };
    const first = await ask(TWENTY, headers);
    expect(first.status).toBe(200);
    expect(first.body.extensions.cost).toEqual({ requested: 21, actual: 21, limit: 100, remaining: 79, restoreRate: 100 });
    // The same query again is answered by the response cache: charged and reported all the same.
    const before = app.statements.length;
    const second = await ask(TWENTY, headers);
    expect(second.body.data).toEqual(first.body.data);
    expect(byTable(app.statements.slice(before)).Product ?? 0).toBe(0);
    expect(second.body.extensions.cost).toEqual({ requested: 21, actual: 21, limit: 100, remaining: 58, restoreRate: 100 });
    const small = await ask(FIVE, headers, { n: 5 });
    expect(small.body.extensions.cost).toMatchObject({ requested: 6, remaining: 52 });
  });

  it('reports what the answer really holds as actual, and gives the difference back to the budget', async () => {
    const key = await createTestKey(app.url, { plan: 'basic', scopes: ['read:products'] });
    const headers = { 'x-api-key': key.key };
    // 40 items asked for, none found: products (1) + 40 items + meta (1) requested, products and meta loaded.
    const none = '{ products(limit: 40, search: "no such product anywhere") { items { name } meta { total } } }';
    const first = await ask(none, headers);
    expect(first.body.data.products.items).toEqual([]);
    expect(first.body.extensions.cost).toEqual({ requested: 42, actual: 2, limit: 100, remaining: 98, restoreRate: 100 });
    // Charged 42 each, 40 given back: without the refund the third would be refused (100 − 3 × 42 < 0).
    for (let i = 0; i < 6; i++) expect((await ask(none, headers)).body.extensions.cost.remaining).toBe(100 - 2 * (i + 2));
    // A page asked for 20 that holds n: actual 1 + 2n, kept answers included (counted when kept).
    const { rows } = await app.sql.query<{ price: string; n: number }>(
      `SELECT p.price::text AS price, (SELECT count(*)::int FROM "Product" q WHERE q."isActive" AND q.price >= p.price) AS n
       FROM "Product" p WHERE p."isActive" ORDER BY p.price DESC OFFSET 2 LIMIT 1`,
    );
    const { price, n } = rows[0]!;
    expect(n).toBeLessThan(20);
    const few = `{ products(limit: 20, minPrice: ${price}) { items { name supplier { companyName } } } }`;
    const before = (await ask(none, headers)).body.extensions.cost.remaining;
    const fresh = await ask(few, headers);
    expect(fresh.body.errors).toBeUndefined();
    expect(fresh.body.data.products.items).toHaveLength(n);
    // Estimated: 1 + 20 items + 20 suppliers; loaded: 1 + n items + n suppliers.
    expect(fresh.body.extensions.cost).toMatchObject({ requested: 41, actual: 1 + 2 * n, remaining: before - (1 + 2 * n) });
    const kept = await ask(few, headers);
    expect(kept.body.extensions.cost).toMatchObject({ requested: 41, actual: 1 + 2 * n, remaining: before - 2 * (1 + 2 * n) });
  });

  it('refills the budget every second, up to its limit', async () => {
    const headers = { 'x-api-key': basic.key };
    clock.advance(200);
    expect((await ask(FIVE, headers, { n: 1 })).body.extensions.cost).toMatchObject({ requested: 2, remaining: 70 }); // 52 + 20 − 2
    clock.advance(60_000);
    expect((await ask(FIVE, headers, { n: 1 })).body.extensions.cost).toMatchObject({ requested: 2, limit: 100, remaining: 98 });
  });

  it('is on errors of an estimated operation too, and a refused one costs nothing', async () => {
    const headers = { 'x-api-key': pro.key };
    const over = await ask('{ products(limit: 100) { items { name } } }', headers);
    expect(over.status).toBe(200);
    expect(over.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(over.body.errors[0].message).toMatch(/Query cost limit of 50 exceeded/);
    expect(over.body.extensions.cost).toEqual({ requested: expect.any(Number), limit: 250, remaining: 250, restoreRate: 500 });
    expect(over.body.extensions.cost.requested).toBeGreaterThan(MAX_COST);
    const failing = await ask('query Bad($n: Int) { products(limit: $n) { items { name } } }', headers, { n: 0 });
    expect(failing.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    // Executed with an error: charged its estimate, nothing given back (an error hides what was loaded).
    expect(failing.body.extensions.cost).toMatchObject({ requested: 2, actual: 2, limit: 250 });
    // Not estimated: a document that does not parse says nothing of costs.
    const broken = await ask('{ products(', headers);
    expect(broken.body.extensions?.cost).toBeUndefined();
  });

  it('gives each plan its budget, and callers without a key one per address', async () => {
    expect((await ask(FIVE, { 'x-api-key': pro.key }, { n: 1 })).body.extensions.cost).toMatchObject({ limit: 250, restoreRate: 500 });
    // An Enterprise key's own limit sets its budget: 50 000 an hour is 10 × Pro's 5000.
    const enterprise = await createTestKey(app.url, { plan: 'enterprise', limit: 50_000, windowSeconds: 3600, scopes: ['read:products'] });
    expect((await ask(FIVE, { 'x-api-key': enterprise.key }, { n: 1 })).body.extensions.cost).toMatchObject({ limit: 2500, restoreRate: 5000 });
    const small = await createTestKey(app.url, { plan: 'enterprise', limit: 10, windowSeconds: 3600, scopes: ['read:products'] });
    expect((await ask(FIVE, { 'x-api-key': small.key }, { n: 1 })).body.extensions.cost).toMatchObject({ limit: 250, restoreRate: 500 });
    const anonymous = { 'x-forwarded-for': '10.77.0.1' };
    expect((await ask(TWENTY, anonymous)).body.extensions.cost).toEqual({ requested: 21, actual: 21, limit: 50, remaining: 29, restoreRate: 50 });
    expect((await ask(TWENTY, anonymous)).body.extensions.cost).toMatchObject({ remaining: 8 });
    expect((await ask(TWENTY, { 'x-forwarded-for': '10.77.0.2' })).body.extensions.cost).toMatchObject({ remaining: 29 });
  });
});

describe('an exhausted budget', () => {
  it('answers 429 with the request limit\'s kind of headers, charges nothing, and lets the request through once refilled', async () => {
    const key = await createTestKey(app.url, { plan: 'basic', scopes: ['read:products'] });
    const headers = { 'x-api-key': key.key };
    for (const remaining of [79, 58, 37, 16]) expect((await ask(TWENTY, headers)).body.extensions.cost.remaining).toBe(remaining);
    const refused = await ask(TWENTY, headers);
    expect(refused.status).toBe(429);
    expect(refused.body.data ?? null).toBeNull();
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: 1 });
    expect(refused.body.errors[0].message).toMatch(/Query cost budget exceeded: this operation costs 21 points and 16 of 100 are left/);
    expect(refused.body.extensions.cost).toEqual({ requested: 21, limit: 100, remaining: 16, restoreRate: 100 });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('x-ratelimit-limit')).toBe('100');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('16');
    // 5 points short at 100 per second: 50 ms.
    expect(Number(refused.headers.get('x-ratelimit-reset'))).toBe(clock.now() + 50);
    expect(refused.headers.get('ratelimit-policy')).toBe('"cost-basic";q=100;w=1');
    expect(refused.headers.get('ratelimit')).toBe('"cost-basic";r=16;t=1');
    const metrics = await app.get('/metrics');
    expect(metrics.body).toMatch(/ratelimit_rejections_total\{policy="cost-basic"\} 1\b/);
    clock.advance(50);
    const later = await ask(TWENTY, headers);
    expect(later.status).toBe(200);
    expect(later.body.extensions.cost.remaining).toBe(0);
  });
});

describe.skipIf(!HAS_REDIS_SERVER)('the budget with REDIS_URL', () => {
  let redis: RedisServer;
  let one: TestApp;
  let two: TestApp;
  beforeAll(async () => {
    redis = await startRedisServer();
    one = await startTestApp({ env: { GRAPHQL_MAX_COST: '1000', REDIS_URL: redis.url } });
    two = await startTestApp({ url: one.url, env: { GRAPHQL_MAX_COST: '1000', REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
    await redis?.stop();
  });

  it('is one budget across instances', async () => {
    // 100 points a second refill what the first charge (101) took within about a second: a pair
    // further apart than that cannot tell one budget from two, and is asked again with a new key.
    for (let attempt = 1; ; attempt++) {
      const key = await createTestKey(one.url, { plan: 'basic', scopes: ['read:products'] });
      const post = (target: TestApp) =>
        target.get('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key.key }, body: JSON.stringify({ query: '{ products(limit: 100) { items { name } } }' }) });
      const started = Date.now();
      const first = (await post(one)).body.extensions.cost;
      const second = (await post(two)).body.extensions.cost;
      if (Date.now() - started > 900 && attempt < 5) continue;
      expect(first).toMatchObject({ requested: 101, limit: 2000, restoreRate: 100 });
      // Refilled meanwhile by at most what the time between them restored.
      expect(second.remaining).toBeLessThan(first.remaining);
      expect(second.remaining).toBeGreaterThanOrEqual(2000 - 202);
      return;
    }
  });
});
