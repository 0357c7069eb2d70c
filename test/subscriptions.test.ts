import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { makeOrderFixture, workedExample, type OrderFixture } from './helpers/orders.js';
import { Stream, subscribe } from './helpers/sse.js';
import { untilListening } from './helpers/live.js';

// GraphQL subscriptions over SSE (docs/api.md, "Subscriptions"), read by a real SSE client: fetch
// with Accept: text/event-stream on two instances of the app on one database.

let db: TestDatabase;
let a: TestApp;
let b: TestApp;
let f: OrderFixture;
let buyer: TestKey;
let rival: TestKey;
let member: TestKey;
let catalogue: TestKey;
let cataloguePrices: TestKey;
let writer: TestKey;
/** SUBSCRIPTIONS_PER_KEY of both instances. */
const PER_KEY = 3;

beforeAll(async () => {
  db = await createTestDatabase('seeded');
  const env = { ORDER_CREATE_LIMIT: '1000', SUBSCRIPTIONS_PER_KEY: String(PER_KEY) };
  [a, b] = await Promise.all([startTestApp({ url: db.url, env }), startTestApp({ url: db.url, env })]);
  f = await makeOrderFixture(a.sql);
  buyer = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders', 'write:orders'] });
  rival = await createTestKey(db.url, { owner: 'live-rival@example.com', scopes: ['read:orders'] });
  member = await createTestKey(db.url, { owner: 'live-clerk@supplier.example', scopes: ['read:orders', 'write:products'] });
  catalogue = await createTestKey(db.url, { owner: 'live-watcher@example.com', scopes: ['read:products'] });
  cataloguePrices = await createTestKey(db.url, { owner: 'live-watcher@example.com', scopes: ['read:products', 'read:prices', 'read:stock'] });
  await a.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [member.accountId, f.supplierId]);
  writer = member;
  // An instance starts whether or not its first LISTEN succeeded (on a loaded machine a connection
  // can take over its 1 s connect timeout; it tries again a second later, or later still): a change
  // committed before then is never heard. Both instances' listening connections, as the server has them.
  await untilListening(a, 2);
}, 60_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  await db?.drop();
});

/** The places the key holds in the count of open streams, on every instance. */
const placesOf = async (key: TestKey) =>
  (await a.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "LiveStream" WHERE "keyId" = $1 AND "leaseUntil" > now()`, [key.id])).rows[0]!.n;

/** Subscribes until a place is free (the one given back is seen by its instance once the client has gone), for at most `ms`. */
async function openOnceFree(app: TestApp, key: TestKey, ms = 5000): Promise<Stream> {
  const deadline = Date.now() + ms;
  for (;;) {
    const stream = await subscribe(app, ORDER_EVENTS, {}, key);
    if (!stream.ended && stream.events.length === 0) return stream;
    await stream.until('the refusal', (s) => s.ended);
    expect(stream.nexts()[0].errors[0].extensions.code).toBe('RATE_LIMIT_EXCEEDED');
    if (Date.now() > deadline) throw new Error(`no place was free within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the clock reads `at` (unix ms): a key's expiry. */
async function waitUntil(at: number) {
  while (Date.now() < at) await new Promise((resolve) => setTimeout(resolve, Math.min(at - Date.now(), 100) + 1));
}

const ORDER_EVENTS = /* GraphQL */ `subscription { orderEvents { type order { id status supplier { id } } } }`;
const PRODUCT_CHANGED = /* GraphQL */ `subscription($id: ID!) { productChanged(id: $id) { id isActive product { id price stock } price { price } stock { stock } } }`;

async function gql(app: TestApp, query: string, variables: Record<string, unknown>, key: TestKey) {
  const res = await app.get('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key.key },
    body: JSON.stringify({ query, variables }),
  });
  return res.body;
}

