import { isObjectType, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_NODE_IDS } from '../src/graphql/nodes.js';
import { estimateCost } from '../src/pipeline/graphql-cost.js';
import { schema } from '../src/domain/schema.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';
import { byTable, sentSince, without } from './helpers/statements.js';

// Relay conventions: every type with a database id is a Node (`globalId`), refetched by node(id:)
// and nodes(ids:) under its own lookup's scopes and ownership; the lists have cursor connections.

let app: TestApp;
let f: OrderFixture;
/** buyer@example.com, with every scope a Node type asks for. */
let buyer: TestKey;
/** The same account, without read:orders, read:stock, read:prices or write:webhooks. */
let buyerCatalogueOnly: TestKey;
/** Another account. */
let rival: TestKey;
/** An account acting for the fixture's supplier. */
let member: TestKey;
/** An account acting for no supplier. */
let outsider: TestKey;
let orderIds: string[] = [];
let endpointId: string;

const BUYER_SCOPES = ['read:orders', 'write:orders', 'write:webhooks', 'read:stock', 'read:prices'];

beforeAll(async () => {
  // No worker: the test delivery below only needs its row, never an attempt to send it out.
  app = await startTestApp({ env: { ORDER_CREATE_LIMIT: '100000', WEBHOOK_WORKER: 'false' } });
  f = await makeOrderFixture(app.sql);
  buyer = await createTestKey(app.url, { owner: 'relay-buyer@example.com', scopes: BUYER_SCOPES });
  buyerCatalogueOnly = await createTestKey(app.url, { owner: 'relay-buyer@example.com', scopes: ['read:products'] });
  rival = await createTestKey(app.url, { owner: 'relay-rival@example.com', scopes: BUYER_SCOPES });
  member = await createTestKey(app.url, { owner: 'relay-member@example.com', scopes: ['read:orders'] });
  outsider = await createTestKey(app.url, { owner: 'relay-outsider@example.com', scopes: ['read:orders'] });
  await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [member.accountId, f.supplierId]);
  // Seven orders of the buyer's (pages of 2 end on a short one), three of them cancelled, and one of the rival's.
  for (let i = 0; i < 7; i++) orderIds.push(await placeOrder(buyer, f.supplierId, f.a.id));
  for (const id of [orderIds[1], orderIds[2], orderIds[4]]) await gql(`mutation($id: ID!) { cancelOrder(id: $id) { id } }`, { id }, buyer);
  await placeOrder(rival, f.supplierId, f.a.id);
  await app.sql.query(
    `INSERT INTO "Address" (id, "accountId", "fullName", phone, address, city, county, "postalCode") VALUES ('relay-address', $1, 'Ana Pop', '0700000000', 'Str. Lunga 1', 'Cluj', 'Cluj', '400000')`,
    [buyer.accountId],
  );
  endpointId = 'relay-endpoint';
  await app.sql.query(
    `INSERT INTO "WebhookEndpoint" (id, "accountId", "keyId", url, events, secret) VALUES ($1, $2, $3, 'https://example.com/hooks', ARRAY['order.created'], 'whsec_c3dlZXA=')`,
    [endpointId, buyer.accountId, buyer.id],
  );
  const test = await gql(`mutation($id: ID!) { testWebhookEndpoint(id: $id) { id } }`, { id: endpointId }, buyer);
  expect(test.body.errors).toBeUndefined();
});
afterAll(() => app?.close());

