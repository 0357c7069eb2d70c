import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderStatuses, TRANSITIONS, type OrderStatus } from '../src/domain/orders/transitions.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';

// The order's life over HTTP, REST and GraphQL alike: the buyer cancels, the supplier's members
// move the order along, every change lands in its history, cancelling gives the stock back once,
// and racing changes leave exactly one winner.

let app: TestApp;
let f: OrderFixture;
let buyer: TestKey;
let rival: TestKey;
let buyerReadOnly: TestKey;
/** Acts for f.supplierId with read:orders and write:orders. */
let member: TestKey;
/** A second member of f.supplierId. */
let member2: TestKey;
/** Acts for f.otherSupplierId. */
let otherMember: TestKey;
/** Acts for f.supplierId, but reads only. */
let memberReadOnly: TestKey;
/** Has every scope but acts for no supplier. */
let notMember: TestKey;

beforeAll(async () => {
  app = await startTestApp({ env: { ORDER_CREATE_LIMIT: '100000' } });
  f = await makeOrderFixture(app.sql);
  const rw = ['read:orders', 'write:orders'];
  buyer = await createTestKey(app.url, { owner: 'life-buyer@example.com', scopes: rw });
  buyerReadOnly = await createTestKey(app.url, { owner: 'life-buyer@example.com', scopes: ['read:orders'] });
  rival = await createTestKey(app.url, { owner: 'life-rival@example.com', scopes: rw });
  member = await createTestKey(app.url, { owner: 'clerk@supplier.example', scopes: rw });
  member2 = await createTestKey(app.url, { owner: 'clerk2@supplier.example', scopes: rw });
  memberReadOnly = await createTestKey(app.url, { owner: 'clerk@supplier.example', scopes: ['read:orders'] });
  otherMember = await createTestKey(app.url, { owner: 'clerk@other.example', scopes: rw });
  notMember = await createTestKey(app.url, { owner: 'nobody@example.com', scopes: ['admin:all'] });
  await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $3), ($2, $3), ($4, $5)`, [
    member.accountId,
    member2.accountId,
    f.supplierId,
    otherMember.accountId,
    f.otherSupplierId,
  ]);
});
afterAll(async () => {
  await app?.close();
});

type Key = { key: string };
const json = (method: string, path: string, key: Key | null, body?: unknown, headers: Record<string, string> = {}) =>
  app.get(path, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(key ? { 'x-api-key': key.key } : {}), ...headers },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
const get = (path: string, key: Key | null) => json('GET', path, key);
const cancel = (id: string, key: Key | null, body?: unknown, headers?: Record<string, string>) => json('POST', `/api/orders/${id}/cancel`, key, body, headers);
const move = (id: string, key: Key | null, body: unknown, headers?: Record<string, string>) => json('POST', `/api/supplier/orders/${id}/status`, key, body, headers);
const TRACKING = { trackingNumber: 'AWB123456', trackingCarrier: 'FAN Courier' };

async function gql(query: string, variables: Record<string, unknown>, key: Key | null) {
  const res = await app.get('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key.key } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return res.body as { data?: Record<string, any> | null; errors?: { message: string; extensions?: { code?: string; details?: any } }[] };
}

const stockOf = async (id: string) => (await app.sql.query<{ stock: number }>(`SELECT stock FROM "Product" WHERE id = $1`, [id])).rows[0]!.stock;

/** Places an order of 3 × a (tracked) and 1 × c (untracked) as `who`. */
async function placeOrder(who: Key = buyer): Promise<string> {
  const res = await json('POST', '/api/orders', who, {
    supplierId: f.supplierId,
    items: [
      { productId: f.a.id, quantity: 3 },
      { productId: f.c.id, quantity: 1 },
    ],
    shippingAddress: { fullName: 'Ana Pop', phone: '0712345678', address: 'Str. Lungă 1', city: 'Cluj-Napoca', county: 'Cluj', postalCode: '400001' },
  });
  expect(res.status).toBe(201);
  return res.body.data.id as string;
}

/** Moves an order through the statuses given, as the supplier, and checks each answer. */
async function walk(id: string, ...statuses: OrderStatus[]) {
  for (const status of statuses) {
    const res = await move(id, member, { status, ...(status === 'SHIPPED' ? TRACKING : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.status).toBe(status);
  }
}

describe('the transition table', () => {
  it('is the README’s table, row for row', () => {
    const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### Order lifecycle'));
    const rows = [...section.matchAll(/^\| `([A-Z]+)` \| `([A-Z]+)` \| ([a-z, ]+) \|/gm)].map((m) => [m[1], m[2], m[3]!.split(', ').sort().join(', ')]);
    const fromCode = orderStatuses.flatMap((from) => Object.entries(TRANSITIONS[from]).map(([to, by]) => [from, to, [...by!].sort().join(', ')]));
    expect(rows).toEqual(fromCode);
  });
});

describe('the buyer cancels', () => {
  it('a PENDING order: 200 with the order, stock of tracked products back, history with the reason', async () => {
    const before = { a: await stockOf(f.a.id), c: await stockOf(f.c.id) };
    const id = await placeOrder();
    expect(await stockOf(f.a.id)).toBe(before.a - 3);
    const res = await cancel(id, buyer, { reason: '  Ordered twice by mistake  ' });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body.data).toMatchObject({ id, status: 'CANCELLED' });
    expect(res.body.data.history).toEqual([
      { status: 'PENDING', at: expect.any(String), actor: 'buyer', note: null },
      { status: 'CANCELLED', at: expect.any(String), actor: 'buyer', note: 'Ordered twice by mistake' },
    ]);
    expect(await stockOf(f.a.id)).toBe(before.a);
    expect(await stockOf(f.c.id)).toBe(before.c); // not tracked: never taken, not given
    const { rows } = await app.sql.query(`SELECT status, actor, "accountId", note FROM "OrderEvent" WHERE "orderId" = $1 ORDER BY at, id`, [id]);
    expect(rows).toEqual([
      { status: 'PENDING', actor: 'BUYER', accountId: buyer.accountId, note: null },
      { status: 'CANCELLED', actor: 'BUYER', accountId: buyer.accountId, note: 'Ordered twice by mistake' },
    ]);
    // GET shows the same history.
    expect((await get(`/api/orders/${id}`, buyer)).body.data.history).toEqual(res.body.data.history);
  });

  it('without a body, and a CONFIRMED order', async () => {
    const id = await placeOrder();
    await walk(id, 'CONFIRMED');
    const res = await app.get(`/api/orders/${id}/cancel`, { method: 'POST', headers: { 'x-api-key': buyer.key } });
    expect(res.status).toBe(200);
    expect(res.body.data.history.map((h: any) => [h.status, h.actor, h.note])).toEqual([
      ['PENDING', 'buyer', null],
      ['CONFIRMED', 'supplier', null],
      ['CANCELLED', 'buyer', null],
    ]);
  });

  it('refuses with 409 once the order is PROCESSING or later, naming status, requested and allowed; nothing changes', async () => {
    const id = await placeOrder();
    await walk(id, 'CONFIRMED', 'PROCESSING');
    const stock = await stockOf(f.a.id);
    const res = await cancel(id, buyer, {});
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      success: false,
      error: { code: 'CONFLICT', message: expect.stringContaining('PROCESSING'), details: { status: 'PROCESSING', requested: 'CANCELLED', allowed: [] } },
    });
    expect(await stockOf(f.a.id)).toBe(stock);
    const again = await get(`/api/orders/${id}`, buyer);
    expect(again.body.data.status).toBe('PROCESSING');
    expect(again.body.data.history).toHaveLength(3);
  });

  it('cancelling twice: the second is 409 and the stock came back once', async () => {
    const id = await placeOrder();
    const stock = await stockOf(f.a.id);
    expect((await cancel(id, buyer)).status).toBe(200);
    const second = await cancel(id, buyer);
    expect(second.status).toBe(409);
    expect(second.body.error.details).toEqual({ status: 'CANCELLED', requested: 'CANCELLED', allowed: [] });
    expect(await stockOf(f.a.id)).toBe(stock + 3);
  });

  it('another account’s order is 404 exactly like an id never used, and stays as it was', async () => {
    const id = await placeOrder();
    const theirs = await cancel(id, rival);
    const never = await cancel('c000000000000000000000000', rival);
    const malformed = await cancel('not%20an%20id', rival);
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual(never.body);
    expect(malformed.status).toBe(404);
    expect(malformed.body).toEqual(never.body);
    expect(theirs.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'Order not found' } });
    expect((await get(`/api/orders/${id}`, buyer)).body.data.status).toBe('PENDING');
  });

  it('needs write:orders (403 naming it) and a key (401); checks the scope before the body', async () => {
    const id = await placeOrder();
    const readOnly = await cancel(id, buyerReadOnly, { reason: 'x'.repeat(501) });
    expect(readOnly.status).toBe(403);
    expect(readOnly.body.error).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: ['write:orders'] } });
    expect((await cancel(id, null)).status).toBe(401);
  });

  it('refuses a bad body with 400 naming the field, and changes nothing', async () => {
    const id = await placeOrder();
    const cases: [unknown, string][] = [
      [{ reason: 'x'.repeat(501) }, 'reason'],
      [{ reason: 42 }, 'reason'],
      [{ reason: 'a\u0000b' }, 'reason'],
      [{ reason: 'ok', extra: 1 }, 'extra'],
      [[], 'body'],
      ['"text"', 'body'],
      ['{"reason":', 'body'],
    ];
    for (const [body, field] of cases) {
      const res = await cancel(id, buyer, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(Object.keys(res.body.error.details)).toContain(field);
    }
    const wrongType = await app.get(`/api/orders/${id}/cancel`, { method: 'POST', headers: { 'x-api-key': buyer.key, 'content-type': 'text/plain' }, body: 'cancel' });
    expect(wrongType.status).toBe(415);
    expect((await get(`/api/orders/${id}`, buyer)).body.data.status).toBe('PENDING');
  });

  it('honours Idempotency-Key: a retry gets the first answer again, another body with the key is 409', async () => {
    const id = await placeOrder();
    const stock = await stockOf(f.a.id);
    const first = await cancel(id, buyer, { reason: 'changed my mind' }, { 'idempotency-key': `cancel-${id}` });
    expect(first.status).toBe(200);
    const retry = await cancel(id, buyer, { reason: 'changed my mind' }, { 'idempotency-key': `cancel-${id}` });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    const other = await cancel(id, buyer, { reason: 'another reason' }, { 'idempotency-key': `cancel-${id}` });
    expect(other.status).toBe(409);
    expect(await stockOf(f.a.id)).toBe(stock + 3);
    const { rows } = await app.sql.query(`SELECT count(*)::int AS n FROM "OrderEvent" WHERE "orderId" = $1 AND status = 'CANCELLED'`, [id]);
    expect(rows[0].n).toBe(1);
  });

  it('GraphQL cancelOrder: the same rules (null for another account’s order, CONFLICT with details)', async () => {
    const id = await placeOrder();
    const CANCEL = `mutation($id: ID!, $reason: String) { cancelOrder(id: $id, reason: $reason) { id status history { status actor note } } }`;
    const theirs = await gql(CANCEL, { id }, rival);
    expect(theirs.data?.cancelOrder).toBeNull();
    expect(theirs.errors).toBeUndefined();
    const ok = await gql(CANCEL, { id, reason: 'via graphql' }, buyer);
    expect(ok.data?.cancelOrder).toEqual({
      id,
      status: 'CANCELLED',
      history: [
        { status: 'PENDING', actor: 'buyer', note: null },
        { status: 'CANCELLED', actor: 'buyer', note: 'via graphql' },
      ],
    });
    const again = await gql(CANCEL, { id }, buyer);
    expect(again.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', details: { status: 'CANCELLED', requested: 'CANCELLED', allowed: [] } });
    const tooLong = await gql(CANCEL, { id, reason: 'x'.repeat(501) }, buyer);
    expect(tooLong.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { reason: expect.any(String) } });
    const readOnly = await gql(CANCEL, { id }, buyerReadOnly);
    expect(readOnly.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: ['write:orders'] } });
  });
});

describe('the supplier’s side', () => {
  it('lists only its supplier’s orders, with the same parameters and envelope as /api/orders', async () => {
    const id = await placeOrder();
    const res = await get('/api/supplier/orders?limit=100&status=PENDING', member);
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({ page: 1, limit: 100 });
    const { rows } = await app.sql.query(`SELECT count(*)::int AS n FROM "Order" WHERE "supplierId" = $1 AND status = 'PENDING'`, [f.supplierId]);
    expect(res.body.meta.total).toBe(rows[0].n);
    expect(res.body.data.every((o: any) => o.supplier.id === f.supplierId && o.status === 'PENDING')).toBe(true);
    expect(res.body.data.map((o: any) => o.id)).toContain(id);
    // Same fields as the buyer's own view of the order.
    const mine = await get(`/api/orders/${id}`, buyer);
    const theirs = await get(`/api/supplier/orders/${id}`, member);
    expect(theirs.status).toBe(200);
    expect(theirs.body).toEqual(mine.body);
    // The other supplier sees none of them.
    const other = await get('/api/supplier/orders?limit=100', otherMember);
    expect(other.body.data.some((o: any) => o.supplier.id === f.supplierId)).toBe(false);
    expect(await get(`/api/supplier/orders/${id}`, otherMember)).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND', message: 'Order not found' } } });
    const bad = await get('/api/supplier/orders?status=LOST&page=0', member);
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.error.details).sort()).toEqual(['page', 'status']);
  });

  it('walks an order from PENDING to REFUNDED, each step in the history with its actor and note', async () => {
    const id = await placeOrder();
    await walk(id, 'CONFIRMED', 'PROCESSING');
    const shipped = await move(id, member, { status: 'SHIPPED', ...TRACKING, trackingUrl: 'https://track.example/AWB123456', note: 'Left the warehouse' });
    expect(shipped.status).toBe(200);
    expect(shipped.body.data).toMatchObject({ status: 'SHIPPED', trackingNumber: 'AWB123456', trackingCarrier: 'FAN Courier', trackingUrl: 'https://track.example/AWB123456' });
    await walk(id, 'DELIVERED', 'REFUNDED');
    const order = await get(`/api/orders/${id}`, buyer);
    expect(order.body.data.history.map((h: any) => [h.status, h.actor, h.note])).toEqual([
      ['PENDING', 'buyer', null],
      ['CONFIRMED', 'supplier', null],
      ['PROCESSING', 'supplier', null],
      ['SHIPPED', 'supplier', 'Left the warehouse'],
      ['DELIVERED', 'supplier', null],
      ['REFUNDED', 'supplier', null],
    ]);
    const times = order.body.data.history.map((h: any) => Date.parse(h.at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    // REFUNDED is the end.
    const after = await move(id, member, { status: 'CANCELLED' });
    expect(after.status).toBe(409);
    expect(after.body.error.details).toEqual({ status: 'REFUNDED', requested: 'CANCELLED', allowed: [] });
  });

  it('refuses every move the table does not list, with the moves it does', async () => {
    const id = await placeOrder();
    const cases: [OrderStatus, OrderStatus[]][] = [
      ['PENDING', ['CONFIRMED', 'CANCELLED']],
      ['CONFIRMED', ['PROCESSING', 'CANCELLED']],
      ['PROCESSING', ['SHIPPED', 'CANCELLED']],
      ['SHIPPED', ['DELIVERED']],
    ];
    for (const [status, allowed] of cases) {
      for (const requested of orderStatuses.filter((s) => !allowed.includes(s))) {
        const res = await move(id, member, { status: requested, ...(requested === 'SHIPPED' ? TRACKING : {}) });
        expect(res.status, `${status} → ${requested}`).toBe(409);
        expect(res.body.error).toMatchObject({ code: 'CONFLICT', details: { status, requested, allowed } });
      }
      await walk(id, allowed[0]!);
    }
  });

  it('SHIPPED needs trackingNumber and trackingCarrier; tracking is refused with any other status; bad values are 400', async () => {
    const id = await placeOrder();
    await walk(id, 'CONFIRMED', 'PROCESSING');
    const cases: [unknown, string[]][] = [
      [{ status: 'SHIPPED' }, ['trackingCarrier', 'trackingNumber']],
      [{ status: 'SHIPPED', trackingNumber: 'X1' }, ['trackingCarrier']],
      [{ status: 'SHIPPED', ...TRACKING, trackingUrl: 'javascript:alert(1)' }, ['trackingUrl']],
      [{ status: 'SHIPPED', ...TRACKING, trackingNumber: '   ' }, ['trackingNumber']],
      [{ status: 'CANCELLED', trackingNumber: 'X1' }, ['trackingNumber']],
      [{ status: 'shipped', ...TRACKING }, ['status']],
      [{ status: 'SHIPPED', ...TRACKING, note: 'n'.repeat(501) }, ['note']],
      [{ status: 'SHIPPED', ...TRACKING, carrier: 'x' }, ['carrier']],
      [{}, ['status']],
    ];
    for (const [body, fields] of cases) {
      const res = await move(id, member, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body.error.details).sort(), JSON.stringify(body)).toEqual(fields);
    }
    expect((await get(`/api/supplier/orders/${id}`, member)).body.data).toMatchObject({ status: 'PROCESSING', trackingNumber: null });
  });

  it('a move that is not allowed is the 409 naming the allowed ones before any word on tracking; a tracking 400 leaves the Idempotency-Key unused', async () => {
    const id = await placeOrder();
    const skip = await move(id, member, { status: 'SHIPPED' });
    expect(skip.status).toBe(409);
    expect(skip.body).toEqual({
      success: false,
      error: {
        code: 'CONFLICT',
        message: 'The order is PENDING and cannot become SHIPPED: it can only become CONFIRMED or CANCELLED',
        details: { status: 'PENDING', requested: 'SHIPPED', allowed: ['CONFIRMED', 'CANCELLED'] },
      },
    });
    const trackingWithoutShipping = await move(id, member, { status: 'DELIVERED', trackingNumber: 'X1' });
    expect(trackingWithoutShipping.status).toBe(409);
    expect(trackingWithoutShipping.body.error.details).toEqual({ status: 'PENDING', requested: 'DELIVERED', allowed: ['CONFIRMED', 'CANCELLED'] });

    // Once the move is allowed, its tracking is judged.
    await walk(id, 'CONFIRMED', 'PROCESSING');
    const key = { 'idempotency-key': `ship-${id}` };
    const noTracking = await move(id, member, { status: 'SHIPPED', trackingNumber: 'AWB1' }, key);
    expect(noTracking.status).toBe(400);
    expect(noTracking.body.error).toEqual({ code: 'VALIDATION_ERROR', message: 'Invalid status change', details: { trackingCarrier: 'is required when status is SHIPPED' } });
    expect((await get(`/api/supplier/orders/${id}`, member)).body.data).toMatchObject({ status: 'PROCESSING', trackingNumber: null });
    // As with any malformed body, the key was not used up: the corrected request runs for real.
    const shipped = await move(id, member, { status: 'SHIPPED', ...TRACKING }, key);
    expect(shipped.status).toBe(200);
    expect(shipped.headers.get('idempotent-replayed')).toBeNull();
    expect(shipped.body.data).toMatchObject({ status: 'SHIPPED', ...TRACKING });
  });

  it('cancelling as the supplier (even while PROCESSING) gives back the stock', async () => {
    const id = await placeOrder();
    await walk(id, 'CONFIRMED', 'PROCESSING');
    const stock = await stockOf(f.a.id);
    const res = await move(id, member, { status: 'CANCELLED', note: 'Out of stock at the warehouse' });
    expect(res.status).toBe(200);
    expect(res.body.data.history.at(-1)).toMatchObject({ status: 'CANCELLED', actor: 'supplier', note: 'Out of stock at the warehouse' });
    expect(await stockOf(f.a.id)).toBe(stock + 3);
  });

  it('permissions: a key of an account acting for no supplier is 403, so is a member’s key without the scope', async () => {
    const id = await placeOrder();
    for (const path of ['/api/supplier/orders', `/api/supplier/orders/${id}`]) {
      const res = await get(path, notMember);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', details: { requiredMembership: 'supplier' } });
    }
    const moved = await move(id, notMember, { status: 'CONFIRMED' });
    expect(moved.status).toBe(403);
    const readOnly = await move(id, memberReadOnly, { status: 'CONFIRMED' });
    expect(readOnly.status).toBe(403);
    expect(readOnly.body.error.details).toEqual({ requiredScopes: ['write:orders'] });
    expect((await get(`/api/supplier/orders/${id}`, memberReadOnly)).status).toBe(200);
    expect((await get('/api/supplier/orders', null)).status).toBe(401);
    // The buyer is not the supplier.
    expect((await move(id, buyer, { status: 'CONFIRMED' })).status).toBe(403);
    // Membership is read per request: removed, refused at once; back, allowed.
    await app.sql.query(`DELETE FROM "SupplierMember" WHERE "accountId" = $1`, [member2.accountId]);
    expect((await get('/api/supplier/orders', member2)).status).toBe(403);
    await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [member2.accountId, f.supplierId]);
    expect((await get('/api/supplier/orders', member2)).status).toBe(200);
    expect((await get(`/api/supplier/orders/${id}`, member2)).body.data.status).toBe('PENDING');
  });

  it('another supplier’s order is 404 for every supplier path, and unchanged', async () => {
    const id = await placeOrder();
    const res = await move(id, otherMember, { status: 'CONFIRMED' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'Order not found' } });
    expect((await get(`/api/orders/${id}`, buyer)).body.data.status).toBe('PENDING');
  });

  it('GraphQL: supplierOrders, supplierOrder and updateOrderStatus answer as REST does', async () => {
    const id = await placeOrder();
    const LIST = `query { supplierOrders(limit: 100, status: PENDING) { items { id } meta { total } } }`;
    const list = await gql(LIST, {}, member);
    expect(list.data?.supplierOrders.items.map((o: any) => o.id)).toContain(id);
    expect(list.data?.supplierOrders.meta.total).toBe((await get('/api/supplier/orders?status=PENDING', member)).body.meta.total);
    const ONE = `query($id: ID!) { supplierOrder(id: $id) { id status buyer { email } } }`;
    expect((await gql(ONE, { id }, member)).data?.supplierOrder).toEqual({ id, status: 'PENDING', buyer: { email: 'life-buyer@example.com' } });
    expect((await gql(ONE, { id }, otherMember)).data?.supplierOrder).toBeNull();
    const notMemberAnswer = await gql(ONE, { id }, notMember);
    expect(notMemberAnswer.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', details: { requiredMembership: 'supplier' } });
    const MOVE = `mutation($id: ID!, $input: OrderStatusInput!) { updateOrderStatus(id: $id, input: $input) { status trackingNumber history { status actor } } }`;
    expect((await gql(MOVE, { id, input: { status: 'CONFIRMED' } }, member)).data?.updateOrderStatus).toMatchObject({ status: 'CONFIRMED' });
    const skip = await gql(MOVE, { id, input: { status: 'DELIVERED' } }, member);
    expect(skip.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', details: { status: 'CONFIRMED', requested: 'DELIVERED', allowed: ['PROCESSING', 'CANCELLED'] } });
    // A shipment cannot happen from CONFIRMED: that is the answer, not the tracking it would need.
    const notYet = await gql(MOVE, { id, input: { status: 'SHIPPED' } }, member);
    expect(notYet.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', details: { status: 'CONFIRMED', requested: 'SHIPPED', allowed: ['PROCESSING', 'CANCELLED'] } });
    await walk(id, 'PROCESSING');
    const noTracking = await gql(MOVE, { id, input: { status: 'SHIPPED' } }, member);
    expect(noTracking.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { trackingNumber: expect.any(String), trackingCarrier: expect.any(String) } });
    expect((await gql(MOVE, { id, input: { status: 'PROCESSING' } }, otherMember)).data?.updateOrderStatus).toBeNull();
  });
});

describe('racing changes', () => {
  it('a supplier’s cancel racing its ship: exactly one wins, the stock comes back only if the cancel did', async () => {
    for (let round = 0; round < 5; round++) {
      const id = await placeOrder();
      await walk(id, 'CONFIRMED', 'PROCESSING');
      const stock = await stockOf(f.a.id);
      const [cancelled, shipped] = await Promise.all([move(id, member, { status: 'CANCELLED' }), move(id, member2, { status: 'SHIPPED', ...TRACKING })]);
      expect([cancelled.status, shipped.status].sort()).toEqual([200, 409]);
      const final = (await get(`/api/orders/${id}`, buyer)).body.data;
      expect(final.status).toBe(cancelled.status === 200 ? 'CANCELLED' : 'SHIPPED');
      expect(final.history).toHaveLength(4);
      expect(await stockOf(f.a.id)).toBe(cancelled.status === 200 ? stock + 3 : stock);
    }
  });

  it('the buyer’s cancel racing the supplier moving it on: exactly one wins', async () => {
    for (let round = 0; round < 5; round++) {
      const id = await placeOrder();
      await walk(id, 'CONFIRMED');
      const stock = await stockOf(f.a.id);
      const [cancelled, processing] = await Promise.all([cancel(id, buyer), move(id, member, { status: 'PROCESSING' })]);
      expect([cancelled.status, processing.status].sort()).toEqual([200, 409]);
      expect(await stockOf(f.a.id)).toBe(cancelled.status === 200 ? stock + 3 : stock);
    }
  });

  it('ten cancellations at once, REST and GraphQL, buyer and supplier: one succeeds, the stock comes back once', async () => {
    const id = await placeOrder();
    const stock = await stockOf(f.a.id);
    const CANCEL = `mutation($id: ID!) { cancelOrder(id: $id) { status } }`;
    const attempts = await Promise.all([
      ...Array.from({ length: 4 }, () => cancel(id, buyer).then((r) => r.status === 200)),
      ...Array.from({ length: 3 }, () => move(id, member, { status: 'CANCELLED' }).then((r) => r.status === 200)),
      ...Array.from({ length: 3 }, () => gql(CANCEL, { id }, buyer).then((r) => r.data?.cancelOrder?.status === 'CANCELLED')),
    ]);
    expect(attempts.filter(Boolean)).toHaveLength(1);
    expect(await stockOf(f.a.id)).toBe(stock + 3);
    const { rows } = await app.sql.query(`SELECT count(*)::int AS n FROM "OrderEvent" WHERE "orderId" = $1`, [id]);
    expect(rows[0].n).toBe(2);
  });
});
