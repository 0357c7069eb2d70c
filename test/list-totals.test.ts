import type { ListedCondition } from '../src/db/catalog-changes.js';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';
import { classify, isCount, tablesOf } from './helpers/statements.js';

// Product-list totals are kept per catalogue revision and carried to the next one by adding the
// changes statement triggers on "Product" log (src/domain/products/list-totals.ts,
// prisma/migrations/*_catalog_changes). What a user sees must not change for it: every total is
// exact on the very next request after any change, whoever made it.
//
// The describes share one app on one database copy (`app`) wherever what they assert holds
// whatever the others did before: each reads its totals exact against the rows first. 'a kept
// total', which asserts the database's very first count, comes first; TRUNCATE, which leaves no
// product, last. Those that remove the revision row or need other settings have their own.

// --- What the app sends, what the database holds ------------------------------------------------

/** A count of products (`product.count`), reading "Product" and nothing else: the statement a kept total saves. */
const isProductCount = (sql: string) => isCount(sql) && tablesOf(sql).join() === 'Product';

/** A read of the change log (`catalogChange.aggregate`, its only reader): a kept total brought up to date. */
const isChangeSum = (sql: string) => classify(sql).reads.includes('CatalogChange');

interface Observed<T> {
  value: T;
  /** Product COUNT statements the app sent for the request. */
  counts: number;
  /** Sums over the change log it sent. */
  carried: number;
}

/** The request's answer, and how the app came by its total. */
async function observe<T>(app: TestApp, request: () => Promise<T>): Promise<Observed<T>> {
  const before = app.statements.length;
  const value = await request();
  const sent = app.statements.slice(before);
  return { value, counts: sent.filter(isProductCount).length, carried: sent.filter(isChangeSum).length };
}

/** The three ways a total is come by. */
const counted = <T>(value: T): Observed<T> => ({ value, counts: 1, carried: 0 });
const carriedOver = <T>(value: T, totals = 1): Observed<T> => ({ value, counts: 0, carried: totals });
const keptAsIs = <T>(value: T): Observed<T> => ({ value, counts: 0, carried: 0 });

const changesLogged = async (sql: pg.Pool) => (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "CatalogChange"`)).rows[0]!.n;

const revisionOf = async (sql: pg.Pool): Promise<bigint | null> => {
  const { rows } = await sql.query<{ revision: string }>(`SELECT revision FROM "CatalogRevision" WHERE id = 1`);
  return rows[0] ? BigInt(rows[0].revision) : null;
};

/** A product list's filter, as both interfaces take it. */
interface Filter {
  search?: string;
  categoryId?: string;
  minPrice?: number;
  maxPrice?: number;
  featured?: boolean;
}

/** The filter's active products counted by us, with the WHERE the API documents. */
async function countInDatabase(sql: pg.Pool, f: Filter): Promise<number> {
  const where = ['"isActive"'];
  const params: unknown[] = [];
  const param = (v: unknown) => `$${params.push(v)}`;
  if (f.categoryId !== undefined) {
    where.push(`"categoryId" IN (WITH RECURSIVE tree AS (SELECT id FROM "Category" WHERE id = ${param(f.categoryId)}
      UNION SELECT c.id FROM "Category" c JOIN tree t ON c."parentId" = t.id) SELECT id FROM tree)`);
  }
  // The words used here are lower case without diacritics, as "searchText" is stored.
  if (f.search !== undefined) where.push(`"searchText" LIKE '%' || ${param(f.search)} || '%'`);
  if (f.minPrice !== undefined) where.push(`price >= ${param(f.minPrice)}`);
  if (f.maxPrice !== undefined) where.push(`price <= ${param(f.maxPrice)}`);
  if (f.featured) where.push(`"isFeatured"`);
  const { rows } = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "Product" WHERE ${where.join(' AND ')}`, params);
  return rows[0]!.n;
}

