import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiContext } from '../src/context/context.js';
import { createPrisma, type PrismaClient } from '../src/db/prisma.js';
import { buyerOf, createOrder, orderById, orderNumbers } from '../src/domain/orders/orders.service.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';
import { byTable, tablesOf } from './helpers/statements.js';
import { FREE_SHIPPING_FROM, makeOrderFixture, SHIPPING_FEE, WORKED_EXAMPLE_TOTALS, workedExample, type OrderFixture } from './helpers/orders.js';
import { testContexts } from './helpers/context.js';

// Orders over REST and GraphQL on a real database. Their pricing and the schema's fields that reach
// them, which need neither: test/unit/order-pricing.test.ts, money.test.ts and field-rules.test.ts.

let app: TestApp;
let f: OrderFixture;
/** buyer@example.com: read and write */
let buyer: { key: string; accountId: string };
/** The same account, another key */
let buyerReadOnly: { key: string; accountId: string };
/** Another account */
let rival: { key: string; accountId: string };
let admin: { key: string; accountId: string };
let noScopes: { key: string; accountId: string };
let prisma: PrismaClient;

beforeAll(async () => {
  // These tests place far more orders per account than the per-minute order limit allows.
  app = await startTestApp({ env: { ORDER_CREATE_LIMIT: '100000' } });
  f = await makeOrderFixture(app.sql);
  buyer = await createTestKey(app.url, { owner: 'buyer@example.com', scopes: ['read:orders', 'write:orders'] });
  buyerReadOnly = await createTestKey(app.url, { owner: 'buyer@example.com', scopes: ['read:orders'] });
  rival = await createTestKey(app.url, { owner: 'rival@example.com', scopes: ['read:orders', 'write:orders'] });
  admin = await createTestKey(app.url, { owner: 'admin@example.com', scopes: ['admin:all'] });
  noScopes = await createTestKey(app.url, { owner: 'buyer@example.com', scopes: ['read:products', 'read:stock'] });
  prisma = createPrisma({ url: app.url, poolMax: 2 });
});
afterAll(async () => {
  await prisma?.$disconnect();
  await app?.close();
});

type Key = { key: string };

const post = (body: unknown, key: Key | null = buyer, headers: Record<string, string> = {}) =>
  app.get('/api/orders', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key.key } : {}), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const getAs = (path: string, key: Key | null = buyer) => app.get(path, key ? { headers: { 'x-api-key': key.key } } : undefined);

