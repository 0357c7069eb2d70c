import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIST_SIZE, estimateCost, loadedCost, MAX_LIST_SIZE } from '../../src/pipeline/graphql-cost.js';
import { schema } from '../../src/domain/schema.js';

// The cost estimate (src/pipeline/graphql-cost.ts) on the real schema: how many objects an operation
// may make the server load, known before it runs. Each rule below is one the README's "Calculated
// query costs" promises a client.

const cost = (source: string, variables?: Record<string, unknown>, operationName?: string) =>
  estimateCost({ schema, document: parse(source), variables, operationName });

describe('what counts', () => {
  it('counts each object once and its scalars not at all', () => {
    expect(cost(`{ product(slug: "x") { id name price stock } }`)).toBe(1);
    expect(cost(`{ product(slug: "x") { id supplier { id } category { id name } } }`)).toBe(3);
  });

  it('counts a list by its own limit, and its items by the page they are in', () => {
    expect(cost(`{ products(limit: 30) { items { id } } }`)).toBe(1 + 30);
    expect(cost(`{ products(limit: 30) { items { id } meta { total } } }`)).toBe(1 + 30 + 1);
  });

  it('counts a connection’s edges and nodes by first or last', () => {
    expect(cost(`{ productsConnection(first: 30) { edges { node { id } } } }`)).toBe(1 + 30 + 30);
    expect(cost(`{ productsConnection(last: 25) { edges { cursor node { id } } pageInfo { hasNextPage } } }`)).toBe(1 + 25 + 25 + 1);
  });

  it('multiplies list sizes down the query, the way the resolvers load them', () => {
    expect(cost(`{ products(limit: 10) { items { supplier { products(limit: 10) { id } } } } }`)).toBe(1 + 10 + 10 + 10 * 10);
    const millionRows = `{ products(limit: 100) { items { supplier { products(limit: 100) { supplier { products(limit: 100) { id } } } } } } }`;
    expect(cost(millionRows)).toBe(1 + 100 + 100 + 100 * 100 + 100 * 100 + 100 * 100 * 100);
  });

  it('counts a size not given as the field’s schema default, else the default list size', () => {
    // Product.reviews(limit: Int = 10); products(limit: Int) has no default.
    expect(cost(`{ product(slug: "x") { reviews { id } } }`)).toBe(1 + 10);
    expect(cost(`{ products { items { id } } }`)).toBe(1 + DEFAULT_LIST_SIZE);
    expect(DEFAULT_LIST_SIZE).toBe(20);
  });

  it('counts a list without any size argument (a category’s children, an order’s items) at the default size', () => {
    expect(cost(`{ category(slug: "x") { children { id } } }`)).toBe(1 + DEFAULT_LIST_SIZE);
    expect(cost(`{ orders(limit: 5) { items { items { id } } } }`)).toBe(1 + 5 + 5 * DEFAULT_LIST_SIZE);
  });

  it('counts a list of given keys one per key, from the document or a variable', () => {
    expect(cost(`{ nodes(ids: ["a", "b", "c"]) { id } }`)).toBe(3);
    expect(cost(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: ['a', 'b', 'c', 'd', 'e'] })).toBe(5);
  });

  it('keeps every size within 1 and the largest page, which the field itself then refuses', () => {
    expect(MAX_LIST_SIZE).toBe(100);
    expect(cost(`{ products(limit: 100000) { items { id } } }`)).toBe(1 + MAX_LIST_SIZE);
    expect(cost(`{ products(limit: 0) { items { id } } }`)).toBe(1 + 1);
    expect(cost(`{ products(limit: -50) { items { id } } }`)).toBe(1 + 1);
  });

  it('counts aliases of one field separately: each is resolved', () => {
    expect(cost(`{ a: product(slug: "a") { id } b: product(slug: "b") { id } c: product(slug: "c") { id } }`)).toBe(3);
  });

  it('merges repeated fields and fragments as the executor does, not multiplied', () => {
    const once = `{ products(limit: 10) { items { supplier { id } } } }`;
    const repeated = `{ products(limit: 10) { items { supplier { id } ...S ...S } items { ...S } } } fragment S on Product { supplier { id } }`;
    expect(cost(repeated)).toBe(cost(once));
  });

  it('counts a field selected under @skip or @include as if it were included (an upper bound)', () => {
    expect(cost(`{ product(slug: "x") { supplier @skip(if: true) { id } category @include(if: false) { id } } }`)).toBe(3);
  });

  it('counts every branch of an abstract field’s fragments (an upper bound)', () => {
    expect(cost(`{ node(id: "x") { ... on Product { supplier { id } } ... on Supplier { products(limit: 5) { id } } } }`)).toBe(1 + 1 + 5);
  });
});

