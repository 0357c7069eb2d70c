import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';

// ORDER_CREATE_LIMIT: orders per minute per account, counted across REST and GraphQL and across
// the account's keys, on top of the request limits (graphql-rate-limit on the same store).

let app: TestApp;
let f: OrderFixture;
beforeAll(async () => {
  app = await startTestApp({ env: { ORDER_CREATE_LIMIT: '3' } });
  f = await makeOrderFixture(app.sql);
});
afterAll(() => app?.close());

const order = (f: OrderFixture) => ({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }] });

describe('order creation limit', () => {
  it('refuses the (limit+1)-th order of a minute, whichever interface and key the account uses', async () => {
    const one = await createTestKey(app.url, { owner: 'limited@example.com', scopes: ['write:orders'] });
    const two = await createTestKey(app.url, { owner: 'limited@example.com', scopes: ['write:orders'] });
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
      const reset = Number(headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThan(Date.now());
      expect(reset).toBeLessThanOrEqual(Date.now() + 60_000);
      expect(Number(headers.get('retry-after'))).toBe(Math.max(1, Math.ceil((reset - Date.now()) / 1000)));
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
  });
});
