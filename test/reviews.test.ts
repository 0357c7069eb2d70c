import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';
import { byTable } from './helpers/statements.js';

// Reviews of a product and of a supplier, over REST and GraphQL, checked against the rows.

let app: TestApp;
/** An active product with the seeded reviews and the test's own (ties of rating and time included). */
let product: { id: string; slug: string; supplierId: string };
/** An active product of the same supplier, deactivated here: its reviews are hidden everywhere. */
let hidden: { id: string; slug: string };
let noReviews: { id: string; slug: string };
let inactiveSupplierId: string;
/** A valid key without read:reviews, and one with it. */
let otherKey: string;
let reviewsKey: string;

const REVIEW_KEYS = ['comment', 'createdAt', 'id', 'images', 'isVerified', 'rating', 'supplierResponse', 'title', 'verifiedPurchase'];
const NOT_FOUND = (what: string) => ({ success: false, error: { code: 'NOT_FOUND', message: `${what} not found` } });

/** The rules of both lists, in SQL. */
const ORDER_SQL = {
  newest: `r."createdAt" DESC, r.id`,
  rating_desc: `r.rating DESC, r."createdAt" DESC, r.id`,
  rating_asc: `r.rating ASC, r."createdAt" DESC, r.id`,
} as const;
const SORTS = Object.keys(ORDER_SQL) as (keyof typeof ORDER_SQL)[];
const PRODUCT_REVIEWS = `r."productId" = $1`;
const SUPPLIER_REVIEWS = `r."supplierId" = $1 AND EXISTS (SELECT 1 FROM "Product" p WHERE p.id = r."productId" AND p."isActive")`;

async function reviewIds(where: string, owner: string, orderBy: string, extra = '') {
  const { rows } = await app.sql.query<{ id: string }>(`SELECT r.id FROM "Review" r WHERE ${where} ${extra} ORDER BY ${orderBy}`, [owner]);
  return rows.map((r) => r.id);
}

