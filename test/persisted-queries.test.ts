import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma } from '../src/db/prisma.js';
import { createPersistedQueryStore } from '../src/pipeline/graphql-persisted.js';
import { causeOf } from '../src/shared/errors.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { createTestKey } from './helpers/keys.js';

// Persisted queries on /graphql (src/pipeline/graphql-persisted.ts), and HTTP caching of GET answers
// (src/pipeline/graphql-http-caching.ts): two instances on one database, over real HTTP.

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
const CATALOGUE = 'query Cheapest { products(limit: 2, sortBy: PRICE_ASC) { items { name price } } }';
const ONE_CLIENT = { 'x-forwarded-for': '10.200.0.1' };

const post = (app: TestApp, body: unknown, headers: Record<string, string> = {}) =>
  app.get('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const getByHash = (app: TestApp, hash: string, headers: Record<string, string> = {}, variables?: unknown) =>
  app.get(
    `/graphql?extensions=${encodeURIComponent(JSON.stringify(persisted(hash)))}${variables ? `&variables=${encodeURIComponent(JSON.stringify(variables))}` : ''}`,
    { headers: { accept: 'application/json', ...headers } },
  );

let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await startTestApp();
  b = await startTestApp({ url: a.url });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

describe('automatic persisted queries', () => {
  it('answers an unknown hash with PersistedQueryNotFound', async () => {
    const res = await getByHash(a, sha256('query Unknown { categories { items { name } } }'));
    expect(res.status).toBe(404);
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0]).toMatchObject({ message: 'PersistedQueryNotFound', extensions: { code: 'NOT_FOUND' } });
  });

  it('registers a query sent with its hash, and answers the hash over GET on another instance with ETag and 304', async () => {
    const hash = sha256(CATALOGUE);
    const registered = await post(a, { query: CATALOGUE, extensions: persisted(hash) });
    expect(registered.status).toBe(200);
    expect(registered.body.data.products.items).toHaveLength(2);
    const rows = await a.sql.query(`SELECT document FROM "PersistedQuery" WHERE hash = $1`, [hash]);
    expect(rows.rows).toEqual([{ document: CATALOGUE }]);

    const other = await getByHash(b, hash);
    expect(other.status).toBe(200);
    expect(other.body.data).toEqual(registered.body.data);
    const etag = other.headers.get('etag');
    expect(etag).toMatch(/^W\/".+"$/);
    expect(other.headers.get('cache-control')).toBe('public, max-age=60');
    expect(other.headers.get('vary')).toMatch(/X-API-Key/i);

    const again = await getByHash(b, hash, { 'if-none-match': etag! });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('x-ratelimit-remaining')).not.toBeNull();
    // The first instance answers the same data with the same validator, whatever the cost says.
    expect((await getByHash(a, hash)).headers.get('etag')).toBe(etag);

    await a.sql.query(`UPDATE "Product" SET price = price - 0.01 WHERE id = (SELECT id FROM "Product" WHERE "isActive" ORDER BY price, id LIMIT 1)`);
    const changed = await getByHash(b, hash, { 'if-none-match': etag! });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('stores nothing a client sends that fails the rules: a syntax error, a too-deep document, one past the token limit, a mutation without a key', async () => {
    const deep = `query Deep { ${'categories { items { '.repeat(30)}name${' } }'.repeat(30)} }`;
    const tokens = `query Tokens { categories { items { ${'name '.repeat(20_000)}} } }`;
    const refused = ['query { '.repeat(4000), deep, tokens, 'mutation NoKey { createOrder(input: { items: [] }) { id } }'];
    for (const query of refused) {
      const hash = sha256(query);
      const res = await post(a, { query, extensions: persisted(hash) }, ONE_CLIENT);
      expect(res.status).toBeLessThan(500);
      expect(res.body.errors.length).toBeGreaterThan(0);
      expect(res.body.errors[0].extensions.code).not.toBe('INTERNAL_ERROR');
      expect((await a.sql.query(`SELECT 1 FROM "PersistedQuery" WHERE hash = $1`, [hash])).rowCount).toBe(0);
    }
    // GraphQL over HTTP: a document that does not parse is 400 under application/graphql-response+json;
    // under application/json the legacy rule answers 200 with the errors (and no data).
    const syntax = refused[0]!;
    const strict = await post(a, { query: syntax, extensions: persisted(sha256(syntax)) }, { ...ONE_CLIENT, accept: 'application/graphql-response+json' });
    expect(strict.status).toBe(400);
    expect(strict.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(strict.body.data).toBeUndefined();
    const legacy = await post(a, { query: syntax, extensions: persisted(sha256(syntax)) }, { ...ONE_CLIENT, accept: 'application/json' });
    expect(legacy.status).toBe(200);
    expect(legacy.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(legacy.body.data).toBeUndefined();
  });

  it('answers when the store fails: a registration still runs its query, a lookup is 503 with Retry-After, never a 200 INTERNAL_ERROR', async () => {
    const query = 'query StoreDown { categories { items { slug } } }';
    const hash = sha256(query);
    // A real failure of the store's statements (the table is not there), not a mock.
    await a.sql.query('ALTER TABLE "PersistedQuery" RENAME TO "PersistedQueryAway"');
    try {
      for (const accept of ['application/json', 'application/graphql-response+json']) {
        const registering = await post(a, { query, extensions: persisted(hash) }, { accept });
        expect(registering.status).toBe(200);
        expect(registering.body.errors).toBeUndefined();
        expect(registering.body.data.categories.items.length).toBeGreaterThan(0);
        const lookup = await post(b, { extensions: persisted(hash) }, { accept });
        expect(lookup.status).toBe(503);
        expect(lookup.headers.get('retry-after')).toBe('5');
        expect(lookup.body.errors).toEqual([
          { message: expect.stringMatching(/retry later, or send the query with its hash/), extensions: { code: 'SERVICE_UNAVAILABLE', retryAfter: 5 } },
        ]);
        expect(JSON.stringify(lookup.body)).not.toMatch(/PersistedQueryAway|relation|prisma/i);
      }
    } finally {
      await a.sql.query('ALTER TABLE "PersistedQueryAway" RENAME TO "PersistedQuery"');
    }
    // Not registered while it failed: the hash alone is not found, and the client registers it again.
    expect((await post(b, { extensions: persisted(hash) })).status).toBe(404);
    expect((await post(b, { query, extensions: persisted(hash) })).status).toBe(200);
    expect((await getByHash(a, hash)).body.data.categories.items.length).toBeGreaterThan(0);
  });

  it('registers 64 documents at once without a deadlock, a 5xx or an INTERNAL_ERROR', async () => {
    const queries = Array.from({ length: 64 }, (_, i) => `query Parallel${i} { categories { items { name } } }`);
    const answers = await Promise.all(queries.map((query, i) => post(i % 2 ? a : b, { query, extensions: persisted(sha256(query)) })));
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.body.errors).toBeUndefined();
    }
  });

  it('refuses a query that does not match its hash, and registers nothing', async () => {
    const wrong = sha256('something else');
    const res = await post(a, { query: CATALOGUE, extensions: persisted(wrong) });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ message: 'PersistedQueryMismatch', extensions: { code: 'VALIDATION_ERROR' } });
    expect((await a.sql.query(`SELECT 1 FROM "PersistedQuery" WHERE hash = $1`, [wrong])).rowCount).toBe(0);
    const malformed = await post(a, { query: CATALOGUE, extensions: { persistedQuery: { version: 1, sha256Hash: 'nope' } } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });

  it('refuses to register an oversize document', async () => {
    const huge = `query Huge { categories { items { name } } } # ${'x'.repeat(70_000)}`;
    const res = await post(a, { query: huge, extensions: persisted(sha256(huge)) });
    expect(res.status).toBe(413);
    expect(res.body.errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await a.sql.query(`SELECT 1 FROM "PersistedQuery" WHERE hash = $1`, [sha256(huge)])).rowCount).toBe(0);
  });

  it('runs only queries over GET: a mutation, by hash or as text, is refused with 405', async () => {
    const key = await createTestKey(a.url, { scopes: ['write:orders', 'read:orders'] });
    const mutation = 'mutation Cancel($id: ID!) { cancelOrder(id: $id, reason: "by GET") { id status } }';
    const hash = sha256(mutation);
    await post(a, { query: mutation, variables: { id: 'none' }, extensions: persisted(hash) }, { 'x-api-key': key.key });
    const res = await getByHash(b, hash, { 'x-api-key': key.key }, { id: 'none' });
    expect(res.status).toBe(405);
    expect(res.body.errors[0].extensions.code).toBe('METHOD_NOT_ALLOWED');
    const text = await b.get(`/graphql?query=${encodeURIComponent(mutation)}&variables=${encodeURIComponent('{"id":"none"}')}`, { headers: { 'x-api-key': key.key } });
    expect(text.status).toBe(405);
  });

  it('keeps keyed answers private, and caches no errors', async () => {
    const key = await createTestKey(a.url, { scopes: ['read:products'] });
    const hash = sha256(CATALOGUE);
    const keyed = await getByHash(b, hash, { 'x-api-key': key.key });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get('cache-control')).toBe('private, no-cache');
    expect(keyed.headers.get('etag')).toMatch(/^W\//);

    const webhooks = 'query Hooks { webhookEndpoints { items { id } } }';
    await post(a, { query: webhooks, extensions: persisted(sha256(webhooks)) });
    const anonymous = await getByHash(b, sha256(webhooks));
    expect(anonymous.body.errors[0].extensions.code).toBe('UNAUTHORIZED');
    expect(anonymous.headers.get('etag')).toBeNull();
    expect(anonymous.headers.get('cache-control') ?? '').not.toMatch(/public/);
  });

});

