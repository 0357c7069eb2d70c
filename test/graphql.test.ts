import { getNullableType, isListType, isNonNullType, isObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../src/domain/schema.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { byTable, sentSince } from './helpers/statements.js';

let app: TestApp;
beforeAll(async () => {
  // The statements a query sends are the subject here: every request runs (no kept answers).
  app = await startTestApp({ env: { RESPONSE_CACHE: 'off' } });
});
afterAll(() => app?.close());

// One query per root field: DataLoader batches siblings of one list together, while two root
// fields resolve on their own schedules, so their loads may or may not share a batch.
const NESTED = {
  products: /* GraphQL */ `
    query Nested($limit: Int!) {
      products(limit: $limit, sortBy: POPULAR) {
        items {
          id name price
          supplier { id companyName products(limit: 2) { id } _count { products reviews } }
          category { id name parent { id name } children { id } _count { products } products(limit: 2) { id } }
          reviews(limit: 3) { id rating product { id } }
          _count { reviews favorites }
        }
        meta { total }
      }
    }`,
  categories: /* GraphQL */ `
    query Nested($limit: Int!) {
      categories(limit: $limit, parentOnly: true) { items { id _count { products } children { id products(limit: 3) { id supplier { id } _count { reviews } } } } }
    }`,
  suppliers: /* GraphQL */ `
    query Nested($limit: Int!) {
      suppliers(limit: $limit) { items { id products(limit: 3) { id category { id } _count { favorites } } _count { products } } }
    }`,
};

/** The tables each nested query reaches (relation counts included). */
const NESTED_TABLES: Record<keyof typeof NESTED, string[]> = {
  products: ['Product', 'Supplier', 'Category', 'Review', 'Favorite'],
  categories: ['Category', 'Product', 'Supplier', 'Review'],
  suppliers: ['Supplier', 'Product', 'Category', 'Favorite'],
};

async function statementsFor(query: string, variables: Record<string, unknown>) {
  const before = app.statements.length;
  const res = await app.graphql(query, variables);
  expect(res.status).toBe(200);
  expect(res.body.errors).toBeUndefined();
  const sent = sentSince(app.statements, before);
  return { count: sent.length, tables: byTable(sent), data: res.body.data };
}

describe('GraphQL', () => {
  // Page sizes within what the seed holds: 1,200 products, 41 active suppliers, 11 top-level
  // categories (each with subcategories holding products, so every page exercises every level).
  const SIZES: Record<keyof typeof NESTED, number[]> = { products: [1, 10, 100], suppliers: [1, 10, 40], categories: [1, 5, 10] };

  it.each(Object.entries(NESTED))('answers a nested %s query with a number of SQL statements that does not grow with the page size', async (name, query) => {
    const counts: number[] = [];
    const tallies: Record<string, number>[] = [];
    // List totals are kept between requests (src/domain/products/list-totals.ts): a first request fills them, so
    // the sizes compared all find them kept.
    await statementsFor(query, { limit: 1 });
    for (const limit of SIZES[name as keyof typeof NESTED]) {
      const { count, tables, data } = await statementsFor(query, { limit });
      expect(Object.values(data as Record<string, { items: unknown[] }>)[0]!.items).toHaveLength(limit);
      counts.push(count);
      tallies.push(tables);
    }
    // Every table the query reaches is read, and read as often for one item as for the largest page.
    expect(Object.keys(tallies[0]!)).toEqual(expect.arrayContaining(NESTED_TABLES[name as keyof typeof NESTED]));
    expect(tallies[1]).toEqual(tallies[0]);
    expect(tallies[2]).toEqual(tallies[0]);
    expect(counts[1]).toBe(counts[0]);
    expect(counts[2]).toBe(counts[0]);
  });

  it('agrees with REST on the same data', async () => {
    const rest = await app.get('/api/products?sortBy=price_asc&limit=20&minPrice=5&search=a');
    const gql = await app.graphql(
      `{ products(sortBy: PRICE_ASC, limit: 20, minPrice: 5, search: "a") {
          items { id name nameEn slug price compareAtPrice vatRate vatCategory createdAt specifications
                  supplier { id companyName verified rating } category { id name slug } _count { reviews favorites } }
          meta { page limit total totalPages } } }`,
    );
    expect(gql.body.data.products.meta).toEqual(rest.body.meta);
    const pick = (p: Record<string, unknown>) => ({
      id: p.id, name: p.name, nameEn: p.nameEn, slug: p.slug, price: p.price, compareAtPrice: p.compareAtPrice,
      vatRate: p.vatRate, vatCategory: p.vatCategory, createdAt: p.createdAt, specifications: p.specifications,
      supplier: p.supplier, category: p.category, _count: p._count,
    });
    expect(gql.body.data.products.items).toEqual(rest.body.data.map(pick));

    const slug = rest.body.data[0].slug;
    const one = await app.graphql(`query($slug: String!) { product(slug: $slug) { id slug } }`, { slug });
    expect(one.body.data.product).toEqual({ id: rest.body.data[0].id, slug });
  });

  it('walks a category tree once per request, for the page and the total alike', async () => {
    const { rows } = await app.sql.query(`SELECT id FROM "Category" WHERE "parentId" IS NULL AND "isActive" ORDER BY id LIMIT 1`);
    const before = app.statements.length;
    const res = await app.graphql(
      `query($c: ID) { productsConnection(first: 5, categoryId: $c) { totalCount edges { node { id } } } products(categoryId: $c) { meta { total } } }`,
      { c: rows[0].id },
    );
    expect(res.body.data.productsConnection.totalCount).toBe(res.body.data.products.meta.total);
    const walks = app.statements.slice(before).filter((sql) => sql.includes('WITH RECURSIVE'));
    expect(walks).toHaveLength(1);
  });

  it('returns null for a product, category or supplier that is missing', async () => {
    const res = await app.graphql(`{ product(slug: "nope") { id } category(slug: "nope") { id } supplier(id: "nope") { id } }`);
    expect(res.body).toEqual({ data: { product: null, category: null, supplier: null }, extensions: { cost: expect.any(Object) } });
  });

  it('walks a Relay connection to the end with stable cursors and a total count', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let total = 0;
    for (let i = 0; i < 100; i++) {
      const res: { body: any } = await app.graphql(
        `query($after: String) { productsConnection(first: 100, after: $after, sortBy: PRICE_DESC, maxPrice: 200) {
           totalCount edges { cursor node { id price } } pageInfo { hasNextPage endCursor } } }`,
        { after },
      );
      const conn = res.body.data.productsConnection;
      total = conn.totalCount;
      seen.push(...conn.edges.map((e: { node: { id: string } }) => e.node.id));
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
    }
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
    const { rows } = await app.sql.query(`SELECT id FROM "Product" WHERE "isActive" AND price <= 200 ORDER BY price DESC, id`);
    expect(seen).toEqual(rows.map((r) => r.id));
  });

  it('reports bad arguments with VALIDATION_ERROR and the same details as REST', async () => {
    const res = await app.graphql(`{ products(page: 0, limit: 500) { items { id } } }`);
    expect(res.body.data).toEqual({ products: null });
    expect(res.body.errors[0].extensions).toEqual({
      code: 'VALIDATION_ERROR',
      details: { page: 'must be an integer between 1 and 2147483647', limit: 'must be an integer between 1 and 100' },
    });
    const rest = await app.get('/api/products?page=0&limit=500');
    expect(rest.body.error.details).toEqual(res.body.errors[0].extensions.details);
  });

  it('answers the good root fields of a query beside a refused one, with the error at its own path', async () => {
    const { rows } = await app.sql.query<{ slug: string; name: string }>(`SELECT slug, name FROM "Product" WHERE "isActive" ORDER BY id LIMIT 1`);
    const product = rows[0]!;
    const res = await app.graphql(
      `query($slug: String!) {
        bad: products(limit: 0) { meta { total } }
        product(slug: $slug) { name }
        suppliers(limit: 1) { items { id products(limit: -1) { id } good: products(limit: 1) { id } } }
      }`,
      { slug: product.slug },
    );
    expect(res.status).toBe(200);
    expect(res.body.data.bad).toBeNull();
    expect(res.body.data.product).toEqual({ name: product.name });
    expect(res.body.data.suppliers.items[0]).toMatchObject({ products: null, good: [{ id: expect.any(String) }] });
    expect(res.body.errors).toEqual([
      expect.objectContaining({ path: ['bad'], extensions: { code: 'VALIDATION_ERROR', details: { limit: 'must be an integer between 1 and 100' } } }),
      expect.objectContaining({ path: ['suppliers', 'items', 0, 'products'], extensions: { code: 'VALIDATION_ERROR', details: { limit: 'must be an integer between 1 and 100' } } }),
    ]);
  });

  it('makes every root field and every field with list arguments nullable, and list items non-null', () => {
    const notNullable: string[] = [];
    const nullableItems: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      const root = type === schema.getQueryType() || type === schema.getMutationType();
      for (const field of Object.values(type.getFields())) {
        const canFail = root || field.args.some((a) => ['limit', 'first', 'last', 'after', 'before'].includes(a.name));
        if (canFail && isNonNullType(field.type)) notNullable.push(`${type.name}.${field.name}`);
        const list = getNullableType(field.type);
        if (isListType(list) && !isNonNullType(list.ofType)) nullableItems.push(`${type.name}.${field.name}`);
      }
    }
    expect(notNullable).toEqual([]);
    // Relay's nodes(ids:) answers null in place of each id that finds nothing.
    expect(nullableItems).toEqual(['Query.nodes']);
  });

  it('gives GraphQL syntax and validation errors the VALIDATION_ERROR code', async () => {
    const unknown = await app.graphql(`{ nope }`);
    expect(unknown.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const syntax = await app.graphql(`{ products(`);
    expect(syntax.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const badJson = await app.get('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
    expect(badJson.status).toBe(400);
    expect(badJson.body.errors[0]).toEqual({ message: expect.any(String), extensions: { code: 'VALIDATION_ERROR' } });
  });

  it('serves GraphiQL to a browser', async () => {
    const res = await fetch(`${app.base}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('GraphiQL');
  });
});

describe('GraphQL variables', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.close());

  it('reports a variable of the wrong type or a missing one as VALIDATION_ERROR, not an internal error', async () => {
    const wrongType = await app.graphql('query($l: Int) { products(limit: $l) { meta { total } } }', { l: 'x' });
    expect(wrongType.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(wrongType.body.errors[0].message).toMatch(/\$l/);
    const missing = await app.graphql('query($slug: String!) { product(slug: $slug) { id } }', {});
    expect(missing.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const nested = await app.graphql(
      'mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }',
      { input: { supplierId: 'x', items: [{ productId: 'p', quantity: '2' }] } },
    );
    expect(nested.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });
});