async function countOf(where: string, owner: string, extra = '') {
  const { rows } = await app.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "Review" r WHERE ${where} ${extra}`, [owner]);
  return rows[0]!.n;
}

/** What SQL says a summary is: average rounded to 2 decimals, count, and the five buckets. */
async function summaryOf(where: string, owner: string) {
  const { rows } = await app.sql.query<{ rating: number; n: number }>(
    `SELECT g.rating, count(r.id)::int AS n
     FROM generate_series(1, 5) AS g(rating) LEFT JOIN "Review" r ON r.rating = g.rating AND ${where}
     GROUP BY g.rating ORDER BY g.rating`,
    [owner],
  );
  const { rows: avg } = await app.sql.query<{ average: string | null; count: number }>(
    `SELECT round(avg(r.rating), 2)::text AS average, count(*)::int AS count FROM "Review" r WHERE ${where}`,
    [owner],
  );
  return {
    average: avg[0]!.average === null ? null : Number(avg[0]!.average),
    count: avg[0]!.count,
    histogram: rows.map((r) => ({ rating: r.rating, count: r.n })),
  };
}

const ids = (body: { data: { id: string }[] }) => body.data.map((r) => r.id);
const withKey = (key: string): RequestInit => ({ headers: { 'x-api-key': key } });

async function graphql(query: string, variables?: Record<string, unknown>, key?: string) {
  const res = await app.get('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return res.body as { data?: any; errors?: any[] };
}

beforeAll(async () => {
  // The statements a summary costs are measured here: every request runs (no kept answers).
  app = await startTestApp({ env: { RESPONSE_CACHE: 'off' } });
  const one = async <T>(sql: string, params: unknown[] = []) => (await app.sql.query(sql, params)).rows[0] as T;

  // A supplier with two active products that have reviews: one to list, one to hide.
  product = await one(`
    SELECT p.id, p.slug, p."supplierId" FROM "Product" p JOIN "Supplier" s ON s.id = p."supplierId" AND s."isActive"
    WHERE p."isActive" AND EXISTS (SELECT 1 FROM "Review" r WHERE r."productId" = p.id)
      AND (SELECT count(*) FROM "Product" q WHERE q."supplierId" = p."supplierId" AND q."isActive"
           AND EXISTS (SELECT 1 FROM "Review" r WHERE r."productId" = q.id)) >= 2
    ORDER BY p.id LIMIT 1`);
  hidden = await one(
    `SELECT p.id, p.slug FROM "Product" p WHERE p."supplierId" = $1 AND p."isActive" AND p.id <> $2
     AND EXISTS (SELECT 1 FROM "Review" r WHERE r."productId" = p.id) ORDER BY p.id LIMIT 1`,
    [product.supplierId, product.id],
  );
  await app.sql.query(`UPDATE "Product" SET "isActive" = false WHERE id = $1`, [hidden.id]);
  noReviews = await one(`SELECT p.id, p.slug FROM "Product" p WHERE p."isActive" AND NOT EXISTS (SELECT 1 FROM "Review" r WHERE r."productId" = p.id) ORDER BY p.id LIMIT 1`);
  inactiveSupplierId = (await one<{ id: string }>(`SELECT id FROM "Supplier" WHERE NOT "isActive" ORDER BY id LIMIT 1`)).id;

  // 20 reviews more, so that pages, each rating and ties (same rating, same time) all occur;
  // ids are inserted out of order so that "then id" decides something.
  const times = ['2025-03-01T10:00:00Z', '2025-03-02T10:00:00Z', '2025-03-03T10:00:00Z'];
  const values: string[] = [];
  const params: unknown[] = [];
  for (let i = 0; i < 20; i++) {
    const at = params.length;
    values.push(`($${at + 1}, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5}, $${at + 6}, $${at + 7}, $${at + 8}, $${at + 9}, $${at + 10}, $${at + 11})`);
    params.push(
      `zz-review-${String((i * 7) % 20).padStart(2, '0')}`,
      product.id,
      product.supplierId,
      (i % 5) + 1,
      `Title ${i}`,
      `Comment ${i}`,
      i % 4 === 0 ? [`https://images.example.com/reviews/t${i}.jpg`] : [],
      i % 2 === 0,
      i % 3 === 0,
      i % 6 === 0 ? `Thanks ${i}` : null,
      times[i % 3],
    );
  }
  await app.sql.query(
    `INSERT INTO "Review" (id, "productId", "supplierId", rating, title, comment, images, "isVerified", "verifiedPurchase", "supplierResponse", "createdAt")
     VALUES ${values.join(', ')}`,
    params,
  );

  otherKey = (await createTestKey(app.url, { owner: 'reviews@example.com', scopes: ['read:orders'] })).key;
  reviewsKey = (await createTestKey(app.url, { owner: 'reviews@example.com', scopes: ['read:reviews'] })).key;
});
afterAll(() => app?.close());

