import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';

// minPrice and maxPrice are inclusive and exact: a bound equal to a price finds the products at
// that price, whatever the price. Checked with every distinct price of the demo catalogue against
// SQL, over REST (query text) and GraphQL (a literal, and a variable sent as a JSON number).
//
// Rules of the catalogue, which need no socket: the app is called in process (app.fetch). Such
// requests have no client address, so they carry a key whose own bucket takes the thousands of
// requests below (anonymous ones would all share one 60-per-minute bucket).

let app: TestApp;
let key: string;
beforeAll(async () => {
  app = await startTestApp();
  ({ key } = await createTestKey(app.url, { plan: 'enterprise', limit: 1_000_000, windowSeconds: 60, scopes: ['read:orders'] }));
});
afterAll(() => app?.close());

const get = (path: string) => app.getInProcess(path, { headers: { 'x-api-key': key } });
const graphql = (query: string, variables?: Record<string, unknown>) =>
  app.getInProcess('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ query, variables }),
  });

interface PriceRow {
  price: string;
  /** Active products at exactly this price, by id. */
  ids: string[];
  /** Active products at this price or less. */
  atMost: number;
}

async function everyPrice(): Promise<PriceRow[]> {
  const { rows } = await app.sql.query<PriceRow>(`
    SELECT p.price::text AS price,
      coalesce(array_agg(p.id ORDER BY p.id) FILTER (WHERE p."isActive"), '{}') AS ids,
      (SELECT count(*)::int FROM "Product" q WHERE q."isActive" AND q.price <= p.price) AS "atMost"
    FROM "Product" p GROUP BY p.price ORDER BY p.price`);
  return rows;
}

/** Runs `check` for every row, a few at a time. */
async function forEach<T>(rows: T[], check: (row: T) => Promise<void>, concurrency = 6) {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < rows.length) await check(rows[next++]!);
  }));
}

const ids = (items: { id: string }[]) => items.map((p) => p.id).sort();

describe('price bounds', () => {
  it('cover every distinct price of the demo catalogue, with room to page', async () => {
    const prices = await everyPrice();
    expect(prices.length).toBeGreaterThan(800);
    expect(Math.max(...prices.map((p) => p.ids.length))).toBeLessThanOrEqual(100);
  });

  // First: the tests after it save hundreds of totals, still being written as they end.
  it('10, 10.0 and 10.00 are one filter: the same answer and one kept total', async () => {
    const { rows } = await app.sql.query(`SELECT count(*)::int AS n FROM "Product" WHERE "isActive" AND price <= 10`);
    const kept = async () => (await app.sql.query(`SELECT count(*)::int AS n FROM "ListTotal"`)).rows[0].n as number;
    const before = await kept();
    for (const bound of ['10', '10.0', '10.00', '010', '1e1']) {
      const res = await get(`/api/products?maxPrice=${bound}`);
      expect(res.body.meta.total, bound).toBe(rows[0].n);
    }
    const viaGraphql = await graphql(`{ products(maxPrice: 10.00) { meta { total } } }`);
    expect(viaGraphql.body.data.products.meta.total).toBe(rows[0].n);
    // Saved out of the requests' way, within a second (FLUSH_MS); one total, never a second.
    await expect.poll(kept, { timeout: 5_000 }).toBe(before + 1);
    // That no second total is saved is the subject: the next flush would come within this.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await kept()).toBe(before + 1);
  });

  it('REST: minPrice = maxPrice = p lists exactly the active products priced p, and maxPrice = p includes them', async () => {
    const failures: string[] = [];
    await forEach((await everyPrice()).map((row, i) => ({ ...row, i })), async ({ price, ids: expected, atMost, i }) => {
      const equal = await get(`/api/products?minPrice=${price}&maxPrice=${price}&limit=${Math.max(1, expected.length)}`);
      if (equal.status !== 200 || JSON.stringify(ids(equal.body.data)) !== JSON.stringify(expected) || equal.body.meta.total !== expected.length) {
        failures.push(`=${price}: ${equal.status} got ${equal.body.meta?.total}, want ${expected.length}`);
      }
      // maxPrice alone, for every fourth price (the bound's inclusiveness is already above):
      // highest first, the products at the bound, then one below it.
      if (i % 4 !== 0) return;
      const below = await get(`/api/products?maxPrice=${price}&sortBy=price_desc&limit=${expected.length + 1}`);
      const top = ids(below.body.data.filter((p: { price: number }) => p.price === Number(price)));
      if (below.body.meta?.total !== atMost || JSON.stringify(top) !== JSON.stringify(expected)) {
        failures.push(`≤${price}: total ${below.body.meta?.total}, want ${atMost}; at the bound ${top.length}, want ${expected.length}`);
      }
    });
    expect(failures).toEqual([]);
  }, 300_000);

  it('GraphQL: the same with a literal bound and with a variable sent as a JSON number', async () => {
    const failures: string[] = [];
    // Four prices a request, each as a literal and as a variable: the same bounds, fewer round trips.
    const prices = await everyPrice();
    const groups = Array.from({ length: Math.ceil(prices.length / 4) }, (_, g) => prices.slice(g * 4, g * 4 + 4));
    await forEach(groups, async (group) => {
      const res = await graphql(
        `query(${group.map((_, i) => `$p${i}: Decimal`).join(', ')}) {
          ${group
            .map(
              ({ price }, i) => `
          equal${i}: products(minPrice: ${price}, maxPrice: ${price}, limit: 100) { items { id } meta { total } }
          variable${i}: products(minPrice: $p${i}, maxPrice: $p${i}, limit: 100) { items { id } meta { total } }
          below${i}: products(maxPrice: $p${i}) { meta { total } }`,
            )
            .join('')}
        }`,
        Object.fromEntries(group.map(({ price }, i) => [`p${i}`, Number(price)])),
      );
      const data = res.body.data ?? {};
      group.forEach(({ price, ids: expected, atMost }, i) => {
        for (const [how, got] of [['literal', data[`equal${i}`]], ['variable', data[`variable${i}`]]] as const) {
          if (!got || JSON.stringify(ids(got.items)) !== JSON.stringify(expected) || got.meta.total !== expected.length) {
            failures.push(`${how} =${price}: got ${got?.meta.total}, want ${expected.length} ${JSON.stringify(res.body.errors ?? '')}`);
          }
        }
        if (data[`below${i}`]?.meta.total !== atMost) failures.push(`≤${price}: got ${data[`below${i}`]?.meta.total}, want ${atMost}`);
      });
    });
    expect(failures).toEqual([]);
  }, 300_000);

  it('name the rule they break: a decimal from 0 to 9999999999.99 with at most 2 decimals', async () => {
    const rule = 'must be a decimal number from 0 to 9999999999.99 with at most 2 decimals';
    for (const bound of ['1e308', '-1', '10.001', '10000000000', 'abc', '', 'Infinity', '0x10']) {
      const res = await get(`/api/products?maxPrice=${encodeURIComponent(bound)}`);
      expect(res.status, bound).toBe(400);
      expect(res.body.error.details, bound).toEqual({ maxPrice: rule });
    }
    const res = await graphql(`{ products(minPrice: 1e308) { meta { total } } }`);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { minPrice: rule } });
    // The largest price there can be is a valid bound.
    expect((await get('/api/products?minPrice=9999999999.99')).status).toBe(200);
  });
});
