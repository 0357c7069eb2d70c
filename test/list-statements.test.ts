import { Kind, parse, print, visit, type DocumentNode, type FieldNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restRoutes } from '../src/rest/routes.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';
import { byTable, classify, isKeyLookup, sentSince, TABLES, tablesOf } from './helpers/statements.js';

// Every list of both interfaces answers any page size with the same number of SQL statements:
// relations, relation counts and totals are loaded per list, never per item. Each list is read
// with the nested relations its REST representation has (taken from src/rest/routes.ts, so the
// GraphQL queries below follow the REST representation when it changes).

let app: TestApp;
let fixture: OrderFixture;
/** Keys of one account that has ORDERS orders; one key per scope, as a client would hold them. */
const keys = { orders: '', stock: '', prices: '', member: '' };
let ordersAccountId = '';
/** The top-level category with the most active products in its subtree (the filtered product lists). */
let filterCategoryId = '';

/** Orders placed for the orders lists: enough to fill the largest page. */
const ORDERS = 100;

beforeAll(async () => {
  // More orders are placed here than the per-minute order limit allows. The statements a request
  // sends are the subject: every request runs (no kept answers).
  app = await startTestApp({ env: { ORDER_CREATE_LIMIT: '100000', RESPONSE_CACHE: 'off' } });
  fixture = await makeOrderFixture(app.sql);
  const owner = 'lists@example.com';
  const orders = await createTestKey(app.url, { owner, scopes: ['read:orders', 'write:orders'] });
  keys.orders = orders.key;
  ordersAccountId = orders.accountId;
  keys.stock = (await createTestKey(app.url, { owner, scopes: ['read:stock'] })).key;
  keys.prices = (await createTestKey(app.url, { owner, scopes: ['read:prices'] })).key;
  // A member of the orders' supplier, for its side of them.
  const member = await createTestKey(app.url, { owner: 'lists-member@example.com', scopes: ['read:orders'] });
  keys.member = member.key;
  await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [member.accountId, fixture.supplierId]);

  // Orders of one, two and three lines, so that a page's items, their products, the buyer and
  // the supplier all have something to load.
  const lines = [[fixture.a], [fixture.a, fixture.b], [fixture.a, fixture.b, fixture.c]];
  for (let i = 0; i < ORDERS; i++) {
    const res = await app.get('/api/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': keys.orders },
      body: JSON.stringify({ supplierId: fixture.supplierId, items: lines[i % 3]!.map((p) => ({ productId: p.id, quantity: 1 })) }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }

  const { rows } = await app.sql.query<{ id: string }>(`
    WITH RECURSIVE tree AS (
      SELECT id AS root, id FROM "Category" WHERE "parentId" IS NULL AND "isActive"
      UNION SELECT t.root, c.id FROM "Category" c JOIN tree t ON c."parentId" = t.id)
    SELECT t.root AS id FROM tree t JOIN "Product" p ON p."categoryId" = t.id AND p."isActive"
    GROUP BY t.root ORDER BY count(*) DESC, t.root LIMIT 1`);
  filterCategoryId = rows[0]!.id;
});
afterAll(() => app?.close());

// --- The REST representation, read from the route table ---------------------------------------

const routeDocument = (path: string): DocumentNode => {
  const route = restRoutes.find((r) => r.method === 'GET' && r.path === path);
  if (!route) throw new Error(`no GET ${path} in src/rest/routes.ts`);
  return parse(route.document);
};

/** The fragments a REST route's document defines, printed. */
const fragmentsOf = (path: string) =>
  routeDocument(path)
    .definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION)
    .map((d) => print(d))
    .join('\n');

/** What a REST route selects on each item of its list field, e.g. `{ ...RestProduct }`. */
function itemSelectionOf(path: string, listField: string): string {
  let items: FieldNode | undefined;
  visit(routeDocument(path), {
    Field(node) {
      if (node.name.value !== listField) return;
      items = node.selectionSet?.selections.find((s): s is FieldNode => s.kind === Kind.FIELD && s.name.value === 'items');
    },
  });
  if (!items?.selectionSet) throw new Error(`GET ${path} selects no ${listField}.items`);
  return print(items.selectionSet);
}