describe('what costs nothing', () => {
  it('introspection is free: the schema bounds it', () => {
    expect(cost(`{ __schema { types { name fields { name type { name ofType { name } } } } } }`)).toBe(0);
    expect(cost(`{ __type(name: "Product") { fields { name } } }`)).toBe(0);
    expect(cost(`{ __typename }`)).toBe(0);
  });

  it('repeating a field under the same response key costs nothing more', () => {
    expect(cost(`{ product(slug: "x") { supplier { id } supplier { name } } }`)).toBe(2);
  });

  it('spreading one fragment several times in a selection costs it once', () => {
    const once = cost(`{ products(limit: 10) { items { ...P } } } fragment P on Product { supplier { id } }`);
    expect(cost(`{ products(limit: 10) { items { ...P ...P ... on Product { ...P } } } } fragment P on Product { supplier { id } }`)).toBe(once);
  });

  it('a document naming no runnable operation costs 0', () => {
    const two = `query A { product(slug: "x") { id } } query B { products(limit: 5) { items { id } } }`;
    expect(cost(two)).toBe(0);
    expect(cost(two, undefined, 'Missing')).toBe(0);
  });
});

describe('variables and operations', () => {
  it('reads a size from the variables the operation runs with', () => {
    const query = `query($n: Int) { products(limit: $n) { items { id } } }`;
    expect(cost(query, { n: 7 })).toBe(1 + 7);
    expect(cost(query, { n: 70 })).toBe(1 + 70);
  });

  it('uses a variable’s default when no value is given, and the default size when there is neither', () => {
    expect(cost(`query($n: Int = 3) { products(limit: $n) { items { id } } }`)).toBe(1 + 3);
    expect(cost(`query($n: Int = 3) { products(limit: $n) { items { id } } }`, { n: 9 })).toBe(1 + 9);
    expect(cost(`query($n: Int) { products(limit: $n) { items { id } } }`)).toBe(1 + DEFAULT_LIST_SIZE);
  });

  it('reads a variable named like an object member as any other (no prototype lookup)', () => {
    const query = `query($constructor: Int, $toString: Int) { a: products(limit: $constructor) { items { id } } b: products(limit: $toString) { items { id } } }`;
    expect(cost(query, { constructor: 5, toString: 6 })).toBe(1 + 5 + 1 + 6);
    expect(cost(query)).toBe(2 * (1 + DEFAULT_LIST_SIZE));
  });

  it('estimates the operation named, of several', () => {
    const two = `query A { product(slug: "x") { id } } query B { products(limit: 5) { items { id } } }`;
    expect(cost(two, undefined, 'A')).toBe(1);
    expect(cost(two, undefined, 'B')).toBe(1 + 5);
  });

  it('estimates mutations like queries', () => {
    expect(cost(`mutation { createOrder(input: { supplierId: "s", items: [] }) { id supplier { id } items { id } } }`)).toBe(1 + 1 + DEFAULT_LIST_SIZE);
  });
});

describe('bounded work', () => {
  const millionRows = `{ products(limit: 100) { items { supplier { products(limit: 100) { supplier { products(limit: 100) { id } } } } } } }`;

  it('stops counting once past the budget: the result is over it, and far below the full count', () => {
    const full = cost(millionRows);
    const stopped = estimateCost({ schema, document: parse(millionRows) }, 1000);
    expect(stopped).toBeGreaterThan(1000);
    expect(stopped).toBeLessThan(full);
  });

  it('gives the full count when it is within the budget', () => {
    const query = `{ products(limit: 10) { items { id } } }`;
    expect(estimateCost({ schema, document: parse(query) }, 11)).toBe(11);
  });

  it('ends a fragment cycle (which validation refuses) instead of recursing for ever', () => {
    const cycle = `{ category(slug: "x") { ...C } } fragment C on Category { parent { ...C } }`;
    const counted = cost(cycle);
    expect(Number.isFinite(counted)).toBe(true);
    expect(counted).toBeGreaterThan(100);
  });
});

describe('the actual cost: what an answer holds (loadedCost)', () => {
  const loaded = (source: string, data: unknown, operationName?: string) => loadedCost(parse(source), operationName, data);

  it('counts each object and each object in a list, as the estimate does, by what came back', () => {
    const query = `{ products(limit: 50) { items { id supplier { id } } meta { total } } }`;
    const items = [{ id: '1', supplier: { id: 's' } }, { id: '2', supplier: null }, { id: '3', supplier: { id: 's' } }];
    expect(loaded(query, { products: { items, meta: { total: 3 } } })).toBe(1 + 3 + 2 + 1);
    expect(cost(query)).toBe(1 + 50 + 50 + 1);
    expect(loaded(query, { products: null })).toBe(0);
    expect(loaded(query, null)).toBe(0);
  });

  it('follows aliases, fragments and inline fragments by response key; introspection and JSON values are free', () => {
    const query = `query Q {
      a: product(slug: "a") { ...P }
      b: product(slug: "b") { id ... on Product { category { id } } }
      __schema { types { name } }
      t: __type(name: "Product") { name }
    }
    fragment P on Product { specifications supplier { id } }`;
    const data = {
      a: { specifications: { color: 'red', size: { w: 1 } }, supplier: { id: 's' } },
      b: { id: 'b', category: { id: 'c' } },
      __schema: { types: [{ name: 'Product' }, { name: 'Query' }] },
      t: { name: 'Product' },
    };
    expect(loaded(query, data, 'Q')).toBe(2 + 2);
  });

  it('counts the objects of nested lists one by one', () => {
    const query = `{ nodes(ids: ["a", "b", "c"]) { id } }`;
    expect(loaded(query, { nodes: [{ id: 'a' }, null, { id: 'c' }] })).toBe(2);
  });
});