async function gql(query: string, variables: Record<string, unknown> = {}, key: TestKey | null = buyer) {
  const res = await app.get('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key.key } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  expect(res.status, 'a GraphQL answer, never a 500').toBeLessThan(500);
  return res as { status: number; body: { data?: any; errors?: { message: string; path?: (string | number)[]; extensions: { code: string; details?: Record<string, string> } }[] } };
}

async function placeOrder(key: TestKey, supplierId: string, productId: string): Promise<string> {
  const res = await gql(`mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }`, { input: { supplierId, items: [{ productId, quantity: 1 }] } }, key);
  expect(res.body.errors).toBeUndefined();
  return res.body.data.createOrder.id;
}

const encode = (typename: string, id: string) => Buffer.from(`${typename}:${id}`).toString('base64');

const NODE = `query($id: ID!) { node(id: $id) { __typename globalId ... on Product { id } ... on Category { id } ... on Supplier { id } ... on Review { id }
  ... on Order { id } ... on OrderItem { id } ... on Buyer { id } ... on Me { id } ... on ApiKey { id } ... on Address { id }
  ... on WebhookEndpoint { id } ... on WebhookDelivery { id } ... on WebhookEvent { id } ... on StockRecord { id } ... on PriceRecord { id } } }`;

const node = (id: string, key: TestKey | null = buyer) => gql(NODE, { id }, key);

/** One object of each Node type as the type's own field answers it: [type, database id, globalId]. */
async function oneOfEach(): Promise<[string, string, string][]> {
  const review = await app.sql.query(`SELECT p.slug FROM "Review" r JOIN "Product" p ON p.id = r."productId" AND p."isActive" ORDER BY r.id LIMIT 1`);
  const { body } = await gql(
    `query($order: ID!, $slug: String!, $endpoint: ID!, $product: ID!) {
      productsConnection(first: 1) { edges { node { id globalId } } }
      categories { items { id globalId } }
      suppliers(limit: 1) { items { id globalId } }
      product(slug: $slug) { reviews(limit: 1) { id globalId } }
      order(id: $order) { id globalId items { id globalId } buyer { id globalId } }
      me { id globalId key { id globalId } addresses { id globalId } }
      webhookEndpoint(id: $endpoint) { id globalId }
      webhookDeliveries(id: $endpoint) { items { id globalId event { id globalId } } }
      stockRecord(productId: $product) { id globalId }
      priceRecord(productId: $product) { id globalId }
    }`,
    { order: orderIds[0], slug: review.rows[0].slug, endpoint: endpointId, product: f.a.id },
  );
  expect(body.errors).toBeUndefined();
  const d = body.data;
  const pair = (type: string, o: { id: string; globalId: string }): [string, string, string] => [type, o.id, o.globalId];
  return [
    pair('Product', d.productsConnection.edges[0].node),
    pair('Category', d.categories.items[0]),
    pair('Supplier', d.suppliers.items[0]),
    pair('Review', d.product.reviews[0]),
    pair('Order', d.order),
    pair('OrderItem', d.order.items[0]),
    pair('Buyer', d.order.buyer),
    pair('Me', d.me),
    pair('ApiKey', d.me.key),
    pair('Address', d.me.addresses[0]),
    pair('WebhookEndpoint', d.webhookEndpoint),
    pair('WebhookDelivery', d.webhookDeliveries.items[0]),
    pair('WebhookEvent', d.webhookDeliveries.items[0].event),
    pair('StockRecord', d.stockRecord),
    pair('PriceRecord', d.priceRecord),
  ];
}

describe('node(id:)', () => {
  it('every type with a readable database id implements Node, and every one is refetched below', () => {
    const nodeTypes = Object.values(schema.getTypeMap())
      .filter((t) => isObjectType(t) && t.getInterfaces().some((i) => i.name === 'Node'))
      .map((t) => t.name)
      .sort();
    expect(nodeTypes).toEqual(
      ['Address', 'ApiKey', 'Buyer', 'Category', 'Me', 'Order', 'OrderItem', 'PriceRecord', 'Product', 'Review', 'StockRecord', 'Supplier', 'WebhookDelivery', 'WebhookEndpoint', 'WebhookEvent'].sort(),
    );
    // The others with an `id`: the endpoint just created (the one answer holding its secret), and
    // productChanged's event, whose `id` is its product's (refetched as a Product).
    const withId = Object.values(schema.getTypeMap()).filter((t) => isObjectType(t) && !t.name.startsWith('__') && 'id' in t.getFields()).map((t) => t.name);
    expect(withId.filter((name) => !nodeTypes.includes(name)).sort()).toEqual(['NewWebhookEndpoint', 'ProductChange']);
  });

  it('refetches one object of every Node type by its globalId, and nodes(ids:) all of them in order', async () => {
    const objects = await oneOfEach();
    expect(objects).toHaveLength(15);
    for (const [type, id, globalId] of objects) {
      // Opaque, but the type and the database id inside: what Relay's compiler and cache expect.
      expect(Buffer.from(globalId, 'base64').toString()).toBe(`${type}:${id}`);
      const { body } = await node(globalId);
      expect(body.errors, type).toBeUndefined();
      expect(body.data.node, type).toEqual({ __typename: type, globalId, id });
    }
    const { body } = await gql(`query($ids: [ID!]!) { nodes(ids: $ids) { __typename globalId } }`, { ids: objects.map(([, , g]) => g) });
    expect(body.errors).toBeUndefined();
    expect(body.data.nodes).toEqual(objects.map(([__typename, , globalId]) => ({ __typename, globalId })));
  });

  it("refuses another account's order, its lines and buyer, as order(id:) does: null", async () => {
    const objects = new Map((await oneOfEach()).map(([type, id, g]) => [type, { id, g }]));
    for (const type of ['Order', 'OrderItem', 'Buyer']) {
      const { body } = await node(objects.get(type)!.g, rival);
      expect(body.errors, type).toBeUndefined();
      expect(body.data.node, type).toBeNull();
    }
    const lookup = await gql(`query($id: ID!) { order(id: $id) { id } }`, { id: objects.get('Order')!.id }, rival);
    expect(lookup.body.data.order).toBeNull();
    // An account acting for no supplier sees none of it either; the supplier's member sees it, as supplierOrder(id:) does.
    expect((await node(objects.get('Order')!.g, outsider)).body.data.node).toBeNull();
    for (const type of ['Order', 'OrderItem', 'Buyer']) {
      const { body } = await node(objects.get(type)!.g, member);
      expect(body.data.node, type).toMatchObject({ __typename: type, id: objects.get(type)!.id });
    }
  });

  it("refuses another key's webhook endpoint, deliveries and events, and another account's key, addresses and profile", async () => {
    const objects = new Map((await oneOfEach()).map(([type, id, g]) => [type, { id, g }]));
    for (const type of ['WebhookEndpoint', 'WebhookDelivery', 'WebhookEvent', 'Me', 'ApiKey', 'Address']) {
      const { body } = await node(objects.get(type)!.g, rival);
      expect(body.errors, type).toBeUndefined();
      expect(body.data.node, type).toBeNull();
    }
    // Another key of the same account: the endpoint is the other key's (as webhookEndpoint(id:) answers), and me.key is only the key presenting the request.
    const sibling = await createTestKey(app.url, { owner: 'relay-buyer@example.com', scopes: ['write:webhooks'] });
    for (const type of ['WebhookEndpoint', 'ApiKey']) expect((await node(objects.get(type)!.g, sibling)).body.data.node, type).toBeNull();
    expect((await gql(`query($id: ID!) { webhookEndpoint(id: $id) { id } }`, { id: endpointId }, sibling)).body.data.webhookEndpoint).toBeNull();
    expect((await node(objects.get('Me')!.g, sibling)).body.data.node).toMatchObject({ __typename: 'Me' });
  });

  it('asks for the scopes of the type’s own lookup: 403 without them, 401 without a key', async () => {
    const objects = new Map((await oneOfEach()).map(([type, id, g]) => [type, { id, g }]));
    const cases: [string, string][] = [
      ['Order', 'read:orders'],
      ['OrderItem', 'read:orders'],
      ['Buyer', 'read:orders'],
      ['WebhookEndpoint', 'write:webhooks'],
      ['WebhookDelivery', 'write:webhooks'],
      ['WebhookEvent', 'write:webhooks'],
      ['StockRecord', 'read:stock'],
      ['PriceRecord', 'read:prices'],
    ];
    for (const [type, scope] of cases) {
      const { body } = await node(objects.get(type)!.g, buyerCatalogueOnly);
      expect(body.data.node, type).toBeNull();
      expect(body.errors?.[0]?.extensions, type).toEqual({ code: 'FORBIDDEN', details: { requiredScopes: [scope] } });
    }
    const own = await gql(`query($id: ID!) { order(id: $id) { id } }`, { id: orderIds[0] }, buyerCatalogueOnly);
    expect(own.body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    for (const type of ['Order', 'Me', 'Address']) {
      const { body } = await node(objects.get(type)!.g, null);
      expect(body.errors?.[0]?.extensions.code, type).toBe('UNAUTHORIZED');
    }
    // The catalogue is open, as its lookups are.
    for (const type of ['Product', 'Category', 'Supplier', 'Review']) {
      expect((await node(objects.get(type)!.g, null)).body.data.node, type).toMatchObject({ __typename: type });
    }
  });

  it('finds what the lookups find: an inactive product, a product id of a record type read with its scope', async () => {
    expect((await node(encode('Product', f.inactive.id))).body.data.node).toBeNull();
    expect((await gql(`query($slug: String!) { product(slug: $slug) { id } }`, { slug: f.inactive.slug })).body.data.product).toBeNull();
    // stockRecord answers an inactive product too: so does its node.
    expect((await node(encode('StockRecord', f.inactive.id))).body.data.node).toEqual({ __typename: 'StockRecord', globalId: encode('StockRecord', f.inactive.id), id: f.inactive.id });
  });

  it('answers null for a well-formed global id of nothing, and VALIDATION_ERROR for one that is no global id', async () => {
    for (const id of [encode('Product', 'no-such-product'), encode('Nope', f.a.id), encode('PaginationMeta', 'x'), encode('Query', 'x'), encode('Product', 'not an id!'), encode('Order', `${'x'.repeat(101)}`)]) {
      const { body } = await node(id);
      expect(body.errors, id).toBeUndefined();
      expect(body.data.node, id).toBeNull();
    }
    const valid = encode('Product', f.a.id);
    for (const id of ['', 'garbage!', f.a.id, Buffer.from('Product').toString('base64'), Buffer.from('Product:').toString('base64'), Buffer.from(':abc').toString('base64'), Buffer.from('1x:abc').toString('base64'), ` ${valid}`, `${valid}==`, valid.replace(/=+$/, '')]) {
      if (id === valid) continue;
      const { body } = await node(id);
      expect(body.data.node, JSON.stringify(id)).toBeNull();
      expect(body.errors?.[0]?.extensions, JSON.stringify(id)).toEqual({ code: 'VALIDATION_ERROR', details: { id: expect.stringContaining('global id') } });
      expect(body.errors?.[0]?.path).toEqual(['node']);
    }
  });
});

describe('nodes(ids:)', () => {
  const NODES = `query($ids: [ID!]!) { nodes(ids: $ids) { __typename ... on Product { id } } }`;

  it(`takes up to ${MAX_NODE_IDS} ids, answering each in place (null where node(id:) is null)`, async () => {
    const products = await app.sql.query(`SELECT id FROM "Product" WHERE "isActive" ORDER BY id LIMIT ${MAX_NODE_IDS - 1}`);
    const ids = [...products.rows.map((r) => encode('Product', r.id)), encode('Order', orderIds[0]!)];
    const { body } = await gql(NODES, { ids }, rival);
    expect(body.errors).toBeUndefined();
    expect(body.data.nodes).toHaveLength(MAX_NODE_IDS);
    expect(body.data.nodes.slice(0, -1)).toEqual(products.rows.map((r) => ({ __typename: 'Product', id: r.id })));
    expect(body.data.nodes.at(-1)).toBeNull();
  });

  it('loads any number of nodes in the same SQL statements: per type, never per id', async () => {
    const products = await app.sql.query(`SELECT id FROM "Product" WHERE "isActive" ORDER BY id LIMIT 50`);
    const query = `query($ids: [ID!]!) { nodes(ids: $ids) { __typename
      ... on Order { id status total items { id quantity product { name } } buyer { email } supplier { companyName } }
      ... on Product { id name price supplier { companyName } category { name } } } }`;
    const tally = async (orders: number, productCount: number) => {
      const ids = [...orderIds.slice(0, orders).map((id) => encode('Order', id)), ...products.rows.slice(0, productCount).map((r) => encode('Product', r.id))];
      const before = app.statements.length;
      const { body } = await gql(query, { ids });
      expect(body.errors).toBeUndefined();
      expect(body.data.nodes.filter((n: unknown) => n !== null)).toHaveLength(ids.length);
      // The key's own lookup left out: it is kept 60 s (KEY_CACHE_SECONDS), so one of the two
      // requests may look it up again and the other not.
      return without(byTable(sentSince(app.statements, before)), 'ApiKey');
    };
    const one = await tally(1, 1);
    expect(one.Order, JSON.stringify(one)).toBeGreaterThan(0);
    expect(await tally(orderIds.length, 50)).toEqual(one);
  });

  it('costs one per id given, as a list of that size would', () => {
    const cost = (n: number) =>
      estimateCost({
        schema,
        document: parse(`query($ids: [ID!]!) { nodes(ids: $ids) { ... on Product { supplier { id } category { id } } } }`),
        variables: { ids: Array.from({ length: n }, () => encode('Product', f.a.id)) },
      });
    // Each node, its supplier and its category: three objects per id.
    expect(cost(1)).toBe(3);
    expect(cost(MAX_NODE_IDS)).toBe(3 * MAX_NODE_IDS);
  });

  it(`refuses more than ${MAX_NODE_IDS} ids, and names each that is no global id`, async () => {
    const many = await gql(NODES, { ids: Array.from({ length: MAX_NODE_IDS + 1 }, () => encode('Product', f.a.id)) });
    expect(many.body.data.nodes).toBeNull();
    expect(many.body.errors?.[0]?.extensions).toEqual({ code: 'VALIDATION_ERROR', details: { ids: `must hold at most ${MAX_NODE_IDS} ids` } });
    const bad = await gql(NODES, { ids: [encode('Product', f.a.id), 'garbage!', encode('Product', f.b.id), ''] });
    expect(bad.body.data.nodes).toBeNull();
    expect(Object.keys(bad.body.errors?.[0]?.extensions.details ?? {}).sort()).toEqual(['ids[1]', 'ids[3]']);
  });
});

// ----- connections -----

interface Conn {
  totalCount: number;
  edges: { cursor: string; node: { id: string } }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

const CONNECTION = `{ totalCount edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }`;
/** What a sealed cursor looks like: the raw cursor's bytes, a dot, a 128-bit tag (src/graphql/cursors.ts). */
const SEALED = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/;

interface Place {
  name: string;
  field: string;
  /** Extra arguments (filters), spelt in the query. */
  args: string;
  key: TestKey | null;
  /** The ids the offset list answers, in its order. */
  expected: () => Promise<string[]>;
}

const listIds = async (query: string, key: TestKey | null, at: (data: any) => { id: string }[]) => {
  const { body } = await gql(query, {}, key);
  expect(body.errors).toBeUndefined();
  return at(body.data).map((o) => o.id);
};

const places: Place[] = [
  { name: 'ordersConnection', field: 'ordersConnection', args: '', key: null, expected: () => listIds(`{ orders(limit: 100) { items { id } } }`, buyer, (d) => d.orders.items) },
  {
    name: 'ordersConnection(status: CANCELLED)',
    field: 'ordersConnection',
    args: 'status: CANCELLED',
    key: null,
    expected: () => listIds(`{ orders(limit: 100, status: CANCELLED) { items { id } } }`, buyer, (d) => d.orders.items),
  },
  {
    name: 'supplierOrdersConnection',
    field: 'supplierOrdersConnection',
    args: '',
    key: null,
    expected: () => listIds(`{ supplierOrders(limit: 100) { items { id } } }`, member, (d) => d.supplierOrders.items),
  },
  {
    name: 'suppliersConnection',
    field: 'suppliersConnection',
    args: '',
    key: null,
    expected: () => listIds(`{ suppliers(limit: 100) { items { id } } }`, null, (d) => d.suppliers.items),
  },
  {
    name: 'suppliersConnection(sortBy: NAME, verified: true)',
    field: 'suppliersConnection',
    args: 'sortBy: NAME, verified: true',
    key: null,
    expected: () => listIds(`{ suppliers(limit: 100, sortBy: NAME, verified: true) { items { id } } }`, null, (d) => d.suppliers.items),
  },
  { name: 'categoriesConnection', field: 'categoriesConnection', args: '', key: null, expected: () => listIds(`{ categories { items { id } } }`, null, (d) => d.categories.items) },
  {
    name: 'categoriesConnection(parentOnly: true)',
    field: 'categoriesConnection',
    args: 'parentOnly: true',
    key: null,
    expected: () => listIds(`{ categories(parentOnly: true) { items { id } } }`, null, (d) => d.categories.items),
  },
];
// The orders' keys are set once the keys exist.
const keyOf = (place: Place) => (place.field === 'supplierOrdersConnection' ? member : place.field === 'ordersConnection' ? buyer : place.key);

async function page(place: Place, args: string, variables: Record<string, unknown> = {}) {
  const all = [place.args, args].filter(Boolean).join(', ');
  const declared = ['after', 'before'].filter((name) => all.includes(`$${name}`)).map((name) => `$${name}: String`);
  const { body } = await gql(`query${declared.length ? `(${declared.join(', ')})` : ''} { c: ${place.field}(${all}) ${CONNECTION} }`, variables, keyOf(place));
  return body;
}

describe('connections beside the offset lists', () => {
  it.each(places.map((p) => [p.name, p] as const))('%s pages forwards and backwards to the end, in the offset list’s order, with signed cursors', async (_name, place) => {
    const expected = await place.expected();
    expect(expected.length, 'the fixture gives the list more than one page').toBeGreaterThan(2);
    const forwards: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 200; i++) {
      const body = await page(place, 'first: 2, after: $after', { after });
      expect(body.errors).toBeUndefined();
      const c: Conn = body.data.c;
      expect(c.totalCount).toBe(expected.length);
      for (const e of c.edges) expect(e.cursor).toMatch(SEALED);
      forwards.push(...c.edges.map((e) => e.node.id));
      if (!c.pageInfo.hasNextPage) break;
      after = c.pageInfo.endCursor;
    }
    expect(forwards).toEqual(expected);
    const backwards: string[] = [];
    let before: string | null = null;
    for (let i = 0; i < 200; i++) {
      const body = await page(place, 'last: 2, before: $before', { before });
      expect(body.errors).toBeUndefined();
      const c: Conn = body.data.c;
      backwards.unshift(...c.edges.map((e) => e.node.id));
      if (!c.pageInfo.hasPreviousPage) break;
      before = c.pageInfo.startCursor;
    }
    expect(backwards).toEqual(expected);
  });

  it.each(places.map((p) => [p.name, p] as const))('%s refuses a tampered cursor', async (_name, place) => {
    const first = await page(place, 'first: 1');
    const cursor: string = first.data.c.pageInfo.endCursor;
    const [body, tag] = cursor.split('.') as [string, string];
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const bad of [`${body}.${flip(tag, 3)}`, `${flip(body, 2)}.${tag}`, body, Buffer.from(`GPC:S:${first.data.c.edges[0].node.id}`).toString('base64')]) {
      const res = await page(place, 'first: 1, after: $after', { after: bad });
      expect(res.data.c).toBeNull();
      expect(res.errors?.[0]).toMatchObject({ message: 'Invalid cursor', extensions: { code: 'VALIDATION_ERROR', details: { after: expect.any(String) } } });
    }
  });

  it('keeps the scopes of the offset lists: a key for the orders, membership for the supplier’s', async () => {
    expect((await gql(`{ ordersConnection(first: 1) { totalCount } }`, {}, null)).body.errors?.[0]?.extensions.code).toBe('UNAUTHORIZED');
    expect((await gql(`{ ordersConnection(first: 1) { totalCount } }`, {}, buyerCatalogueOnly)).body.errors?.[0]?.extensions).toEqual({ code: 'FORBIDDEN', details: { requiredScopes: ['read:orders'] } });
    const notMember = await gql(`{ supplierOrdersConnection(first: 1) { totalCount } }`, {}, outsider);
    expect(notMember.body.errors?.[0]?.extensions).toEqual({ code: 'FORBIDDEN', details: { requiredMembership: 'supplier' } });
    // The rival sees its one order only.
    const rivals = await gql(`{ ordersConnection(first: 10) { totalCount edges { node { id } } } }`, {}, rival);
    expect(rivals.body.data.ordersConnection.totalCount).toBe(1);
    expect(orderIds).not.toContain(rivals.body.data.ordersConnection.edges[0].node.id);
  });

  it('refuses the one offset-only sort, and bad filters, as the offset lists do', async () => {
    const products = await gql(`{ suppliersConnection(first: 2, sortBy: PRODUCTS) { totalCount } }`, {}, null);
    expect(products.body.errors?.[0]?.extensions).toEqual({ code: 'VALIDATION_ERROR', details: { sortBy: expect.stringContaining('PRODUCTS') } });
    const search = await gql(`{ suppliersConnection(first: 2, search: "${'x'.repeat(300)}") { totalCount } }`, {}, null);
    expect(search.body.errors?.[0]?.extensions.code).toBe('VALIDATION_ERROR');
  });
});