async function gql(query: string, variables: Record<string, unknown> = {}, key: Key | null = buyer, headers: Record<string, string> = {}) {
  const res = await app.get('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key.key } : {}), ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: res.body, headers: res.headers };
}

const ORDER_GQL = /* GraphQL */ `
  fragment O on Order {
    id orderNumber status currency subtotal discount shippingCost tax total notes
    shippingAddress { fullName companyName phone email address city county postalCode }
    trackingNumber trackingCarrier trackingUrl createdAt
    items { id productId quantity price total product { id name slug price images } }
    buyer { id email name companyName phone }
    supplier { id companyName verified rating }
    history { status at actor note }
  }`;
const CREATE = `mutation($input: CreateOrderInput!) { createOrder(input: $input) { ...O } } ${ORDER_GQL}`;

async function counts() {
  const { rows } = await app.sql.query(`SELECT
    (SELECT count(*)::int FROM "Order") AS orders,
    (SELECT count(*)::int FROM "OrderItem") AS items,
    (SELECT count(*)::int FROM "IdempotencyRecord" WHERE "responseStatus" IS NULL) AS claims,
    (SELECT coalesce(sum(stock), 0)::int FROM "Product") AS stock`);
  return rows[0] as { orders: number; items: number; claims: number; stock: number };
}

const stockOf = async (id: string) => (await app.sql.query(`SELECT stock FROM "Product" WHERE id = $1`, [id])).rows[0].stock as number;

/** A JSON value as a GraphQL literal: `{supplierId: "x", items: [{quantity: 1}]}`. */
function graphqlLiteral(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(graphqlLiteral).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const fields = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${fields.map(([k, v]) => `${k}: ${graphqlLiteral(v)}`).join(', ')}}`;
  }
  return JSON.stringify(value);
}

const ORDER_KEYS = [
  'buyer', 'createdAt', 'currency', 'discount', 'id', 'items', 'notes', 'orderNumber', 'shippingAddress', 'shippingCost',
  'history', 'status', 'subtotal', 'supplier', 'tax', 'total', 'trackingCarrier', 'trackingNumber', 'trackingUrl',
].sort();

const NOT_FOUND_BODY = { success: false, error: { code: 'NOT_FOUND', message: 'Order not found' } };

describe('orders service (a hand-made caller)', () => {
  // The app's own factory, as the API face asks it: a key of `accountId` with `scopes`.
  let made: ReturnType<typeof testContexts> | undefined;
  afterAll(() => made?.close());
  const ctxFor = (accountId: string, scopes: string[], idempotencyKey: string | null = null): ApiContext => {
    made ??= testContexts(prisma);
    const { contexts } = made;
    const actor = { kind: 'key', ip: '127.0.0.1', keyId: 'k', accountId, plan: 'PRO', scopes, rateLimit: null, rateWindowSeconds: null } as const;
    return contexts.forApi({ actor, anonymous: () => actor, idempotencyKey });
  };

  // Scopes are the fields' to check (test/unit/field-rules.test.ts and the HTTP tests below): the
  // service trusts its caller, and refuses only to run without a key at all, as a programming error.
  it('creates, and finds only for its own account', async () => {
    const order = await createOrder(ctxFor(buyer.accountId, ['write:orders']), workedExample(f), {});
    expect(order.total.toString()).toBe('138.67');
    const own = ctxFor(buyer.accountId, ['read:orders']);
    expect((await orderById(own, buyerOf(own), order.id, {}))?.id).toBe(order.id);
    const other = ctxFor(rival.accountId, ['read:orders']);
    expect(await orderById(other, buyerOf(other), order.id, {})).toBeNull();
    const anonymous: ApiContext = { ...ctxFor(buyer.accountId, []), actor: { kind: 'anonymous', ip: '127.0.0.1' } };
    expect(() => buyerOf(anonymous)).toThrow(/must declare its scopes/);
  });
});

describe('authentication and scopes', () => {
  it('answers 401 without a key on every order path, REST and GraphQL', async () => {
    for (const res of [await getAs('/api/orders', null), await getAs('/api/orders/x', null), await post(workedExample(f), null)]) {
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    }
    const res = await gql(`{ orders { meta { total } } }`, {}, null);
    expect(res.body.errors[0].extensions.code).toBe('UNAUTHORIZED');
  });

  it('answers 403 naming the missing scope: read:orders to read, write:orders to create', async () => {
    const list = await getAs('/api/orders', noScopes);
    expect(list.status).toBe(403);
    expect(list.body.error).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: ['read:orders'] } });
    const create = await post(workedExample(f), buyerReadOnly);
    expect(create.status).toBe(403);
    expect(create.body.error).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: ['write:orders'] } });
    const mutation = await gql(CREATE, { input: workedExample(f) }, buyerReadOnly);
    expect(mutation.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: ['write:orders'] } });
  });

  it('checks the scope before the body: no key and a malformed body is 401', async () => {
    const res = await post('{not json', null);
    expect(res.status).toBe(401);
  });

  it('lets admin:all do everything', async () => {
    expect((await getAs('/api/orders', admin)).status).toBe(200);
    expect((await post(workedExample(f), admin)).status).toBe(201);
  });
});

describe('POST /api/orders', () => {
  it('creates a PENDING order: 201 with items, buyer and supplier, and the docs/api.md worked example totals', async () => {
    const before = { a: await stockOf(f.a.id), b: await stockOf(f.b.id), c: await stockOf(f.c.id) };
    const started = Date.now();
    const res = await post({ ...workedExample(f), notes: '  Livrare dimineața.\nSunați înainte.  ' });
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(res.body.success).toBe(true);
    const order = res.body.data;
    expect(Object.keys(order).sort()).toEqual(ORDER_KEYS);
    expect(order).toMatchObject({
      status: 'PENDING',
      currency: 'RON',
      ...WORKED_EXAMPLE_TOTALS,
      notes: 'Livrare dimineața.\nSunați înainte.',
      shippingAddress: null,
      trackingNumber: null,
      trackingCarrier: null,
      trackingUrl: null,
    });
    const [, ms, suffix] = /^ORD-(\d+)-([A-Z0-9]{6})$/.exec(order.orderNumber) ?? [];
    expect(Number(ms)).toBeGreaterThanOrEqual(started - 1000);
    expect(Number(ms)).toBeLessThanOrEqual(Date.now());
    expect(suffix).toBeDefined();
    expect(new Date(order.createdAt).getTime()).toBe(Number(ms));

    const { rows: [account] } = await app.sql.query(`SELECT * FROM "Account" WHERE id = $1`, [buyer.accountId]);
    expect(order.buyer).toEqual({ id: account.id, email: account.email, name: account.name, companyName: account.companyName, phone: account.phone });
    const { rows: [supplier] } = await app.sql.query(`SELECT * FROM "Supplier" WHERE id = $1`, [f.supplierId]);
    expect(order.supplier).toEqual({ id: supplier.id, companyName: supplier.companyName, verified: supplier.verified, rating: Number(supplier.rating) });
    expect(order.history).toEqual([{ status: 'PENDING', at: order.createdAt, actor: 'buyer', note: null }]);

    expect(order.items).toHaveLength(3);
    const byProduct = new Map(order.items.map((i: { productId: string }) => [i.productId, i]));
    expect(byProduct.get(f.a.id)).toMatchObject({ quantity: 3, price: 19.99, total: 59.97 });
    expect(byProduct.get(f.b.id)).toMatchObject({ quantity: 5, price: 7.45, total: 37.25 });
    expect(byProduct.get(f.c.id)).toMatchObject({ quantity: 1, price: 12.5, total: 12.5 });
    for (const item of order.items) {
      expect(Object.keys(item).sort()).toEqual(['id', 'price', 'product', 'productId', 'quantity', 'total']);
      expect(Object.keys(item.product).sort()).toEqual(['id', 'images', 'name', 'price', 'slug']);
      expect(item.product.id).toBe(item.productId);
    }

    // Stored as computed, with each line's VAT rate and VAT.
    const { rows: items } = await app.sql.query(`SELECT "productId", "vatRate"::text, tax::text FROM "OrderItem" WHERE "orderId" = $1`, [order.id]);
    expect(new Map(items.map((i) => [i.productId, [i.vatRate, i.tax]]))).toEqual(
      new Map([[f.a.id, ['0.21', '11.33']], [f.b.id, ['0.11', '3.69']], [f.c.id, ['0.00', '0.00']]]),
    );
    const { rows: [stored] } = await app.sql.query(`SELECT "couponCode", "buyerId", "supplierId" FROM "Order" WHERE id = $1`, [order.id]);
    expect(stored).toEqual({ couponCode: 'TEST10', buyerId: buyer.accountId, supplierId: f.supplierId });

    // Stock taken for tracked products only.
    expect(await stockOf(f.a.id)).toBe(before.a - 3);
    expect(await stockOf(f.b.id)).toBe(before.b - 5);
    expect(await stockOf(f.c.id)).toBe(before.c);

    // Reading it back gives the same representation.
    const again = await getAs(`/api/orders/${order.id}`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ success: true, data: order });
  });

  it('snapshots the price: a later catalogue change does not alter the order', async () => {
    const created = await post({ supplierId: f.supplierId, items: [{ productId: f.b.id, quantity: 2 }] });
    await app.sql.query(`UPDATE "Product" SET price = 99.99 WHERE id = $1`, [f.b.id]);
    try {
      const read = await getAs(`/api/orders/${created.body.data.id}`);
      expect(read.body.data.items[0]).toMatchObject({ price: 7.45, total: 14.9 });
      expect(read.body.data.items[0].product.price).toBe(99.99);
      expect(read.body.data.subtotal).toBe(14.9);
    } finally {
      await app.sql.query(`UPDATE "Product" SET price = 7.45 WHERE id = $1`, [f.b.id]);
    }
  });

  it('charges the shipping fee below the threshold and none from it (after discount), without VAT on shipping', async () => {
    // 24 × 19.99 = 479.76 < 500: fee. 26 × 19.99 = 519.74, − 10 % = 467.77 < 500: fee. 26 × 19.99 alone: free.
    const below = await post({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 24 }] });
    expect(below.body.data).toMatchObject({ subtotal: 479.76, shippingCost: SHIPPING_FEE, tax: 100.75, total: 605.41 });
    const discounted = await post({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 26 }], couponCode: 'TEST10' });
    expect(discounted.body.data).toMatchObject({ subtotal: 519.74, discount: 51.97, shippingCost: SHIPPING_FEE, tax: 98.23 });
    expect(discounted.body.data.total).toBe(590.9);
    const free = await post({ supplierId: f.supplierId, items: [{ productId: f.d.id, quantity: 10 }] });
    expect(free.body.data).toMatchObject({ subtotal: 1000, discount: 0, shippingCost: 0, tax: 210, total: 1210 });
    // Exactly the threshold is free: 5 × 100.00 = 500.00.
    const { rows } = await app.sql.query(`UPDATE "Product" SET "minOrder" = 1 WHERE id = $1 RETURNING id`, [f.d.id]);
    expect(rows).toHaveLength(1);
    try {
      const exactly = await post({ supplierId: f.supplierId, items: [{ productId: f.d.id, quantity: Math.round(FREE_SHIPPING_FROM / 100) }] });
      expect(exactly.body.data).toMatchObject({ subtotal: 500, shippingCost: 0 });
    } finally {
      await app.sql.query(`UPDATE "Product" SET "minOrder" = 10 WHERE id = $1`, [f.d.id]);
    }
  });

  it('applies a fixed coupon of any supplier, capped at the subtotal, case-insensitively', async () => {
    const fixed = await post({ supplierId: f.supplierId, items: [{ productId: f.b.id, quantity: 10 }], couponCode: 'fix30' });
    // 74.50 − 30.00 = 44.50 → VAT 11 % = 4.895 → 4.90 (half away from zero)
    expect(fixed.body.data).toMatchObject({ subtotal: 74.5, discount: 30, tax: 4.9, shippingCost: SHIPPING_FEE, total: 74.3 });
    const capped = await post({ supplierId: f.supplierId, items: [{ productId: f.b.id, quantity: 1 }], couponCode: 'FIX5000' });
    expect(capped.body.data).toMatchObject({ subtotal: 7.45, discount: 7.45, tax: 0, total: SHIPPING_FEE });
  });

  it('resolves addressId to a copy of one of the caller’s saved addresses', async () => {
    const { rows: [address] } = await app.sql.query(`SELECT * FROM "Address" WHERE "accountId" = $1 ORDER BY id LIMIT 1`, [buyer.accountId]);
    const res = await post({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }], addressId: address.id });
    expect(res.status).toBe(201);
    expect(res.body.data.shippingAddress).toEqual({
      fullName: address.fullName,
      companyName: address.companyName,
      phone: address.phone,
      email: address.email,
      address: address.address,
      city: address.city,
      county: address.county,
      postalCode: address.postalCode,
    });
  });

  it('stores a shippingAddress given in the body, trimmed, with absent optional fields as null', async () => {
    const shippingAddress = { fullName: ' Ion Ionescu ', phone: '+40 721 000 000', address: 'Str. Lungă 1', city: 'Brașov', county: 'Brașov', postalCode: '500001' };
    const res = await post({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1, variantId: null }], shippingAddress });
    expect(res.status).toBe(201);
    expect(res.body.data.shippingAddress).toEqual({ ...shippingAddress, fullName: 'Ion Ionescu', companyName: null, email: null });
  });

  it('retries with a fresh order number after a collision', async () => {
    const existing = (await app.sql.query(`SELECT "orderNumber" FROM "Order" LIMIT 1`)).rows[0].orderNumber as string;
    const next = orderNumbers.next;
    let calls = 0;
    orderNumbers.next = (now?: number) => (++calls === 1 ? existing : next(now));
    try {
      const res = await post({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }] });
      expect(res.status).toBe(201);
      expect(res.body.data.orderNumber).not.toBe(existing);
      expect(calls).toBe(2);
    } finally {
      orderNumbers.next = next;
    }
  });
});

describe('POST /api/orders: invalid orders', () => {
  const ok = () => ({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }, { productId: f.b.id, quantity: 1 }] });
  const item = (i: number, patch: Record<string, unknown>) => {
    const body = ok();
    body.items[i] = { ...body.items[i]!, ...patch } as { productId: string; quantity: number };
    return body;
  };
  const address = { fullName: 'A', phone: '1', address: 'x', city: 'c', county: 'c', postalCode: '1' };

  // GraphQL's own type checks come first for values its input types cannot hold (a string
  // quantity, a missing required field, an unknown field): those cases are marked `typed`.
  const typed = true;
  const cases: [string, () => unknown, Record<string, string>, boolean?][] = [
    ['no supplierId', () => ({ items: ok().items }), { supplierId: 'is required' }, typed],
    ['no items', () => ({ supplierId: f.supplierId }), { items: 'is required' }, typed],
    ['items not an array', () => ({ ...ok(), items: {} }), { items: 'must be an array of items' }, typed],
    ['empty items', () => ({ ...ok(), items: [] }), { items: 'must contain at least one item' }],
    ['101 items', () => ({ ...ok(), items: Array.from({ length: 101 }, (_v, i) => ({ productId: `p${i}`, quantity: 1 })) }), { items: 'must contain at most 100 items' }],
    ['quantity 0', () => item(1, { quantity: 0 }), { 'items[1].quantity': 'must be an integer between 1 and 1000000' }],
    ['quantity 1.5', () => item(1, { quantity: 1.5 }), { 'items[1].quantity': 'must be an integer between 1 and 1000000' }, typed],
    ['quantity as a string', () => item(0, { quantity: '2' }), { 'items[0].quantity': 'must be an integer between 1 and 1000000' }, typed],
    ['quantity too large', () => item(0, { quantity: 1_000_001 }), { 'items[0].quantity': 'must be an integer between 1 and 1000000' }],
    ['missing quantity', () => ({ ...ok(), items: [{ productId: f.a.id }] }), { 'items[0].quantity': 'is required' }, typed],
    ['missing productId', () => ({ ...ok(), items: [{ quantity: 1 }] }), { 'items[0].productId': 'is required' }, typed],
    ['the same product twice', () => item(1, { productId: f.a.id }), { 'items[1].productId': 'is already in the order: list each product once' }],
    ['a variantId', () => item(0, { variantId: 'v1' }), { 'items[0].variantId': 'must be absent or null: no product has variants' }],
    ['an unknown item field', () => item(1, { colour: 'red' }), { 'items[1].colour': 'is not a recognised field' }, typed],
    ['an unknown field', () => ({ ...ok(), priority: 'high' }), { priority: 'is not a recognised field' }, typed],
    ['notes too long', () => ({ ...ok(), notes: 'x'.repeat(2001) }), { notes: 'must be at most 2000 characters' }],
    ['notes not text', () => ({ ...ok(), notes: 5 }), { notes: 'must be a string' }, typed],
    ['an incomplete shippingAddress', () => ({ ...ok(), shippingAddress: { ...address, city: undefined } }), { 'shippingAddress.city': 'is required' }, typed],
    ['a blank shippingAddress field', () => ({ ...ok(), shippingAddress: { ...address, fullName: '   ' } }), { 'shippingAddress.fullName': 'must not be empty' }],
    ['a bad e-mail', () => ({ ...ok(), shippingAddress: { ...address, email: 'nope' } }), { 'shippingAddress.email': 'must be an e-mail address' }],
    ['a too long postal code', () => ({ ...ok(), shippingAddress: { ...address, postalCode: '1'.repeat(21) } }), { 'shippingAddress.postalCode': 'must be at most 20 characters' }],
    [
      'addressId and shippingAddress',
      () => ({ ...ok(), addressId: 'abc', shippingAddress: address }),
      { shippingAddress: 'cannot be combined with addressId: send one or the other', addressId: 'is not one of your saved addresses' },
    ],
    ['an unknown supplier', () => ({ ...ok(), supplierId: 'nope' }), { supplierId: 'is not an active supplier' }],
    ['an inactive supplier', () => ({ ...ok(), supplierId: f.inactiveSupplierId }), { supplierId: 'is not an active supplier' }],
    ['a malformed supplierId', () => ({ ...ok(), supplierId: 'a b' }), { supplierId: 'must be 1–100 letters, digits, "-" or "_"' }],
    ['an unknown product', () => item(1, { productId: 'nope' }), { 'items[1].productId': 'is not an active product' }],
    ['an inactive product', () => item(0, { productId: f.inactive.id }), { 'items[0].productId': 'is not an active product' }],
    ['another supplier’s product', () => item(1, { productId: f.foreign.id }), { 'items[1].productId': 'is sold by another supplier' }],
    ['less than the minimum order', () => item(1, { productId: f.d.id, quantity: 9 }), { 'items[1].quantity': "must be at least 10, the product's minimum order" }],
    ['someone else’s address', () => ({ ...ok(), addressId: 'RIVAL_ADDRESS' }), { addressId: 'is not one of your saved addresses' }],
    ['an unknown coupon', () => ({ ...ok(), couponCode: 'NOPE' }), { couponCode: 'is not a valid coupon' }],
    ['a coupon pattern (%)', () => ({ ...ok(), couponCode: 'TEST1%' }), { couponCode: 'is not a valid coupon' }],
    ['a coupon pattern (_)', () => ({ ...ok(), couponCode: 'TEST1_' }), { couponCode: 'is not a valid coupon' }],
    ['an inactive coupon', () => ({ ...ok(), couponCode: 'OFF' }), { couponCode: 'is not a valid coupon' }],
    ['another supplier’s coupon', () => ({ ...ok(), couponCode: 'OTHER5' }), { couponCode: 'does not apply to this supplier' }],
    ['a coupon not valid yet', () => ({ ...ok(), couponCode: 'LATER' }), { couponCode: 'is not valid yet' }],
    ['an expired coupon', () => ({ ...ok(), couponCode: 'PAST' }), { couponCode: 'has expired' }],
    ['a coupon above the subtotal', () => ({ ...ok(), couponCode: 'MIN1000' }), { couponCode: 'requires a subtotal of at least 1000.00 RON' }],
  ];

  it.each(cases)('%s → 400 naming the field, through REST and GraphQL, leaving no row behind', async (_name, body, details, gqlTyped) => {
    let input = body() as Record<string, unknown>;
    if (input.addressId === 'RIVAL_ADDRESS') {
      const { rows } = await app.sql.query(`SELECT id FROM "Address" WHERE "accountId" <> $1 LIMIT 1`, [buyer.accountId]);
      input = { ...input, addressId: rows[0].id };
    }
    const before = await counts();
    const res = await post(input);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: { code: 'VALIDATION_ERROR', message: 'Invalid order', details } });

    if (gqlTyped) {
      // Written into the document, such a value fails GraphQL's own validation.
      const inline = await gql(`mutation { createOrder(input: ${graphqlLiteral(input)}) { id } }`);
      expect(inline.body.data ?? null).toBeNull();
      expect(inline.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    } else {
      const viaGraphql = await gql(CREATE, { input });
      expect(viaGraphql.body.data).toEqual({ createOrder: null });
      expect(viaGraphql.body.errors[0].extensions).toEqual({ code: 'VALIDATION_ERROR', details });
    }

    expect(await counts()).toEqual(before);
  });

  it('names every broken rule in one 400: the body’s own and the catalogue’s (REST, and GraphQL as far as its types let a value through)', async () => {
    const before = await counts();
    const input = {
      supplierId: f.supplierId,
      items: [
        { productId: f.a.id, quantity: 0 },
        { productId: f.d.id, quantity: 9 },
      ],
      couponCode: 'NOPE',
    };
    const shape = { 'items[0].quantity': 'must be an integer between 1 and 1000000' };
    const catalogue = { 'items[1].quantity': "must be at least 10, the product's minimum order", couponCode: 'is not a valid coupon' };
    const res = await post({ ...input, priority: 'high' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      error: { code: 'VALIDATION_ERROR', message: 'Invalid order', details: { ...shape, priority: 'is not a recognised field', ...catalogue } },
    });
    // An unknown field cannot reach createOrder through GraphQL: its input type refuses it first.
    const viaGraphql = await gql(CREATE, { input });
    expect(viaGraphql.body.data).toEqual({ createOrder: null });
    expect(viaGraphql.body.errors).toEqual([expect.objectContaining({ message: 'Invalid order', extensions: { code: 'VALIDATION_ERROR', details: { ...shape, ...catalogue } } })]);
    expect(await counts()).toEqual(before);
  });

  it('reports every bad item at once', async () => {
    const res = await post({ supplierId: f.supplierId, items: [{ productId: 'nope', quantity: 1 }, { productId: f.foreign.id, quantity: 1 }, { productId: f.d.id, quantity: 1 }] });
    expect(Object.keys(res.body.error.details).sort()).toEqual(['items[0].productId', 'items[1].productId', 'items[2].quantity']);
  });

  it('refuses an order whose total does not fit the money columns', async () => {
    await app.sql.query(`UPDATE "Product" SET price = 9999999999.99, stock = 1000000 WHERE id = $1`, [f.e.id]);
    try {
      const res = await post({ supplierId: f.supplierId, items: [{ productId: f.e.id, quantity: 2 }] });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual({ 'items[0].quantity': 'makes the line total exceed 9999999999.99 RON', items: 'make the order total exceed 9999999999.99 RON' });
    } finally {
      await app.sql.query(`UPDATE "Product" SET price = 0.10, stock = 10 WHERE id = $1`, [f.e.id]);
    }
  });

  it('answers 409 with requested and available when stock is short, and leaves everything as it was', async () => {
    await app.sql.query(`UPDATE "Product" SET stock = 3 WHERE id = $1`, [f.b.id]);
    try {
      const before = await counts();
      const res = await post({
        supplierId: f.supplierId,
        items: [{ productId: f.a.id, quantity: 1 }, { productId: f.b.id, quantity: 4 }, { productId: f.c.id, quantity: 50 }],
      });
      expect(res.status).toBe(409);
      // C is not tracked: its stock (2) does not limit orders.
      expect(res.body).toEqual({
        success: false,
        error: { code: 'CONFLICT', message: 'Not enough stock for this order', details: { 'items[1]': { productId: f.b.id, requested: 4, available: 3 } } },
      });
      expect(await counts()).toEqual(before);
      const viaGraphql = await gql(CREATE, { input: { supplierId: f.supplierId, items: [{ productId: f.b.id, quantity: 4 }] } });
      expect(viaGraphql.body.errors[0].extensions).toEqual({ code: 'CONFLICT', details: { 'items[0]': { productId: f.b.id, requested: 4, available: 3 } } });
      expect(await counts()).toEqual(before);
      expect((await post({ supplierId: f.supplierId, items: [{ productId: f.b.id, quantity: 3 }] })).status).toBe(201);
      expect(await stockOf(f.b.id)).toBe(0);
    } finally {
      await app.sql.query(`UPDATE "Product" SET stock = 1000 WHERE id = $1`, [f.b.id]);
    }
  });
});

describe('POST /api/orders: the request itself', () => {
  it('wants Content-Type: application/json (415)', async () => {
    for (const type of [null, 'text/plain', 'application/x-www-form-urlencoded', 'application/jsonp']) {
      const res = await app.get('/api/orders', {
        method: 'POST',
        headers: { 'x-api-key': buyer.key, ...(type ? { 'content-type': type } : {}) },
        body: JSON.stringify(workedExample(f)),
      });
      expect(res.status).toBe(415);
      expect(res.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
    expect((await post(workedExample(f), buyer, { 'content-type': 'Application/JSON; charset=utf-8' })).status).toBe(201);
  });

  it('refuses bodies over 1 MiB (413), declared or streamed', async () => {
    const big = JSON.stringify({ ...workedExample(f), notes: 'x'.repeat(1024 * 1024) });
    const res = await post(big);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode(' '.repeat(64 * 1024)));
        controller.close();
      },
    });
    const streamed = await app.get('/api/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': buyer.key },
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
  });

  it('answers malformed JSON, an empty body and a non-object body with 400', async () => {
    expect((await post('{"supplierId": ')).body).toEqual({ success: false, error: { code: 'VALIDATION_ERROR', message: 'Malformed JSON body', details: { body: 'is not valid JSON' } } });
    expect((await post('')).body.error.details).toEqual({ body: 'is required' });
    expect((await post('[1]')).body.error.details).toEqual({ body: 'must be a JSON object' });
    expect((await post('null')).body.error.details).toEqual({ body: 'must be a JSON object' });
  });

  it('refuses query parameters on POST and lists the allowed methods on 405', async () => {
    expect((await app.get(`/api/orders?x=1`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': buyer.key }, body: '{}' })).body.error.details).toEqual({ x: 'is not a recognised parameter' });
    const cases: [string, string, string][] = [
      ['DELETE', '/api/orders', 'GET, HEAD, POST'],
      ['PUT', '/api/orders/abc', 'GET, HEAD'],
      ['POST', '/api/orders/abc', 'GET, HEAD'],
      ['POST', '/api/products', 'GET, HEAD'],
      ['POST', '/api/v1/stock', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await app.get(path, { method, headers: { 'x-api-key': buyer.key } });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      expect(res.body.error.code).toBe('METHOD_NOT_ALLOWED');
    }
  });
});

describe('GET /api/orders and /api/orders/{id}', () => {
  let mine: string[];
  let theirs: string;
  let listerKey: Key;

  beforeAll(async () => {
    const lister = await createTestKey(app.url, { owner: 'lister@example.com', scopes: ['read:orders', 'write:orders'] });
    mine = [];
    for (let i = 0; i < 3; i++) mine.push((await post({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }] }, lister)).body.data.id);
    // One with another status, as an operator would set it.
    await app.sql.query(`UPDATE "Order" SET status = 'SHIPPED', "trackingNumber" = 'AWB1' WHERE id = $1`, [mine[0]]);
    theirs = (await post({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }] }, rival)).body.data.id;
    listerKey = lister;
  });

  it('lists only the account’s orders, newest first then id, with meta', async () => {
    const res = await getAs('/api/orders', listerKey);
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ page: 1, limit: 12, total: 3, totalPages: 1 });
    const { rows } = await app.sql.query(`SELECT id FROM "Order" WHERE id = ANY($1) ORDER BY "createdAt" DESC, id ASC`, [mine]);
    expect(res.body.data.map((o: { id: string }) => o.id)).toEqual(rows.map((r) => r.id));
    expect(Object.keys(res.body.data[0]).sort()).toEqual(ORDER_KEYS);

    const all = await getAs('/api/orders?limit=100', buyer);
    const ids = all.body.data.map((o: { id: string }) => o.id);
    expect(ids).not.toContain(theirs);
    const { rows: [n] } = await app.sql.query(`SELECT count(*)::int AS n FROM "Order" WHERE "buyerId" = $1`, [buyer.accountId]);
    expect(all.body.meta.total).toBe(n.n);
  });

  it('is the same list from any key of the account', async () => {
    const a = await getAs('/api/orders?limit=5', buyer);
    const b = await getAs('/api/orders?limit=5', buyerReadOnly);
    expect(b.body).toEqual(a.body);
  });

  it('filters by status, pages, and validates its parameters', async () => {
    const shipped = await getAs('/api/orders?status=SHIPPED', listerKey);
    expect(shipped.body.data.map((o: { id: string }) => o.id)).toEqual([mine[0]]);
    expect(shipped.body.data[0].trackingNumber).toBe('AWB1');
    expect((await getAs('/api/orders?status=PENDING', listerKey)).body.meta.total).toBe(2);
    expect((await getAs('/api/orders?status=REFUNDED', listerKey)).body).toEqual({ success: true, data: [], meta: { page: 1, limit: 12, total: 0, totalPages: 0 } });
    const page2 = await getAs('/api/orders?page=2&limit=2', listerKey);
    expect(page2.body.meta).toEqual({ page: 2, limit: 2, total: 3, totalPages: 2 });
    expect(page2.body.data).toHaveLength(1);
    expect((await getAs('/api/orders?page=9', listerKey)).body.data).toEqual([]);
    const bad = await getAs('/api/orders?status=pending&limit=101&colour=red', listerKey);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual({
      status: 'must be one of PENDING, CONFIRMED, PROCESSING, SHIPPED, DELIVERED, CANCELLED, REFUNDED',
      limit: 'must be an integer between 1 and 100',
      colour: 'is not a recognised parameter',
    });
  });

  it('answers another account’s order exactly like a nonexistent one', async () => {
    const other = await getAs(`/api/orders/${theirs}`, listerKey);
    const missing = await getAs('/api/orders/doesnotexist', listerKey);
    const malformed = await getAs('/api/orders/%20bad%20', listerKey);
    for (const res of [other, missing, malformed]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND_BODY);
    }
    expect((await getAs(`/api/orders/${theirs}`, rival)).status).toBe(200);
  });

  it('answers the same through GraphQL: own orders, null for another account’s', async () => {
    const res = await gql(
      `query($id: ID!, $theirs: ID!) {
        orders(limit: 100) { items { id } meta { total } }
        shipped: orders(status: SHIPPED) { items { id status trackingNumber } }
        order(id: $id) { id items { product { slug } } }
        theirs: order(id: $theirs) { id }
      }`,
      { id: mine[1], theirs },
      listerKey,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.orders.meta.total).toBe(3);
    expect(new Set(res.body.data.orders.items.map((o: { id: string }) => o.id))).toEqual(new Set(mine));
    expect(res.body.data.shipped.items).toEqual([{ id: mine[0], status: 'SHIPPED', trackingNumber: 'AWB1' }]);
    expect(res.body.data.order.id).toBe(mine[1]);
    expect(res.body.data.theirs).toBeNull();
    const rest = await getAs(`/api/orders/${mine[1]}`, listerKey);
    const full = await gql(`query($id: ID!) { order(id: $id) { ...O } } ${ORDER_GQL}`, { id: mine[1] }, listerKey);
    expect(full.body.data.order).toEqual(rest.body.data);
  });

  it('loads a page of orders with items, products, buyer and supplier in a constant number of statements', async () => {
    const many = await createTestKey(app.url, { owner: 'many@example.com', scopes: ['read:orders', 'write:orders'] });
    for (let i = 0; i < 20; i++) {
      await post({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }, { productId: f.b.id, quantity: 1 }] }, many);
    }
    const sizes: Record<string, number>[] = [];
    // Statements of the order query itself, per table: the key's authentication (statements on
    // "ApiKey") is not what is measured.
    const measured = async (request: () => Promise<unknown>) => {
      const before = app.statements.length;
      await request();
      const sent = app.statements.slice(before).filter((sql) => !tablesOf(sql).includes('ApiKey'));
      return { ...byTable(sent), all: sent.length };
    };
    for (const limit of [1, 5, 20]) {
      sizes.push(await measured(async () => expect((await getAs(`/api/orders?limit=${limit}`, many)).body.data).toHaveLength(limit)));
      const query = `query($limit: Int) { orders(limit: $limit) { items { ...O } meta { total } } } ${ORDER_GQL}`;
      sizes.push(await measured(async () => expect((await gql(query, { limit }, many)).body.data.orders.items).toHaveLength(limit)));
    }
    // Every table of the page is read (orders, their items and products, buyer, supplier)…
    for (const size of sizes) expect(Object.keys(size)).toEqual(expect.arrayContaining(['Order', 'OrderItem', 'Product', 'Account', 'Supplier']));
    // …and as often for 1 order as for 5 and 20, on each interface.
    expect(sizes[2]).toEqual(sizes[0]);
    expect(sizes[4]).toEqual(sizes[0]);
    expect(sizes[3]).toEqual(sizes[1]);
    expect(sizes[5]).toEqual(sizes[1]);
  });
});

describe('createOrder through GraphQL', () => {
  it('creates the same order as REST would, with the docs/api.md totals', async () => {
    const res = await gql(CREATE, { input: workedExample(f) });
    expect(res.body.errors).toBeUndefined();
    const order = res.body.data.createOrder;
    expect(order).toMatchObject({ status: 'PENDING', currency: 'RON', ...WORKED_EXAMPLE_TOTALS });
    const rest = await getAs(`/api/orders/${order.id}`);
    expect(rest.body.data).toEqual(order);
  });

  it('exposes each line’s VAT rate and VAT', async () => {
    const res = await gql(`mutation($input: CreateOrderInput!) { createOrder(input: $input) { items { productId vatRate tax } } }`, { input: workedExample(f) });
    expect(new Set(res.body.data.createOrder.items)).toEqual(
      new Set([{ productId: f.a.id, vatRate: 0.21, tax: 11.33 }, { productId: f.b.id, vatRate: 0.11, tax: 3.69 }, { productId: f.c.id, vatRate: 0, tax: 0 }]),
    );
  });
});

describe('Idempotency-Key', () => {
  const body = () => ({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 2 }], notes: 'idempotent' });

  it('replays the first response for the same key and body, without a second order', async () => {
    const before = await counts();
    const first = await post(body(), buyer, { 'idempotency-key': 'order-1' });
    expect(first.status).toBe(201);
    // Key order in the body does not matter: the body is compared canonically.
    const { notes, items, supplierId } = body();
    const second = await post({ notes, items, supplierId }, buyer, { 'idempotency-key': 'order-1' });
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    const after = await counts();
    expect(after.orders).toBe(before.orders + 1);
    expect(after.stock).toBe(before.stock - 2);
  });

  it('replays the very same bytes even after the catalogue changed', async () => {
    const first = await post(body(), buyer, { 'idempotency-key': 'order-bytes' });
    await app.sql.query(`UPDATE "Product" SET name = name || ' (nou)' WHERE id = $1`, [f.a.id]);
    try {
      const again = await post(body(), buyer, { 'idempotency-key': 'order-bytes' });
      expect(again.body).toEqual(first.body);
      expect((await getAs(`/api/orders/${first.body.data.id}`)).body.data.items[0].product.name).toMatch(/ \(nou\)$/);
    } finally {
      await app.sql.query(`UPDATE "Product" SET name = regexp_replace(name, ' \\(nou\\)$', '') WHERE id = $1`, [f.a.id]);
    }
  });

  it('answers 409 for the same key with another body', async () => {
    await post(body(), buyer, { 'idempotency-key': 'order-2' });
    const before = await counts();
    const res = await post({ ...body(), notes: 'another' }, buyer, { 'idempotency-key': 'order-2' });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'CONFLICT', details: { 'Idempotency-Key': 'was used with another body in the last 24 hours' } });
    expect(await counts()).toEqual(before);
  });

  it('keeps keys per account: the same key from another account is another order', async () => {
    const mine = await post(body(), buyer, { 'idempotency-key': 'shared-key' });
    const theirs = await post(body(), rival, { 'idempotency-key': 'shared-key' });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
  });

  it('works across REST and GraphQL, per account', async () => {
    const rest = await post(body(), buyer, { 'idempotency-key': 'cross' });
    const viaGraphql = await gql(CREATE, { input: body() }, admin, { 'idempotency-key': 'cross' });
    // admin is another account: a new order.
    expect(viaGraphql.body.data.createOrder.id).not.toBe(rest.body.data.id);
    const sameAccount = await gql(CREATE, { input: body() }, buyer, { 'idempotency-key': 'cross' });
    expect(sameAccount.body.data.createOrder).toEqual(rest.body.data);
    const gqlFirst = await gql(CREATE, { input: body() }, buyer, { 'idempotency-key': 'gql-first' });
    const restAfter = await post(body(), buyer, { 'idempotency-key': 'gql-first' });
    expect(restAfter.status).toBe(201);
    expect(restAfter.headers.get('idempotent-replayed')).toBe('true');
    expect(restAfter.body.data).toEqual(gqlFirst.body.data.createOrder);
  });

  it('replays a rejection (400 or 409) with its key, and frees nothing for another body', async () => {
    const bad = { supplierId: f.supplierId, items: [{ productId: f.d.id, quantity: 1 }] };
    const first = await post(bad, buyer, { 'idempotency-key': 'rejected' });
    expect(first.status).toBe(400);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post(bad, buyer, { 'idempotency-key': 'rejected' });
    expect(again.status).toBe(400);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);

    await app.sql.query(`UPDATE "Product" SET stock = 1 WHERE id = $1`, [f.e.id]);
    try {
      const short = { supplierId: f.supplierId, items: [{ productId: f.e.id, quantity: 2 }] };
      const s1 = await post(short, buyer, { 'idempotency-key': 'short' });
      expect(s1.status).toBe(409);
      await app.sql.query(`UPDATE "Product" SET stock = 10 WHERE id = $1`, [f.e.id]);
      const s2 = await post(short, buyer, { 'idempotency-key': 'short' });
      expect(s2.status).toBe(409);
      expect(s2.body).toEqual(s1.body);
      expect(await stockOf(f.e.id)).toBe(10);
    } finally {
      await app.sql.query(`UPDATE "Product" SET stock = 10 WHERE id = $1`, [f.e.id]);
    }
  });

  it('does not store a body that fails validation, nor keep the claim after an unexpected failure', async () => {
    const invalid = await post({ supplierId: f.supplierId, items: [] }, buyer, { 'idempotency-key': 'shape' });
    expect(invalid.status).toBe(400);
    expect((await post(body(), buyer, { 'idempotency-key': 'shape' })).status).toBe(201);

    const next = orderNumbers.next;
    orderNumbers.next = () => {
      throw new Error('boom');
    };
    let failed;
    try {
      failed = await post(body(), buyer, { 'idempotency-key': 'crash' });
    } finally {
      orderNumbers.next = next;
    }
    expect(failed.status).toBe(500);
    expect(failed.body.error).toEqual({ code: 'INTERNAL_ERROR', message: 'An internal error occurred' });
    expect((await counts()).claims).toBe(0);
    const retry = await post(body(), buyer, { 'idempotency-key': 'crash' });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it('forgets a key after 24 hours', async () => {
    const first = await post(body(), buyer, { 'idempotency-key': 'old' });
    const { rows } = await app.sql.query(
      `SELECT extract(epoch FROM "expiresAt" - "createdAt")::int AS ttl FROM "IdempotencyRecord" WHERE key = 'old' AND "accountId" = $1`,
      [buyer.accountId],
    );
    expect(rows[0].ttl).toBe(24 * 3600);
    await app.sql.query(`UPDATE "IdempotencyRecord" SET "expiresAt" = now() - interval '1 second' WHERE key = 'old'`);
    const later = await post({ ...body(), notes: 'a new body is fine too' }, buyer, { 'idempotency-key': 'old' });
    expect(later.status).toBe(201);
    expect(later.body.data.id).not.toBe(first.body.data.id);
  });

  it('validates the key: 1–255 printable ASCII characters', async () => {
    for (const key of ['x'.repeat(256), 'tab\there']) {
      const res = await post(body(), buyer, { 'idempotency-key': key });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual({ 'Idempotency-Key': 'must be 1–255 printable ASCII characters' });
    }
    expect((await post(body(), buyer, { 'idempotency-key': 'x'.repeat(255) })).status).toBe(201);
  });
});
