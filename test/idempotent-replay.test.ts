import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';

// A retry with an Idempotency-Key gets the first answer again, and says so: over REST the very
// bytes of the first body, never cached; over GraphQL the same signal header.

let app: TestApp;
let f: OrderFixture;
let buyer: { key: string };

beforeAll(async () => {
  app = await startTestApp({ env: { ORDER_CREATE_LIMIT: '100000' } });
  f = await makeOrderFixture(app.sql);
  buyer = await createTestKey(app.url, { owner: 'replay@example.com', scopes: ['read:orders', 'write:orders'] });
});
afterAll(() => app?.close());

/** The raw answer: status, headers and the body's text exactly as sent. */
async function send(path: string, key: string, body: unknown): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(app.base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': buyer.key, 'idempotency-key': key, 'x-forwarded-for': '10.200.0.1' },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const order = (notes: string) => ({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }, { productId: f.b.id, quantity: 2 }], notes });
const CREATE = 'mutation($input: CreateOrderInput!) { createOrder(input: $input) { id orderNumber total items { productId quantity } } }';

describe('REST replay', () => {
  it('is the first body byte for byte, marked replayed and not to be stored', async () => {
    const first = await send('/api/orders', 'rest-bytes', order('bytes'));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(first.headers.get('cache-control')).toBe('no-store');

    const again = await send('/api/orders', 'rest-bytes', order('bytes'));
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('cache-control')).toBe('no-store');
    expect(again.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('replays a rejection marked and not to be stored', async () => {
    const bad = { supplierId: f.supplierId, items: [{ productId: f.inactive.id, quantity: 1 }] };
    const first = await send('/api/orders', 'rest-rejected', bad);
    expect(first.status).toBe(400);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await send('/api/orders', 'rest-rejected', bad);
    expect(again.status).toBe(400);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('cache-control')).toBe('no-store');
  });
});

describe('a retry spelt differently', () => {
  // The docs say null and absent are the same: a retry that sends optional nested fields as null
  // is the same request, and gets the first answer.
  const address = { fullName: 'Ana Pop', phone: '+40721000000', address: 'Str. Lunga 1', city: 'Cluj-Napoca', county: 'Cluj', postalCode: '400001' };
  const plain = () => ({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }], shippingAddress: address });
  const withNulls = () => ({
    items: [{ quantity: 1, variantId: null, productId: f.a.id }],
    shippingAddress: { ...address, companyName: null, email: null },
    notes: null,
    supplierId: f.supplierId,
  });

  it('replays a retry with optional nested fields sent as null, over REST', async () => {
    const first = await send('/api/orders', 'rest-nulls', plain());
    expect(first.status).toBe(201);
    const again = await send('/api/orders', 'rest-nulls', withNulls());
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('replays it over GraphQL, and another value is still another body (409)', async () => {
    const gql = (variables: object) =>
      fetch(`${app.base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': buyer.key, 'idempotency-key': 'gql-nulls', 'x-forwarded-for': '10.200.0.1' },
        body: JSON.stringify({ query: CREATE, variables }),
      });
    const first = await (await gql({ input: withNulls() })).json();
    const again = await gql({ input: plain() });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await again.json()).data.createOrder.id).toBe(first.data.createOrder.id);
    const other = await (await gql({ input: { ...plain(), notes: 'something else' } })).json();
    expect(other.errors[0].extensions.code).toBe('CONFLICT');
  });
});

describe('GraphQL replay', () => {
  it('carries Idempotent-Replayed: true on a replayed order, and a first answer does not', async () => {
    const first = await send('/graphql', 'gql-order', { query: CREATE, variables: { input: order('graphql') } });
    expect(first.status).toBe(200);
    expect(JSON.parse(first.text).data.createOrder.id).toEqual(expect.any(String));
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const again = await send('/graphql', 'gql-order', { query: CREATE, variables: { input: order('graphql') } });
    // The first answer again, but for the cost budget it reports: the replay is charged like any operation.
    const { extensions: firstExtensions, ...firstAnswer } = JSON.parse(first.text);
    const { extensions: againExtensions, ...againAnswer } = JSON.parse(again.text);
    expect(againAnswer).toEqual(firstAnswer);
    expect(againExtensions.cost).toMatchObject({ requested: firstExtensions.cost.requested, limit: firstExtensions.cost.limit });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('carries it on a replayed rejection too', async () => {
    const input = { supplierId: f.supplierId, items: [{ productId: f.inactive.id, quantity: 1 }] };
    const first = await send('/graphql', 'gql-rejected', { query: CREATE, variables: { input } });
    expect(JSON.parse(first.text).errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await send('/graphql', 'gql-rejected', { query: CREATE, variables: { input } });
    expect(JSON.parse(again.text).errors).toEqual(JSON.parse(first.text).errors);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('is not sent for an order placed without a key, nor for a query', async () => {
    const res = await fetch(`${app.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': buyer.key, 'x-forwarded-for': '10.200.0.1' },
      body: JSON.stringify({ query: CREATE, variables: { input: order('no key') } }),
    });
    expect((await res.json()).data.createOrder.id).toEqual(expect.any(String));
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    const query = await app.graphql('{ products(limit: 1) { items { id } } }');
    expect(query.status).toBe(200);
  });
});
