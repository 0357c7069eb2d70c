// A typed REST client, as a frontend would write one: openapi-fetch over the types openapi-typescript
// generates from the committed openapi.json (npm run examples:generate). Paths, query parameters
// and response bodies are checked by the compiler: a parameter the API no longer has, or a field
// it no longer returns, is a type error here.
//
//   MARKETPLACE_URL=http://localhost:4000 MARKETPLACE_KEY=mk_live_… npx tsx examples/rest-client.ts
//
// MARKETPLACE_URL defaults to http://localhost:4000; without MARKETPLACE_KEY (a key with the scope
// read:orders) the orders are skipped.
import createClient from 'openapi-fetch';
import type { components, paths } from './generated/openapi.js';
import { expectService } from './service.js';

type Product = components['schemas']['Product'];

const baseUrl = process.env.MARKETPLACE_URL ?? 'http://localhost:4000';
await expectService(baseUrl);
const key = process.env.MARKETPLACE_KEY;

const api = createClient<paths>({ baseUrl, headers: key ? { 'X-API-Key': key } : {} });

/** An error answer's code and message (every error is `{success: false, error: {code, message}}`). */
function failure(what: string, body: { error: { code: string; message: string } } | undefined, response: Response): Error {
  return new Error(`${what}: ${response.status} ${body ? `${body.error.code} ${body.error.message}` : ''}`.trim());
}

// 1. Products with a filter and a sort: the five cheapest from 10 RON up.
const list = await api.GET('/api/products', {
  params: { query: { minPrice: '10', sortBy: 'price_asc', limit: 5 } },
});
if (!list.data) throw failure('GET /api/products', list.error, list.response);
const products: Product[] = list.data.data;
console.log(`products from 10 RON, cheapest first: ${products.length} of ${list.data.meta.total}`);
for (const p of products) console.log(`  ${p.slug}  ${p.price.toFixed(2)} RON  ${p.name}`);

// 2. One product by its slug.
const first = products[0];
if (first) {
  const one = await api.GET('/api/products/{slug}', { params: { path: { slug: first.slug } } });
  if (!one.data) throw failure(`GET /api/products/${first.slug}`, one.error, one.response);
  const product = one.data.data;
  console.log(`product ${product.slug}: ${product.name}, ${product.price.toFixed(2)} RON, ${product.stock} in stock, by ${product.supplier.companyName}`);
}

// 3. The caller's orders (scope read:orders).
if (key) {
  const orders = await api.GET('/api/orders', { params: { query: { limit: 5 } } });
  if (!orders.data) throw failure('GET /api/orders', orders.error, orders.response);
  console.log(`orders: ${orders.data.data.length} of ${orders.data.meta.total}`);
  for (const o of orders.data.data) console.log(`  ${o.orderNumber}  ${o.status}  ${o.total.toFixed(2)} ${o.currency}  ${o.items.length} item(s)`);
} else {
  console.log('orders: skipped (set MARKETPLACE_KEY to a key with read:orders)');
}
