// A typed GraphQL client, as a frontend would write one: the documents below are written with
// graphql(`…`), and GraphQL Code Generator's client preset (examples/codegen.ts, npm run
// examples:generate) turns each into a TypedDocumentNode carrying the types of its result and
// variables, checked against the committed schema.graphql. A field the schema no longer has is a
// generation error, and a result field used here that the document does not select, or a wrong
// variable, a type error.
//
//   MARKETPLACE_URL=http://localhost:4000 MARKETPLACE_KEY=mk_live_… npx tsx examples/graphql-client.ts
//
// MARKETPLACE_URL defaults to http://localhost:4000; without MARKETPLACE_KEY (a key with the scope
// read:orders) the orders are skipped.
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { graphql } from './generated/graphql/index.js';
import { expectService } from './service.js';

const baseUrl = process.env.MARKETPLACE_URL ?? 'http://localhost:4000';
await expectService(baseUrl);
const key = process.env.MARKETPLACE_KEY;

const ProductsQuery = graphql(`
  query ExampleProducts($minPrice: Decimal, $limit: Int) {
    products(minPrice: $minPrice, sortBy: PRICE_ASC, limit: $limit) {
      items {
        slug
        name
        price
      }
      meta {
        total
      }
    }
  }
`);

const ProductQuery = graphql(`
  query ExampleProduct($slug: String!) {
    product(slug: $slug) {
      slug
      name
      price
      stock
      supplier {
        companyName
      }
    }
  }
`);

const OrdersQuery = graphql(`
  query ExampleOrders($limit: Int) {
    orders(limit: $limit) {
      items {
        orderNumber
        status
        total
        currency
        items {
          quantity
        }
      }
      meta {
        total
      }
    }
  }
`);

/** Sends a typed document; its result and variables have the document's types. */
async function request<Result, Variables>(document: TypedDocumentNode<Result, Variables>, variables: Variables): Promise<Result> {
  const res = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'X-API-Key': key } : {}) },
    body: JSON.stringify({ query: print(document), variables }),
  });
  const body = (await res.json()) as { data?: Result | null; errors?: { message: string; extensions?: { code?: string } }[] };
  if (body.errors?.length || !body.data) {
    const errors = (body.errors ?? []).map((e) => `${e.extensions?.code ?? 'ERROR'} ${e.message}`).join('; ');
    throw new Error(`POST /graphql: ${res.status} ${errors}`.trim());
  }
  return body.data;
}

// 1. Products with a filter and a sort: the five cheapest from 10 RON up.
const { products } = await request(ProductsQuery, { minPrice: 10, limit: 5 });
const items = products?.items ?? [];
console.log(`products from 10 RON, cheapest first: ${items.length} of ${products?.meta.total ?? 0}`);
for (const p of items) console.log(`  ${p.slug}  ${p.price.toFixed(2)} RON  ${p.name}`);

// 2. One product by its slug (null when there is none).
const first = items[0];
if (first) {
  const { product } = await request(ProductQuery, { slug: first.slug });
  if (!product) throw new Error(`product ${first.slug} not found`);
  console.log(`product ${product.slug}: ${product.name}, ${product.price.toFixed(2)} RON, ${product.stock} in stock, by ${product.supplier.companyName}`);
}

// 3. The caller's orders (scope read:orders).
if (key) {
  const { orders } = await request(OrdersQuery, { limit: 5 });
  const list = orders?.items ?? [];
  console.log(`orders: ${list.length} of ${orders?.meta.total ?? 0}`);
  for (const o of list) console.log(`  ${o.orderNumber}  ${o.status}  ${o.total.toFixed(2)} ${o.currency}  ${o.items.length} item(s)`);
} else {
  console.log('orders: skipped (set MARKETPLACE_KEY to a key with read:orders)');
}