const META = 'meta { page limit total totalPages }';
const PRODUCT = { fields: itemSelectionOf('/api/products', 'products'), fragments: fragmentsOf('/api/products') };
/** Includes `products(limit: 4) @include(if: $includeProducts)`: sent with includeProducts true. */
const CATEGORY = { fields: itemSelectionOf('/api/categories', 'categories'), fragments: fragmentsOf('/api/categories') };
const SUPPLIER = { fields: itemSelectionOf('/api/suppliers', 'suppliers'), fragments: fragmentsOf('/api/suppliers') };
const ORDER = { fields: itemSelectionOf('/api/orders', 'orders'), fragments: fragmentsOf('/api/orders') };
const STOCK = itemSelectionOf('/api/v1/stock', 'stockRecords');
const PRICE = itemSelectionOf('/api/v1/prices', 'priceRecords');

// The filtered product lists: a word, a category subtree, a price range and a sort.
const FILTER = { search: 'pentru', minPrice: 10, maxPrice: 2000 };
const restFilter = () =>
  `search=${FILTER.search}&categoryId=${filterCategoryId}&minPrice=${FILTER.minPrice}&maxPrice=${FILTER.maxPrice}&sortBy=price_desc`;
const gqlFilter = () => ({ search: FILTER.search, categoryId: filterCategoryId, minPrice: FILTER.minPrice, maxPrice: FILTER.maxPrice, sortBy: 'PRICE_DESC' });
const GQL_FILTER_ARGS = 'search: $search, categoryId: $categoryId, minPrice: $minPrice, maxPrice: $maxPrice, sortBy: $sortBy';
const GQL_FILTER_VARS = '$search: String, $categoryId: ID, $minPrice: Decimal, $maxPrice: Decimal, $sortBy: ProductSort';

// --- The lists, counted in the database directly -------------------------------------------------

const countOf = async (sql: string, params: unknown[] = []) => (await app.sql.query<{ n: number }>(sql, params)).rows[0]!.n;

const TOTALS = {
  products: () => countOf(`SELECT count(*)::int AS n FROM "Product" WHERE "isActive"`),
  filteredProducts: () =>
    countOf(
      `WITH RECURSIVE tree AS (SELECT id FROM "Category" WHERE id = $1 UNION SELECT c.id FROM "Category" c JOIN tree t ON c."parentId" = t.id)
       SELECT count(*)::int AS n FROM "Product"
       WHERE "isActive" AND "categoryId" IN (SELECT id FROM tree) AND "searchText" LIKE '%' || $2 || '%' AND price BETWEEN $3 AND $4`,
      [filterCategoryId, FILTER.search, FILTER.minPrice, FILTER.maxPrice],
    ),
  categories: () => countOf(`SELECT count(*)::int AS n FROM "Category" WHERE "isActive"`),
  suppliers: () => countOf(`SELECT count(*)::int AS n FROM "Supplier" WHERE "isActive"`),
  orders: () => countOf(`SELECT count(*)::int AS n FROM "Order" WHERE "buyerId" = $1`, [ordersAccountId]),
  supplierOrders: () => countOf(`SELECT count(*)::int AS n FROM "Order" WHERE "supplierId" = $1`, [fixture.supplierId]),
  /** Stock and prices list every product, active or not. */
  records: () => countOf(`SELECT count(*)::int AS n FROM "Product"`),
};

// --- Requests ------------------------------------------------------------------------------------

interface ListPage {
  status: number;
  /** The page's items, or undefined when the answer has none (an error). */
  items: unknown[] | undefined;
  /** meta.total or totalCount */
  total: unknown;
  /** REST's `error` or GraphQL's `errors`: undefined when the request succeeded. */
  error: unknown;
  /** The whole body, shown when an expectation fails. */
  body: unknown;
}

async function rest(path: string, key?: string): Promise<ListPage> {
  const res = await app.get(path, key ? { headers: { 'x-api-key': key } } : undefined);
  return { status: res.status, items: res.body?.data, total: res.body?.meta?.total, error: res.body?.error, body: res.body };
}

