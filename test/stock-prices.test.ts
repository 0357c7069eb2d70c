import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';

let app: TestApp;
let stockKey: string;
let priceKey: string;
let adminKey: string;
let ordersKey: string;

beforeAll(async () => {
  app = await startTestApp();
  stockKey = (await createTestKey(app.url, { scopes: ['read:stock'] })).key;
  priceKey = (await createTestKey(app.url, { scopes: ['read:prices'] })).key;
  adminKey = (await createTestKey(app.url, { scopes: ['admin:all'] })).key;
  ordersKey = (await createTestKey(app.url, { scopes: ['read:orders', 'write:orders', 'read:products'] })).key;
});
afterAll(() => app?.close());

const getAs = (path: string, key: string | null) => app.get(path, key ? { headers: { 'x-api-key': key } } : undefined);

async function gql(query: string, variables: Record<string, unknown>, key: string | null) {
  const res = await app.get('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return res.body;
}

const STOCK_KEYS = ['id', 'isActive', 'lowStockThreshold', 'minOrder', 'sku', 'stock', 'trackInventory', 'updatedAt'];
const PRICE_KEYS = ['compareAtPrice', 'id', 'price', 'sku', 'updatedAt', 'vatRate'];
const STOCK_GQL = 'id sku stock lowStockThreshold trackInventory minOrder isActive updatedAt';
const PRICE_GQL = 'id sku price compareAtPrice vatRate updatedAt';

const stockRow = (r: Record<string, any>) => ({
  id: r.id,
  sku: r.sku,
  stock: r.stock,
  lowStockThreshold: r.lowStockThreshold,
  trackInventory: r.trackInventory,
  minOrder: r.minOrder,
  isActive: r.isActive,
  updatedAt: r.updatedAt.toISOString(),
});

const priceRow = (r: Record<string, any>) => ({
  id: r.id,
  sku: r.sku,
  price: Number(r.price),
  compareAtPrice: r.compareAtPrice === null ? null : Number(r.compareAtPrice),
  vatRate: Number(r.vatRate),
  updatedAt: r.updatedAt.toISOString(),
});

type Row = Record<string, any>;

const views: { name: string; path: string; scope: string; key: () => string; otherKey: () => string; one: string; list: string; fields: string; keys: string[]; row: (r: Row) => object; notFound: string }[] = [
  { name: 'stock', path: '/api/v1/stock', scope: 'read:stock', key: () => stockKey, otherKey: () => priceKey, one: 'stockRecord', list: 'stockRecords', fields: STOCK_GQL, keys: STOCK_KEYS, row: stockRow, notFound: 'Stock record not found' },
  { name: 'prices', path: '/api/v1/prices', scope: 'read:prices', key: () => priceKey, otherKey: () => stockKey, one: 'priceRecord', list: 'priceRecords', fields: PRICE_GQL, keys: PRICE_KEYS, row: priceRow, notFound: 'Price record not found' },
];

describe.each(views)('GET $path', (v) => {
  it('requires a key (401) with the scope (403), or admin:all', async () => {
    const anonymous = await getAs(v.path, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('UNAUTHORIZED');
    for (const key of [v.otherKey(), ordersKey]) {
      const res = await getAs(`${v.path}?productId=x`, key);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: [v.scope] } });
    }
    expect((await getAs(v.path, adminKey)).status).toBe(200);
    const viaGraphql = await gql(`{ ${v.list} { meta { total } } }`, {}, v.otherKey());
    expect(viaGraphql.errors[0].extensions).toEqual({ code: 'FORBIDDEN', details: { requiredScopes: [v.scope] } });
    const one = await gql(`{ ${v.one}(productId: "x") { id } }`, {}, null);
    expect(one.errors[0].extensions.code).toBe('UNAUTHORIZED');
  });

  it('lists every product’s record, inactive ones included, by id, with meta', async () => {
    const { rows } = await app.sql.query(`SELECT * FROM "Product" ORDER BY id LIMIT 100`);
    const { rows: [{ n }] } = await app.sql.query(`SELECT count(*)::int AS n FROM "Product"`);
    const res = await getAs(`${v.path}?limit=100`, v.key());
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ page: 1, limit: 100, total: n, totalPages: Math.ceil(n / 100) });
    expect(Object.keys(res.body.data[0]).sort()).toEqual(v.keys);
    expect(res.body.data).toEqual(rows.map(v.row));

    const page = await getAs(`${v.path}?page=3&limit=7`, v.key());
    const { rows: third } = await app.sql.query(`SELECT * FROM "Product" ORDER BY id OFFSET 14 LIMIT 7`);
    expect(page.body.data).toEqual(third.map(v.row));
    expect((await getAs(v.path, v.key())).body.meta).toMatchObject({ page: 1, limit: 12 });
    expect((await getAs(`${v.path}?page=100000`, v.key())).body).toEqual({ success: true, data: [], meta: { page: 100000, limit: 12, total: n, totalPages: Math.ceil(n / 12) } });

    const { rows: [{ inactive }] } = await app.sql.query(`SELECT count(*)::int AS inactive FROM "Product" WHERE NOT "isActive"`);
    expect(inactive).toBeGreaterThan(0);
  });

  it('finds one record by productId, by sku, or by both when they agree; else 404', async () => {
    const { rows: [p] } = await app.sql.query(`SELECT * FROM "Product" WHERE NOT "isActive" AND sku IS NOT NULL ORDER BY id LIMIT 1`);
    const { rows: [q] } = await app.sql.query(`SELECT * FROM "Product" WHERE "isActive" AND sku IS NOT NULL ORDER BY id LIMIT 1`);
    const expected = { success: true, data: v.row(p) };
    expect((await getAs(`${v.path}?productId=${p.id}`, v.key())).body).toEqual(expected);
    expect((await getAs(`${v.path}?sku=${encodeURIComponent(p.sku)}`, v.key())).body).toEqual(expected);
    expect((await getAs(`${v.path}?productId=${p.id}&sku=${encodeURIComponent(p.sku)}&page=2`, v.key())).body).toEqual(expected);

    const notFound = { success: false, error: { code: 'NOT_FOUND', message: v.notFound } };
    for (const query of [`productId=${p.id}&sku=${encodeURIComponent(q.sku)}`, 'productId=nope', 'sku=NOPE-0', `sku=${encodeURIComponent(p.sku.toLowerCase())}`]) {
      const res = await getAs(`${v.path}?${query}`, v.key());
      expect(res.status, query).toBe(404);
      expect(res.body).toEqual(notFound);
    }
  });

  it('validates its parameters', async () => {
    const res = await getAs(`${v.path}?limit=0&colour=red&productId=a%20b`, v.key());
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Invalid request parameters',
      details: { limit: 'must be an integer between 1 and 100', colour: 'is not a recognised parameter', productId: 'must be 1–100 letters, digits, "-" or "_"' },
    });
    expect((await getAs(`${v.path}?sku=`, v.key())).body.error.details).toEqual({ sku: 'must not be empty' });
    expect((await getAs(`${v.path}?sku=a&sku=b`, v.key())).body.error.details).toEqual({ sku: 'must be given only once' });
  });

  it('answers the same through GraphQL', async () => {
    const { rows: [p] } = await app.sql.query(`SELECT * FROM "Product" WHERE sku IS NOT NULL ORDER BY id DESC LIMIT 1`);
    const rest = await getAs(`${v.path}?page=2&limit=5`, v.key());
    const data = (
      await gql(
        `query($id: ID, $sku: String) {
          byId: ${v.one}(productId: $id) { ${v.fields} }
          bySku: ${v.one}(sku: $sku) { ${v.fields} }
          both: ${v.one}(productId: $id, sku: $sku) { ${v.fields} }
          mismatch: ${v.one}(productId: "nope", sku: $sku) { id }
          list: ${v.list}(page: 2, limit: 5) { items { ${v.fields} } meta { page limit total totalPages } }
        }`,
        { id: p.id, sku: p.sku },
        v.key(),
      )
    ).data;
    expect(data.byId).toEqual(v.row(p));
    expect(data.bySku).toEqual(v.row(p));
    expect(data.both).toEqual(v.row(p));
    expect(data.mismatch).toBeNull();
    expect(data.list.items).toEqual(rest.body.data);
    expect(data.list.meta).toEqual(rest.body.meta);

    const neither = await gql(`{ ${v.one} { id } }`, {}, v.key());
    expect(neither.errors[0].extensions).toEqual({ code: 'VALIDATION_ERROR', details: { productId: 'productId or sku is required' } });
  });
});

describe('stock after an order', () => {
  it('shows the units taken and a new updatedAt', async () => {
    const { rows: [p] } = await app.sql.query(`
      SELECT p.* FROM "Product" p JOIN "Supplier" s ON s.id = p."supplierId"
      WHERE p."isActive" AND s."isActive" AND p."trackInventory" AND p.stock >= p."minOrder" + 5 ORDER BY p.id LIMIT 1`);
    const before = await getAs(`/api/v1/stock?productId=${p.id}`, stockKey);
    const order = await app.get('/api/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': ordersKey },
      body: JSON.stringify({ supplierId: p.supplierId, items: [{ productId: p.id, quantity: p.minOrder }] }),
    });
    expect(order.status).toBe(201);
    const after = await getAs(`/api/v1/stock?productId=${p.id}`, stockKey);
    expect(after.body.data.stock).toBe(before.body.data.stock - p.minOrder);
    expect(new Date(after.body.data.updatedAt).getTime()).toBeGreaterThan(new Date(before.body.data.updatedAt).getTime());
  });
});