describe('the fixture', () => {
  it('has ties of rating and time, and reviews hidden with their product', async () => {
    const { rows } = await app.sql.query(
      `SELECT rating, "createdAt", count(*)::int AS n FROM "Review" WHERE "productId" = $1 GROUP BY 1, 2 HAVING count(*) > 1`,
      [product.id],
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(await countOf(`r."productId" = $1`, hidden.id)).toBeGreaterThan(0);
    expect(await countOf(PRODUCT_REVIEWS, product.id)).toBeGreaterThan(20);
  });
});

describe('GET /api/products/{slug}/reviews', () => {
  it('answers the envelope with the Review fields, newest first, and meta counted like SQL', async () => {
    const res = await app.get(`/api/products/${product.slug}/reviews`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    expect(Object.keys(res.body).sort()).toEqual(['data', 'meta', 'success']);
    expect(res.body.success).toBe(true);
    const total = await countOf(PRODUCT_REVIEWS, product.id);
    expect(res.body.meta).toEqual({ page: 1, limit: 12, total, totalPages: Math.ceil(total / 12) });
    expect(ids(res.body)).toEqual((await reviewIds(PRODUCT_REVIEWS, product.id, ORDER_SQL.newest)).slice(0, 12));

    const { rows } = await app.sql.query(`SELECT * FROM "Review" WHERE "productId" = $1`, [product.id]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const review of res.body.data) {
      expect(Object.keys(review).sort()).toEqual(REVIEW_KEYS);
      const row = byId.get(review.id)!;
      expect(review).toEqual({
        id: row.id,
        rating: row.rating,
        title: row.title,
        comment: row.comment,
        images: row.images,
        isVerified: row.isVerified,
        verifiedPurchase: row.verifiedPurchase,
        supplierResponse: row.supplierResponse,
        createdAt: row.createdAt.toISOString(),
      });
    }
  });

  it.each(SORTS)('sorts by %s, ties newest first then id, page by page', async (sortBy) => {
    const expected = await reviewIds(PRODUCT_REVIEWS, product.id, ORDER_SQL[sortBy]);
    const all = await app.get(`/api/products/${product.slug}/reviews?sortBy=${sortBy}&limit=100`);
    expect(ids(all.body)).toEqual(expected);
    const page2 = await app.get(`/api/products/${product.slug}/reviews?sortBy=${sortBy}&limit=5&page=2`);
    expect(ids(page2.body)).toEqual(expected.slice(5, 10));
    expect(page2.body.meta).toEqual({ page: 2, limit: 5, total: expected.length, totalPages: Math.ceil(expected.length / 5) });
  });

  it.each([1, 2, 3, 4, 5])('rating=%i lists only reviews of that rating', async (rating) => {
    const res = await app.get(`/api/products/${product.slug}/reviews?rating=${rating}&limit=100&sortBy=rating_asc`);
    expect(res.status).toBe(200);
    const expected = await reviewIds(PRODUCT_REVIEWS, product.id, ORDER_SQL.rating_asc, `AND r.rating = ${rating}`);
    expect(ids(res.body)).toEqual(expected);
    expect(res.body.meta.total).toBe(expected.length);
    expect(res.body.data.every((r: { rating: number }) => r.rating === rating)).toBe(true);
  });

  it('a page past the end is empty with the true meta', async () => {
    const res = await app.get(`/api/products/${product.slug}/reviews?page=1000`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.meta.total).toBe(await countOf(PRODUCT_REVIEWS, product.id));
  });

  it('a product without reviews answers an empty list', async () => {
    const res = await app.get(`/api/products/${noReviews.slug}/reviews`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: [], meta: { page: 1, limit: 12, total: 0, totalPages: 0 } });
  });

  it('404s for an unknown, inactive or malformed slug, as GET /api/products/{slug}', async () => {
    for (const slug of ['no-such-product', hidden.slug, encodeURIComponent('bad slug'), 'a'.repeat(101)]) {
      const res = await app.get(`/api/products/${slug}/reviews`);
      expect(res.status, slug).toBe(404);
      expect(res.body).toEqual(NOT_FOUND('Product'));
      expect((await app.get(`/api/products/${slug}`)).body).toEqual(res.body);
    }
  });
});

describe('GET /api/suppliers/{id}/reviews', () => {
  it('lists the reviews of its active products only, in each order, with meta counted like SQL', async () => {
    const total = await countOf(SUPPLIER_REVIEWS, product.supplierId);
    const hiddenIds = await reviewIds(`r."productId" = $1`, hidden.id, 'r.id');
    for (const sortBy of SORTS) {
      const res = await app.get(`/api/suppliers/${product.supplierId}/reviews?sortBy=${sortBy}&limit=100`);
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ page: 1, limit: 100, total, totalPages: Math.ceil(total / 100) });
      expect(ids(res.body)).toEqual((await reviewIds(SUPPLIER_REVIEWS, product.supplierId, ORDER_SQL[sortBy])).slice(0, 100));
      expect(ids(res.body).filter((id) => hiddenIds.includes(id))).toEqual([]);
      for (const review of res.body.data) expect(Object.keys(review).sort()).toEqual(REVIEW_KEYS);
    }
    const page2 = await app.get(`/api/suppliers/${product.supplierId}/reviews?limit=7&page=2`);
    expect(ids(page2.body)).toEqual((await reviewIds(SUPPLIER_REVIEWS, product.supplierId, ORDER_SQL.newest)).slice(7, 14));
  });

  it('filters by rating', async () => {
    const res = await app.get(`/api/suppliers/${product.supplierId}/reviews?rating=5&limit=100`);
    const expected = await reviewIds(SUPPLIER_REVIEWS, product.supplierId, ORDER_SQL.newest, 'AND r.rating = 5');
    expect(ids(res.body)).toEqual(expected);
    expect(res.body.meta.total).toBe(expected.length);
  });

  it('404s for an unknown, inactive or malformed supplier id, as GET /api/suppliers/{id}', async () => {
    for (const id of ['no-such-supplier', inactiveSupplierId, encodeURIComponent('1; DROP TABLE x')]) {
      const res = await app.get(`/api/suppliers/${id}/reviews`);
      expect(res.status, id).toBe(404);
      expect(res.body).toEqual(NOT_FOUND('Supplier'));
      expect((await app.get(`/api/suppliers/${id}`)).body).toEqual(res.body);
    }
  });
});