const countAllProducts = async (sql: pg.Pool) => (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "Product"`)).rows[0]!.n;

// --- The three ways to ask for a product list's total -------------------------------------------

const restQuery = (f: Filter) =>
  Object.entries(f)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');

const GQL_VARS = '$search: String, $categoryId: ID, $minPrice: Decimal, $maxPrice: Decimal, $featured: Boolean';
const GQL_ARGS = 'search: $search, categoryId: $categoryId, minPrice: $minPrice, maxPrice: $maxPrice, featured: $featured';

async function gqlData(app: TestApp, query: string, variables: Record<string, unknown>) {
  const res = await app.graphql(query, variables);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.errors).toBeUndefined();
  return res.body.data;
}

interface TotalReader {
  name: string;
  total: (app: TestApp, f: Filter) => Promise<number>;
  /**
   * How many totals the request needs for the filter: a searched page of items also needs the
   * number of all active products, to choose its plan (src/domain/products/products.service.ts).
   */
  totalsFor: (f: Filter) => number;
}

const withItems = (f: Filter) => (f.search ? 2 : 1);
const totalOnly = () => 1;

const READERS: TotalReader[] = [
  {
    name: 'REST /api/products meta.total',
    total: async (app, f) => {
      const res = await app.get(`/api/products?${restQuery(f)}&limit=1`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.meta.total;
    },
    totalsFor: withItems,
  },
  {
    name: 'GraphQL products.meta.total',
    total: async (app, f) => (await gqlData(app, `query(${GQL_VARS}) { products(limit: 1, ${GQL_ARGS}) { meta { total } } }`, { ...f })).products.meta.total,
    totalsFor: totalOnly,
  },
  {
    name: 'GraphQL productsConnection.totalCount',
    total: async (app, f) => (await gqlData(app, `query(${GQL_VARS}) { productsConnection(first: 1, ${GQL_ARGS}) { totalCount } }`, { ...f })).productsConnection.totalCount,
    totalsFor: totalOnly,
  },
];
const [REST_PRODUCTS] = READERS as [TotalReader, ...TotalReader[]];

/** /api/v1/stock: every product, active or not. */
async function stockTotal(app: TestApp, key: string): Promise<number> {
  const res = await app.get('/api/v1/stock?limit=1', { headers: { 'x-api-key': key } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.meta.total;
}

/**
 * Asks twice: the total is exact, and the second request reuses it (no COUNT). Returns it.
 * The first request may or may not count, depending on what was kept before.
 */
async function expectKept(app: TestApp, ask: () => Promise<number>, exact: () => Promise<number>): Promise<number> {
  const first = await ask();
  expect(first).toBe(await exact());
  const second = await observe(app, ask);
  expect(second).toEqual(keptAsIs(first));
  return first;
}

// --- Changes made by another tool, straight in SQL ----------------------------------------------

let copies = 0;

/** A new product copied from an existing active one, with its own id, slug and SKU. */
async function insertProductCopy(sql: pg.Pool, isActive: boolean): Promise<string> {
  const id = `listtotalscopy${++copies}x${Date.now().toString(36)}`;
  const res = await sql.query(
    `INSERT INTO "Product" (id, name, "nameEn", slug, description, price, "compareAtPrice", "minOrder", stock, "lowStockThreshold",
       "trackInventory", sku, images, specifications, "isActive", "isFeatured", "viewCount", "vatRate", "vatCategory", "searchText",
       "supplierId", "categoryId", "createdAt", "updatedAt")
     SELECT $1, name, "nameEn", slug || '-' || $1, description, price, "compareAtPrice", "minOrder", stock, "lowStockThreshold",
       "trackInventory", sku || '-' || $1, images, specifications, $2, "isFeatured", 0, "vatRate", "vatCategory", "searchText",
       "supplierId", "categoryId", now(), now()
     FROM "Product" WHERE "isActive" ORDER BY id LIMIT 1`,
    [id, isActive],
  );
  expect(res.rowCount).toBe(1);
  return id;
}

/** Runs one statement that must touch exactly one product. */
async function changeOne(sql: pg.Pool, statement: string, params: unknown[] = []) {
  const res = await sql.query(statement, params);
  expect(res.rowCount, statement).toBe(1);
}

/** Deactivates the first active product (by id): each call another one. */
const deactivateOne = (sql: pg.Pool) =>
  changeOne(sql, `UPDATE "Product" SET "isActive" = false WHERE id = (SELECT id FROM "Product" WHERE "isActive" ORDER BY id LIMIT 1)`);

interface Change {
  change: string;
  filter: () => Filter;
  apply: (sql: pg.Pool) => Promise<void>;
  /** How the filter's total moves. */
  delta: number;
}

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

describe('a kept total', () => {
  it('is counted by the first GET /api/products and reused by the second, with the same exact meta.total', async () => {
    const exact = await countInDatabase(app.sql, {});
    const first = await observe(app, () => REST_PRODUCTS.total(app, {}));
    expect(first).toEqual(counted(exact));
    const second = await observe(app, () => REST_PRODUCTS.total(app, {}));
    expect(second).toEqual(keptAsIs(exact));
  });

  it('is shared by both interfaces for the same filter', async () => {
    const filter = { minPrice: 20, maxPrice: 300 };
    const exact = await countInDatabase(app.sql, filter);
    const [rest, products, connection] = READERS as [TotalReader, TotalReader, TotalReader];
    expect(await observe(app, () => rest.total(app, filter))).toEqual(counted(exact));
    expect(await observe(app, () => products.total(app, filter))).toEqual(keptAsIs(exact));
    expect(await observe(app, () => connection.total(app, filter))).toEqual(keptAsIs(exact));
    // Another filter is another total.
    const other = { minPrice: 20, maxPrice: 301 };
    expect(await observe(app, () => rest.total(app, other))).toEqual(counted(await countInDatabase(app.sql, other)));
  });
});

describe('after a change made by another tool in SQL', () => {
  /** A top-level category, and a category outside its subtree. */
  let category = '';
  let outside = '';
  beforeAll(async () => {
    const { rows } = await app.sql.query<{ id: string }>(`SELECT id FROM "Category" WHERE "parentId" IS NULL AND "isActive" ORDER BY id LIMIT 2`);
    category = rows[0]!.id;
    const { rows: others } = await app.sql.query<{ id: string }>(`SELECT id FROM "Category" WHERE "parentId" = $1 ORDER BY id LIMIT 1`, [rows[1]!.id]);
    outside = others[0]!.id;
  });

  const PRICE_RANGE = { minPrice: 10, maxPrice: 100 };
  const changes: Change[] = [
    { change: 'a product deactivated', filter: () => ({}), delta: -1, apply: deactivateOne },
    {
      change: 'a price moved out of the filtered range',
      filter: () => PRICE_RANGE,
      delta: -1,
      apply: (sql) =>
        changeOne(sql, `UPDATE "Product" SET price = 5000 WHERE id = (SELECT id FROM "Product" WHERE "isActive" AND price BETWEEN 10 AND 100 ORDER BY id LIMIT 1)`),
    },
    {
      change: 'a price moved into the filtered range',
      filter: () => PRICE_RANGE,
      delta: +1,
      apply: (sql) =>
        changeOne(sql, `UPDATE "Product" SET price = 55.5 WHERE id = (SELECT id FROM "Product" WHERE "isActive" AND price > 1000 ORDER BY id LIMIT 1)`),
    },
    { change: 'an active product inserted', filter: () => ({}), delta: +1, apply: async (sql) => void (await insertProductCopy(sql, true)) },
    {
      change: 'a product with no references deleted',
      filter: () => ({}),
      delta: -1,
      apply: (sql) =>
        changeOne(
          sql,
          `DELETE FROM "Product" WHERE id = (SELECT p.id FROM "Product" p WHERE p."isActive"
             AND NOT EXISTS (SELECT 1 FROM "OrderItem" i WHERE i."productId" = p.id)
             AND NOT EXISTS (SELECT 1 FROM "Review" r WHERE r."productId" = p.id)
             AND NOT EXISTS (SELECT 1 FROM "Favorite" f WHERE f."productId" = p.id)
             ORDER BY p.id LIMIT 1)`,
        ),
    },
    {
      change: 'a searched word removed from a product',
      filter: () => ({ search: 'pentru' }),
      delta: -1,
      apply: (sql) =>
        changeOne(
          sql,
          `UPDATE "Product" SET name = replace(name, 'pentru', 'for'), "searchText" = replace("searchText", 'pentru', 'for')
           WHERE id = (SELECT id FROM "Product" WHERE "isActive" AND "searchText" LIKE '%pentru%' ORDER BY id LIMIT 1)`,
        ),
    },
    {
      change: 'a product moved out of a category tree',
      filter: () => ({ categoryId: category }),
      delta: -1,
      apply: (sql) =>
        changeOne(
          sql,
          `UPDATE "Product" SET "categoryId" = $2 WHERE id = (SELECT id FROM "Product" WHERE "isActive" AND "categoryId" IN (
             WITH RECURSIVE tree AS (SELECT id FROM "Category" WHERE id = $1 UNION SELECT c.id FROM "Category" c JOIN tree t ON c."parentId" = t.id)
             SELECT id FROM tree) ORDER BY id LIMIT 1)`,
          [category, outside],
        ),
    },
    {
      change: 'a product featured',
      filter: () => ({ featured: true }),
      delta: +1,
      apply: (sql) => changeOne(sql, `UPDATE "Product" SET "isFeatured" = true WHERE id = (SELECT id FROM "Product" WHERE "isActive" AND NOT "isFeatured" ORDER BY id LIMIT 1)`),
    },
  ];
  const cases = changes.flatMap((c) => READERS.map((reader) => ({ ...c, reader, via: reader.name })));

  it.each(cases)('$change: $via is exact on the very next request, carried over by the logged change', async ({ filter, apply, delta, reader }) => {
    const f = filter();
    const ask = () => reader.total(app, f);
    const before = await expectKept(app, ask, () => countInDatabase(app.sql, f));

    const revision = await revisionOf(app.sql);
    await apply(app.sql);
    expect(await revisionOf(app.sql)).toBeGreaterThan(revision!);

    const exact = await countInDatabase(app.sql, f);
    expect(exact).toBe(before + delta);
    expect(await observe(app, ask)).toEqual(carriedOver(exact, reader.totalsFor(f)));
    // …and kept again from then on.
    expect(await observe(app, ask)).toEqual(keptAsIs(exact));
  });
});

describe('the change log', () => {
  it('logs an update of a listed column as the old row leaving and the new one entering, under the new revision', async () => {
    const { rows } = await app.sql.query<{ id: string; price: string }>(`SELECT id, price::text FROM "Product" WHERE "isActive" ORDER BY id LIMIT 1`);
    const product = rows[0]!;
    const revision = (await revisionOf(app.sql))!;
    await changeOne(app.sql, `UPDATE "Product" SET price = price + 1, name = name || ' x' WHERE id = $1`, [product.id]);
    const logged = await app.sql.query<{ revision: string; sign: number; price: string }>(
      `SELECT revision::text, sign, price::text FROM "CatalogChange" WHERE revision > $1 ORDER BY sign`,
      [String(revision)],
    );
    const next = String(revision + 1n);
    expect(logged.rows).toEqual([
      { revision: next, sign: -1, price: product.price },
      { revision: next, sign: 1, price: (Number(product.price) + 1).toFixed(2) },
    ]);
  });

  it('logs nothing and keeps the revision for an UPDATE that changes no listed column', async () => {
    const revision = await revisionOf(app.sql);
    const logged = await changesLogged(app.sql);
    await changeOne(app.sql, `UPDATE "Product" SET name = name || ' y', "viewCount" = "viewCount" + 1 WHERE id = (SELECT id FROM "Product" ORDER BY id LIMIT 1)`);
    expect(await revisionOf(app.sql)).toBe(revision);
    expect(await changesLogged(app.sql)).toBe(logged);
  });

  it('does not log a statement that changes more than 1,000 products: totals kept before it are counted again', async () => {
    const f: Filter = { featured: true };
    const ask = () => REST_PRODUCTS.total(app, f);
    await expectKept(app, ask, () => countInDatabase(app.sql, f));
    const res = await app.sql.query(`UPDATE "Product" SET "isFeatured" = NOT "isFeatured"`);
    expect(res.rowCount).toBeGreaterThan(1000);
    expect(await changesLogged(app.sql)).toBe(0);
    expect(await observe(app, ask)).toEqual(counted(await countInDatabase(app.sql, f)));
    expect(await observe(app, ask)).toEqual(keptAsIs(await countInDatabase(app.sql, f)));
  });

  it('reaches back 1,000 revisions: a total kept longer ago is counted again', async () => {
    const f: Filter = { featured: true };
    const ask = () => REST_PRODUCTS.total(app, f);
    /** `times` statements, each featuring or unfeaturing one product: each its own revision. */
    const toggle = (times: number) =>
      app.sql.query(`DO $$ BEGIN FOR i IN 1..${times} LOOP
        UPDATE "Product" SET "isFeatured" = NOT "isFeatured" WHERE id = (SELECT id FROM "Product" WHERE "isActive" ORDER BY id LIMIT 1);
      END LOOP; END $$`);
    await expectKept(app, ask, () => countInDatabase(app.sql, f));
    await toggle(1000);
    expect(await observe(app, ask)).toEqual(carriedOver(await countInDatabase(app.sql, f)));
    await toggle(1001);
    expect(await observe(app, ask)).toEqual(counted(await countInDatabase(app.sql, f)));
  });
});

describe('a saved total', () => {
  /** Another instance on the app's database, started now: nothing in its memory. */
  const withNewInstance = async (use: (b: TestApp) => Promise<void>) => {
    const b = await startTestApp({ url: app.url });
    try {
      await use(b);
    } finally {
      await b.close();
    }
  };

  it('is used by an instance started later, without counting, and carried over after a change', async () => {
    const f: Filter = { search: 'pentru' };
    const kept = await expectKept(app, () => REST_PRODUCTS.total(app, f), () => countInDatabase(app.sql, f));
    // Saved out of the request's way, within a second (FLUSH_MS). Both totals the searched page
    // brought up to date (its own, and all active products' that it also needs): they are counted
    // at once, and a save can fall between the two.
    const revision = String(await revisionOf(app.sql));
    const active = await countInDatabase(app.sql, {});
    await expect
      .poll(async () => (await app.sql.query<{ revision: string; total: number }>(`SELECT revision::text, total FROM "ListTotal"`)).rows, { timeout: 5_000 })
      .toEqual(expect.arrayContaining([{ revision, total: kept }, { revision, total: active }]));

    for (const reader of READERS) await withNewInstance(async (b) => expect(await observe(b, () => reader.total(b, f))).toEqual(keptAsIs(kept)));

    await deactivateOne(app.sql);
    const exact = await countInDatabase(app.sql, f);
    await withNewInstance(async (b) => expect(await observe(b, () => REST_PRODUCTS.total(b, f))).toEqual(carriedOver(exact, REST_PRODUCTS.totalsFor(f))));
    // b saved what it carried over: the next instance reads it as it is.
    await withNewInstance(async (b) => expect(await observe(b, () => REST_PRODUCTS.total(b, f))).toEqual(keptAsIs(exact)));
  });
});

describe('changes to stock only (what placing an order does)', () => {
  let fixture: OrderFixture;
  let buyer = '';
  let stockKey = '';
  beforeAll(async () => {
    fixture = await makeOrderFixture(app.sql);
    buyer = (await createTestKey(app.url, { scopes: ['write:orders'] })).key;
    stockKey = (await createTestKey(app.url, { scopes: ['read:stock'] })).key;
  });

  /** Keeps every total these tests read, each checked exact. */
  const keepAll = async () => {
    const totals: number[] = [];
    for (const reader of READERS) totals.push(await expectKept(app, () => reader.total(app, {}), () => countInDatabase(app.sql, {})));
    totals.push(await expectKept(app, () => stockTotal(app, stockKey), () => countAllProducts(app.sql)));
    return totals;
  };
  /** Every total again: the same, and none counted. */
  const expectStillKept = async (totals: number[]) => {
    for (const [i, reader] of READERS.entries()) expect(await observe(app, () => reader.total(app, {}))).toEqual(keptAsIs(totals[i]));
    expect(await observe(app, () => stockTotal(app, stockKey))).toEqual(keptAsIs(totals[READERS.length]));
  };
  const stockOf = async (productId: string) => {
    const res = await app.get(`/api/v1/stock?productId=${productId}`, { headers: { 'x-api-key': stockKey } });
    expect(res.status).toBe(200);
    return res.body.data.stock as number;
  };

  it('an UPDATE of stock leaves the revision and the change log alone, and the next list requests count nothing', async () => {
    const totals = await keepAll();
    const revision = await revisionOf(app.sql);
    const logged = await changesLogged(app.sql);
    await changeOne(app.sql, `UPDATE "Product" SET stock = stock - 1, "updatedAt" = now() WHERE id = $1`, [fixture.b.id]);
    expect(await revisionOf(app.sql)).toBe(revision);
    expect(await changesLogged(app.sql)).toBe(logged);
    await expectStillKept(totals);
  });

  it('placing an order through POST /api/orders leaves the revision alone, and the next list requests count nothing', async () => {
    const totals = await keepAll();
    const revision = await revisionOf(app.sql);
    const stock = await stockOf(fixture.a.id);
    const res = await app.get('/api/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': buyer },
      body: JSON.stringify({ supplierId: fixture.supplierId, items: [{ productId: fixture.a.id, quantity: 3 }] }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    // The order did change the catalogue's stock…
    expect(await stockOf(fixture.a.id)).toBe(stock - 3);
    // …and nothing a product list's total depends on.
    expect(await revisionOf(app.sql)).toBe(revision);
    await expectStillKept(totals);
  });
});

describe('two instances on one database', () => {
  // a is the file's app; b shares its database (a drops it, so b closes first).
  let b: TestApp;
  beforeAll(async () => {
    b = await startTestApp({ url: app.url });
  });
  afterAll(() => b?.close());

  it.each(READERS)('a change made while both keep the total is carried over by both on their next request: $name', async (reader) => {
    const a = app;
    const f: Filter = {};
    const exact = () => countInDatabase(a.sql, f);
    const kept = await expectKept(a, () => reader.total(a, f), exact);
    expect(await expectKept(b, () => reader.total(b, f), exact)).toBe(kept);

    await deactivateOne(a.sql);
    expect(await observe(a, () => reader.total(a, f))).toEqual(carriedOver(kept - 1));
    expect(await observe(b, () => reader.total(b, f))).toEqual(carriedOver(kept - 1));

    // And the other way round: the instance that did not count first is asked first.
    await insertProductCopy(a.sql, true);
    await insertProductCopy(a.sql, true);
    expect(await observe(b, () => reader.total(b, f))).toEqual(carriedOver(kept + 1));
    expect(await observe(a, () => reader.total(a, f))).toEqual(carriedOver(kept + 1));
    expect(await exact()).toBe(kept + 1);
  });
});

describe('without the CatalogRevision row', () => {
  let app: TestApp;
  beforeAll(async () => {
    // Counting on every request is the subject: every request runs (no kept answers).
    app = await startTestApp({ env: { RESPONSE_CACHE: 'off' } });
  });
  afterAll(() => app?.close());

  it('counts on every request, exactly, changes included', async () => {
    const f: Filter = {};
    // Kept before the row goes.
    const kept = await expectKept(app, () => REST_PRODUCTS.total(app, f), () => countInDatabase(app.sql, f));
    await app.sql.query(`DELETE FROM "CatalogRevision"`);
    expect(await revisionOf(app.sql)).toBeNull();

    for (const reader of READERS) {
      for (let i = 0; i < 2; i++) expect(await observe(app, () => reader.total(app, f))).toEqual(counted(kept));
    }
    await deactivateOne(app.sql);
    for (const reader of READERS) expect(await observe(app, () => reader.total(app, f))).toEqual(counted(kept - 1));
    await insertProductCopy(app.sql, true);
    await insertProductCopy(app.sql, true);
    for (const reader of READERS) expect(await observe(app, () => reader.total(app, f))).toEqual(counted(kept + 1));
    expect(await countInDatabase(app.sql, f)).toBe(kept + 1);
  });
});

describe('once the CatalogRevision row is back', () => {
  // The row deleted while an instance keeps a total, the catalogue changed meanwhile, then the
  // row put back: from a backup (the revision it had), or as its migration inserts it (0), after
  // which the catalogue changes again until the revision is back where the total was kept.
  it.each([
    { restored: 'from a backup (its old revision)', as: 'backup' },
    { restored: 'by its migration (revision 0)', as: 'migration' },
  ])('totals are exact: row restored $restored', async ({ as }) => {
    const app = await startTestApp();
    try {
      const f: Filter = {};
      const revision = (await revisionOf(app.sql))!;
      await expectKept(app, () => REST_PRODUCTS.total(app, f), () => countInDatabase(app.sql, f));

      await app.sql.query(`DELETE FROM "CatalogRevision"`);
      await deactivateOne(app.sql);
      if (as === 'backup') {
        await app.sql.query(`INSERT INTO "CatalogRevision" (id, revision) VALUES (1, $1)`, [String(revision)]);
      } else {
        await app.sql.query(`INSERT INTO "CatalogRevision" ("id", "revision") VALUES (1, 0)`);
        while ((await revisionOf(app.sql))! < revision) await deactivateOne(app.sql);
      }
      expect(await revisionOf(app.sql)).toBe(revision);

      const exact = await countInDatabase(app.sql, f);
      for (const reader of READERS) expect((await observe(app, () => reader.total(app, f))).value, reader.name).toBe(exact);
    } finally {
      await app.close();
    }
  });
});

describe('/api/v1/stock meta.total', () => {
  let key = '';
  beforeAll(async () => {
    key = (await createTestKey(app.url, { scopes: ['read:stock'] })).key;
  });

  it.each([
    { product: 'an inactive product', isActive: false },
    { product: 'an active product', isActive: true },
  ])('is exact after $product is inserted (it counts every product, active or not)', async ({ isActive }) => {
    const ask = () => stockTotal(app, key);
    const before = await expectKept(app, ask, () => countAllProducts(app.sql));
    const listed = await expectKept(app, () => REST_PRODUCTS.total(app, {}), () => countInDatabase(app.sql, {}));

    await insertProductCopy(app.sql, isActive);
    expect(await countAllProducts(app.sql)).toBe(before + 1);
    expect(await observe(app, ask)).toEqual(carriedOver(before + 1));
    expect((await observe(app, () => REST_PRODUCTS.total(app, {}))).value).toBe(listed + (isActive ? 1 : 0));
  });
});

describe('TRUNCATE "Product"', () => {
  let key = '';
  beforeAll(async () => {
    key = (await createTestKey(app.url, { scopes: ['read:stock'] })).key;
  });

  it('empties every kept total on the next request', async () => {
    for (const reader of READERS) await expectKept(app, () => reader.total(app, {}), () => countInDatabase(app.sql, {}));
    await expectKept(app, () => stockTotal(app, key), () => countAllProducts(app.sql));
    const revision = await revisionOf(app.sql);
    // CASCADE: order items, reviews and favorites refer to products.
    await app.sql.query(`TRUNCATE "Product" CASCADE`);
    expect(await revisionOf(app.sql)).toBeGreaterThan(revision!);
    expect(await observe(app, () => REST_PRODUCTS.total(app, {}))).toEqual(counted(0));
    for (const reader of READERS) expect((await observe(app, () => reader.total(app, {}))).value).toBe(0);
    expect(await observe(app, () => stockTotal(app, key))).toEqual(counted(0));
  });
});

describe('ListedCondition', () => {
  it('accepts only columns the change log has: npm test type-checks this file first', () => {
    const onLoggedColumns: ListedCondition[] = [{ isActive: true }, { price: { gte: 1 } }, { searchText: { contains: 'x' } }];
    // @ts-expect-error "vatCategory" is a column of Product only: a total under it could not be carried.
    const notLogged: ListedCondition = { vatCategory: 'STANDARD' };
    expect([...onLoggedColumns, notLogged]).toHaveLength(4);
  });
});
