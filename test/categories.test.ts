import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const CATEGORY_KEYS = ['_count', 'children', 'createdAt', 'description', 'id', 'image', 'isActive', 'name', 'nameEn', 'order', 'parentId', 'slug'];

describe('GET /api/categories', () => {
  it('returns every active category ordered by display order, without meta', async () => {
    const res = await app.get('/api/categories');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'success']);
    const { rows } = await app.sql.query(`SELECT id FROM "Category" WHERE "isActive" ORDER BY "order", id`);
    expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(rows.map((r) => r.id));
    expect(Object.keys(res.body.data[0]).sort()).toEqual(CATEGORY_KEYS);
  });

  it('lists only active children and counts active products of the whole subtree', async () => {
    const res = await app.get('/api/categories?parentOnly=true');
    for (const category of res.body.data) {
      expect(category.parentId).toBeNull();
      const children = await app.sql.query(
        `SELECT id, name, slug FROM "Category" WHERE "parentId" = $1 AND "isActive" ORDER BY "order", id`,
        [category.id],
      );
      expect(category.children).toEqual(children.rows);
      const count = await app.sql.query(
        `SELECT count(*)::int AS n FROM "Product" p JOIN "Category" c ON c.id = p."categoryId"
         WHERE p."isActive" AND (c.id = $1 OR c."parentId" = $1)`,
        [category.id],
      );
      expect(category._count.products).toBe(count.rows[0].n);
    }
    const { rows } = await app.sql.query(`SELECT count(*)::int AS n FROM "Category" WHERE "isActive" AND "parentId" IS NULL`);
    expect(res.body.data).toHaveLength(rows[0].n);
    expect(rows[0].n).toBeGreaterThanOrEqual(8);
  });

  it('adds up to 4 product summaries per category with includeProducts', async () => {
    const res = await app.get('/api/categories?includeProducts=true&parentOnly=1');
    expect(res.status).toBe(200);
    for (const category of res.body.data) {
      expect(category.products.length).toBe(Math.min(4, category._count.products));
      for (const p of category.products) expect(Object.keys(p).sort()).toEqual(['id', 'images', 'name', 'price', 'slug']);
    }
    const without = await app.get('/api/categories?includeProducts=false');
    expect(without.body.data[0]).not.toHaveProperty('products');
  });

  it('paginates with meta when page or limit is given', async () => {
    const { rows } = await app.sql.query(`SELECT count(*)::int AS n FROM "Category" WHERE "isActive"`);
    const total = rows[0].n;
    const res = await app.get('/api/categories?limit=5&page=2');
    expect(res.body.meta).toEqual({ page: 2, limit: 5, total, totalPages: Math.ceil(total / 5) });
    expect(res.body.data).toHaveLength(5);
    const all = await app.get('/api/categories');
    expect(res.body.data).toEqual(all.body.data.slice(5, 10));
    const onlyPage = await app.get('/api/categories?page=1');
    expect(onlyPage.body.meta).toMatchObject({ page: 1, limit: 12 });
  });

  it('rejects bad parameters', async () => {
    const res = await app.get('/api/categories?parentOnly=maybe&limit=0&search=x');
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: {
        parentOnly: 'must be one of true, false, 1, 0',
        limit: 'must be an integer between 1 and 100',
        search: 'is not a recognised parameter',
      },
    });
  });
});

describe('GET /api/categories/{slug}', () => {
  it('returns the category with its subcategories', async () => {
    const { rows } = await app.sql.query(
      `SELECT c.id, c.slug FROM "Category" c WHERE c."isActive" AND c."parentId" IS NULL ORDER BY c."order", c.id LIMIT 1`,
    );
    const res = await app.get(`/api/categories/${rows[0].slug}`);
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(rows[0].id);
    expect(res.body.data.children.length).toBeGreaterThan(0);
  });

  it('404s for an inactive or unknown category', async () => {
    const { rows } = await app.sql.query(`SELECT slug FROM "Category" WHERE NOT "isActive" LIMIT 1`);
    expect(rows).toHaveLength(1);
    for (const slug of [rows[0].slug, 'nope']) {
      const res = await app.get(`/api/categories/${slug}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'Category not found' } });
    }
    const list = await app.get('/api/categories');
    expect(list.body.data.map((c: { slug: string }) => c.slug)).not.toContain(rows[0].slug);
  });
});
