import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { isCount, tablesOf } from './helpers/statements.js';

// A searched product page is read in two steps, the ids on a plan imposed from the known totals
// (walk the sort's index, or collect every match and sort them), then the page's products by id
// (src/domain/products/products.service.ts, searchedPage). Whichever plan is imposed, the page
// must be exactly what the documented order gives.

let app: TestApp;
let active = 0;
/** A word in most products: page 1 walks the index, a deep page collects. */
const COMMON = 'pentru';
let commonTotal = 0;
/** One product's SKU, lower case as search keys are: a handful of matches, always collected. */
let rare = '';

const ORDER_SQL: Record<string, string> = {
  newest: '"createdAt" DESC, id',
  price_asc: 'price ASC, id',
  price_desc: 'price DESC, id',
  popular: '"viewCount" DESC, id',
};

async function expectedIds(term: string, sortBy: string, page: number, limit: number): Promise<string[]> {
  const { rows } = await app.sql.query<{ id: string }>(
    `SELECT id FROM "Product" WHERE "isActive" AND "searchText" LIKE '%' || $1 || '%'
      ORDER BY ${ORDER_SQL[sortBy]} LIMIT $2 OFFSET $3`,
    [term, limit, (page - 1) * limit],
  );
  return rows.map((r) => r.id);
}

const countMatches = async (term: string) =>
  (await app.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "Product" WHERE "isActive" AND "searchText" LIKE '%' || $1 || '%'`, [term]))
    .rows[0]!.n;

/** The page through REST, and the planner setting the app imposed for its ids. */
async function searchedPage(term: string, sortBy: string, page: number, limit: number) {
  const before = app.statements.length;
  const res = await app.get(`/api/products?search=${encodeURIComponent(term)}&sortBy=${sortBy}&page=${page}&limit=${limit}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  // Only planner settings: saving the computed total sets synchronous_commit in its own transaction.
  const imposed = app.statements.slice(before).find((sql) => sql.startsWith('SET LOCAL enable_'));
  return { ids: (res.body.data as { id: string }[]).map((p) => p.id), total: res.body.meta.total as number, imposed };
}

const WALK = 'SET LOCAL enable_bitmapscan = off';
const COLLECT = 'SET LOCAL enable_indexscan = off';

beforeAll(async () => {
  app = await startTestApp();
  active = (await app.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "Product" WHERE "isActive"`)).rows[0]!.n;
  commonTotal = await countMatches(COMMON);
  const { rows } = await app.sql.query<{ sku: string }>(`SELECT lower(sku) AS sku FROM "Product" WHERE "isActive" AND sku IS NOT NULL ORDER BY id LIMIT 1`);
  rare = rows[0]!.sku;
});
afterAll(() => app?.close());

describe('a searched page', () => {
  it('the data set has a common word and a rare one', async () => {
    expect(commonTotal).toBeGreaterThan(active / 2);
    const rareTotal = await countMatches(rare);
    expect(rareTotal).toBeGreaterThanOrEqual(1);
    expect(rareTotal).toBeLessThan(20);
  });

  it('walks the index for the first page of a common word, and collects for a page deep enough', async () => {
    const first = await searchedPage(COMMON, 'newest', 1, 12);
    expect(first.imposed).toBe(WALK);
    // Walking visits about (skip + take) × active ÷ total products: past total, collecting is cheaper.
    const deep = Math.ceil((commonTotal * commonTotal) / active / 12) + 1;
    expect(deep * 12 < commonTotal).toBe(true);
    const far = await searchedPage(COMMON, 'newest', deep, 12);
    expect(far.imposed).toBe(COLLECT);
    expect(far.ids).toEqual(await expectedIds(COMMON, 'newest', deep, 12));
  });

  it('collects the matches of a rare word', async () => {
    expect((await searchedPage(rare, 'newest', 1, 12)).imposed).toBe(COLLECT);
  });

  const cases = ['newest', 'price_asc', 'price_desc', 'popular'].flatMap((sortBy) =>
    [
      { page: 1, limit: 12 },
      { page: 2, limit: 12 },
      { page: 1, limit: 100 },
      { page: 9, limit: 100 },
      { page: 40, limit: 20 },
    ].map((p) => ({ sortBy, ...p })),
  );

  it.each(cases)('is the documented order for sortBy=$sortBy, page $page of $limit, common and rare words', async ({ sortBy, page, limit }) => {
    for (const term of [COMMON, rare]) {
      const got = await searchedPage(term, sortBy, page, limit);
      expect(got.ids, `${term} ${sortBy} ${page}×${limit}`).toEqual(await expectedIds(term, sortBy, page, limit));
      expect(got.total).toBe(await countMatches(term));
    }
  });

  it('past the last match: no items, no query for them, the true total', async () => {
    const page = Math.floor(commonTotal / 100) + 2;
    const before = app.statements.length;
    const got = await searchedPage(COMMON, 'newest', page, 100);
    expect(got.ids).toEqual([]);
    expect(got.total).toBe(commonTotal);
    // Products are only counted: no statement reads "Product" for items.
    expect(app.statements.slice(before).filter((sql) => tablesOf(sql).includes('Product') && !isCount(sql))).toEqual([]);
  });
});