describe('parameters of both lists', () => {
  const paths = () => [`/api/products/${product.slug}/reviews`, `/api/suppliers/${product.supplierId}/reviews`];

  it.each([
    ['rating=0', { rating: 'must be an integer between 1 and 5' }],
    ['rating=6', { rating: 'must be an integer between 1 and 5' }],
    ['rating=abc', { rating: 'must be an integer between 1 and 5' }],
    ['rating=2.5', { rating: 'must be an integer between 1 and 5' }],
    ['sortBy=bogus', { sortBy: 'must be one of newest, rating_desc, rating_asc' }],
    ['sortBy=RATING_DESC', { sortBy: 'must be one of newest, rating_desc, rating_asc' }],
    ['page=0', { page: 'must be an integer between 1 and 2147483647' }],
    ['limit=101', { limit: 'must be an integer between 1 and 100' }],
    ['limit=0', { limit: 'must be an integer between 1 and 100' }],
    ['rating=1&rating=2', { rating: 'must be given only once' }],
    ['slug=x&id=y', { slug: 'is not a recognised parameter', id: 'is not a recognised parameter' }],
    [
      'rating=0&sortBy=bogus&page=0&limit=101',
      {
        rating: 'must be an integer between 1 and 5',
        sortBy: 'must be one of newest, rating_desc, rating_asc',
        page: 'must be an integer between 1 and 2147483647',
        limit: 'must be an integer between 1 and 100',
      },
    ],
  ])('?%s is 400 VALIDATION_ERROR naming each bad parameter', async (query, details) => {
    for (const path of paths()) {
      const res = await app.get(`${path}?${query}`);
      expect(res.status, path).toBe(400);
      expect(res.body.success).toBe(false);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details).toEqual(details);
    }
  });

  it('need no key, and take any valid key whatever its scopes', async () => {
    for (const path of paths()) {
      const anonymous = await app.get(`${path}?limit=5`);
      expect(anonymous.status).toBe(200);
      for (const key of [otherKey, reviewsKey]) {
        const keyed = await app.get(`${path}?limit=5`, withKey(key));
        expect(keyed.status).toBe(200);
        expect(keyed.headers.get('cache-control')).toBe('private, no-cache');
        expect(keyed.body).toEqual(anonymous.body);
      }
      expect((await app.get(path, withKey('mk_not-a-key'))).status).toBe(401);
    }
  });
});