describe('registrations with the table full: no deadlock, no 5xx, no INTERNAL_ERROR', () => {
  // Every registration evicts, over 1000 rows of 60 KB with distinct usedAt. PostgreSQL plans the
  // eviction's DELETE by the table's statistics: fresh ones (autovacuum's, here VACUUM ANALYZE
  // between waves) give a plan that locks the rows in an order depending on how many it sees past
  // the bound, so two evictions of different sizes cross. Without the advisory lock this
  // deadlocked: the first test failed on the previous store in 3 of 4 runs (7, 42 and 64 × 40P01,
  // and up to 48 statements cancelled at their time bound while the deadlocks were detected).
  const FULL = 1000;
  const env = { PERSISTED_QUERIES_MAX: String(FULL), PERSISTED_USE_FLUSH_MS: '50', DB_POOL_MAX: '32' };
  const junk = () => randomBytes(30_000).toString('hex');
  let one: TestApp;
  let two: TestApp;
  beforeAll(async () => {
    one = await startTestApp({ env });
    two = await startTestApp({ url: one.url, env });
    await one.sql.query(
      `INSERT INTO "PersistedQuery" (hash, document, "usedAt")
       SELECT encode(sha256(convert_to(d, 'UTF8')), 'hex'), d, now() - ($1::int - g) * interval '1 millisecond'
       FROM (SELECT g, 'query Filler' || g || ' { __typename } # ' || md5(g::text) || $2 AS d FROM generate_series(1, $1::int) g) f`,
      [FULL, junk()],
    );
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
  });

  it('in the store: 64 at once, four each, in six waves, while uses are looked up and flushed every 50 ms', async () => {
    // The store itself, on a pool as wide as the registrations: through HTTP the requests of one
    // test process reach the database too spread out to cross (3,000 tried on the previous store).
    const WAVES = 6;
    const prisma = createPrisma({ url: one.url, poolMax: 64 });
    const store = createPersistedQueryStore(prisma, FULL, 50);
    const outcomes = new Map<string, number>();
    const registered: string[] = [];
    try {
      for (let wave = 0; wave < WAVES; wave++) {
        await one.sql.query('VACUUM ANALYZE "PersistedQuery"');
        const workers = Array.from({ length: 64 }, async (_, i) => {
          for (let n = 0; n < 4; n++) {
            // Arrivals spread over a few milliseconds, as a client's do.
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
            const query = `query Store${wave}w${i}n${n} { __typename } # ${junk()}`;
            let outcome = 'registered';
            try {
              await store.set(sha256(query), query);
              // Uses answered from memory: the flush writes them while evictions run.
              await store.get(sha256(query));
              await store.get(registered[Math.floor(Math.random() * registered.length)] ?? sha256(query));
              registered.push(sha256(query));
            } catch (error) {
              outcome = causeOf(error);
            }
            outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
          }
        });
        await Promise.all(workers);
      }
    } finally {
      await store.close();
      await prisma.$disconnect();
    }
    expect(Object.fromEntries(outcomes)).toEqual({ registered: WAVES * 64 * 4 });
    const { rows } = await one.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "PersistedQuery"`);
    expect(rows[0]!.n).toBeLessThanOrEqual(FULL);
  });

  it('over HTTP: 64 at once on two instances in three waves, with 32 lookups each', async () => {
    const newest = (await one.sql.query<{ hash: string }>(`SELECT hash FROM "PersistedQuery" ORDER BY "usedAt" DESC LIMIT 32`)).rows.map((r) => r.hash);
    const seen: string[] = [];
    for (let wave = 0; wave < 3; wave++) {
      await one.sql.query('VACUUM ANALYZE "PersistedQuery"');
      const registrations = Array.from({ length: 64 }, async (_, i) => {
        const query = `query Wave${wave}n${i} { __typename } # ${junk()}`;
        const res = await post(i % 2 ? one : two, { query, extensions: persisted(sha256(query)) }, { 'x-forwarded-for': `10.201.${wave}.${i + 1}` });
        return `${res.status} ${JSON.stringify(res.body.errors ?? null)}`;
      });
      const lookups = newest.map(async (hash, i) => {
        const res = await getByHash(i % 2 ? two : one, hash);
        // A document may have been evicted meanwhile (404); anything else is a failure.
        return res.status === 404 ? '200 null' : `${res.status} ${JSON.stringify(res.body.errors ?? null)}`;
      });
      seen.push(...(await Promise.all([...registrations, ...lookups])));
    }
    expect(seen).toEqual(Array(3 * (64 + newest.length)).fill('200 null'));
    const { rows } = await one.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "PersistedQuery"`);
    expect(rows[0]!.n).toBeLessThanOrEqual(FULL);
  });
});

describe('eviction, least recently used across instances', () => {
  let small: TestApp;
  let other: TestApp;
  beforeAll(async () => {
    const env = { PERSISTED_QUERIES_MAX: '2', PERSISTED_USE_FLUSH_MS: '50' };
    small = await startTestApp({ env });
    other = await startTestApp({ url: small.url, env });
  });
  afterAll(async () => {
    await other?.close();
    await small?.close();
  });
  const usedAt = async (hash: string) =>
    (await small.sql.query<{ usedAt: Date }>(`SELECT "usedAt" FROM "PersistedQuery" WHERE hash = $1`, [hash])).rows[0]?.usedAt.getTime() ?? null;

  it('keeps at most PERSISTED_QUERIES_MAX documents, evicting the least recently used', async () => {
    const docs = ['query One { categories { items { name } } }', 'query Two { categories { items { slug } } }', 'query Three { categories { items { id } } }'];
    for (const doc of docs) {
      const res = await post(small, { query: doc, extensions: persisted(sha256(doc)) }, ONE_CLIENT);
      expect(res.body.data.categories.items.length).toBeGreaterThan(0);
      // Registered at distinct times: the eviction order is theirs.
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const kept = await small.sql.query(`SELECT document FROM "PersistedQuery" ORDER BY document`);
    expect(kept.rows.map((r) => r.document)).toEqual([docs[2], docs[1]].sort());
  });

  it('keeps a document one instance answers from its memory through a flood of registrations on another', async () => {
    const hot = 'query Hot { categories { items { name slug } } }';
    const cold = 'query Cold { categories { items { id slug } } }';
    for (const doc of [cold, hot]) expect((await post(small, { query: doc, extensions: persisted(sha256(doc)) })).status).toBe(200);
    let coldGone = false;
    for (let i = 0; i < 6; i++) {
      const flood = `query Flood${i} { categories { items { id name } } }`;
      expect((await post(other, { query: flood, extensions: persisted(sha256(flood)) })).status).toBe(200);
      coldGone ||= (await usedAt(sha256(cold))) === null;
      // Used on `small` only, from its memory (no statement): its flush tells the table.
      const registered = (await usedAt(sha256(flood)))!;
      expect((await getByHash(small, sha256(hot))).status).toBe(200);
      await eventually('the hot document\'s use flushed', () => usedAt(sha256(hot)), (at) => at !== null && at >= registered);
    }
    expect(coldGone).toBe(true);
    // `other` never held it: it reads it from the table, where it survived the flood.
    const res = await getByHash(other, sha256(hot));
    expect(res.status).toBe(200);
    expect(res.body.data.categories.items.length).toBeGreaterThan(0);
  });
});

describe('trusted documents (PERSISTED_ONLY)', () => {
  let trusted: TestApp;
  const manifest = { [sha256(CATALOGUE)]: CATALOGUE, 'sha1-style-id': 'query Categories { categories { items { slug } } }' };
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'persisted-documents-'));
    const file = path.join(dir, 'persisted-documents.json');
    writeFileSync(file, JSON.stringify(manifest));
    trusted = await startTestApp({ url: a.url, env: { PERSISTED_ONLY: 'true', PERSISTED_DOCUMENTS: file } });
  });
  afterAll(() => trusted?.close());

  it('runs the manifest documents, by documentId or by hash, over POST and GET', async () => {
    const byId = await post(trusted, { documentId: 'sha1-style-id' });
    expect(byId.status).toBe(200);
    expect(byId.body.data.categories.items.length).toBeGreaterThan(0);
    const prefixed = await post(trusted, { documentId: `sha256:${sha256(CATALOGUE)}` });
    expect(prefixed.body.data.products.items).toHaveLength(2);
    const get = await getByHash(trusted, sha256(CATALOGUE));
    expect(get.status).toBe(200);
    expect(get.headers.get('cache-control')).toBe('public, max-age=60');
    const getById = await trusted.get(`/graphql?documentId=sha1-style-id`, { headers: { accept: 'application/json' } });
    expect(getById.status).toBe(200);
    expect(getById.body.data.categories.items.length).toBeGreaterThan(0);
  });

  it('charges a browser\'s GET of a document to its client like any other (GraphiQL is off)', async () => {
    const res = await trusted.get('/graphql?documentId=sha1-style-id', { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.body.data.categories.items.length).toBeGreaterThan(0);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('59');
  });

  it('refuses any query text, an unknown id and a request with no id', async () => {
    const text = await post(trusted, { query: CATALOGUE });
    expect(text.status).toBe(400);
    expect(text.body.errors[0].message).toMatch(/only trusted documents/);
    expect(text.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const registering = await post(trusted, { query: 'query New { categories { items { id } } }', extensions: persisted(sha256('query New { categories { items { id } } }')) });
    expect(registering.status).toBe(400);
    const unknown = await post(trusted, { documentId: 'nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0]).toMatchObject({ message: expect.stringMatching(/^PersistedQueryNotFound/), extensions: { code: 'NOT_FOUND' } });
    const none = await post(trusted, { variables: {} });
    expect(none.status).toBe(400);
    expect(none.body.errors[0].message).toMatch(/send a document's id/);
  });

  it('does not start without a manifest', async () => {
    await expect(startTestApp({ url: a.url, env: { PERSISTED_ONLY: 'true' } })).rejects.toThrow(/PERSISTED_DOCUMENTS/);
  });
});
