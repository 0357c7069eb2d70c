import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey, type TestKey } from './helpers/keys.js';

// A supplier's members write its products' stock and prices (PATCH /api/v1/stock/{productId},
// PATCH /api/v1/prices/{productId}, GraphQL updateStock/updatePrice): validated exactly, their
// own supplier's products only, and a price seen by every list, total and search at once, on
// every instance.

let app: TestApp;
/** A second instance on the same database. */
let peer: TestApp;
let supplierId: string;
let otherSupplierId: string;
/** Active products of supplierId; `own` has no compareAtPrice to begin with. */
let own: { id: string; slug: string; name: string };
let own2: { id: string };
let foreign: { id: string };
let writer: TestKey;
let readerOnly: TestKey;
let notMember: TestKey;

beforeAll(async () => {
  app = await startTestApp();
  peer = await startTestApp({ url: app.url });
  const { rows: suppliers } = await app.sql.query<{ id: string }>(
    `SELECT s.id FROM "Supplier" s WHERE s."isActive" AND (SELECT count(*) FROM "Product" p WHERE p."supplierId" = s.id AND p."isActive") >= 2 ORDER BY s.id LIMIT 2`,
  );
  supplierId = suppliers[0]!.id;
  otherSupplierId = suppliers[1]!.id;
  const { rows } = await app.sql.query(`SELECT id, slug, name FROM "Product" WHERE "supplierId" = $1 AND "isActive" ORDER BY id LIMIT 2`, [supplierId]);
  own = rows[0];
  own2 = rows[1];
  await app.sql.query(`UPDATE "Product" SET price = 50, "compareAtPrice" = NULL, "vatRate" = 0.21, "vatCategory" = 'STANDARD' WHERE id = $1`, [own.id]);
  foreign = (await app.sql.query(`SELECT id FROM "Product" WHERE "supplierId" = $1 ORDER BY id LIMIT 1`, [otherSupplierId])).rows[0];
  writer = await createTestKey(app.url, { owner: 'stock@supplier.example', scopes: ['write:products', 'read:stock', 'read:prices'] });
  readerOnly = await createTestKey(app.url, { owner: 'stock@supplier.example', scopes: ['read:stock', 'read:prices', 'write:orders'] });
  notMember = await createTestKey(app.url, { owner: 'nobody@example.com', scopes: ['admin:all'] });
  await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [writer.accountId, supplierId]);
});
afterAll(async () => {
  await peer?.close();
  await app?.close();
});