describe('GraphQL productReviews and supplierReviews', () => {
  const LIST = `items { id rating title comment images isVerified verifiedPurchase supplierResponse createdAt } meta { page limit total totalPages }`;

  it('answer the same items and meta as REST', async () => {
    const cases = [
      { field: 'productReviews', arg: 'slug: String!', value: { slug: product.slug }, path: `/api/products/${product.slug}/reviews` },
      { field: 'supplierReviews', arg: 'id: ID!', value: { id: product.supplierId }, path: `/api/suppliers/${product.supplierId}/reviews` },
    ];
    for (const c of cases) {
      const name = Object.keys(c.value)[0]!;
      const query = `query($${c.arg}, $page: Int, $limit: Int, $rating: Int, $sortBy: ReviewSort) {
        ${c.field}(${name}: $${name}, page: $page, limit: $limit, rating: $rating, sortBy: $sortBy) { ${LIST} } }`;
      for (const [rest, variables] of [
        ['', {}],
        ['?sortBy=rating_desc&limit=6&page=2', { sortBy: 'RATING_DESC', limit: 6, page: 2 }],
        ['?sortBy=rating_asc&rating=5&limit=100', { sortBy: 'RATING_ASC', rating: 5, limit: 100 }],
      ] as const) {
        const [gql, res] = await Promise.all([graphql(query, { ...c.value, ...variables }), app.get(c.path + rest)]);
        expect(gql.errors).toBeUndefined();
        expect(gql.data[c.field]).toEqual({ items: res.body.data, meta: res.body.meta });
      }
    }
  });

  it('are null, without an error, for an unknown, inactive or malformed owner', async () => {
    const res = await graphql(`query($a: String!, $b: String!, $c: ID!, $d: ID!) {
      a: productReviews(slug: $a) { meta { total } } b: productReviews(slug: $b) { meta { total } }
      c: supplierReviews(id: $c) { meta { total } } d: supplierReviews(id: $d) { meta { total } } }`, { a: hidden.slug, b: 'bad slug', c: inactiveSupplierId, d: '' });
    expect(res).toEqual({ data: { a: null, b: null, c: null, d: null }, extensions: { cost: expect.any(Object) } });
  });

  it('refuse bad arguments with the details REST gives', async () => {
    const res = await graphql(`{ productReviews(slug: "${product.slug}", rating: 0, page: 0, limit: 101) { meta { total } } }`);
    expect(res.data).toEqual({ productReviews: null });
    expect(res.errors![0].extensions).toEqual({
      code: 'VALIDATION_ERROR',
      details: {
        rating: 'must be an integer between 1 and 5',
        page: 'must be an integer between 1 and 2147483647',
        limit: 'must be an integer between 1 and 100',
      },
    });
    const rest = await app.get(`/api/products/${product.slug}/reviews?rating=0&page=0&limit=101`);
    expect(rest.body.error.details).toEqual(res.errors![0].extensions.details);
  });

  it('Supplier.reviews lists the newest reviews of its active products', async () => {
    const res = await graphql(`query($id: ID!) { supplier(id: $id) { reviews(limit: 100) { id } default: reviews { id } } }`, { id: product.supplierId });
    const expected = await reviewIds(SUPPLIER_REVIEWS, product.supplierId, ORDER_SQL.newest);
    expect(res.data.supplier.reviews.map((r: { id: string }) => r.id)).toEqual(expected.slice(0, 100));
    expect(res.data.supplier.default.map((r: { id: string }) => r.id)).toEqual(expected.slice(0, 10));
  });
});

describe('reviewSummary', () => {
  const SUMMARY = 'reviewSummary { average count histogram { rating count } }';

  it('of a product, of a product without reviews and of a supplier, equals what SQL computes', async () => {
    const res = await graphql(`query($a: String!, $b: String!, $s: ID!) {
      a: product(slug: $a) { ${SUMMARY} } b: product(slug: $b) { ${SUMMARY} } s: supplier(id: $s) { ${SUMMARY} } }`, {
      a: product.slug,
      b: noReviews.slug,
      s: product.supplierId,
    });
    expect(res.errors).toBeUndefined();
    const withReviews = await summaryOf(PRODUCT_REVIEWS, product.id);
    expect(withReviews.count).toBeGreaterThan(20);
    expect(res.data.a.reviewSummary).toEqual(withReviews);
    expect(res.data.b.reviewSummary).toEqual({
      average: null,
      count: 0,
      histogram: [1, 2, 3, 4, 5].map((rating) => ({ rating, count: 0 })),
    });
    expect(res.data.s.reviewSummary).toEqual(await summaryOf(SUPPLIER_REVIEWS, product.supplierId));
  });

  it('of every item of a list, each equal to SQL', async () => {
    const res = await graphql(`{ products(limit: 30) { items { id ${SUMMARY} } } suppliers(limit: 30) { items { id ${SUMMARY} } } }`);
    expect(res.errors).toBeUndefined();
    for (const p of res.data.products.items) expect(p.reviewSummary).toEqual(await summaryOf(PRODUCT_REVIEWS, p.id));
    for (const s of res.data.suppliers.items) expect(s.reviewSummary).toEqual(await summaryOf(SUPPLIER_REVIEWS, s.id));
  });

  it.each([
    ['products', 'Product'],
    ['suppliers', 'Supplier'],
  ])('on %s(limit: 20) costs one query of reviews, not one per item', async (list) => {
    const query = (limit: number) => `{ ${list}(limit: ${limit}) { items { reviewSummary { count } } } }`;
    await graphql(query(1)); // warm-up: product totals are kept between requests
    for (const limit of [1, 20]) {
      const before = app.statements.length;
      const res = await graphql(query(limit));
      expect(res.errors).toBeUndefined();
      expect(res.data[list].items).toHaveLength(limit);
      expect(byTable(app.statements.slice(before)).Review, `limit ${limit}`).toBe(1);
    }
  });
});
