import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const PRODUCT_KEYS = [
  '_count', 'category', 'compareAtPrice', 'createdAt', 'description', 'id', 'images', 'isActive', 'isFeatured',
  'minOrder', 'name', 'nameEn', 'price', 'sku', 'slug', 'specifications', 'stock', 'supplier', 'updatedAt',
  'vatCategory', 'vatRate', 'viewCount',
];

async function activeCount(where = 'TRUE', params: unknown[] = []): Promise<number> {
  const { rows } = await app.sql.query(`SELECT count(*)::int AS n FROM "Product" p WHERE p."isActive" AND ${where}`, params);
  return rows[0].n;
}

describe('GET /api/products', () => {
  it('lists active products newest first in the envelope with meta', async () => {
    const res = await app.get('/api/products');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const total = await activeCount();
    expect(res.body).toMatchObject({ success: true, meta: { page: 1, limit: 12, total, totalPages: Math.ceil(total / 12) } });
    expect(res.body.data).toHaveLength(12);
    const product = res.body.data[0];
    expect(Object.keys(product).sort()).toEqual(PRODUCT_KEYS);
    expect(Object.keys(product.supplier).sort()).toEqual(['companyName', 'id', 'rating', 'verified']);
    expect(Object.keys(product.category).sort()).toEqual(['id', 'name', 'slug']);
    expect(Object.keys(product._count).sort()).toEqual(['favorites', 'reviews']);
    expect(typeof product.price).toBe('number');
    expect(typeof product.vatRate).toBe('number');
    const { rows } = await app.sql.query(
      `SELECT id FROM "Product" WHERE "isActive" ORDER BY "createdAt" DESC, id ASC LIMIT 12`,
    );
    expect(res.body.data.map((p: { id: string }) => p.id)).toEqual(rows.map((r) => r.id));
  });

  it('returns the fields as stored, with counts and summaries', async () => {
    const { rows } = await app.sql.query(`
      SELECT p.*, s."companyName", c.slug AS "categorySlug",
        (SELECT count(*)::int FROM "Review" r WHERE r."productId" = p.id) AS reviews,
        (SELECT count(*)::int FROM "Favorite" f WHERE f."productId" = p.id) AS favorites
      FROM "Product" p JOIN "Supplier" s ON s.id = p."supplierId" JOIN "Category" c ON c.id = p."categoryId"
      WHERE p."isActive" AND p."compareAtPrice" IS NOT NULL ORDER BY p.id LIMIT 1`);
    const row = rows[0];
    const res = await app.get(`/api/products/${row.slug}`);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toMatchObject({
      id: row.id,
      name: row.name,
      nameEn: row.nameEn,
      price: Number(row.price),
      compareAtPrice: Number(row.compareAtPrice),
      sku: row.sku,
      images: row.images,
      specifications: row.specifications,
      vatRate: Number(row.vatRate),
      vatCategory: row.vatCategory,
      minOrder: row.minOrder,
      stock: row.stock,
      createdAt: row.createdAt.toISOString(),
      supplier: { id: row.supplierId, companyName: row.companyName },
      category: { id: row.categoryId, slug: row.categorySlug },
      _count: { reviews: row.reviews, favorites: row.favorites },
    });
  });

  it('pages with true meta, and a page past the end is empty', async () => {
    const total = await activeCount();
    const last = Math.ceil(total / 100);
    const page2 = await app.get('/api/products?page=2&limit=5');
    expect(page2.body.meta).toEqual({ page: 2, limit: 5, total, totalPages: Math.ceil(total / 5) });
    const page1 = await app.get('/api/products?page=1&limit=10');
    expect(page2.body.data.map((p: { id: string }) => p.id)).toEqual(page1.body.data.slice(5, 10).map((p: { id: string }) => p.id));
    const lastPage = await app.get(`/api/products?page=${last}&limit=100`);
    expect(lastPage.body.data).toHaveLength(total - (last - 1) * 100);
    const past = await app.get(`/api/products?page=${last + 1}&limit=100`);
    expect(past.status).toBe(200);
    expect(past.body).toEqual({ success: true, data: [], meta: { page: last + 1, limit: 100, total, totalPages: last } });
    const far = await app.get('/api/products?page=2147483647&limit=100');
    expect(far.status).toBe(200);
    expect(far.body).toEqual({ success: true, data: [], meta: { page: 2147483647, limit: 100, total, totalPages: last } });
  });

  it('searches name, English name, description and sku ignoring case and diacritics', async () => {
    const { rows } = await app.sql.query(
      `SELECT name, sku FROM "Product" WHERE "isActive" AND name ~ '[ăâîșțĂÂÎȘȚ]' ORDER BY id LIMIT 1`,
    );
    const word = (rows[0].name as string).split(' ').find((w) => /[ăâîșțĂÂÎȘȚ]/.test(w))!;
    const plain = word.normalize('NFD').replace(/\p{M}/gu, '').toUpperCase();
    const res = await app.get(`/api/products?search=${encodeURIComponent(plain)}&limit=100`);
    expect(res.status).toBe(200);
    const key = plain.toLowerCase();
    expect(res.body.meta.total).toBe(await activeCount(`p."searchText" LIKE $1`, [`%${key}%`]));
    expect(res.body.meta.total).toBeGreaterThan(0);
    for (const p of res.body.data) {
      const text = [p.name, p.nameEn, p.description, p.sku].join(' ').normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
      expect(text).toContain(key);
    }
    const bySku = await app.get(`/api/products?search=${encodeURIComponent(rows[0].sku.toLowerCase())}`);
    expect(bySku.body.data.map((p: { sku: string }) => p.sku)).toContain(rows[0].sku);
  });

  it('treats % and _ in a search as plain characters', async () => {
    const res = await app.get('/api/products?search=%25');
    expect(res.status).toBe(200);
    expect(res.body.meta.total).toBe(await activeCount(`strpos(p."searchText", '%') > 0`));
    const underscore = await app.get('/api/products?search=_');
    expect(underscore.body.meta.total).toBe(await activeCount(`strpos(p."searchText", '_') > 0`));
  });

  it('filters by category including its subcategories', async () => {
    const { rows } = await app.sql.query(
      `SELECT c.id FROM "Category" c WHERE c."parentId" IS NULL AND c."isActive"
       AND EXISTS (SELECT 1 FROM "Category" s JOIN "Product" p ON p."categoryId" = s.id WHERE s."parentId" = c.id AND p."isActive")
       ORDER BY c.id LIMIT 1`,
    );
    const top = rows[0].id;
    const res = await app.get(`/api/products?categoryId=${top}&limit=100`);
    const expected = await activeCount(
      `p."categoryId" IN (SELECT id FROM "Category" WHERE id = $1 OR "parentId" = $1)`,
      [top],
    );
    expect(expected).toBeGreaterThan(0);
    expect(res.body.meta.total).toBe(expected);
    const unknown = await app.get('/api/products?categoryId=does-not-exist');
    expect(unknown.body).toMatchObject({ success: true, data: [], meta: { total: 0, totalPages: 0 } });
  });

  it('filters by supplier, price range (inclusive) and featured', async () => {
    const { rows } = await app.sql.query(`SELECT "supplierId", price FROM "Product" WHERE "isActive" ORDER BY id LIMIT 1`);
    const { supplierId, price } = rows[0];
    const bySupplier = await app.get(`/api/products?supplierId=${supplierId}&limit=100`);
    expect(bySupplier.body.meta.total).toBe(await activeCount(`p."supplierId" = $1`, [supplierId]));
    expect(bySupplier.body.data.every((p: { supplier: { id: string } }) => p.supplier.id === supplierId)).toBe(true);

    const exact = await app.get(`/api/products?minPrice=${price}&maxPrice=${price}&limit=100`);
    expect(exact.body.meta.total).toBe(await activeCount(`p.price = $1`, [price]));
    expect(exact.body.data.map((p: { price: number }) => p.price)).toContain(Number(price));

    const range = await app.get('/api/products?minPrice=10&maxPrice=99.5&limit=100');
    expect(range.body.meta.total).toBe(await activeCount(`p.price BETWEEN 10 AND 99.5`));

    const featured = await app.get('/api/products?featured=true&limit=100');
    expect(featured.body.meta.total).toBe(await activeCount(`p."isFeatured"`));
    expect(featured.body.data.every((p: { isFeatured: boolean }) => p.isFeatured)).toBe(true);
    const featured1 = await app.get('/api/products?featured=1&limit=1');
    expect(featured1.body.meta.total).toBe(featured.body.meta.total);
    const notOnlyFeatured = await app.get('/api/products?featured=false');
    expect(notOnlyFeatured.body.meta.total).toBe(await activeCount());
  });

  it.each([
    ['newest', `"createdAt" DESC, id ASC`],
    ['price_asc', `price ASC, id ASC`],
    ['price_desc', `price DESC, id ASC`],
    ['popular', `"viewCount" DESC, id ASC`],
  ])('sorts by %s with id breaking ties', async (sortBy, orderBy) => {
    const res = await app.get(`/api/products?sortBy=${sortBy}&limit=50&page=2`);
    const { rows } = await app.sql.query(`SELECT id FROM "Product" WHERE "isActive" ORDER BY ${orderBy} LIMIT 50 OFFSET 50`);
    expect(res.body.data.map((p: { id: string }) => p.id)).toEqual(rows.map((r) => r.id));
  });

  it('never lists an inactive product', async () => {
    const { rows } = await app.sql.query(`SELECT slug, name FROM "Product" WHERE NOT "isActive" ORDER BY id LIMIT 1`);
    expect(rows).toHaveLength(1);
    const all = await app.get('/api/products?limit=100&search=' + encodeURIComponent(rows[0].name));
    expect(all.body.data.map((p: { slug: string }) => p.slug)).not.toContain(rows[0].slug);
    const one = await app.get(`/api/products/${rows[0].slug}`);
    expect(one.status).toBe(404);
  });

  it.each([
    ['page=0', { page: 'must be an integer between 1 and 2147483647' }],
    ['page=-3', { page: 'must be an integer between 1 and 2147483647' }],
    ['page=1.5', { page: 'must be an integer between 1 and 2147483647' }],
    ['page=abc', { page: 'must be an integer between 1 and 2147483647' }],
    ['page=2147483648', { page: 'must be an integer between 1 and 2147483647' }],
    ['page=9007199254740993', { page: 'must be an integer between 1 and 2147483647' }],
    ['page=', { page: 'must be an integer between 1 and 2147483647' }],
    ['limit=0', { limit: 'must be an integer between 1 and 100' }],
    ['limit=101', { limit: 'must be an integer between 1 and 100' }],
    ['limit=1e2', { limit: 'must be an integer between 1 and 100' }],
    ['page=0&limit=500', { page: 'must be an integer between 1 and 2147483647', limit: 'must be an integer between 1 and 100' }],
    ['sortBy=cheapest', { sortBy: 'must be one of newest, price_asc, price_desc, popular' }],
    ['featured=yes', { featured: 'must be one of true, false, 1, 0' }],
    ['minPrice=-1', { minPrice: 'must be a decimal number from 0 to 9999999999.99 with at most 2 decimals' }],
    ['minPrice=abc', { minPrice: 'must be a decimal number from 0 to 9999999999.99 with at most 2 decimals' }],
    ['maxPrice=Infinity', { maxPrice: 'must be a decimal number from 0 to 9999999999.99 with at most 2 decimals' }],
    ['minPrice=50&maxPrice=10', { maxPrice: 'must be ≥ minPrice' }],
    ['categoryId=' + encodeURIComponent("x' OR 1=1 --"), { categoryId: expect.any(String) }],
    ['search=' + encodeURIComponent('a\u0000b'), { search: 'must not contain control characters' }],
    ['search=' + 'x'.repeat(201), { search: 'must be at most 200 characters' }],
    ['colour=red', { colour: 'is not a recognised parameter' }],
    ['page=1&page=2', { page: 'must be given only once' }],
  ])('rejects %s with 400 VALIDATION_ERROR naming the parameter', async (query, details) => {
    const res = await app.get(`/api/products?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: { code: 'VALIDATION_ERROR', message: expect.any(String), details } });
  });
});

describe('GET /api/products/{slug}', () => {
  it('404s in the envelope for an unknown or malformed slug', async () => {
    for (const slug of ['no-such-product', 'x'.repeat(300), '%E2%80%AE', 'a%20b', '..%2F..%2Fetc']) {
      const res = await app.get(`/api/products/${slug}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'Product not found' } });
    }
  });

  it('rejects a malformed percent-encoding with 400', async () => {
    const res = await app.get('/api/products/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('rejects query parameters it does not take', async () => {
    const { rows } = await app.sql.query(`SELECT slug FROM "Product" WHERE "isActive" LIMIT 1`);
    const res = await app.get(`/api/products/${rows[0].slug}?expand=all`);
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual({ expand: 'is not a recognised parameter' });
  });
});

describe('routing', () => {
  it('answers 405 with Allow for a method the path does not take', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await app.get('/api/products', { method, headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
      expect(res.body).toEqual({ success: false, error: { code: 'METHOD_NOT_ALLOWED', message: expect.any(String) } });
    }
  });

  it('answers 404 NOT_FOUND in the envelope for an unknown /api path', async () => {
    for (const path of ['/api', '/api/', '/api/nope', '/api/products/a/b', '/api/v1/nothing']) {
      const res = await app.get(path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
    }
  });

  it('answers HEAD like GET without a body', async () => {
    const res = await fetch(`${app.base}/api/products?limit=1`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('tolerates one trailing slash', async () => {
    const res = await app.get('/api/products/?limit=1');
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
  });
});
