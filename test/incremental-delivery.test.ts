import { readFileSync } from 'node:fs';
import { buildClientSchema, getIntrospectionQuery, lexicographicSortSchema, printSchema } from 'graphql';
import { createClient } from 'graphql-sse';
import { meros } from 'meros/browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completeData, type IncrementalPart } from '../src/pipeline/graphql-incremental.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { manualClock } from './helpers/clock.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { makeOrderFixture, workedExample, type OrderFixture } from './helpers/orders.js';

// @defer and @stream on /graphql (docs/api.md, "Incremental delivery"), read by real
// incremental-delivery clients: meros for multipart/mixed, graphql-sse's client for Server-Sent
// Events. The rate limits' clock stands still, so a cost budget moves only by what is charged.

let app: TestApp;
let key: TestKey;
let f: OrderFixture;
const clock = manualClock();

beforeAll(async () => {
  app = await startTestApp({ now: clock.now, env: { ORDER_CREATE_LIMIT: '1000' } });
  key = await createTestKey(app.url, { owner: 'defer@example.com', scopes: ['read:orders', 'write:orders'] });
  f = await makeOrderFixture(app.sql);
});

afterAll(async () => {
  await app?.close();
});

/** Apollo Client's Accept for an operation with @defer. */
const APOLLO_ACCEPT = 'multipart/mixed;deferSpec=20220824,application/json';

interface Sent {
  status: number;
  headers: Headers;
  /** Each part's JSON, in order; a single part for an answer that was not sent in parts. */
  parts: IncrementalPart[];
  multipart: boolean;
}

/** An operation sent as a multipart/mixed client sends it, its parts read by meros. */
async function send(query: string, opts: { variables?: Record<string, unknown>; accept?: string; method?: 'GET' | 'POST'; headers?: Record<string, string>; key?: TestKey | null } = {}): Promise<Sent> {
  const headers: Record<string, string> = { accept: opts.accept ?? 'multipart/mixed', ...opts.headers };
  const presented = opts.key === undefined ? key : opts.key;
  if (presented) headers['x-api-key'] = presented.key;
  let res: Response;
  if (opts.method === 'GET') {
    const params = new URLSearchParams({ query, ...(opts.variables ? { variables: JSON.stringify(opts.variables) } : {}) });
    res = await fetch(`${app.base}/graphql?${params}`, { headers });
  } else {
    res = await fetch(`${app.base}/graphql`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables: opts.variables }) });
  }
  const read = await meros<IncrementalPart>(res);
  if (read instanceof Response) {
    const text = await read.text();
    return { status: res.status, headers: res.headers, parts: text ? [JSON.parse(text) as IncrementalPart] : [], multipart: false };
  }
  const parts: IncrementalPart[] = [];
  for await (const part of read) {
    expect(part.json).toBe(true);
    parts.push(part.body as IncrementalPart);
  }
  return { status: res.status, headers: res.headers, parts, multipart: true };
}

/** The same operation as a JSON client sends it. */
async function json(query: string, variables?: Record<string, unknown>) {
  const res = await app.get('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': key.key },
    body: JSON.stringify({ query, variables }),
  });
  return res;
}

const DEFERRED = /* GraphQL */ `query Deferred($slug: String!) {
  product(slug: $slug) { id slug ... @defer(label: "details") { name price supplier { companyName } } }
}`;
const PLAIN = /* GraphQL */ `query Deferred($slug: String!) {
  product(slug: $slug) { id slug ... { name price supplier { companyName } } }
}`;

describe('the served schema', () => {
  it('has @defer and @stream once, and is schema.graphql as committed', async () => {
    const res = await json(getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, inputValueDeprecation: true }));
    expect(res.body.errors).toBeUndefined();
    const directives = (res.body.data.__schema.directives as { name: string }[]).map((d) => d.name);
    expect(directives.filter((name) => name === 'defer' || name === 'stream')).toEqual(['defer', 'stream']);
    const served = `${printSchema(lexicographicSortSchema(buildClientSchema(res.body.data)))}\n`;
    expect(served).toBe(readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8'));
  });
});