async function graphql(query: string, variables: Record<string, unknown>, pick: (data: any) => { items: unknown[]; total: unknown }, key?: string): Promise<ListPage> {
  const res = await app.get('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const picked = res.body?.data ? pick(res.body.data) : undefined;
  return { status: res.status, items: picked?.items, total: picked?.total, error: res.body?.errors, body: res.body };
}

const list = (field: string) => (data: any) => ({ items: data[field].items, total: data[field].meta.total });
const connectionOf = (field: string) => (data: any) => ({ items: data[field].edges, total: data[field].totalCount });
const connection = connectionOf('productsConnection');

interface ListCase {
  iface: 'REST' | 'GraphQL';
  list: string;
  /** The list's rows counted with SQL: the expected meta.total; the largest page is min(100, it). */
  total: () => Promise<number>;
  /** The table the list's items come from. */
  table: string;
  /** The page `page` (default 1) of `limit` items. */
  request: (limit: number, page?: number) => Promise<ListPage>;
  /** Offset-paginated (`page`); a connection pages by cursor. */
  paged?: false;
  /** Its representation loads relations or relation counts (stock and price records load none). */
  joins?: false;
}

const cases: ListCase[] = [
  { iface: 'REST', list: 'GET /api/products', total: TOTALS.products, table: 'Product', request: (n, p = 1) => rest(`/api/products?limit=${n}&page=${p}`) },
  { iface: 'REST', list: 'GET /api/products (search, categoryId, price range, sortBy)', total: TOTALS.filteredProducts, table: 'Product', request: (n, p = 1) => rest(`/api/products?${restFilter()}&limit=${n}&page=${p}`) },
  { iface: 'REST', list: 'GET /api/categories', total: TOTALS.categories, table: 'Category', request: (n, p = 1) => rest(`/api/categories?limit=${n}&page=${p}`) },
  { iface: 'REST', list: 'GET /api/categories?includeProducts=true', total: TOTALS.categories, table: 'Category', request: (n, p = 1) => rest(`/api/categories?includeProducts=true&limit=${n}&page=${p}`) },
  { iface: 'REST', list: 'GET /api/suppliers', total: TOTALS.suppliers, table: 'Supplier', request: (n, p = 1) => rest(`/api/suppliers?limit=${n}&page=${p}`) },
  { iface: 'REST', list: 'GET /api/orders (read:orders)', total: TOTALS.orders, table: 'Order', request: (n, p = 1) => rest(`/api/orders?limit=${n}&page=${p}`, keys.orders) },
  { iface: 'REST', list: 'GET /api/v1/stock (read:stock)', joins: false, total: TOTALS.records, table: 'Product', request: (n, p = 1) => rest(`/api/v1/stock?limit=${n}&page=${p}`, keys.stock) },
  { iface: 'REST', list: 'GET /api/v1/prices (read:prices)', joins: false, total: TOTALS.records, table: 'Product', request: (n, p = 1) => rest(`/api/v1/prices?limit=${n}&page=${p}`, keys.prices) },
  {
    iface: 'GraphQL',
    list: 'products',
    total: TOTALS.products, table: 'Product',
    request: (n, p = 1) =>
      graphql(`query($limit: Int!, $page: Int) { products(limit: $limit, page: $page) { items ${PRODUCT.fields} ${META} } } ${PRODUCT.fragments}`, { limit: n, page: p }, list('products')),
  },
  {
    iface: 'GraphQL',
    list: 'products (search, categoryId, price range, sortBy)',
    total: TOTALS.filteredProducts, table: 'Product',
    request: (n, p = 1) =>
      graphql(
        `query($limit: Int!, $page: Int, ${GQL_FILTER_VARS}) { products(limit: $limit, page: $page, ${GQL_FILTER_ARGS}) { items ${PRODUCT.fields} ${META} } } ${PRODUCT.fragments}`,
        { limit: n, page: p, ...gqlFilter() },
        list('products'),
      ),
  },
  {
    iface: 'GraphQL',
    list: 'productsConnection',
    total: TOTALS.products, table: 'Product',
    paged: false,
    request: (n) =>
      graphql(
        `query($first: Int!) { productsConnection(first: $first) { totalCount edges { cursor node ${PRODUCT.fields} } pageInfo { hasNextPage endCursor } } } ${PRODUCT.fragments}`,
        { first: n },
        connection,
      ),
  },
  {
    iface: 'GraphQL',
    list: 'productsConnection (search, categoryId, price range, sortBy)',
    total: TOTALS.filteredProducts, table: 'Product',
    paged: false,
    request: (n) =>
      graphql(
        `query($first: Int!, ${GQL_FILTER_VARS}) { productsConnection(first: $first, ${GQL_FILTER_ARGS}) { totalCount edges { cursor node ${PRODUCT.fields} } pageInfo { hasNextPage endCursor } } } ${PRODUCT.fragments}`,
        { first: n, ...gqlFilter() },
        connection,
      ),
  },
  {
    iface: 'GraphQL',
    list: 'categories (with products(limit: 4))',
    total: TOTALS.categories, table: 'Category',
    request: (n, p = 1) =>
      graphql(
        `query($limit: Int!, $page: Int, $includeProducts: Boolean!) { categories(limit: $limit, page: $page) { items ${CATEGORY.fields} ${META} } } ${CATEGORY.fragments}`,
        { limit: n, page: p, includeProducts: true },
        list('categories'),
      ),
  },
  {
    iface: 'GraphQL',
    list: 'suppliers',
    total: TOTALS.suppliers, table: 'Supplier',
    request: (n, p = 1) =>
      graphql(`query($limit: Int!, $page: Int) { suppliers(limit: $limit, page: $page) { items ${SUPPLIER.fields} ${META} } } ${SUPPLIER.fragments}`, { limit: n, page: p }, list('suppliers')),
  },
  {
    iface: 'GraphQL',
    list: 'orders (read:orders)',
    total: TOTALS.orders, table: 'Order',
    request: (n, p = 1) =>
      graphql(`query($limit: Int!, $page: Int) { orders(limit: $limit, page: $page) { items ${ORDER.fields} ${META} } } ${ORDER.fragments}`, { limit: n, page: p }, list('orders'), keys.orders),
  },
  {
    iface: 'GraphQL',
    list: 'ordersConnection (read:orders)',
    total: TOTALS.orders, table: 'Order',
    paged: false,
    request: (n) =>
      graphql(
        `query($first: Int!) { ordersConnection(first: $first) { totalCount edges { cursor node ${ORDER.fields} } pageInfo { hasNextPage endCursor } } } ${ORDER.fragments}`,
        { first: n },
        connectionOf('ordersConnection'),
        keys.orders,
      ),
  },
  {
    iface: 'GraphQL',
    list: 'supplierOrdersConnection (read:orders, a member)',
    total: TOTALS.supplierOrders, table: 'Order',
    paged: false,
    request: (n) =>
      graphql(
        `query($first: Int!) { supplierOrdersConnection(first: $first) { totalCount edges { cursor node ${ORDER.fields} } pageInfo { hasNextPage endCursor } } } ${ORDER.fragments}`,
        { first: n },
        connectionOf('supplierOrdersConnection'),
        keys.member,
      ),
  },
  {
    iface: 'GraphQL',
    list: 'suppliersConnection',
    total: TOTALS.suppliers, table: 'Supplier',
    paged: false,
    request: (n) =>
      graphql(
        `query($first: Int!) { suppliersConnection(first: $first) { totalCount edges { cursor node ${SUPPLIER.fields} } pageInfo { hasNextPage endCursor } } } ${SUPPLIER.fragments}`,
        { first: n },
        connectionOf('suppliersConnection'),
      ),
  },
  {
    iface: 'GraphQL',
    list: 'categoriesConnection (with products(limit: 4))',
    total: TOTALS.categories, table: 'Category',
    paged: false,
    request: (n) =>
      graphql(
        `query($first: Int!, $includeProducts: Boolean!) { categoriesConnection(first: $first) { totalCount edges { cursor node ${CATEGORY.fields} } pageInfo { hasNextPage endCursor } } } ${CATEGORY.fragments}`,
        { first: n, includeProducts: true },
        connectionOf('categoriesConnection'),
      ),
  },
  {
    iface: 'GraphQL',
    list: 'stockRecords (read:stock)',
    joins: false,
    total: TOTALS.records, table: 'Product',
    request: (n, p = 1) =>
      graphql(`query($limit: Int!, $page: Int) { stockRecords(limit: $limit, page: $page) { items ${STOCK} ${META} } }`, { limit: n, page: p }, list('stockRecords'), keys.stock),
  },
  {
    iface: 'GraphQL',
    list: 'priceRecords (read:prices)',
    joins: false,
    total: TOTALS.records, table: 'Product',
    request: (n, p = 1) =>
      graphql(`query($limit: Int!, $page: Int) { priceRecords(limit: $limit, page: $page) { items ${PRICE} ${META} } }`, { limit: n, page: p }, list('priceRecords'), keys.prices),
  },
];


/**
 * The SQL statements one request sends, and its answer. Its key's lookup is left out (isKeyLookup:
 * on a slow run it can fall in any measured request); authentication is not what is measured.
 */
async function measure(c: ListCase, limit: number, pageNumber = 1) {
  const before = app.statements.length;
  const page = await c.request(limit, pageNumber);
  const sent = sentSince(app.statements, before).filter((sql) => !isKeyLookup(sql));
  return { page, sent };
}

/** Page sizes measured: one item, ten, and the largest page the list fills (at most the maximum limit, 100). */
const LIMIT_MAX = 100;

describe('SQL statements per list request', () => {
  it.each(cases)('$iface $list: the same number of statements for 1, 10 and the largest page', async (c) => {
    const total = await c.total();
    // Too short a list would compare nothing.
    expect(total).toBeGreaterThanOrEqual(20);
    const sizes = [1, 10, Math.min(LIMIT_MAX, total)];

    // Warm-up: product and stock/price totals are kept between requests (src/domain/products/list-totals.ts), so
    // the first request of a list may count once more than the ones measured after it.
    const warm = await c.request(1);
    expect(warm.status, JSON.stringify(warm.body)).toBe(200);
    expect(warm.error).toBeUndefined();

    const counts: number[] = [];
    const tallies: Record<string, number>[] = [];
    const sent: string[][] = [];
    for (const limit of sizes) {
      const measured = await measure(c, limit);
      const { page } = measured;
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      expect(page.error).toBeUndefined();
      expect(page.items).toHaveLength(limit);
      expect(page.total).toBe(total);
      counts.push(measured.sent.length);
      tallies.push(byTable(measured.sent));
      sent.push(measured.sent);
    }
    expect(counts[0]).toBeGreaterThan(0);
    // The statements are told apart by table: the list's own table is among them.
    expect(tallies[0]![c.table], JSON.stringify(tallies[0])).toBeGreaterThan(0);
    // On failure, the statements of every size are shown.
    const shown = sizes.map((limit, i) => `limit ${limit}: ${counts[i]} statements, ${JSON.stringify(tallies[i])}\n  ${sent[i]!.join('\n  ')}`).join('\n');
    // No table is read once per item (no N+1): per table, and in all, the same statements for every size.
    expect(tallies, shown).toEqual([tallies[0], tallies[0], tallies[0]]);
    expect(counts, shown).toEqual([counts[0], counts[0], counts[0]]);
    // A read writes nothing (so that it may be served by a read replica): no statement of any size
    // writes a table, kept totals included (they are saved out of the request's way).
    expect(sent.flat().filter((sql) => classify(sql).writes.length > 0), shown).toEqual([]);
  });
});

// A page deep in a list costs what its own rows cost (issue 27): PostgreSQL builds every row it
// reads in full before OFFSET skips it, relations joined in included, so a page that skips rows
// picks its ids on the list's own table first and loads relations for those ids only
// (src/db/direct-reads.ts). Told by the statements, not by timing: whatever reads OFFSET reads the list's
// table alone, and a statement that loads the page's rows by id binds at most a page of ids.

/** Items per page of the deep page, and which page: rows 2·DEEP_LIMIT+1 … 3·DEEP_LIMIT are the page's, the rows before it skipped. */
const DEEP_LIMIT = 10;
const DEEP_PAGE = 3;

const hasOffset = (sql: string) => /\bOFFSET\b/i.test(sql);
/**
 * Where a statement skips rows: the ids subquery `(SELECT "id" FROM … OFFSET $n)` a page read in
 * one statement joins its rows to (src/db/direct-reads.ts, pageReadSql), or else the whole statement.
 * The rest is the statement without that subquery.
 */
function skipping(sql: string): { part: string; rest: string } {
  const subquery = /\(SELECT "id" FROM [^()]*(?:\([^()]*\)[^()]*)*\bOFFSET \$\d+\)/.exec(sql);
  return subquery ? { part: subquery[0], rest: sql.replace(subquery[0], '()') } : { part: sql, rest: '' };
}
/**
 * How many times a statement reads one of the database's tables (after FROM or JOIN, each
 * reference counted): a relation joined to its own table (a category's children) counts too.
 */
const tableReads = (sql: string) =>
  [...sql.matchAll(/\b(?:FROM|JOIN)\s+(?:LATERAL\s+)?(?:"[^"]+"\s*\.\s*)?"([^"]+)"/gi)].filter((m) => TABLES.has(m[1]!)).length;
/** The placeholders of the statement's `IN (…)` lists, e.g. `"t0"."id" IN ($4,$5,$6)` → [3]. */
const inListSizes = (sql: string) => [...sql.matchAll(/\bIN\s*\(((?:\$\d+\s*,\s*)*\$\d+)\)/gi)].map((m) => m[1]!.split(',').length);

/** An item's identity in either interface: a product, category, supplier or order id; a stock or price record's id. */
const idOf = (item: unknown) => (item as { id?: string; node?: { id: string } }).id ?? (item as { node: { id: string } }).node.id;

describe('a deep page joins its relations for its own rows only', () => {
  it.each(cases.filter((c) => c.paged !== false))('$iface $list: page 3 of 10', async (c) => {
    const total = await c.total();
    expect(total).toBeGreaterThanOrEqual(DEEP_PAGE * DEEP_LIMIT);
    // The same rows read as one first page: the deep page must be its last DEEP_LIMIT rows, in order.
    const whole = await c.request(DEEP_PAGE * DEEP_LIMIT);
    expect(whole.status, JSON.stringify(whole.body)).toBe(200);
    const { page, sent } = await measure(c, DEEP_LIMIT, DEEP_PAGE);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.error).toBeUndefined();
    expect(page.total).toBe(total);
    expect(page.items!.map(idOf)).toEqual(whole.items!.slice((DEEP_PAGE - 1) * DEEP_LIMIT).map(idOf));

    const shown = sent.map((sql) => `${JSON.stringify(tablesOf(sql))} ${sql}`).join('\n  ');
    const skips = sent.filter(hasOffset).map(skipping);
    expect(skips.length, shown).toBeGreaterThan(0);
    // Rows are skipped on the list's own table, with nothing joined to them…
    for (const { part } of skips) {
      expect(tablesOf(part), shown).toEqual([c.table]);
      expect(tableReads(part), shown).toBe(1);
    }
    // …and every statement that reads the list's table with more (its relations, their counts)
    // reads the page's rows by id: by the skipped ids (joined to the ids subquery, which holds no
    // more than the page), or with no OFFSET and no more ids than the page holds.
    const joined = sent.filter((sql) => tablesOf(sql).includes(c.table) && tableReads(sql) > 1 && classify(sql).writes.length === 0);
    // (Its representation joins relations, so there is such a statement to check.)
    if (c.joins !== false) expect(joined.length, shown).toBeGreaterThan(0);
    for (const sql of joined) {
      const { part, rest } = skipping(sql);
      if (rest) {
        expect(part, shown).toMatch(/\bLIMIT \$\d+ OFFSET \$\d+\)$/);
        expect(hasOffset(rest), shown).toBe(false);
        continue;
      }
      expect(hasOffset(sql), shown).toBe(false);
      expect(Math.max(0, ...inListSizes(sql)), shown).toBeLessThanOrEqual(DEEP_LIMIT);
    }
  });
});

// The REST routes' queries run compiled (src/rest/compiled.ts), /graphql's documents with the
// generic executor: plugin-prisma must plan a page the same way under both. Had the selection
// mapper lost a compiled execution's scopes (vendor/README.md, change 3), every relation of the
// page would be loaded again through plugin-prisma's fallback: the same count for any page size,
// but more statements than the same selection sent to /graphql.
const SAME_WORK: [rest: string, graphql: string][] = [
  ['GET /api/products', 'products'],
  ['GET /api/products (search, categoryId, price range, sortBy)', 'products (search, categoryId, price range, sortBy)'],
  ['GET /api/categories?includeProducts=true', 'categories (with products(limit: 4))'],
  ['GET /api/suppliers', 'suppliers'],
  ['GET /api/orders (read:orders)', 'orders (read:orders)'],
  ['GET /api/v1/stock (read:stock)', 'stockRecords (read:stock)'],
  ['GET /api/v1/prices (read:prices)', 'priceRecords (read:prices)'],
];

describe('a REST list sends the statements of its selection over /graphql', () => {
  const caseNamed = (name: string) => cases.find((c) => c.list === name) ?? expect.fail(`no case ${name}`);
  it.each(SAME_WORK)('%s and %s', async (restName, graphqlName) => {
    const [viaRest, viaGraphql] = [caseNamed(restName), caseNamed(graphqlName)];
    // Warm-up: kept totals (see above).
    await viaRest.request(1);
    await viaGraphql.request(1);
    const a = await measure(viaRest, 10, 2);
    const b = await measure(viaGraphql, 10, 2);
    expect(a.page.status, JSON.stringify(a.page.body)).toBe(200);
    expect(b.page.status, JSON.stringify(b.page.body)).toBe(200);
    expect(a.page.items!.map(idOf)).toEqual(b.page.items!.map(idOf));
    const shown = `REST:\n  ${a.sent.join('\n  ')}\nGraphQL:\n  ${b.sent.join('\n  ')}`;
    expect(a.sent.length, shown).toBe(b.sent.length);
    expect(byTable(a.sent), shown).toEqual(byTable(b.sent));
  });
});
