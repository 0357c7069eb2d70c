import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';

let app: TestApp;
let f: OrderFixture;
let key: string;

beforeAll(async () => {
  // These tests place far more orders per account than the per-minute order limit allows. Their
  // requests queue for 5 connections and one row lock: on a busy machine the last may wait longer
  // than the pool's 3 s, which is shedding load (503), a different test; here they all wait.
  app = await startTestApp({ env: { ORDER_CREATE_LIMIT: '100000' }, dbTimeouts: { checkoutMs: 30_000 } });
  f = await makeOrderFixture(app.sql);
  key = (await createTestKey(app.url, { owner: 'rush@example.com', scopes: ['read:orders', 'write:orders'] })).key;
});
afterAll(() => app?.close());

const post = (body: unknown, headers: Record<string, string> = {}) =>
  app.get('/api/orders', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers },
    body: JSON.stringify(body),
  });

const stockOf = async (id: string) => (await app.sql.query(`SELECT stock FROM "Product" WHERE id = $1`, [id])).rows[0].stock as number;

const soldOf = async (id: string) =>
  (await app.sql.query(`SELECT coalesce(sum(quantity), 0)::int AS n FROM "OrderItem" WHERE "productId" = $1`, [id])).rows[0].n as number;

const statuses = (responses: { status: number }[]) => {
  const by: Record<number, number> = {};
  for (const r of responses) by[r.status] = (by[r.status] ?? 0) + 1;
  return by;
};

describe('concurrent orders', () => {
  it('never sell more than exists: 50 single-unit orders against stock 10 → 10 created, 40 × 409, stock 0', async () => {
    await app.sql.query(`UPDATE "Product" SET stock = 10 WHERE id = $1`, [f.e.id]);
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => post({ supplierId: f.supplierId, items: [{ productId: f.e.id, quantity: 1 }] })),
    );
    expect(statuses(responses)).toEqual({ 201: 10, 409: 40 });
    for (const r of responses.filter((r) => r.status === 409)) {
      expect(r.body.error).toEqual({
        code: 'CONFLICT',
        message: 'Not enough stock for this order',
        details: { 'items[0]': { productId: f.e.id, requested: 1, available: 0 } },
      });
    }
    expect(await stockOf(f.e.id)).toBe(0);
    expect(await soldOf(f.e.id)).toBe(10);
    const numbers = responses.filter((r) => r.status === 201).map((r) => r.body.data.orderNumber);
    expect(new Set(numbers).size).toBe(10);
  });

  it('overlapping orders listing products in opposite order neither deadlock nor oversell', async () => {
    await app.sql.query(`UPDATE "Product" SET stock = 15 WHERE id = ANY($1)`, [[f.a.id, f.b.id]]);
    const ab = { supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }, { productId: f.b.id, quantity: 1 }] };
    const ba = { supplierId: f.supplierId, items: [{ productId: f.b.id, quantity: 1 }, { productId: f.a.id, quantity: 1 }] };
    const soldBefore = [await soldOf(f.a.id), await soldOf(f.b.id)];
    const responses = await Promise.all(Array.from({ length: 30 }, (_v, i) => post(i % 2 ? ab : ba)));
    expect(statuses(responses)).toEqual({ 201: 15, 409: 15 });
    expect([await stockOf(f.a.id), await stockOf(f.b.id)]).toEqual([0, 0]);
    expect([await soldOf(f.a.id), await soldOf(f.b.id)]).toEqual([soldBefore[0]! + 15, soldBefore[1]! + 15]);
  });

  it('create one order for concurrent requests with one Idempotency-Key, and replay it to all the others', async () => {
    await app.sql.query(`UPDATE "Product" SET stock = 100 WHERE id = $1`, [f.e.id]);
    const body = { supplierId: f.supplierId, items: [{ productId: f.e.id, quantity: 3 }] };
    const ordersBefore = (await app.sql.query(`SELECT count(*)::int AS n FROM "Order"`)).rows[0].n as number;
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(body, { 'idempotency-key': 'one-order' })));
    expect(statuses(responses)).toEqual({ 201: 20 });
    expect(new Set(responses.map((r) => r.body.data.id)).size).toBe(1);
    for (const r of responses) expect(r.body).toEqual(responses[0]!.body);
    expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    expect((await app.sql.query(`SELECT count(*)::int AS n FROM "Order"`)).rows[0].n).toBe(ordersBefore + 1);
    expect(await stockOf(f.e.id)).toBe(97);
  });

  it('with one key and different bodies at once, one wins and the others get 409', async () => {
    const ordersBefore = (await app.sql.query(`SELECT count(*)::int AS n FROM "Order"`)).rows[0].n as number;
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_v, i) =>
        post({ supplierId: f.supplierId, items: [{ productId: f.e.id, quantity: 1 }], notes: `body ${i}` }, { 'idempotency-key': 'contested' }),
      ),
    );
    expect(statuses(responses)).toEqual({ 201: 1, 409: 9 });
    expect((await app.sql.query(`SELECT count(*)::int AS n FROM "Order"`)).rows[0].n).toBe(ordersBefore + 1);
  });

  it('through GraphQL too: concurrent createOrder mutations never oversell', async () => {
    await app.sql.query(`UPDATE "Product" SET stock = 5 WHERE id = $1`, [f.e.id]);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        app.get('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({
            query: `mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }`,
            variables: { input: { supplierId: f.supplierId, items: [{ productId: f.e.id, quantity: 1 }] } },
          }),
        }),
      ),
    );
    const created = responses.filter((r) => r.body.data?.createOrder);
    const conflicts = responses.filter((r) => r.body.errors?.[0]?.extensions?.code === 'CONFLICT');
    expect([created.length, conflicts.length]).toEqual([5, 15]);
    expect(await stockOf(f.e.id)).toBe(0);
  });
});
