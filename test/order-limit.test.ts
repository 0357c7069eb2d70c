import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { manualClock } from './helpers/clock.js';
import { createTestKey } from './helpers/keys.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';

// ORDER_CREATE_LIMIT: orders per minute per account, counted across REST and GraphQL and across
// the account's keys, on top of the request limits (graphql-rate-limit on the same store).

let app: TestApp;
let f: OrderFixture;
// The limits' clock moves only when a test moves it: every time below is exact.
const clock = manualClock();
beforeAll(async () => {
  app = await startTestApp({ env: { ORDER_CREATE_LIMIT: '3' }, now: clock.now });
  f = await makeOrderFixture(app.sql);
});
afterAll(() => app?.close());

const order = (f: OrderFixture) => ({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }] });

describe('order creation limit', () => {
  it('refuses the (limit+1)-th order of a minute, whichever interface and key the account uses, until the minute ends', async () => {
    const one = await createTestKey(app.url, { owner: 'limited@example.com', scopes: ['write:orders'] });
    const two = await createTestKey(app.url, { owner: 'limited@example.com', scopes: ['write:orders'] });
    // graphql-rate-limit, under the order limit, drops calls more than a window older than the real
    // time (Date.now()): the clock is brought up to it here, so that only this test's requests, not
    // the app's start before them, stand between the orders it counts and the real time.
    clock.advanceTo(Math.max(clock.now(), Date.now()));
    const started = clock.now();
    const post = (key: string) =>
      app.get('/api/orders', { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(order(f)) });
    expect((await post(one.key)).status).toBe(201);
    const viaGraphql = await app.get('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': two.key },
      body: JSON.stringify({ query: 'mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }', variables: { i: order(f) } }),
    });
    expect(viaGraphql.body.data.createOrder.id).toEqual(expect.any(String));
    expect((await post(two.key)).status).toBe(201);

    const before = await app.sql.query(`SELECT count(*)::int AS n FROM "Order" WHERE "buyerId" = $1`, [one.accountId]);
    const refused = await post(one.key);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      success: false,
      error: { code: 'RATE_LIMIT_EXCEEDED', message: expect.stringContaining('at most 3 orders per minute per account'), retryAfter: expect.any(Number) },
    });
    expect(refused.body.error.message).not.toMatch(/Mutation|createOrder/);
    expect(refused.headers.get('retry-after')).toBe(String(refused.body.error.retryAfter));
    // The refusal is about the order limit: its headers are that limit's, not the key's hourly ones.
    const expectOrderLimitHeaders = (headers: Headers) => {
      expect(headers.get('x-ratelimit-limit')).toBe('3');
      expect(headers.get('x-ratelimit-remaining')).toBe('0');
      expect(headers.get('ratelimit-policy')).toBe('"orders";q=3;w=60');
      // All three orders were placed at `started`: a fourth fits a minute later.
      expect(headers.get('x-ratelimit-reset')).toBe(String(started + 60_000));
      expect(headers.get('retry-after')).toBe('60');
      expect(headers.get('ratelimit')).toBe('"orders";r=0;t=60');
    };
    expectOrderLimitHeaders(refused.headers);

    const refusedGraphql = await app.get('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': two.key },
      body: JSON.stringify({ query: 'mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }', variables: { i: order(f) } }),
    });
    expect(refusedGraphql.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: expect.any(Number) });
    expect(refusedGraphql.body.errors[0].message).toMatch(/at most 3 orders per minute per account/);
    expect(refusedGraphql.status).toBe(429);
    expectOrderLimitHeaders(refusedGraphql.headers);
    // A request that is not refused still carries the key's own limit.
    const listed = await app.get('/api/categories', { headers: { 'x-api-key': one.key } });
    expect(listed.headers.get('ratelimit-policy')).toBe('"pro";q=5000;w=3600');
    const after = await app.sql.query(`SELECT count(*)::int AS n FROM "Order" WHERE "buyerId" = $1`, [one.accountId]);
    expect(after.rows[0].n).toBe(before.rows[0].n);

    // Another account has its own allowance.
    const other = await createTestKey(app.url, { owner: 'unlimited@example.com', scopes: ['write:orders'] });
    expect((await post(other.key)).status).toBe(201);

    // The minute is counted from the orders placed: a millisecond before it ends, still refused
    // (now 1 s to wait); when it ends, the account may order again.
    clock.advanceTo(started + 59_999);
    const late = await post(one.key);
    expect(late.status).toBe(429);
    expect(late.headers.get('retry-after')).toBe('1');
    expect((await app.sql.query(`SELECT count(*)::int AS n FROM "Order" WHERE "buyerId" = $1`, [one.accountId])).rows[0].n).toBe(before.rows[0].n);
    clock.advance(1);
    expect((await post(one.key)).status).toBe(201);
  });
});
