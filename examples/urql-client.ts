// urql (@urql/core) against the service, as a frontend would set it up: its fetch exchange for
// queries (sent as GET within the URL's length, which the service answers with ETags) and
// mutations, which reads @defer's multipart/mixed answers, and a subscription exchange over
// graphql-sse's client (Server-Sent Events), as graphql-sse's recipe writes it. The documents are
// typed by GraphQL Code Generator's client preset (examples/codegen.ts, npm run examples:generate).
//
//   MARKETPLACE_URL=http://localhost:4000 MARKETPLACE_KEY=mk_live_… npx tsx examples/urql-client.ts
//
// It does what examples/apollo-client.ts does: lists products, fetches one with its supplier
// deferred, follows a connection's cursors to its end and, with MARKETPLACE_KEY (a key with
// read:orders and write:orders), listens to the caller's order events, places an order and hears it.
import { cacheExchange, Client, fetchExchange, subscriptionExchange, type AnyVariables, type DocumentInput } from '@urql/core';
import { createClient } from 'graphql-sse';
import { graphql } from './generated/graphql/index.js';
import { expectService } from './service.js';

const baseUrl = process.env.MARKETPLACE_URL ?? 'http://localhost:4000';
await expectService(baseUrl);
const key = process.env.MARKETPLACE_KEY;
const headers: Record<string, string> = key ? { 'X-API-Key': key } : {};

// urql aborts a multipart/mixed request once it has read the part saying `hasNext: false`; Node's
// fetch (unlike a browser's) may then reject the rest of the body it was still reading, with no one
// to hear it. That one rejection is not the example's failure; any other still is.
process.on('unhandledRejection', (reason) => {
  if (reason instanceof Error && reason.name === 'AbortError') return;
  throw reason;
});

let connected: () => void = () => undefined;
const sse = createClient({ url: `${baseUrl}/graphql`, headers, on: { connected: () => connected() } });

const client = new Client({
  url: `${baseUrl}/graphql`,
  fetchOptions: { headers },
  exchanges: [
    cacheExchange,
    fetchExchange,
    subscriptionExchange({
      forwardSubscription: (request) => ({
        subscribe: (sink) => ({ unsubscribe: sse.subscribe({ ...request, query: request.query ?? '' }, sink) }),
      }),
    }),
  ],
});

/** A query's or mutation's data; its error thrown. */
async function run<Data, Variables extends AnyVariables>(kind: 'query' | 'mutation', document: DocumentInput<Data, Variables>, variables: Variables): Promise<Data> {
  const { data, error } = await client[kind](document, variables, kind === 'query' ? { requestPolicy: 'network-only' } : {}).toPromise();
  if (error || !data) throw error ?? new Error(`${kind} answered nothing`);
  return data;
}

const ProductsQuery = graphql(`
  query UrqlProducts($minPrice: Decimal, $limit: Int) {
    products(minPrice: $minPrice, sortBy: PRICE_ASC, limit: $limit) {
      items {
        id
        slug
        name
        price
        stock
        minOrder
        supplier {
          id
        }
      }
      meta {
        total
      }
    }
  }
`);

const ProductQuery = graphql(`
  query UrqlProduct($slug: String!) {
    product(slug: $slug) {
      id
      slug
      name
      price
      stock
      ... @defer(label: "supplier") {
        supplier {
          id
          companyName
        }
      }
    }
  }
`);

const PagesQuery = graphql(`
  query UrqlProductPages($first: Int!, $after: String) {
    productsConnection(first: $first, after: $after) {
      totalCount
      edges {
        node {
          id
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

const PlaceOrder = graphql(`
  mutation UrqlPlaceOrder($input: CreateOrderInput!) {
    createOrder(input: $input) {
      id
      orderNumber
      status
      total
    }
  }
`);

const OrderEvents = graphql(`
  subscription UrqlOrderEvents {
    orderEvents {
      type
      order {
        id
        orderNumber
        status
      }
    }
  }
`);

// 1. Products with a filter and a sort: the five cheapest from 10 RON up.
const { products } = await run('query', ProductsQuery, { minPrice: 10, limit: 5 });
const items = products?.items ?? [];
console.log(`products from 10 RON, cheapest first: ${items.length} of ${products?.meta.total ?? 0}`);
for (const p of items) console.log(`  ${p.slug}  ${p.price.toFixed(2)} RON  ${p.name}`);

// 2. One product by its slug, its supplier deferred: the fetch exchange reads the parts and merges them.
const first = items[0];
if (first) {
  const { product } = await run('query', ProductQuery, { slug: first.slug });
  if (!product?.supplier) throw new Error(`product ${first.slug}: not found, or its deferred supplier never came`);
  console.log(`product ${product.slug}: ${product.name}, ${product.price.toFixed(2)} RON, ${product.stock} in stock, by ${product.supplier.companyName}`);
}

// 3. The whole catalogue through its connection, following each page's end cursor.
const page = async (after: string | null) => {
  const { productsConnection } = await run('query', PagesQuery, { first: 100, after });
  if (!productsConnection) throw new Error('productsConnection answered nothing');
  return productsConnection;
};
const seen = new Set<string>();
let pages = 0;
let connection = await page(null);
for (;;) {
  pages++;
  for (const edge of connection.edges) seen.add(edge.node.id);
  if (!connection.pageInfo.hasNextPage || !connection.pageInfo.endCursor) break;
  connection = await page(connection.pageInfo.endCursor);
}
console.log(`productsConnection: ${pages} pages, ${seen.size} distinct products of ${connection.totalCount}`);

// 4. The caller's order events, then an order placed, heard on the stream (scopes read:orders, write:orders).
// Not the product fetched above: what it printed of that one stays as the database has it.
const orderable = items.slice(1).find((p) => p.stock >= p.minOrder);
if (key && orderable) {
  const opened = new Promise<void>((resolve) => (connected = resolve));
  const heard: { type: string; orderNumber: string; status: string }[] = [];
  let onEvent: () => void = () => undefined;
  const stream = client.subscription(OrderEvents, {}).subscribe(({ data, error }) => {
    if (error) throw error;
    const event = data?.orderEvents;
    if (event?.order) heard.push({ type: event.type, orderNumber: event.order.orderNumber, status: event.order.status });
    onEvent();
  });
  await opened;

  const { createOrder: order } = await run('mutation', PlaceOrder, {
    input: { supplierId: orderable.supplier.id, items: [{ productId: orderable.id, quantity: orderable.minOrder }] },
  });
  if (!order) throw new Error('createOrder answered nothing');
  console.log(`order ${order.orderNumber} placed: ${order.status}, ${order.total.toFixed(2)} RON`);

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no event for ${order.orderNumber} within 10 s`)), 10_000);
    onEvent = () => {
      if (!heard.some((e) => e.orderNumber === order.orderNumber)) return;
      clearTimeout(timer);
      resolve();
    };
    onEvent();
  });
  const event = heard.find((e) => e.orderNumber === order.orderNumber)!;
  console.log(`heard: ${event.type} ${event.orderNumber} ${event.status}`);
  stream.unsubscribe();
} else {
  console.log('orders: skipped (set MARKETPLACE_KEY to a key with read:orders and write:orders)');
}

sse.dispose();