describe('orderEvents', () => {
  it('an order created on one instance is heard on another within 1 s by its buyer and its supplier’s member, never by another account', async () => {
    const [mine, theirs, clerk] = await Promise.all([subscribe(b, ORDER_EVENTS, {}, buyer), subscribe(b, ORDER_EVENTS, {}, rival), subscribe(b, ORDER_EVENTS, {}, member)]);
    expect(mine.status).toBe(200);
    expect(mine.contentType).toContain('text/event-stream');

    const created = await gql(a, `mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }`, { input: workedExample(f) }, buyer);
    const committedAt = Date.now();
    const orderId = created.data.createOrder.id as string;
    await mine.until('the buyer hears the order', (s) => s.nexts().some((d) => d.data?.orderEvents?.order?.id === orderId), 1000);
    await clerk.until('the member hears the order', (s) => s.nexts().some((d) => d.data?.orderEvents?.order?.id === orderId), 1000);
    const heard = mine.events.find((e) => e.data?.data?.orderEvents?.order?.id === orderId)!;
    expect(heard.at - committedAt).toBeLessThan(1000);
    expect(heard.data).toEqual({ data: { orderEvents: { type: 'CREATED', order: { id: orderId, status: 'PENDING', supplier: { id: f.supplierId } } } } });

    // A cancellation made by plain SQL is heard too, with its type.
    await a.sql.query(`UPDATE "Order" SET status = 'CANCELLED' WHERE id = $1`, [orderId]);
    await mine.until('the buyer hears the cancellation', (s) => s.nexts().some((d) => d.data?.orderEvents?.type === 'CANCELLED'), 1000);
    expect(mine.nexts().at(-1)).toEqual({ data: { orderEvents: { type: 'CANCELLED', order: { id: orderId, status: 'CANCELLED', supplier: { id: f.supplierId } } } } });

    // Another account heard nothing of either (no event tells that: waited out).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(theirs.nexts()).toEqual([]);
    expect(theirs.ended).toBe(false);
    for (const s of [mine, theirs, clerk]) s.close();
  });

  it('anonymous is refused with UNAUTHORIZED, a key without read:orders with FORBIDDEN', async () => {
    const anonymous = await subscribe(b, ORDER_EVENTS);
    await anonymous.until('the refusal', (s) => s.ended);
    expect(anonymous.nexts()[0].errors[0].extensions.code).toBe('UNAUTHORIZED');
    expect(anonymous.events.at(-1)!.event).toBe('complete');

    const unscoped = await subscribe(b, ORDER_EVENTS, {}, catalogue);
    await unscoped.until('the refusal', (s) => s.ended);
    expect(unscoped.nexts()[0].errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: ['read:orders'] } });
  });

  it("a revoked key's stream ends within 2 s, saying why", async () => {
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'] });
    const stream = await subscribe(b, ORDER_EVENTS, {}, key);
    expect(stream.ended).toBe(false);
    const revokedAt = Date.now();
    await a.sql.query(`UPDATE "ApiKey" SET "revokedAt" = now() WHERE id = $1`, [key.id]);
    await stream.until('the stream ends', (s) => s.ended, 2000);
    expect(stream.endedAt - revokedAt).toBeLessThan(2000);
    expect(stream.nexts().at(-1).errors[0].extensions.code).toBe('UNAUTHORIZED');
    expect(stream.events.at(-1)!.event).toBe('complete');
  });

  it("a key that expires while its streams are open: each instance's stream ends within 2 s of the expiry, and hears nothing written after it", async () => {
    // An order of the buyer's, and a second key of the same account whose streams hear it throughout.
    const created = await gql(a, `mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }`, { input: workedExample(f) }, buyer);
    const orderId = created.data.createOrder.id as string;
    const steady = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'] });
    const expiresAt = new Date(Date.now() + 4000);
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'], expiresAt });
    const expiring = await Promise.all([subscribe(a, ORDER_EVENTS, {}, key), subscribe(b, ORDER_EVENTS, {}, key)]);
    const controls = await Promise.all([subscribe(a, ORDER_EVENTS, {}, steady), subscribe(b, ORDER_EVENTS, {}, steady)]);
    const heard = (s: Stream, type: string) => s.nexts().some((d) => d.data?.orderEvents?.order?.id === orderId && d.data.orderEvents.type === type);

    // Before the expiry the key's streams hear the order's events.
    await a.sql.query(`UPDATE "Order" SET status = 'CONFIRMED' WHERE id = $1`, [orderId]);
    for (const s of expiring) await s.until('heard before the expiry', (x) => heard(x, 'STATUS_CHANGED'), 2000);
    expect(Date.now()).toBeLessThan(expiresAt.getTime());

    // Once it has passed, a write at once: the other key's streams hear it, this key's do not.
    await waitUntil(expiresAt.getTime());
    await a.sql.query(`UPDATE "Order" SET status = 'CANCELLED' WHERE id = $1`, [orderId]);
    for (const s of controls) await s.until('the other key hears the write', (x) => heard(x, 'CANCELLED'), 2000);
    for (const s of expiring) {
      await s.until('the stream ends', (x) => x.ended, 5000);
      expect(s.endedAt).toBeGreaterThanOrEqual(expiresAt.getTime());
      expect(s.endedAt - expiresAt.getTime()).toBeLessThan(2000);
      expect(heard(s, 'CANCELLED')).toBe(false);
      expect(s.nexts().at(-1).errors[0].extensions.code).toBe('UNAUTHORIZED');
      expect(s.events.at(-1)!.event).toBe('complete');
    }
    expect((await a.get('/api/orders', { headers: { 'x-api-key': key.key } })).status).toBe(401);
    for (const s of controls) s.close();
    // Its places were given back with its streams.
    await eventually('the places are given back', () => placesOf(key), (n) => n === 0, 5000);
  });

  it('an expiry moved later while the streams are open is followed on every instance: they outlive the old one and end at the new one', async () => {
    const first = new Date(Date.now() + 3000);
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'], expiresAt: first });
    const streams = await Promise.all([subscribe(a, ORDER_EVENTS, {}, key), subscribe(b, ORDER_EVENTS, {}, key)]);
    const { rows } = await a.sql.query<{ expiresAt: Date }>(`UPDATE "ApiKey" SET "expiresAt" = "expiresAt" + interval '3 seconds' WHERE id = $1 RETURNING "expiresAt"`, [key.id]);
    const moved = rows[0]!.expiresAt.getTime();
    expect(Date.now()).toBeLessThan(first.getTime());
    await waitUntil(first.getTime() + 1000);
    expect(streams.map((s) => s.ended)).toEqual([false, false]);
    for (const s of streams) {
      await s.until('the stream ends', (x) => x.ended, moved + 5000 - Date.now());
      expect(s.endedAt).toBeGreaterThanOrEqual(moved);
      expect(s.endedAt - moved).toBeLessThan(2000);
      expect(s.nexts().at(-1).errors[0].extensions.code).toBe('UNAUTHORIZED');
    }
  });

  it("a key whose scopes change has its stream ended too; a member removed from the supplier hears that supplier's orders no more", async () => {
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'] });
    const stream = await subscribe(b, ORDER_EVENTS, {}, key);
    await a.sql.query(`UPDATE "ApiKey" SET scopes = ARRAY['read:orders', 'read:stock'] WHERE id = $1`, [key.id]);
    await stream.until('the stream ends', (s) => s.ended, 2000);
    expect(stream.nexts().at(-1).errors[0].extensions.code).toBe('UNAUTHORIZED');

    const clerk = await createTestKey(db.url, { owner: 'live-clerk-2@supplier.example', scopes: ['read:orders'] });
    await a.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [clerk.accountId, f.supplierId]);
    const [clerkStream, buyerStream] = await Promise.all([subscribe(b, ORDER_EVENTS, {}, clerk), subscribe(b, ORDER_EVENTS, {}, buyer)]);
    await a.sql.query(`DELETE FROM "SupplierMember" WHERE "accountId" = $1`, [clerk.accountId]);
    const created = await gql(a, `mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }`, { input: workedExample(f) }, buyer);
    await buyerStream.until('the buyer hears the order', (s) => s.nexts().some((d) => d.data?.orderEvents?.order?.id === created.data.createOrder.id), 1000);
    // The removed member hears nothing of it (no event tells that: waited out).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(clerkStream.nexts()).toEqual([]);
    clerkStream.close();
    buyerStream.close();
  });

  it('a key has at most SUBSCRIPTIONS_PER_KEY open streams across both instances: one more is refused on either, and closing one on one frees a place on the other', async () => {
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'] });
    const open = [await subscribe(a, ORDER_EVENTS, {}, key), await subscribe(a, ORDER_EVENTS, {}, key), await subscribe(b, ORDER_EVENTS, {}, key)];
    expect(open.map((s) => s.ended)).toEqual([false, false, false]);
    expect(await placesOf(key)).toBe(PER_KEY);

    for (const app of [a, b]) {
      const refused = await subscribe(app, ORDER_EVENTS, {}, key);
      await refused.until('the refusal', (s) => s.ended);
      const error = refused.nexts()[0].errors[0];
      expect(error.extensions).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { openSubscriptions: PER_KEY, limit: PER_KEY } });
      expect(error.message).toContain('across all instances');
      expect(error.message).toContain('SUBSCRIPTIONS_PER_KEY');
    }
    expect(open.map((s) => s.ended)).toEqual([false, false, false]);

    // Closed on A (the client goes away): B lets one more in, as soon as A has seen it go.
    open[0]!.close();
    open[0] = await openOnceFree(b, key);
    expect(open[0].ended).toBe(false);
    expect(await placesOf(key)).toBe(PER_KEY);

    // Every place comes back when the streams close: none is left held.
    for (const s of open) s.close();
    await eventually('the places are given back', () => placesOf(key), (n) => n === 0, 5000);
  });

  it('a subscriber that leaves before its answer begins gives its place back all the same', async () => {
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'] });
    // Each request is dropped a little later than the one before: some before the place is
    // claimed, some while it is, some after the stream was made but before it was sent.
    for (let i = 0; i < 20; i++) {
      const abort = new AbortController();
      const sent = fetch(`${b.base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': key.key },
        body: JSON.stringify({ query: ORDER_EVENTS }),
        signal: abort.signal,
      });
      setTimeout(() => abort.abort(), i * 2);
      await sent.then((res) => res.body?.cancel()).catch(() => undefined);
    }
    await eventually('every place is given back', () => placesOf(key), (n) => n === 0, 5000);
    const stream = await subscribe(a, ORDER_EVENTS, {}, key);
    expect(stream.ended).toBe(false);
    stream.close();
  });

  it('a race of parallel opens on both instances lets exactly SUBSCRIPTIONS_PER_KEY in', async () => {
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'] });
    const streams = await Promise.all(Array.from({ length: 12 }, (_, i) => subscribe(i % 2 ? a : b, ORDER_EVENTS, {}, key)));
    const refused = streams.filter((s) => s.nexts()[0]?.errors?.[0]?.extensions?.code === 'RATE_LIMIT_EXCEEDED');
    const admitted = streams.filter((s) => !s.ended && s.events.length === 0);
    expect([admitted.length, refused.length]).toEqual([PER_KEY, 12 - PER_KEY]);
    expect(await placesOf(key)).toBe(PER_KEY);
    for (const s of streams) s.close();
  });

  it("an instance that died without closing its streams holds their places only until their lease runs out", async () => {
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'] });
    // What a killed instance leaves: rows it no longer renews, their lease a second or two ahead.
    const { rows } = await a.sql.query<{ leaseUntil: Date }>(
      `INSERT INTO "LiveStream" (id, "keyId", holder, instance, "leaseUntil")
       SELECT 'dead-' || g || '-' || $1, $1, $1, 'a-killed-instance', now() + interval '2 seconds' FROM generate_series(1, $2::int) g RETURNING "leaseUntil"`,
      [key.id, PER_KEY],
    );
    const refused = await subscribe(b, ORDER_EVENTS, {}, key);
    await refused.until('the refusal', (s) => s.ended);
    expect(refused.nexts()[0].errors[0].extensions.code).toBe('RATE_LIMIT_EXCEEDED');

    const stream = await openOnceFree(a, key, 10_000);
    expect(Date.now()).toBeGreaterThanOrEqual(rows[0]!.leaseUntil.getTime());
    expect(stream.ended).toBe(false);
    // The lapsed rows are gone, deleted by the claim that found them.
    expect((await a.sql.query(`SELECT id FROM "LiveStream" WHERE "keyId" = $1 AND instance = 'a-killed-instance'`, [key.id])).rowCount).toBe(0);
    stream.close();
  });

  it("an open stream's place is renewed while it is open; a stream whose lease ran out has lost its place and ends", async () => {
    const [kept, lapsing] = await Promise.all([1, 2].map(() => createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'] })));
    const [stream, lapsed] = await Promise.all([subscribe(a, ORDER_EVENTS, {}, kept!), subscribe(a, ORDER_EVENTS, {}, lapsing!)]);
    const leaseOf = async () => (await a.sql.query<{ leaseUntil: Date }>(`SELECT "leaseUntil" FROM "LiveStream" WHERE "keyId" = $1`, [kept!.id])).rows.map((r) => r.leaseUntil.getTime());
    const [first] = await leaseOf();
    // What a long outage of the database leaves: the lease passed, so another stream may hold the
    // place now. The next renewal finds it gone and ends the stream, without blaming the key.
    await a.sql.query(`UPDATE "LiveStream" SET "leaseUntil" = now() - interval '1 second' WHERE "keyId" = $1`, [lapsing!.id]);

    await eventually('the lease is renewed', leaseOf, (leases) => leases.length === 1 && leases[0]! > first!, 15_000, 250);
    expect(stream.ended).toBe(false);
    await lapsed.until('the stream whose lease ran out ends', (s) => s.ended, 15_000);
    expect(lapsed.nexts()).toEqual([]);
    expect(lapsed.events.at(-1)!.event).toBe('complete');
    expect(await placesOf(lapsing!)).toBe(0);
    stream.close();
  });

  it('a quiet stream carries heartbeats', async () => {
    const stream = await subscribe(b, ORDER_EVENTS, {}, rival);
    const before = stream.heartbeats;
    await stream.until('a heartbeat', (s) => s.heartbeats > before, 15_000);
    expect(stream.nexts()).toEqual([]);
    stream.close();
  });

  it('a subscription goes through the same document limits as a query', async () => {
    const deep = await subscribe(b, `subscription { orderEvents { order { items { product { supplier { products { items { category { parent { parent { parent { id } } } } } } } } } } } }`, {}, buyer);
    await deep.until('the refusal', (s) => s.ended);
    expect(deep.nexts()[0].errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(deep.nexts()[0].errors[0].message).toMatch(/depth/i);
  });
});

describe('productChanged', () => {
  it('a price written through the API on one instance is heard on another, with price and stock behind their own scopes', async () => {
    const product = f.a;
    const [plain, scoped] = await Promise.all([
      subscribe(b, PRODUCT_CHANGED, { id: product.id }, catalogue),
      subscribe(b, PRODUCT_CHANGED, { id: product.id }, cataloguePrices),
    ]);
    const written = await gql(a, `mutation($id: ID!) { updatePrice(productId: $id, input: { price: "23.45" }) { price } }`, { id: product.id }, writer);
    expect(written.errors).toBeUndefined();
    await plain.until('the change', (s) => s.nexts().length > 0, 1000);
    await scoped.until('the change', (s) => s.nexts().length > 0, 1000);

    const seen = plain.nexts()[0];
    expect(seen.data.productChanged).toMatchObject({ id: product.id, isActive: true, product: { id: product.id, price: 23.45 }, price: null, stock: null });
    expect(seen.errors.map((e: any) => e.extensions.details.requiredScopes).sort()).toEqual([['read:prices'], ['read:stock']]);
    const full = scoped.nexts()[0];
    expect(full.errors).toBeUndefined();
    const { rows } = await a.sql.query(`SELECT stock FROM "Product" WHERE id = $1`, [product.id]);
    expect(full.data.productChanged).toMatchObject({ price: { price: 23.45 }, stock: { stock: rows[0].stock } });

    // Plain SQL is heard as well; leaving the catalogue nulls the product, not the event.
    await a.sql.query(`UPDATE "Product" SET "isActive" = false WHERE id = $1`, [product.id]);
    await scoped.until('the deactivation', (s) => s.nexts().length > 1, 1000);
    expect(scoped.nexts()[1].data.productChanged).toMatchObject({ id: product.id, isActive: false, product: null });
    await a.sql.query(`UPDATE "Product" SET "isActive" = true WHERE id = $1`, [product.id]);
    plain.close();
    scoped.close();
  });

  it('needs read:products; a bad or unknown id is refused', async () => {
    const unscoped = await subscribe(b, PRODUCT_CHANGED, { id: f.a.id }, buyer);
    await unscoped.until('the refusal', (s) => s.ended);
    expect(unscoped.nexts()[0].errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: ['read:products'] } });
    const unknown = await subscribe(b, PRODUCT_CHANGED, { id: 'cnosuchproduct000000000000' }, catalogue);
    await unknown.until('the refusal', (s) => s.ended);
    expect(unknown.nexts()[0].errors[0].extensions.code).toBe('NOT_FOUND');
    const bad = await subscribe(b, PRODUCT_CHANGED, { id: 'not an id' }, catalogue);
    await bad.until('the refusal', (s) => s.ended);
    expect(bad.nexts()[0].errors[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { id: expect.any(String) } });
  });

  it('GET with ?query= streams too, and the same document subscribed again is live again (never answered from the response cache)', async () => {
    const product = f.b;
    const url = `/graphql?query=${encodeURIComponent(PRODUCT_CHANGED)}&variables=${encodeURIComponent(JSON.stringify({ id: product.id }))}`;
    for (const round of [1, 2]) {
      const abort = new AbortController();
      const res = await fetch(b.base + url, { headers: { accept: 'text/event-stream', 'x-api-key': cataloguePrices.key }, signal: abort.signal });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      const stream = new Stream(res.status, res.headers.get('content-type') ?? '', res.body!, abort);
      await stream.until('the stream opens', (s) => s.heartbeats > 0);
      await a.sql.query(`UPDATE "Product" SET stock = $2 WHERE id = $1`, [product.id, 500 + round]);
      await stream.until('the change', (s) => s.nexts().length > 0, 1000);
      expect(stream.nexts()[0].data.productChanged.stock).toEqual({ stock: 500 + round });
      stream.close();
    }
  });
});

describe('shutdown', () => {
  it('open streams complete cleanly when the app is disposed of, and their places are given back', async () => {
    const own = await startTestApp({ url: db.url });
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'] });
    const abort = new AbortController();
    const res = await own.fetchInProcess('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': key.key },
      body: JSON.stringify({ query: ORDER_EVENTS }),
      signal: abort.signal,
    });
    const stream = new Stream(res.status, res.headers.get('content-type') ?? '', res.body!, abort);
    await stream.until('the stream opens', (s) => s.heartbeats > 0);
    expect(await placesOf(key)).toBe(1);
    await own.close();
    await stream.until('the stream completes', (s) => s.ended, 3000);
    expect(stream.events.at(-1)!.event).toBe('complete');
    expect(await placesOf(key)).toBe(0);
  });
});
