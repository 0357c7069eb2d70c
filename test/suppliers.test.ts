import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const SUPPLIER_KEYS = [
  '_count', 'address', 'city', 'companyName', 'county', 'createdAt', 'cui', 'description', 'email', 'id', 'logo',
  'phone', 'rating', 'reviewCount', 'verified', 'website',
];

const ids = (body: { data: { id: string }[] }) => body.data.map((s) => s.id);

describe('GET /api/suppliers', () => {
  it('lists active suppliers by rating with meta and counts', async () => {
    const res = await app.get('/api/suppliers?limit=100');
    expect(res.status).toBe(200);
    const { rows } = await app.sql.query(`SELECT id FROM "Supplier" WHERE "isActive" ORDER BY rating DESC, id`);
    expect(ids(res.body)).toEqual(rows.map((r) => r.id));
    expect(res.body.meta).toEqual({ page: 1, limit: 100, total: rows.length, totalPages: 1 });
    expect(Object.keys(res.body.data[0]).sort()).toEqual(SUPPLIER_KEYS);
    const s = res.body.data[0];
    const counts = await app.sql.query(
      `SELECT (SELECT count(*)::int FROM "Product" WHERE "supplierId" = $1 AND "isActive") AS products,
              (SELECT count(*)::int FROM "Review" WHERE "supplierId" = $1) AS reviews`,
      [s.id],
    );
    expect(s._count).toEqual(counts.rows[0]);
    expect(typeof s.rating).toBe('number');
  });

  it.each([
    ['name', `"companyName" ASC, id`],
    ['newest', `"createdAt" DESC, id`],
    ['rating', `rating DESC, id`],
    [
      'products',
      `(SELECT count(*) FROM "Product" p WHERE p."supplierId" = s.id AND p."isActive") DESC, id`,
    ],
  ])('sorts by %s', async (sortBy, orderBy) => {
    const res = await app.get(`/api/suppliers?sortBy=${sortBy}&limit=10&page=2`);
    const { rows } = await app.sql.query(`SELECT id FROM "Supplier" s WHERE "isActive" ORDER BY ${orderBy} LIMIT 10 OFFSET 10`);
    expect(ids(res.body)).toEqual(rows.map((r) => r.id));
  });

  it('filters verified suppliers', async () => {
    const res = await app.get('/api/suppliers?verified=true&limit=100');
    const { rows } = await app.sql.query(`SELECT count(*)::int AS n FROM "Supplier" WHERE "isActive" AND verified`);
    expect(res.body.meta.total).toBe(rows[0].n);
    expect(res.body.data.every((s: { verified: boolean }) => s.verified)).toBe(true);
  });

  it('matches city and county ignoring case and diacritics', async () => {
    const { rows } = await app.sql.query(
      `SELECT city, county FROM "Supplier" WHERE "isActive" AND (city ~ '[ăâîșțĂÂÎȘȚ]') ORDER BY id LIMIT 1`,
    );
    const { city, county } = rows[0];
    const plainCity = city.normalize('NFD').replace(/\p{M}/gu, '').toUpperCase();
    const byCity = await app.get(`/api/suppliers?city=${encodeURIComponent(plainCity)}&limit=100`);
    const expected = await app.sql.query(`SELECT count(*)::int AS n FROM "Supplier" WHERE "isActive" AND city = $1`, [city]);
    expect(byCity.body.meta.total).toBe(expected.rows[0].n);
    expect(byCity.body.data.every((s: { city: string }) => s.city === city)).toBe(true);
    const byCounty = await app.get(`/api/suppliers?county=${encodeURIComponent(county.toLowerCase())}&limit=100`);
    expect(byCounty.body.data.every((s: { county: string }) => s.county === county)).toBe(true);
    expect(byCounty.body.meta.total).toBeGreaterThanOrEqual(byCity.body.meta.total);
  });

  it('searches company names', async () => {
    const { rows } = await app.sql.query(`SELECT "companyName" FROM "Supplier" WHERE "isActive" ORDER BY id LIMIT 1`);
    const word = (rows[0].companyName as string).split(' ')[0]!;
    const res = await app.get(`/api/suppliers?search=${encodeURIComponent(word.toLowerCase())}`);
    expect(res.body.data.map((s: { companyName: string }) => s.companyName)).toContain(rows[0].companyName);
  });

  it('rejects bad parameters', async () => {
    const res = await app.get('/api/suppliers?sortBy=price&verified=2&page=x');
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual({
      sortBy: 'must be one of rating, name, newest, products',
      verified: 'must be one of true, false, 1, 0',
      page: 'must be an integer between 1 and 2147483647',
    });
  });
});

describe('GET /api/suppliers/{id}', () => {
  it('returns an active supplier', async () => {
    const { rows } = await app.sql.query(`SELECT id, cui FROM "Supplier" WHERE "isActive" ORDER BY id LIMIT 1`);
    const res = await app.get(`/api/suppliers/${rows[0].id}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: rows[0].id, cui: rows[0].cui });
  });

  it('404s for an inactive or unknown supplier', async () => {
    const { rows } = await app.sql.query(`SELECT id FROM "Supplier" WHERE NOT "isActive" LIMIT 1`);
    expect(rows).toHaveLength(1);
    for (const id of [rows[0].id, 'unknown', '1; DROP TABLE x']) {
      const res = await app.get(`/api/suppliers/${encodeURIComponent(id)}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'Supplier not found' } });
    }
  });
});