describe('@defer over multipart/mixed', () => {
  it('sends the fragment in a later part, labelled, at its path; the parts add up to the answer without @defer', async () => {
    const sent = await send(DEFERRED, { variables: { slug: f.a.slug }, accept: APOLLO_ACCEPT });
    expect(sent.status).toBe(200);
    expect(sent.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    expect(sent.multipart).toBe(true);
    // The first part says what the answer costs; no other part does.
    const cost = { requested: 2, limit: expect.any(Number), remaining: expect.any(Number), restoreRate: expect.any(Number) };
    expect(sent.parts[0]).toEqual({ data: { product: { id: f.a.id, slug: f.a.slug } }, hasNext: true, extensions: { cost } });
    for (const part of sent.parts.slice(1)) expect(part.extensions).toBeUndefined();
    const last = sent.parts.at(-1)!;
    expect(last.hasNext).toBe(false);
    expect(sent.parts.slice(1).flatMap((p) => p.incremental ?? [])).toEqual([
      { data: { name: expect.any(String), price: 19.99, supplier: { companyName: expect.any(String) } }, path: ['product'], label: 'details' },
    ]);
    const plain = await json(PLAIN, { slug: f.a.slug });
    expect(completeData(sent.parts)).toEqual(plain.body.data);
  });

  it('streams a list after its first items, over SSE with graphql-sse’s client too', async () => {
    const query = '{ products(limit: 5, sortBy: PRICE_ASC) { items @stream(initialCount: 2) { id name } } }';
    const plain = await json(query.replace(' @stream(initialCount: 2)', ''));
    const sse = createClient({ url: `${app.base}/graphql`, headers: { 'X-API-Key': key.key }, retryAttempts: 0 });
    const parts: IncrementalPart[] = [];
    for await (const part of sse.iterate({ query })) parts.push(part as IncrementalPart);
    sse.dispose();
    expect(parts[0]!.data).toEqual({ products: { items: plain.body.data.products.items.slice(0, 2) } });
    expect(parts.at(-1)!.hasNext).toBe(false);
    const streamed = parts.slice(1).flatMap((p) => p.incremental ?? []);
    expect(streamed.map((i) => i.path)).toEqual([2, 3, 4].map((n) => ['products', 'items', n]));
    expect(completeData(parts)).toEqual(plain.body.data);
  });

  it('errors in a deferred part carry the contract’s codes, the rest of the answer intact', async () => {
    const sent = await send(`{ product(slug: "${f.a.slug}") { id ... @defer { reviewsConnection(after: "forged") { totalCount } } } }`);
    expect(sent.status).toBe(200);
    expect(sent.parts[0]!.data).toEqual({ product: { id: f.a.id } });
    const [increment] = sent.parts.slice(1).flatMap((p) => p.incremental ?? []);
    expect(increment).toMatchObject({ data: { reviewsConnection: null }, path: ['product'] });
    expect(increment!.errors).toEqual([
      expect.objectContaining({ message: 'Invalid cursor', path: ['product', 'reviewsConnection'], extensions: { code: 'VALIDATION_ERROR', details: { after: expect.any(String) } } }),
    ]);
  });

  it('costs what the same query without @defer costs, charged once', async () => {
    const query = '{ products(limit: 10) { items { id ... @defer { supplier { companyName } } } } }';
    const before = (await json('{ __typename }')).body.extensions.cost;
    const plain = (await json(query.replace(' @defer', ''))).body.extensions.cost;
    expect(plain.requested).toBe(21);
    expect(plain.remaining).toBe(before.remaining - 21);
    const sent = await send(query);
    expect(sent.parts.at(-1)!.hasNext).toBe(false);
    // Its estimate, on the first part: an answer in parts is not refunded (docs/api.md).
    expect(sent.parts[0]!.extensions).toEqual({ cost: { requested: 21, limit: plain.limit, remaining: plain.remaining - 21, restoreRate: plain.restoreRate } });
    const after = (await json('{ __typename }')).body.extensions.cost;
    expect(after.remaining).toBe(plain.remaining - 21 - after.requested);
  });

  it('passes the document limits as a normal use: directives count against GRAPHQL_MAX_DIRECTIVES (20), depth as without them', async () => {
    const fragments = (n: number) => Array.from({ length: n }, (_, i) => `... @defer(label: "l${i}") { f${i}: slug }`).join(' ');
    // Aliases count too (at most 15): twelve fragments of one alias each.
    const ok = await send(`{ product(slug: "${f.a.slug}") { id ${fragments(12)} } }`);
    expect(ok.parts.at(-1)!.hasNext).toBe(false);
    const over = `{ product(slug: "${f.a.slug}") { id ${fragments(12)} ${Array.from({ length: 9 }, () => '... @include(if: true) { id }').join(' ')} } }`;
    const refused = await send(over, { accept: APOLLO_ACCEPT });
    expect(refused.multipart).toBe(false);
    expect(refused.parts[0]!.errors).toEqual([expect.objectContaining({ message: expect.stringMatching(/directives/i), extensions: { code: 'VALIDATION_ERROR' } })]);
    expect(refused.parts[0]!.data).toBeUndefined();
    // Depth: a deferred fragment adds no level, and its fields count as any other's.
    const deep = '{ categories { items { parent { parent { parent { parent { parent { parent { parent { parent { ... @defer { parent { name } } } } } } } } } } } } }';
    const tooDeep = await send(deep, { accept: APOLLO_ACCEPT });
    expect(tooDeep.parts[0]!.errors?.[0]).toMatchObject({ extensions: { code: 'VALIDATION_ERROR' } });
  });
});

describe('refusals', () => {
  it('a client that accepts neither multipart/mixed nor text/event-stream: 400 VALIDATION_ERROR in JSON, before anything runs or is charged', async () => {
    const before = (await json('{ __typename }')).body.extensions.cost.remaining;
    for (const accept of ['application/json', 'application/graphql-response+json', 'text/plain']) {
      const res = await send(DEFERRED, { variables: { slug: f.a.slug }, accept });
      expect(res.status, accept).toBe(400);
      expect(res.headers.get('content-type'), accept).toMatch(/^application\/(graphql-response\+)?json/);
      expect(res.parts, accept).toEqual([{ errors: [{ message: expect.stringContaining('send Accept: multipart/mixed or text/event-stream'), extensions: { code: 'VALIDATION_ERROR' } }] }]);
    }
    const after = (await json('{ __typename }')).body.extensions.cost;
    expect(after.remaining).toBe(before - after.requested);
  });

  it('@defer and @stream in a mutation or a subscription: VALIDATION_ERROR, nothing done', async () => {
    const orders = async () => (await app.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "Order"`)).rows[0]!.n;
    const count = await orders();
    const mutation = await send('mutation($input: CreateOrderInput!) { createOrder(input: $input) { id ... @defer { status } } }', {
      variables: { input: workedExample(f) },
      accept: APOLLO_ACCEPT,
    });
    expect(mutation.parts[0]).toEqual({ errors: [expect.objectContaining({ message: '@defer and @stream are served on queries only, not in a mutation', extensions: { code: 'VALIDATION_ERROR' } })] });
    expect(await orders()).toBe(count);
    const fragment = await send('mutation($input: CreateOrderInput!) { createOrder(input: $input) { ...Later } } fragment Later on Order { id ... @defer { status } }', {
      variables: { input: workedExample(f) },
      accept: APOLLO_ACCEPT,
    });
    expect(fragment.parts[0]!.errors?.[0]?.message).toBe('@defer and @stream are served on queries only, not in a mutation');
    expect(await orders()).toBe(count);

    const sse = createClient({ url: `${app.base}/graphql`, headers: { 'X-API-Key': key.key }, retryAttempts: 0 });
    const events: IncrementalPart[] = [];
    for await (const event of sse.iterate({ query: 'subscription { orderEvents { type ... @defer { order { id } } } }' })) events.push(event as IncrementalPart);
    sse.dispose();
    expect(events).toEqual([{ errors: [expect.objectContaining({ message: '@defer and @stream are served on queries only, not in a subscription', extensions: { code: 'VALIDATION_ERROR' } })] }]);
  });

  it.each([
    ['a negative initialCount', '{ products(limit: 3) { items @stream(initialCount: -1) { id } } }', {}, /initialCount must be 0 or more/],
    ['a negative initialCount in a variable', 'query($n: Int!) { products(limit: 3) { items @stream(initialCount: $n) { id } } }', { n: -5 }, /initialCount must be 0 or more/],
    ['@stream on a field that is no list', '{ products(limit: 2) @stream { items { id } } }', {}, /non-list field/],
    ['two fragments of one label', '{ products(limit: 1) { items { ... @defer(label: "a") { id } ... @defer(label: "a") { slug } } } }', {}, /must be unique/],
    ['a label from a variable', 'query($l: String) { products(limit: 1) { items { ... @defer(label: $l) { id } } } }', { l: 'x' }, /static string/],
    ['an if that is no boolean', '{ products(limit: 1) { items { ... @defer(if: "yes") { id } } } }', {}, /Boolean cannot represent/],
    ['@defer twice on one fragment', '{ products(limit: 1) { items { ... @defer @defer { id } } } }', {}, /only be used once/],
  ])('%s: VALIDATION_ERROR, no data, never INTERNAL_ERROR', async (_, query, variables, message) => {
    const res = await send(query, { variables, accept: APOLLO_ACCEPT });
    expect([200, 400]).toContain(res.status);
    expect(res.parts).toHaveLength(1);
    expect(res.parts[0]!.data).toBeUndefined();
    expect(res.parts[0]!.errors?.length).toBeGreaterThan(0);
    for (const error of res.parts[0]!.errors ?? []) expect(error.extensions).toEqual({ code: 'VALIDATION_ERROR' });
    expect(res.parts[0]!.errors?.map((e) => e.message).join(' ')).toMatch(message);
  });
});

describe('the response cache and caching over GET', () => {
  const statementsDuring = async <T>(run: () => Promise<T>) => {
    const before = app.statements.length;
    const result = await run();
    return { result, statements: app.statements.length - before };
  };

  it('keeps a deferred answer part by part and replays it without a statement; never answers it for the query without @defer, nor the reverse', async () => {
    const slug = f.b.slug;
    // The query without @defer first: kept as one answer.
    const plain = await statementsDuring(() => send(PLAIN, { variables: { slug } }));
    expect(plain.result.multipart).toBe(true);
    expect(plain.result.parts).toHaveLength(1);
    expect(plain.statements).toBeGreaterThan(0);
    const plainAgain = await statementsDuring(() => send(PLAIN, { variables: { slug } }));
    expect(plainAgain.statements).toBe(0);

    // The deferred query is not answered from it: it runs, in parts.
    const deferred = await statementsDuring(() => send(DEFERRED, { variables: { slug } }));
    expect(deferred.statements).toBeGreaterThan(0);
    expect(deferred.result.parts.length).toBeGreaterThan(1);
    expect(deferred.result.parts[0]!.hasNext).toBe(true);

    // Asked again, the same parts, from the cache.
    const replayed = await statementsDuring(() => send(DEFERRED, { variables: { slug } }));
    expect(replayed.statements).toBe(0);
    // The same parts; the first one's cost says what this request left of the budget.
    const withoutCost = (parts: typeof deferred.result.parts) => parts.map(({ extensions, ...part }) => part);
    expect(withoutCost(replayed.result.parts)).toEqual(withoutCost(deferred.result.parts));
    expect(replayed.result.parts[0]!.extensions?.cost).toMatchObject({ requested: (deferred.result.parts[0]!.extensions?.cost as { requested: number }).requested });
    expect(completeData(replayed.result.parts)).toEqual(plain.result.parts[0]!.data);

    // And the query without @defer still gets its one answer.
    const plainLast = await send(PLAIN, { variables: { slug } });
    expect(plainLast.parts.map((p) => p.data)).toEqual(plain.result.parts.map((p) => p.data));
    expect(plainLast.parts[0]!.hasNext).toBeUndefined();
  });

  it('a deferred answer goes stale with what its later parts showed', async () => {
    // The product is only in the later part: its stock is what the answer shows of it.
    const query = `{ __typename ... @defer { product(slug: "${f.d.slug}") { id stock price } } }`;
    const first = await send(query);
    expect(first.parts[0]!.data).toEqual({ __typename: 'Query' });
    expect(completeData(first.parts)).toEqual({ __typename: 'Query', product: { id: f.d.id, stock: 50, price: 100 } });
    expect((await statementsDuring(() => send(query))).statements).toBe(0);
    await app.sql.query(`UPDATE "Product" SET stock = 49 WHERE id = $1`, [f.d.id]);
    const changed = await send(query);
    expect(completeData(changed.parts)).toEqual({ __typename: 'Query', product: { id: f.d.id, stock: 49, price: 100 } });
  });

  it('a deferred answer has no errors kept: the same request runs again', async () => {
    const query = `{ product(slug: "${f.a.slug}") { id ... @defer { reviewsConnection(after: "forged") { totalCount } } } }`;
    await send(query);
    expect((await statementsDuring(() => send(query))).statements).toBeGreaterThan(0);
  });

  it('over GET: an answer sent in parts has no ETag, is no-store and is never a 304; the JSON answer keeps its ETag', async () => {
    const slug = f.c.slug;
    const plain = await send(PLAIN, { method: 'GET', variables: { slug }, accept: 'application/json', key: null });
    expect(plain.status).toBe(200);
    const etag = plain.headers.get('etag');
    expect(etag).toMatch(/^W\//);
    expect(plain.headers.get('cache-control')).toBe('public, max-age=60');

    for (const query of [DEFERRED, PLAIN]) {
      const parts = await send(query, { method: 'GET', variables: { slug }, accept: 'multipart/mixed', headers: { 'if-none-match': etag! }, key: null });
      expect(parts.status, query).toBe(200);
      expect(parts.multipart, query).toBe(true);
      expect(parts.headers.get('etag'), query).toBeNull();
      expect(parts.headers.get('cache-control'), query).toBe('no-store');
    }
    const sse = await fetch(`${app.base}/graphql?${new URLSearchParams({ query: DEFERRED, variables: JSON.stringify({ slug }) })}`, { headers: { accept: 'text/event-stream' } });
    expect(sse.headers.get('content-type')).toBe('text/event-stream');
    expect(sse.headers.get('cache-control')).toBe('no-store');
    expect(sse.headers.get('etag')).toBeNull();
    expect(await sse.text()).toContain('"hasNext":false');
    // The JSON client with the ETag still gets its 304.
    const again = await app.get(`/graphql?${new URLSearchParams({ query: PLAIN, variables: JSON.stringify({ slug }) })}`, { headers: { accept: 'application/json', 'if-none-match': etag! } });
    expect(again.status).toBe(304);
  });
});