type Key = { key: string };
const patch = (what: 'stock' | 'prices', id: string, key: Key | null, body: unknown, on: TestApp = app) =>
  on.get(`/api/v1/${what}/${id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key.key } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

async function gql(query: string, variables: Record<string, unknown>, key: Key | null) {
  const res = await app.get('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key.key } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return res.body as { data?: Record<string, any> | null; errors?: { extensions?: { code?: string; details?: any } }[] };
}

const row = async (id: string) =>
  (
    await app.sql.query(
      `SELECT stock, "lowStockThreshold", "trackInventory", price::text, "compareAtPrice"::text, "vatRate"::text, "vatCategory"::text, "updatedAt" FROM "Product" WHERE id = $1`,
      [id],
    )
  ).rows[0];

describe('PATCH /api/v1/stock/{productId}', () => {
  it('changes only the fields sent and answers the StockRecord', async () => {
    const before = await row(own.id);
    const res = await patch('stock', own.id, writer, { stock: 42, lowStockThreshold: 5 });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      success: true,
      data: { id: own.id, sku: expect.anything(), stock: 42, lowStockThreshold: 5, trackInventory: before.trackInventory, minOrder: expect.any(Number), isActive: true, updatedAt: expect.any(String) },
    });
    const after = await row(own.id);
    expect(after).toMatchObject({ stock: 42, lowStockThreshold: 5, trackInventory: before.trackInventory, price: before.price });
    expect(after.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
    expect((await patch('stock', own.id, writer, { trackInventory: false })).body.data).toMatchObject({ stock: 42, trackInventory: false });
    // The read endpoint answers the record the write answered.
    const written = await patch('stock', own.id, writer, { trackInventory: true });
    const read = await app.get(`/api/v1/stock?productId=${own.id}`, { headers: { 'x-api-key': writer.key } });
    expect(read.body.data).toEqual(written.body.data);
  });

  it('refuses bad values with 400 naming each field, and changes nothing', async () => {
    const before = await row(own.id);
    const cases: [unknown, string[]][] = [
      [{ stock: -1 }, ['stock']],
      [{ stock: 1.5 }, ['stock']],
      [{ stock: '5' }, ['stock']],
      [{ stock: 1_000_000_001 }, ['stock']],
      [{ stock: null }, ['stock']],
      [{ lowStockThreshold: -3, trackInventory: 'yes' }, ['lowStockThreshold', 'trackInventory']],
      [{ stock: 1, sku: 'X' }, ['sku']],
      [{}, ['input']],
      [[], ['body']],
      ['{"stock": ', ['body']],
    ];
    for (const [body, fields] of cases) {
      const res = await patch('stock', own.id, writer, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(Object.keys(res.body.error.details).sort(), JSON.stringify(body)).toEqual(fields);
    }
    expect(await row(own.id)).toEqual(before);
  });

  it('another supplier’s product is 404 like an id never used; permissions are checked first', async () => {
    const theirs = await patch('stock', foreign.id, writer, { stock: 1 });
    const never = await patch('stock', 'c000000000000000000000000', writer, { stock: 1 });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual(never.body);
    expect(theirs.body.error).toEqual({ code: 'NOT_FOUND', message: 'Product not found' });
    const scope = await patch('stock', own.id, readerOnly, { stock: -1 });
    expect(scope.status).toBe(403);
    expect(scope.body.error.details).toEqual({ requiredScopes: ['write:products'] });
    const membership = await patch('stock', own.id, notMember, { stock: -1 });
    expect(membership.status).toBe(403);
    expect(membership.body.error.details).toEqual({ requiredMembership: 'supplier' });
    expect((await patch('stock', own.id, null, { stock: 1 })).status).toBe(401);
    const get = await app.get(`/api/v1/stock/${own.id}`, { headers: { 'x-api-key': writer.key } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('PATCH');
  });

  it('GraphQL updateStock: the same rules', async () => {
    const UPDATE = `mutation($id: ID!, $input: StockUpdateInput!) { updateStock(productId: $id, input: $input) { id stock } }`;
    expect((await gql(UPDATE, { id: own2.id, input: { stock: 7 } }, writer)).data?.updateStock).toEqual({ id: own2.id, stock: 7 });
    expect((await gql(UPDATE, { id: foreign.id, input: { stock: 7 } }, writer)).data?.updateStock).toBeNull();
    expect((await gql(UPDATE, { id: own2.id, input: { stock: -7 } }, writer)).errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { stock: expect.any(String) } });
    expect((await gql(UPDATE, { id: own2.id, input: { stock: 7 } }, notMember)).errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
    expect((await row(own2.id)).stock).toBe(7);
  });
});

describe('PATCH /api/v1/prices/{productId}', () => {
  it('takes exact decimals, as numbers or strings, and answers the PriceRecord', async () => {
    const res = await patch('prices', own.id, writer, { price: 19.99, compareAtPrice: '24.90' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: own.id, sku: expect.anything(), price: 19.99, compareAtPrice: 24.9, vatRate: 0.21, updatedAt: expect.any(String) });
    expect(await row(own.id)).toMatchObject({ price: '19.99', compareAtPrice: '24.90' });
    const rate = await patch('prices', own.id, writer, { vatRate: '0.110' });
    expect(rate.body.data.vatRate).toBe(0.11);
    expect(await row(own.id)).toMatchObject({ vatRate: '0.11', vatCategory: 'REDUCED', price: '19.99' });
    const cleared = await patch('prices', own.id, writer, { compareAtPrice: null });
    expect(cleared.body.data.compareAtPrice).toBeNull();
    expect((await row(own.id)).compareAtPrice).toBeNull();
  });

  it('refuses what is not a price, a rate not in use, and a reference price not above the price', async () => {
    await patch('prices', own.id, writer, { price: 30, compareAtPrice: 40, vatRate: 0.21 });
    const before = await row(own.id);
    const cases: [unknown, string[]][] = [
      [{ price: 0 }, ['price']],
      [{ price: -1 }, ['price']],
      [{ price: 10.005 }, ['price']],
      [{ price: '1e400' }, ['price']],
      [{ price: 'abc' }, ['price']],
      [{ price: 10_000_000_000 }, ['price']],
      [{ price: null }, ['price']],
      [{ vatRate: 0.19 }, ['vatRate']],
      [{ vatRate: 21 }, ['vatRate']],
      [{ price: 20, compareAtPrice: 20 }, ['compareAtPrice']],
      [{ compareAtPrice: 29.99 }, ['compareAtPrice']],
      [{ price: 45 }, ['price']],
      [{ currency: 'EUR' }, ['currency', 'input']],
      [{}, ['input']],
    ];
    for (const [body, fields] of cases) {
      const res = await patch('prices', own.id, writer, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body.error.details).sort(), JSON.stringify(body)).toEqual(fields);
    }
    expect((await patch('prices', own.id, writer, { price: 45 })).body.error.details.price).toMatch(/compareAtPrice \(40\.00\)/);
    expect(await row(own.id)).toEqual(before);
    // Moving both together is fine.
    expect((await patch('prices', own.id, writer, { price: 45, compareAtPrice: 60 })).status).toBe(200);
  });

  it('another supplier’s product is 404; no write:products or no membership is 403', async () => {
    expect((await patch('prices', foreign.id, writer, { price: 1 })).status).toBe(404);
    expect((await patch('prices', own.id, readerOnly, { price: 1 })).status).toBe(403);
    expect((await patch('prices', own.id, notMember, { price: 1 })).status).toBe(403);
  });

  it('lists, totals and searches see the new price on the very next request, on both instances', async () => {
    const price = '987654.32';
    const filter = `minPrice=${price}&maxPrice=${price}&limit=100`;
    // Warm both instances' totals for this filter before the change.
    for (const instance of [app, peer]) await instance.get(`/api/products?${filter}`);
    const res = await patch('prices', own.id, writer, { price, compareAtPrice: null });
    expect(res.status).toBe(200);
    const { rows } = await app.sql.query(`SELECT count(*)::int AS n FROM "Product" WHERE "isActive" AND price = $1`, [price]);
    for (const instance of [peer, app]) {
      const list = await instance.get(`/api/products?${filter}`);
      expect(list.body.data.map((p: any) => p.id)).toContain(own.id);
      expect(list.body.meta.total).toBe(rows[0].n);
      const search = await instance.get(`/api/products?search=${encodeURIComponent(own.name)}&supplierId=${supplierId}&limit=100`);
      expect(search.body.data.find((p: any) => p.id === own.id)?.price).toBe(987654.32);
      const bySlug = await instance.get(`/api/products/${own.slug}`);
      expect(bySlug.body.data.price).toBe(987654.32);
      const sorted = await instance.get(`/api/products?supplierId=${supplierId}&sortBy=price_desc&limit=1`);
      expect(sorted.body.data[0].id).toBe(own.id);
    }
  });

  it('GraphQL updatePrice: the same rules', async () => {
    const UPDATE = `mutation($id: ID!, $input: PriceUpdateInput!) { updatePrice(productId: $id, input: $input) { price compareAtPrice vatRate } }`;
    expect((await gql(UPDATE, { id: own2.id, input: { price: '15.50', compareAtPrice: null, vatRate: 0 } }, writer)).data?.updatePrice).toEqual({ price: 15.5, compareAtPrice: null, vatRate: 0 });
    expect(await row(own2.id)).toMatchObject({ price: '15.50', compareAtPrice: null, vatCategory: 'EXEMPT' });
    expect((await gql(UPDATE, { id: own2.id, input: { price: 1.001 } }, writer)).errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { price: expect.any(String) } });
    expect((await gql(UPDATE, { id: foreign.id, input: { price: 1 } }, writer)).data?.updatePrice).toBeNull();
  });
});
