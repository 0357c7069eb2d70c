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
      error: { code: 'RATE_LIMIT_EXCEEDED', message: expect.stringContaining('at most 3 per minute'), retryAfter: expect.any(Number) },
    });
    expect(refused.headers.get('retry-after')).toBe(String(refused.body.error.retryAfter));
    // The request limit is a separate, larger allowance: its headers are still there.
    expect(Number(refused.headers.get('x-ratelimit-remaining'))).toBeGreaterThan(0);

    const refusedGraphql = await app.get('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': two.key },
      body: JSON.stringify({ query: 'mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }', variables: { i: order(f) } }),
    });
    expect(refusedGraphql.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: expect.any(Number) });
    const after = await app.sql.query(`SELECT count(*)::int AS n FROM "Order" WHERE "buyerId" = $1`, [one.accountId]);
    expect(after.rows[0].n).toBe(before.rows[0].n);

    // Another account has its own allowance.
    const other = await createTestKey(app.url, { owner: 'unlimited@example.com', scopes: ['write:orders'] });
    expect((await post(other.key)).status).toBe(201);
  });
});
