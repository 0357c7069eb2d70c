// Apollo Client 4 against the service, as a frontend would set it up: its HTTP link for queries and
// mutations (it reads @defer's multipart/mixed answers), and for subscriptions a link over
// graphql-sse's client (Server-Sent Events), as graphql-sse's recipe writes it. The documents are
// typed by GraphQL Code Generator's client preset (examples/codegen.ts, npm run examples:generate).
//
//   MARKETPLACE_URL=http://localhost:4000 MARKETPLACE_KEY=mk_live_… npx tsx examples/apollo-client.ts
//
// It lists products, fetches one with its supplier deferred, follows a connection's cursors to its
// end and, with MARKETPLACE_KEY (a key with read:orders and write:orders), listens to the caller's
// order events, places an order and hears it.
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { getMainDefinition } from '@apollo/client/utilities';
import { print } from 'graphql';
import { createClient, type Client } from 'graphql-sse';
import { Observable } from 'rxjs';
import { graphql } from './generated/graphql/index.js';
import { expectService } from './service.js';

const baseUrl = process.env.MARKETPLACE_URL ?? 'http://localhost:4000';
await expectService(baseUrl);
const key = process.env.MARKETPLACE_KEY;
const headers: Record<string, string> = key ? { 'X-API-Key': key } : {};

/** graphql-sse's Apollo link: each operation a stream of its own ("distinct connections" mode). */
class SSELink extends ApolloLink {
  constructor(private readonly client: Client) {
    super();
  }

  override request(operation: ApolloLink.Operation): Observable<ApolloLink.Result> {
    return new Observable((sink) =>
      // The operation as Apollo hands it (its operationType too), with the document as text.
      this.client.subscribe({ ...operation, query: print(operation.query) }, {
        next: (value) => sink.next(value as ApolloLink.Result),
        complete: () => sink.complete(),
        error: (error) => sink.error(error),
      }),
    );
  }
}

let connected: () => void = () => undefined;
const sse = createClient({ url: `${baseUrl}/graphql`, headers, on: { connected: () => connected() } });

const client = new ApolloClient({
  // Subscriptions over SSE, everything else over HTTP.
  link: ApolloLink.split(
    ({ query }) => {
      const definition = getMainDefinition(query);
      return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
    },
    new SSELink(sse),
    new HttpLink({ uri: `${baseUrl}/graphql`, headers }),
  ),
  cache: new InMemoryCache(),
  // The service answers @defer in the format Apollo calls deferSpec=20220824.
  incrementalHandler: new Defer20220824Handler(),
});

const ProductsQuery = graphql(`
  query ApolloProducts($minPrice: Decimal, $limit: Int) {
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
  query ApolloProduct($slug: String!) {
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
  query ApolloProductPages($first: Int!, $after: String) {
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
  mutation ApolloPlaceOrder($input: CreateOrderInput!) {
    createOrder(input: $input) {
      id
      orderNumber
      status
      total
    }
  }
`);

const OrderEvents = graphql(`
  subscription ApolloOrderEvents {
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
const { data: listed } = await client.query({ query: ProductsQuery, variables: { minPrice: 10, limit: 5 } });
const items = listed?.products?.items ?? [];
console.log(`products from 10 RON, cheapest first: ${items.length} of ${listed?.products?.meta.total ?? 0}`);
for (const p of items) console.log(`  ${p.slug}  ${p.price.toFixed(2)} RON  ${p.name}`);

// 2. One product by its slug, its supplier deferred: the link reads the parts, the client merges them.
const first = items[0];
if (first) {
  const { data } = await client.query({ query: ProductQuery, variables: { slug: first.slug }, fetchPolicy: 'network-only' });
  const product = data?.product;
  if (!product?.supplier) throw new Error(`product ${first.slug}: not found, or its deferred supplier never came`);
  console.log(`product ${product.slug}: ${product.name}, ${product.price.toFixed(2)} RON, ${product.stock} in stock, by ${product.supplier.companyName}`);
}

// 3. The whole catalogue through its connection, following each page's end cursor.
const page = async (after: string | null) => {
  const { data } = await client.query({ query: PagesQuery, variables: { first: 100, after } });
  if (!data?.productsConnection) throw new Error('productsConnection answered nothing');
  return data.productsConnection;
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
  const stream = client.subscribe({ query: OrderEvents }).subscribe(({ data, error }) => {
    if (error) throw error;
    const event = data?.orderEvents;
    if (event?.order) heard.push({ type: event.type, orderNumber: event.order.orderNumber, status: event.order.status });
    onEvent();
  });
  await opened;

  const { data } = await client.mutate({
    mutation: PlaceOrder,
    variables: { input: { supplierId: orderable.supplier.id, items: [{ productId: orderable.id, quantity: orderable.minOrder }] } },
  });
  const order = data?.createOrder;
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

client.stop();
sse.dispose();
