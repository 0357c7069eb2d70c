import { encodeGlobalID } from '@pothos/plugin-relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normaliseKeyInput, type CreateApiKeyInput } from '../src/accounts/api-keys.js';
import { PUBLISHABLE_SCOPES } from '../src/auth/scopes.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { signedIn, textOf } from './helpers/dashboard.js';
import { subscribe } from './helpers/sse.js';

// Publishable keys (`pk_`, docs/api.md "Publishable keys"): made to be seen in browser code, so
// read-only by construction, bound to the origins their owner lists, limited per visitor within
// their plan, revocable like any key. Each hostile case a tester found gets its test here.

const SHOP = 'https://shop.example';
const VISITOR_LIMIT = 5;

let app: TestApp;
let pk: TestKey;
let serverPk: TestKey;
let stockPk: TestKey;
let secret: TestKey;
let product: { id: string; slug: string };

beforeAll(async () => {
  app = await startTestApp({ env: { PUBLISHABLE_VISITOR_LIMIT: String(VISITOR_LIMIT) } });
  pk = await createTestKey(app.url, { owner: 'shop@example.com', scopes: [], publishable: { origins: ['HTTPS://Shop.Example:443/', 'http://localhost:5173'] } });
  serverPk = await createTestKey(app.url, { owner: 'shop@example.com', scopes: [], publishable: { origins: [SHOP], allowServer: true } });
  stockPk = await createTestKey(app.url, { owner: 'shop@example.com', scopes: [], publishable: { origins: [SHOP], allowStock: true } });
  secret = await createTestKey(app.url, { owner: 'shop@example.com', scopes: ['read:stock', 'read:prices', 'read:orders', 'write:orders', 'write:webhooks'] });
  product = (await app.sql.query(`SELECT id, slug FROM "Product" WHERE "isActive" ORDER BY id LIMIT 1`)).rows[0];
});
afterAll(() => app?.close());

/** A request with `key`, from a page of `origin` (null: no Origin header), from client address `ip` (default: a fresh one). */
const call = (path: string, key: TestKey, origin: string | null = SHOP, init: RequestInit & { ip?: string } = {}) =>
  app.get(path, {
    ...init,
    headers: {
      'x-api-key': key.key,
      ...(origin === null ? {} : { origin }),
      ...(init.ip ? { 'x-forwarded-for': init.ip } : {}),
      ...(init.body ? { 'content-type': 'application/json' } : {}),
      ...(init.headers as Record<string, string>),
    },
  });
const graphql = (query: string, key: TestKey, origin: string | null = SHOP, variables: Record<string, unknown> = {}, ip?: string) =>
  call('/graphql', key, origin, { method: 'POST', body: JSON.stringify({ query, variables }), ip });

describe('a publishable key', () => {
  it('is made with the pk_ prefix, the catalogue scopes and its origins normalised', async () => {
    expect(pk.key).toMatch(/^pk_[A-Za-z0-9_-]{43}$/);
    expect(pk.prefix).toBe(pk.key.slice(0, 12));
    const { rows } = await app.sql.query(`SELECT kind::text, origins, "allowServer", scopes, hash FROM "ApiKey" WHERE id = $1`, [pk.id]);
    expect(rows[0]).toMatchObject({ kind: 'PUBLISHABLE', origins: [SHOP, 'http://localhost:5173'], allowServer: false });
    expect(rows[0].scopes).toEqual(PUBLISHABLE_SCOPES.filter((s) => s !== 'read:stock'));
    expect(rows[0].hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].hash).not.toContain(pk.key.slice(3));
  });

  it('reads the catalogue from a listed origin, over REST and GraphQL, readable there only', async () => {
    const rest = await call('/api/products?limit=2', pk);
    expect(rest.status).toBe(200);
    expect(rest.body.data).toHaveLength(2);
    expect(rest.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(rest.headers.get('vary')).toMatch(/origin/i);
    const graph = await graphql('{ products(limit: 1) { items { id price } } categories { items { id } } }', pk, 'http://localhost:5173');
    expect(graph.status).toBe(200);
    expect(graph.body.errors).toBeUndefined();
    expect(graph.body.data.products.items).toHaveLength(1);
    expect(graph.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    // Browsers send the origin as it is listed; another spelling of it is the same origin.
    expect((await call('/api/categories', pk, 'https://SHOP.example:443')).status).toBe(200);
  });

  it('is refused from an unlisted origin: 403 in the envelope, and no CORS allowance for it', async () => {
    for (const origin of ['https://evil.example', 'http://shop.example', 'https://shop.example:8443', 'https://shop.example.evil.example']) {
      const rest = await call('/api/products', pk, origin);
      expect(rest.status, origin).toBe(403);
      expect(rest.body.error).toMatchObject({ code: 'FORBIDDEN' });
      expect(rest.body.error.message).toContain('not accepted from the origin');
      expect(rest.headers.get('access-control-allow-origin'), origin).toBeNull();
    }
    const graph = await graphql('{ products(limit: 1) { items { id } } }', pk, 'https://evil.example');
    expect(graph.status).toBe(403);
    expect(graph.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(graph.body.data).toBeUndefined();
    expect(graph.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('is refused without an Origin unless its owner allows server use, and from an opaque origin (Origin: null) always', async () => {
    const bare = await call('/api/products', pk, null);
    expect(bare.status).toBe(403);
    expect(bare.body.error.message).toContain('no Origin header');
    expect((await call('/api/products', serverPk, null)).status).toBe(200);
    for (const key of [pk, serverPk]) {
      const opaque = await call('/api/products', key, 'null');
      expect(opaque.status).toBe(403);
      expect(opaque.body.error.message).toContain('"null"');
    }
  });

  it('gets 403 on orders, account data, webhooks and every write, over REST', async () => {
    const refused: Array<[string, RequestInit]> = [
      ['/api/orders', {}],
      ['/api/supplier/orders', {}],
      ['/api/me', {}],
      ['/api/me/addresses', {}],
      ['/api/webhooks', {}],
      ['/api/v1/stock', {}],
      ['/api/orders', { method: 'POST', body: JSON.stringify({ items: [{ productId: product.id, quantity: 1 }] }) }],
      ['/api/webhooks', { method: 'POST', body: JSON.stringify({ url: 'https://hooks.example/x', events: ['order.created'] }) }],
      [`/api/v1/prices/${product.id}`, { method: 'PATCH', body: JSON.stringify({ price: 1 }) }],
    ];
    for (const [path, init] of refused) {
      const res = await call(path, serverPk, SHOP, init);
      expect(res.status, `${init.method ?? 'GET'} ${path}`).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
    expect(await app.sql.query(`SELECT 1 FROM "Order" o JOIN "Account" a ON a.id = o."buyerId" WHERE a.email = 'shop@example.com'`)).toMatchObject({ rowCount: 0 });
  });

  it('gets FORBIDDEN on orders, me, webhooks and mutations over GraphQL, however the fields are mixed', async () => {
    for (const query of [
      '{ me { id email } }',
      '{ orders { items { id } } }',
      '{ webhookEndpoints { items { id } } }',
      '{ products(limit: 1) { items { id } } me { id } }',
      `{ priceRecord(productId: "${product.id}") { price } me { id } }`,
    ]) {
      const res = await graphql(query, pk);
      const errors = res.body.errors as Array<{ extensions: { code: string } }>;
      expect(errors?.length, query).toBeGreaterThan(0);
      expect(errors.every((e) => e.extensions.code === 'FORBIDDEN'), query).toBe(true);
      expect(JSON.stringify(res.body.data ?? {})).not.toContain('shop@example.com');
    }
    // Refetched by global id: what its own field refuses, node(id:) does not find (null, nothing of it shown).
    for (const id of [encodeGlobalID('ApiKey', pk.id), encodeGlobalID('Me', pk.accountId)]) {
      const res = await graphql('query($id: ID!) { node(id: $id) { __typename ... on ApiKey { prefix } ... on Me { email } } }', pk, SHOP, { id });
      expect(res.body.data, JSON.stringify(res.body)).toBeDefined();
      expect(res.status).toBe(200);
      expect(res.body.data.node, id).toBeNull();
      expect(res.body.errors?.map((e: { extensions: { code: string } }) => e.extensions.code) ?? [], id).not.toContain('INTERNAL_ERROR');
    }
    // A secret key finds its own (the same query, so the null above is the publishable key's rule).
    const own = await call('/graphql', secret, null, { method: 'POST', body: JSON.stringify({ query: 'query($id: ID!) { node(id: $id) { __typename ... on ApiKey { prefix } } }', variables: { id: encodeGlobalID('ApiKey', secret.id) } }) });
    expect(own.body.data.node).toEqual({ __typename: 'ApiKey', prefix: secret.prefix });
    const mutation = await graphql('mutation($id: ID!) { updatePrice(productId: $id, input: { price: "1.00" }) { price } }', pk, SHOP, { id: product.id });
    expect(mutation.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const order = await graphql('mutation($id: ID!) { createOrder(input: { items: [{ productId: $id, quantity: 1 }] }) { id } }', pk, SHOP, { id: product.id });
    expect(order.body.errors?.[0]?.extensions.code).toMatch(/FORBIDDEN|VALIDATION_ERROR|BAD_USER_INPUT/);
    expect((await app.sql.query(`SELECT price::text FROM "Product" WHERE id = $1`, [product.id])).rows[0].price).not.toBe('1.00');
  });

  it('stays read-only by construction: scopes written into its row by hand grant nothing beyond the catalogue', async () => {
    const forged = await createTestKey(app.url, { owner: 'shop@example.com', scopes: [], publishable: { origins: [SHOP] } });
    await app.sql.query(`UPDATE "ApiKey" SET scopes = ARRAY['admin:all','read:orders','write:orders'] WHERE id = $1`, [forged.id]);
    await eventually('the changed row read again', async () => (await call('/api/products?limit=1', forged)).status, (s) => s === 200);
    expect((await call('/api/orders', forged)).status).toBe(403);
    expect((await call('/api/me', forged)).status).toBe(403);
    expect((await call('/api/products?limit=1', forged)).status).toBe(200);
  });

  it('cannot be made with other scopes, bad origins or none', () => {
    const base: CreateApiKeyInput = { owner: 'shop@example.com', plan: 'PRO', scopes: [], publishable: { origins: [SHOP] } };
    const refusal = (input: Partial<CreateApiKeyInput>) => {
      try {
        normaliseKeyInput({ ...base, ...input });
      } catch (error) {
        return error as { code: string; details: Record<string, string> };
      }
      throw new Error(`accepted ${JSON.stringify(input)}`);
    };
    for (const scopes of [['read:orders'], ['read:products', 'write:orders'], ['admin:all'], ['write:webhooks'], ['read:stock']]) {
      const error = refusal({ scopes });
      expect(error.code, scopes.join()).toBe('VALIDATION_ERROR');
      expect(error.details.scopes, scopes.join()).toMatch(/publishable|--allow-stock/);
    }
    for (const origin of ['http://shop.example', 'https://shop.example/app', 'https://shop.example/?q=1', 'https://*.shop.example', 'null', '*', 'shop.example', 'ftp://shop.example', 'https://u:p@shop.example', 'https://shop.example#x']) {
      const error = refusal({ publishable: { origins: [origin] } });
      expect(error.details.origins, origin).toContain(JSON.stringify(origin));
    }
    expect(refusal({ publishable: { origins: [] } }).details.origins).toContain('at least one origin');
    // Fewer catalogue scopes are fine; stock only when allowed.
    expect(normaliseKeyInput({ ...base, scopes: ['read:products'] }).scopes).toEqual(['read:products']);
    expect(normaliseKeyInput({ ...base, publishable: { origins: [SHOP], allowStock: true } }).scopes).toContain('read:stock');
  });

  it('stops working when revoked, and a rotated key works in its place', async () => {
    const old = await createTestKey(app.url, { owner: 'shop@example.com', scopes: [], publishable: { origins: [SHOP] } });
    expect((await call('/api/products?limit=1', old)).status).toBe(200);
    // Rotation: a new key with the same origins, then the old one revoked (as `keys revoke` does).
    const rotated = await createTestKey(app.url, { owner: 'shop@example.com', scopes: [], publishable: { origins: [SHOP] } });
    await app.sql.query(`UPDATE "ApiKey" SET "revokedAt" = now() WHERE id = $1`, [old.id]);
    await eventually('the revocation heard', async () => (await call('/api/products?limit=1', old)).status, (s) => s === 401);
    const refused = await call('/api/products?limit=1', old);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');
    expect((await call('/api/products?limit=1', rotated)).status).toBe(200);
  });

  it('limits each visitor (client address) within the plan, and says which limit refused', async () => {
    const key = await createTestKey(app.url, { owner: 'shop@example.com', scopes: [], publishable: { origins: [SHOP] } });
    const a = '198.51.100.7';
    const b = '198.51.100.8';
    for (let i = 0; i < VISITOR_LIMIT; i++) expect((await call('/api/categories', key, SHOP, { ip: a })).status).toBe(200);
    const over = await call('/api/categories', key, SHOP, { ip: a });
    expect(over.status).toBe(429);
    expect(over.body.error.message).toContain(`at most ${VISITOR_LIMIT} requests per minute per visitor (client address) for this publishable key`);
    expect(over.headers.get('ratelimit-policy')).toBe(`"publishable-visitor";q=${VISITOR_LIMIT};w=60`);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('access-control-allow-origin')).toBe(SHOP);
    // Another visitor of the same storefront is not affected.
    const other = await call('/api/categories', key, SHOP, { ip: b });
    expect(other.status).toBe(200);
    // The headers name the bucket nearer its limit: this visitor's (4 of 5 left), not the plan's.
    expect(other.headers.get('ratelimit-policy')).toBe(`"publishable-visitor";q=${VISITOR_LIMIT};w=60`);
    expect(other.headers.get('x-ratelimit-remaining')).toBe(String(VISITOR_LIMIT - 1));
  });

  it('keeps its plan total across visitors: the key’s own limit refuses, and says so', async () => {
    const key = await createTestKey(app.url, { owner: 'shop@example.com', plan: 'enterprise', limit: 3, windowSeconds: 3600, scopes: [], publishable: { origins: [SHOP] } });
    for (let i = 0; i < 3; i++) expect((await call('/api/categories', key, SHOP, { ip: `203.0.113.${10 + i}` })).status).toBe(200);
    const over = await call('/api/categories', key, SHOP, { ip: '203.0.113.50' });
    expect(over.status).toBe(429);
    expect(over.body.error.message).toContain('at most 3 requests per hour for this API key (enterprise plan)');
    expect(over.headers.get('ratelimit-policy')).toBe('"enterprise";q=3;w=3600');
  });

  it('hides stock unless its owner allows it, and no cache mixes its view with a secret key’s', async () => {
    const query = `{ stockRecord(productId: "${product.id}") { stock } }`;
    const get = (key: TestKey) => call(`/graphql?query=${encodeURIComponent(query)}`, key, SHOP, { headers: { accept: 'application/json' } });
    // The secret key's answer first: kept by the response cache, and cacheable privately only.
    const first = await get(secret);
    expect(first.body.data.stockRecord.stock).toEqual(expect.any(Number));
    const hidden = await get(pk);
    expect(hidden.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(hidden.body.data?.stockRecord ?? null).toBeNull();
    const allowed = await get(stockPk);
    expect(allowed.body.data.stockRecord.stock).toBe(first.body.data.stockRecord.stock);
    // A catalogue GET with a publishable key is never cached publicly (a keyless one is).
    const catalogue = await call(`/graphql?query=${encodeURIComponent('{ categories { items { id } } }')}`, pk, SHOP, { headers: { accept: 'application/json' } });
    expect(catalogue.status).toBe(200);
    expect(catalogue.headers.get('cache-control')).toBe('private, no-cache');
  });

  it('hears productChanged of prices, not of stock alone, unless stock is allowed', async () => {
    const query = 'subscription($id: ID!) { productChanged(id: $id) { id product { price } } }';
    const [id] = [product.id];
    const browser = await subscribe(app, query, { id }, pk, { origin: SHOP });
    const stocked = await subscribe(app, query, { id }, stockPk, { origin: SHOP });
    try {
      expect(browser.status).toBe(200);
      await app.sql.query(`UPDATE "Product" SET stock = stock + 1 WHERE id = $1`, [id]);
      await stocked.until('the stock change', (s) => s.nexts().length === 1, 15_000);
      await app.sql.query(`UPDATE "Product" SET price = price + 1 WHERE id = $1`, [id]);
      await browser.until('the price change', (s) => s.nexts().length >= 1, 15_000);
      await stocked.until('the price change', (s) => s.nexts().length === 2, 15_000);
      // Events come in commit order: had the stock change been sent, it would be the first.
      const price = (await app.sql.query(`SELECT price::text FROM "Product" WHERE id = $1`, [id])).rows[0].price;
      expect(browser.nexts()).toHaveLength(1);
      expect(Number(browser.nexts()[0].data.productChanged.product.price)).toBe(Number(price));
    } finally {
      browser.close();
      stocked.close();
    }
    // Its stock record is refused inside an event as in a query; from an unlisted origin, no stream at all.
    const refused = await subscribe(app, query, { id }, pk, { origin: 'https://evil.example' });
    expect(refused.status).toBe(403);
    refused.close();
  });
});

describe('a publishable key\'s open streams', () => {
  // An app of its own: this file's visitor limit (5 a minute) would refuse the streams before their bound.
  const PER_VISITOR = 2;
  let live: TestApp;
  let livePk: TestKey;
  beforeAll(async () => {
    live = await startTestApp({ env: { SUBSCRIPTIONS_PER_KEY: String(PER_VISITOR) } });
    livePk = await createTestKey(live.url, { owner: 'shop@example.com', scopes: [], publishable: { origins: [SHOP] } });
  });
  afterAll(() => live?.close());

  it('are bounded per visitor (SUBSCRIPTIONS_PER_KEY each), not shared by every visitor of the storefront', async () => {
    const query = 'subscription($id: ID!) { productChanged(id: $id) { id } }';
    const from = (ip: string) => subscribe(live, query, { id: product.id }, livePk, { origin: SHOP, 'x-forwarded-for': ip });
    const open = [];
    try {
      for (let i = 0; i < PER_VISITOR; i++) open.push(await from('198.51.100.7'));
      expect(open.map((s) => [s.status, s.ended])).toEqual(Array(PER_VISITOR).fill([200, false]));
      // One more from that visitor is refused, naming the bound as the visitor's …
      const refused = await from('198.51.100.7');
      await refused.until('the refusal', (s) => s.ended);
      const error = refused.nexts()[0].errors[0];
      expect(error.extensions).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { openSubscriptions: PER_VISITOR, limit: PER_VISITOR } });
      expect(error.message).toContain('from your address');
      // … while another visitor of the same storefront still gets one.
      const other = await from('198.51.100.8');
      open.push(other);
      expect([other.status, other.ended]).toEqual([200, false]);
      const { rows } = await live.sql.query(`SELECT count(*)::int AS n FROM "LiveStream" WHERE "keyId" = $1 GROUP BY holder ORDER BY n DESC`, [livePk.id]);
      expect(rows.map((r) => r.n)).toEqual([PER_VISITOR, 1]);
    } finally {
      for (const s of open) s.close();
    }
  });
});

describe('the dashboard', () => {
  it('makes a publishable key from the keys form, lists its kind and origins, and refuses bad origins', async () => {
    const { client } = await signedIn(app.base);
    const form = await client.get('/dashboard/keys');
    expect(form.html).toContain('name="kind" value="publishable"');
    expect(form.html).toContain('name="origins"');

    const bad = await client.post('/dashboard/keys', { name: 'storefront', kind: 'publishable', origins: 'http://shop.example, https://shop.example/app', expires: '' });
    expect(bad.status).toBe(400);
    expect(textOf(bad.html)).toContain('"http://shop.example" must be https');
    expect(textOf(bad.html)).toContain('"https://shop.example/app" must be an origin without a path');
    const none = await client.post('/dashboard/keys', { name: 'storefront', kind: 'publishable', origins: '', expires: '' });
    expect(none.status).toBe(400);
    expect(textOf(none.html)).toContain('at least one origin');

    await client.get('/dashboard/keys');
    // Secret-key scopes sent along are not a publishable key's: its own are the catalogue's.
    const made = await client.post('/dashboard/keys', { name: 'storefront', kind: 'publishable', origins: 'https://Shop.Example\nhttp://localhost:8080', allow_server: 'on', scopes: ['read:orders', 'write:orders'], expires: '' });
    expect(made.status).toBe(303);
    const shown = await client.follow(made);
    const key = /value="(pk_[A-Za-z0-9_-]{43})"/.exec(shown.html)?.[1];
    expect(key).toBeDefined();
    expect(textOf(shown.html).replace(/\s+,/g, ',')).toContain('reads the catalogue only, from the pages of https://shop.example, http://localhost:8080 and from servers');

    const list = textOf((await client.get('/dashboard/keys')).html).replace(/\s+,/g, ',');
    expect(list).toContain('Publishable, from https://shop.example, http://localhost:8080 and servers');
    const { rows } = await app.sql.query(`SELECT kind::text, origins, "allowServer", scopes FROM "ApiKey" WHERE prefix = $1`, [key!.slice(0, 12)]);
    expect(rows[0]).toMatchObject({ kind: 'PUBLISHABLE', origins: ['https://shop.example', 'http://localhost:8080'], allowServer: true });
    expect(rows[0].scopes).not.toContain('read:orders');

    const made2 = { key: key!, id: '', accountId: '', prefix: '' };
    expect((await call('/api/products?limit=1', made2, 'http://localhost:8080')).status).toBe(200);
    expect((await call('/api/products?limit=1', made2, null)).status).toBe(200);
    expect((await call('/api/me', made2, null)).status).toBe(403);
  });
});

describe('with CORS_ORIGINS that does not admit the key’s origin', () => {
  it('allows no origin the configuration refuses, even one the key lists', async () => {
    const strict = await startTestApp({ url: app.url, env: { CORS_ORIGINS: 'https://other.example,https://more.example' } });
    try {
      const listed = await strict.get('/api/categories', { headers: { 'x-api-key': pk.key, origin: SHOP } });
      expect(listed.status).toBe(200);
      expect([null, 'null']).toContain(listed.headers.get('access-control-allow-origin'));
      // An origin the configuration admits but the key does not list: refused, and not readable.
      const unlisted = await strict.get('/api/categories', { headers: { 'x-api-key': pk.key, origin: 'https://other.example' } });
      expect(unlisted.status).toBe(403);
      expect(unlisted.headers.get('access-control-allow-origin')).toBeNull();
      // A request without a key keeps the configured answer.
      const keyless = await strict.get('/api/categories', { headers: { origin: 'https://other.example' } });
      expect(keyless.headers.get('access-control-allow-origin')).toBe('https://other.example');
    } finally {
      await strict.close();
    }
  });
});
