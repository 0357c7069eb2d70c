import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, type PrismaClient } from '../src/db/prisma.js';
import { pruneOutbox } from '../src/background/webhook-worker.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { killGroup, listeningPort, npmStart, type Service } from './helpers/npm-start.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { freePort, startReceiver, type Received, type Receiver } from './helpers/receiver.js';

// Webhooks as an integrator meets them: endpoints registered over REST, events caused by real
// orders and stock changes, delivered over real HTTP to a receiver on this machine, signed per
// Standard Webhooks and checked with the `standardwebhooks` package, retried, and never lost.

const SHIP_TO = { fullName: 'Ana Pop', phone: '0700000000', address: 'Str. 1', city: 'Cluj-Napoca', county: 'Cluj', postalCode: '400001' };
const RETRIES = '0.3,0.3,0.3,0.3,0.3,0.3';
// Orders are placed by the dozen here: the per-account order limit is not the subject.
const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: RETRIES, ORDER_CREATE_LIMIT: '1000' };

/** Log lines the app writes, as objects. */
const logLines: Record<string, unknown>[] = [];
const logger = pino(
  { level: 'info' },
  new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  }),
);

let app: TestApp;
let prisma: PrismaClient;
let f: OrderFixture;
let buyer: TestKey;
let member: TestKey;
let outsider: TestKey;
const receivers: Receiver[] = [];

async function receiver(port?: number) {
  const r = await startReceiver(port);
  receivers.push(r);
  return r;
}

beforeAll(async () => {
  app = await startTestApp({ env: { ...ENV, WEBHOOK_TIMEOUT_SECONDS: '1' }, logger });
  f = await makeOrderFixture(app.sql);
  prisma = createPrisma({ url: app.url, poolMax: 1 });
  buyer = await createTestKey(app.url, { owner: 'hooks-buyer@example.com', scopes: ['read:orders', 'write:orders', 'read:stock', 'write:webhooks'] });
  member = await createTestKey(app.url, { owner: 'hooks-clerk@supplier.example', scopes: ['read:orders', 'write:orders', 'read:stock', 'write:products', 'write:webhooks'] });
  outsider = await createTestKey(app.url, { owner: 'hooks-outsider@example.com', scopes: ['read:orders', 'write:webhooks'] });
  await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [member.accountId, f.supplierId]);
});

afterEach(async () => {
  // Each test starts without endpoints, so that no event of one reaches another's receiver.
  await app.sql.query(`DELETE FROM "WebhookEndpoint"`);
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

afterAll(async () => {
  await prisma?.$disconnect();
  await app?.close();
});

const send = (method: string, path: string, key: TestKey | null, body?: unknown) =>
  app.get(path, {
    method,
    headers: { ...(key ? { 'x-api-key': key.key } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function register(key: TestKey, url: string, events: string[] = ['order.created', 'order.status_changed']) {
  const res = await send('POST', '/api/webhooks', key, { url, events, description: 'test receiver' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { id: string; secret: string };
}

async function placeOrder(key = buyer, quantity = 1, productId = f.a.id) {
  const res = await send('POST', '/api/orders', key, { supplierId: f.supplierId, items: [{ productId, quantity }], shippingAddress: SHIP_TO });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { id: string; status: string };
}

const deliveriesOf = async (key: TestKey, endpointId: string) => (await send('GET', `/api/webhooks/${endpointId}/deliveries?limit=100`, key)).body.data as any[];

/**
 * The deliveries written for an endpoint. A change writes its event and a delivery per endpoint
 * that hears it in its own transaction (src/domain/webhooks/outbox.ts), and the worker sends only
 * those: once the change has committed, an endpoint it wrote no delivery for is sent nothing,
 * however long one waits.
 */
const deliveryCount = async (endpointId: string) =>
  (await app.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "WebhookDelivery" WHERE "endpointId" = $1`, [endpointId])).rows[0]!.n;

/**
 * The events `r` received, one request each (by webhook-id): delivery is at least once, and an
 * attempt whose answer came after its 1 s timeout (a loaded machine) is made again.
 */
const eventsAt = (r: Receiver, which: (x: Received) => boolean) => [...new Map(r.received.filter(which).map((x) => [x.headers['webhook-id'], x])).values()];

/** Waits until `r` received `count` events matching `which`; answers them, first sent first. */
const waitForEvents = (r: Receiver, which: (x: Received) => boolean, count: number) =>
  eventually(`${count} events`, async () => eventsAt(r, which), (events) => events.length >= count);

/**
 * The most attempts that were under way at once to these endpoints, by the worker's record of
 * each: from its claim (startedAt) to its outcome (finishedAt), or, not recorded (under way, or
 * its record failed on a loaded machine), to its timeout (WEBHOOK_TIMEOUT_SECONDS, 1 s here).
 * Unlike the times the receivers saw them, it does not depend on how long each took to arrive.
 */
async function mostAttemptsAtOnce(endpointIds: string[]): Promise<number> {
  const { rows } = await app.sql.query<{ startedAt: Date; finishedAt: Date | null }>(
    `SELECT a."startedAt", a."finishedAt" FROM "WebhookAttempt" a JOIN "WebhookDelivery" d ON d.id = a."deliveryId" WHERE d."endpointId" = ANY($1)`,
    [endpointIds],
  );
  const spans = rows.map((a) => ({ from: a.startedAt.getTime(), to: a.finishedAt?.getTime() ?? a.startedAt.getTime() + 1000 }));
  return Math.max(0, ...spans.map((a) => spans.filter((b) => b.from <= a.from && b.to > a.from).length));
}

/** Verifies a received request with the standardwebhooks package, as a receiver would; throws if it fails. */
const verify = (secret: string, r: { body: string; headers: Record<string, unknown> }) =>
  new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string; timestamp: string; data: any };

describe('managing endpoints', () => {
  it('registers an endpoint, shows its secret once, lists it and deletes it', async () => {
    const r = await receiver();
    const created = await send('POST', '/api/webhooks', buyer, { url: r.url, events: ['order.created', 'order.created'], description: '  ERP  ' });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ url: r.url, events: ['order.created'], description: 'ERP', status: 'ACTIVE', disabledAt: null });
    expect(created.body.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = created.body.data.id as string;

    const one = await send('GET', `/api/webhooks/${id}`, buyer);
    expect(one.status).toBe(200);
    expect(one.body.data).not.toHaveProperty('secret');
    expect(JSON.stringify((await send('GET', '/api/webhooks', buyer)).body)).not.toContain(created.body.data.secret);
    expect((await send('GET', '/api/webhooks', buyer)).body.data.map((e: { id: string }) => e.id)).toEqual([id]);

    const deleted = await send('DELETE', `/api/webhooks/${id}`, buyer);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data.id).toBe(id);
    expect((await send('GET', `/api/webhooks/${id}`, buyer)).status).toBe(404);
    expect((await send('DELETE', `/api/webhooks/${id}`, buyer)).status).toBe(404);
  });

  it("treats another account's endpoint exactly like one that does not exist", async () => {
    const { id } = await register(buyer, 'http://127.0.0.1:9/x');
    for (const [method, path] of [
      ['GET', `/api/webhooks/${id}`],
      ['DELETE', `/api/webhooks/${id}`],
      ['POST', `/api/webhooks/${id}/test`],
      ['POST', `/api/webhooks/${id}/enable`],
      ['GET', `/api/webhooks/${id}/deliveries`],
    ] as const) {
      const theirs = await send(method, path, outsider);
      const never = await send(method, path.replace(id, 'cnever00000000000000000000'), outsider);
      expect([theirs.status, theirs.body], `${method} ${path}`).toEqual([404, never.body]);
    }
    expect((await send('GET', '/api/webhooks', outsider)).body.data).toEqual([]);
    expect((await app.sql.query(`SELECT count(*)::int AS n FROM "WebhookEndpoint" WHERE id = $1`, [id])).rows[0].n).toBe(1);
  });

  it('needs write:webhooks, which no read scope implies; admin:all includes it', async () => {
    const reader = await createTestKey(app.url, { owner: 'hooks-buyer@example.com', scopes: ['read:orders', 'read:stock', 'read:products', 'write:orders'] });
    expect((await send('GET', '/api/webhooks', null)).status).toBe(401);
    for (const [method, path] of [
      ['POST', '/api/webhooks'],
      ['GET', '/api/webhooks'],
      ['GET', '/api/webhooks/cnever00000000000000000000'],
      ['DELETE', '/api/webhooks/cnever00000000000000000000'],
      ['POST', '/api/webhooks/cnever00000000000000000000/test'],
      ['POST', '/api/webhooks/cnever00000000000000000000/enable'],
      ['GET', '/api/webhooks/cnever00000000000000000000/deliveries'],
    ] as const) {
      const refused = await send(method, path, reader, method === 'POST' ? { url: 'http://127.0.0.1:9/', events: ['order.created'] } : undefined);
      expect([refused.status, refused.body.error?.details], `${method} ${path}`).toEqual([403, { requiredScopes: ['write:webhooks'] }]);
    }
    const gql = await send('POST', '/graphql', reader, { query: `mutation { createWebhookEndpoint(input: { url: "http://127.0.0.1:9/", events: ["order.created"] }) { id } }` });
    expect(gql.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await app.sql.query(`SELECT count(*)::int AS n FROM "WebhookEndpoint"`)).rows[0].n).toBe(0);

    const admin = await createTestKey(app.url, { owner: 'hooks-buyer@example.com', scopes: ['admin:all'] });
    expect((await send('POST', '/api/webhooks', admin, { url: 'http://127.0.0.1:9/', events: ['order.created'] })).status).toBe(201);
  });

  it('needs the scopes an event type reads: write:webhooks alone registers nothing for orders', async () => {
    const writerOnly = await createTestKey(app.url, { owner: 'hooks-buyer@example.com', scopes: ['write:webhooks'] });
    const res = await send('POST', '/api/webhooks', writerOnly, { url: 'http://127.0.0.1:9/', events: ['order.created'] });
    expect([res.status, res.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(res.body.error.details.events).toMatch(/read:orders/);
  });

  it('refuses bad bodies with the field named, and creates nothing', async () => {
    const cases: [unknown, string][] = [
      [{ url: 'ftp://example.com/x', events: ['order.created'] }, 'url'],
      [{ url: 'not a url', events: ['order.created'] }, 'url'],
      [{ url: 'http://user:pw@127.0.0.1/x', events: ['order.created'] }, 'url'],
      [{ url: 42, events: ['order.created'] }, 'url'],
      [{ url: `http://127.0.0.1/${'a'.repeat(2100)}`, events: ['order.created'] }, 'url'],
      [{ url: 'http://127.0.0.1/x', events: [] }, 'events'],
      [{ url: 'http://127.0.0.1/x', events: ['order.shipped'] }, 'events[0]'],
      [{ url: 'http://127.0.0.1/x', events: 'order.created' }, 'events'],
      [{ url: 'http://127.0.0.1/x' }, 'events'],
      [{ url: 'http://127.0.0.1/x', events: ['order.created'], description: 'x'.repeat(501) }, 'description'],
      [{ url: 'http://127.0.0.1/x', events: ['order.created'], secret: 'whsec_mine' }, 'secret'],
      // stock.low is for accounts acting for a supplier
      [{ url: 'http://127.0.0.1/x', events: ['stock.low'] }, 'events'],
    ];
    for (const [body, field] of cases) {
      const res = await send('POST', '/api/webhooks', buyer, body);
      expect([res.status, res.body.error?.code], JSON.stringify(body).slice(0, 100)).toEqual([400, 'VALIDATION_ERROR']);
      expect(Object.keys(res.body.error.details), JSON.stringify(res.body)).toContain(field);
    }
    const text = await app.get('/api/webhooks', { method: 'POST', headers: { 'x-api-key': buyer.key, 'content-type': 'text/plain' }, body: 'url=x' });
    expect(text.status).toBe(415);
    expect((await app.sql.query(`SELECT count(*)::int AS n FROM "WebhookEndpoint"`)).rows[0].n).toBe(0);
  });

  it("sends stock.low only to what the key could read: a member's key without read:stock is refused it", async () => {
    const clerkNoStock = await createTestKey(app.url, { owner: 'hooks-clerk@supplier.example', scopes: ['read:orders', 'write:webhooks'] });
    const res = await send('POST', '/api/webhooks', clerkNoStock, { url: 'http://127.0.0.1:9/', events: ['stock.low'] });
    expect(res.status).toBe(400);
    expect(res.body.error.details.events).toMatch(/read:stock/);
    expect((await send('POST', '/api/webhooks', member, { url: 'http://127.0.0.1:9/', events: ['stock.low'] })).status).toBe(201);
  });

  it('keeps an account to 10 endpoints, even when it registers them all at once', async () => {
    const results = await Promise.all(Array.from({ length: 14 }, (_, i) => send('POST', '/api/webhooks', outsider, { url: `http://127.0.0.1:9/${i}`, events: ['order.created'] })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused.map((r) => [r.status, r.body.error.code])).toEqual(Array(4).fill([409, 'CONFLICT']));
    expect(refused[0]!.body.error.details).toEqual({ limit: 10 });
    expect((await send('GET', '/api/webhooks', outsider)).body.data).toHaveLength(10);
  });
});

describe('ownership: an endpoint is its key’s', () => {
  /** An endpoint of the account's own (as the dashboard makes it: no key), written as the dashboard would. */
  async function accountEndpoint(accountId: string, url: string) {
    const id = `cacct${Math.random().toString(36).slice(2, 12)}`;
    await app.sql.query(`INSERT INTO "WebhookEndpoint" (id, "accountId", url, events, secret) VALUES ($1, $2, $3, ARRAY['order.created', 'order.status_changed'], 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`, [
      id,
      accountId,
      url,
    ]);
    return id;
  }

  it('lets a key manage only the endpoints it registered: another key of the same account, and the account’s own, are absent to it', async () => {
    const sibling = await createTestKey(app.url, { owner: 'hooks-buyer@example.com', scopes: ['read:orders', 'write:webhooks'] });
    const { id } = await register(buyer, 'http://127.0.0.1:9/mine');
    const accounts = await accountEndpoint(buyer.accountId, 'http://127.0.0.1:9/dashboard-made');
    expect((await send('GET', '/api/webhooks', sibling)).body.data).toEqual([]);
    expect((await send('GET', '/api/webhooks', buyer)).body.data.map((e: { id: string }) => e.id)).toEqual([id]);
    for (const target of [id, accounts]) {
      for (const [method, path] of [
        ['GET', `/api/webhooks/${target}`],
        ['DELETE', `/api/webhooks/${target}`],
        ['POST', `/api/webhooks/${target}/test`],
        ['POST', `/api/webhooks/${target}/enable`],
        ['GET', `/api/webhooks/${target}/deliveries`],
      ] as const) {
        expect((await send(method, path, target === id ? sibling : buyer)).status, `${method} ${path}`).toBe(404);
      }
    }
    expect((await app.sql.query(`SELECT count(*)::int AS n FROM "WebhookEndpoint" WHERE id = ANY($1)`, [[id, accounts]])).rows[0].n).toBe(2);
    expect((await app.sql.query(`SELECT "keyId" FROM "WebhookEndpoint" WHERE id = $1`, [id])).rows[0].keyId).toBe(buyer.id);
  });

  it('sends nothing more to a revoked key’s endpoints, from the moment of revocation, by any means; the account’s own endpoint still hears', async () => {
    const doomed = await createTestKey(app.url, { owner: 'hooks-buyer@example.com', scopes: ['read:orders', 'write:webhooks'] });
    const keyReceiver = await receiver();
    const accountReceiver = await receiver();
    const hook = await register(doomed, keyReceiver.url, ['order.created']);
    await accountEndpoint(buyer.accountId, accountReceiver.url);
    await placeOrder();
    await keyReceiver.waitFor((r) => r.json?.type === 'order.created');
    await accountReceiver.waitFor((r) => r.json?.type === 'order.created');

    // Revoked as an operator at psql would: no service is told, the database alone knows.
    await app.sql.query(`UPDATE "ApiKey" SET "revokedAt" = now() WHERE id = $1`, [doomed.id]);
    await placeOrder();
    await accountReceiver.waitFor((r) => r.json?.type === 'order.created', 2);
    expect(await deliveryCount(hook.id)).toBe(1);
    expect(eventsAt(keyReceiver, () => true)).toHaveLength(1);
  });

  it('fails, unsent, what waited for an endpoint when its key is revoked, and hears nothing once its key expires', async () => {
    const port = await freePort();
    const doomed = await createTestKey(app.url, { owner: 'hooks-buyer@example.com', scopes: ['read:orders', 'write:webhooks'] });
    const expiring = await createTestKey(app.url, { owner: 'hooks-buyer@example.com', scopes: ['read:orders', 'write:webhooks'] });
    // Down when the order is placed: its delivery waits for a retry.
    const waiting = await register(doomed, `http://127.0.0.1:${port}/down`, ['order.created']);
    await placeOrder();
    await eventually('a failed first attempt', () => deliveriesOf(doomed, waiting.id), (d) => d[0]?.attempts >= 1);
    await app.sql.query(`UPDATE "ApiKey" SET "revokedAt" = now() WHERE id = $1`, [doomed.id]);
    const up = await receiver(port);
    const [row] = (
      await eventually(
        'the waiting delivery failed',
        () => app.sql.query(`SELECT status, "lastError" FROM "WebhookDelivery" WHERE "endpointId" = $1`, [waiting.id]),
        (r) => r.rows[0]?.status === 'FAILED',
        3000,
      )
    ).rows;
    expect(row.lastError).toMatch(/key that registered this endpoint was revoked or has expired/);

    const later = await receiver();
    const laterHook = await register(expiring, later.url, ['order.created']);
    await app.sql.query(`UPDATE "ApiKey" SET "expiresAt" = now() - interval '1 second' WHERE id = $1`, [expiring.id]);
    await placeOrder();
    expect(await deliveryCount(laterHook.id)).toBe(0);
    expect(await deliveryCount(waiting.id)).toBe(1);
    expect(up.received).toHaveLength(0);
    expect(later.received).toHaveLength(0);
  });

  it('sends an endpoint only what its key may read: admin:all hears orders, and a key’s scopes are read when the event happens', async () => {
    const admin = await createTestKey(app.url, { owner: 'hooks-buyer@example.com', scopes: ['admin:all'] });
    const narrowed = await createTestKey(app.url, { owner: 'hooks-buyer@example.com', scopes: ['read:orders', 'write:webhooks'] });
    const adminReceiver = await receiver();
    const narrowedReceiver = await receiver();
    await register(admin, adminReceiver.url, ['order.created']);
    const narrowedHook = await register(narrowed, narrowedReceiver.url, ['order.created']);
    // The operator takes read:orders away after registration (psql): the endpoint is not sent orders.
    await app.sql.query(`UPDATE "ApiKey" SET scopes = ARRAY['write:webhooks'] WHERE id = $1`, [narrowed.id]);
    await placeOrder();
    await adminReceiver.waitFor((r) => r.json?.type === 'order.created');
    expect(await deliveryCount(narrowedHook.id)).toBe(0);
    expect(narrowedReceiver.received).toHaveLength(0);
  });
});

describe('delivering events', () => {
  it('delivers order.created within 2 s, signed, with the REST representation of the order, to the buyer and the supplier’s members', async () => {
    const buyerReceiver = await receiver();
    const memberReceiver = await receiver();
    const buyerHook = await register(buyer, buyerReceiver.url);
    const memberHook = await register(member, memberReceiver.url);
    const outsiderHook = await register(outsider, (await receiver()).url);

    const order = await placeOrder();
    const placedAt = Date.now();
    const [atBuyer] = await buyerReceiver.waitFor((r) => r.json?.type === 'order.created', 1, 2000);
    const [atMember] = await memberReceiver.waitFor((r) => r.json?.type === 'order.created', 1, 2000);
    expect(atBuyer!.at - placedAt).toBeLessThan(2000);

    const payload = verify(buyerHook.secret, atBuyer!);
    expect(Object.keys(payload).sort()).toEqual(['data', 'timestamp', 'type']);
    expect(payload.type).toBe('order.created');
    expect(new Date(payload.timestamp).getTime()).toBeLessThanOrEqual(Date.now());
    const rest = await send('GET', `/api/orders/${order.id}`, buyer);
    expect(payload.data).toEqual(rest.body.data);
    expect(verify(memberHook.secret, atMember!).data).toEqual(rest.body.data);
    // Each endpoint signs with its own secret.
    expect(() => verify(memberHook.secret, atBuyer!)).toThrow();
    expect(atBuyer!.headers['webhook-id']).toBe(atMember!.headers['webhook-id']);
    expect(atBuyer!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(atBuyer!.headers['content-type']).toBe('application/json');

    // The outsider neither placed nor supplies the order.
    expect((await deliveriesOf(outsider, outsiderHook.id)).length).toBe(0);
    // The receiver has the request before the worker has its answer, and records the outcome after.
    const log = await eventually('the delivery recorded', () => deliveriesOf(buyer, buyerHook.id), (d) => d[0]?.status === 'DELIVERED');
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ status: 'DELIVERED', attempts: 1, lastStatus: 204, nextRetryAt: null, event: { type: 'order.created', id: atBuyer!.headers['webhook-id'] } });
  });

  it('tells every status change, with from, to and actor, in the order it happened', async () => {
    const buyerReceiver = await receiver();
    const buyerHook = await register(buyer, buyerReceiver.url, ['order.status_changed']);
    const order = await placeOrder();
    const move = (status: string, extra: object = {}) => send('POST', `/api/supplier/orders/${order.id}/status`, member, { status, ...extra });
    expect((await move('CONFIRMED')).status).toBe(200);
    expect((await move('PROCESSING')).status).toBe(200);
    expect((await move('SHIPPED', { trackingNumber: 'AWB1', trackingCarrier: 'Cargus' })).status).toBe(200);
    // A refused move tells nothing.
    expect((await move('PENDING')).status).toBe(409);
    const statusChanged = (r: Received) => r.json?.type === 'order.status_changed';
    const got = await waitForEvents(buyerReceiver, statusChanged, 3);
    const changes = got.map((r) => verify(buyerHook.secret, r).data).sort((a, b) => a.history.length - b.history.length);
    expect(changes.map((d) => [d.from, d.to, d.actor, d.status])).toEqual([
      ['PENDING', 'CONFIRMED', 'supplier', 'CONFIRMED'],
      ['CONFIRMED', 'PROCESSING', 'supplier', 'PROCESSING'],
      ['PROCESSING', 'SHIPPED', 'supplier', 'SHIPPED'],
    ]);
    expect(changes[2].trackingNumber).toBe('AWB1');
    expect(await deliveryCount(buyerHook.id)).toBe(3);
    expect(eventsAt(buyerReceiver, statusChanged)).toHaveLength(3);
    expect(buyerReceiver.received.some((r) => r.json?.type === 'order.created')).toBe(false);

    // The buyer cancels another: actor buyer.
    const second = await placeOrder();
    expect((await send('POST', `/api/orders/${second.id}/cancel`, buyer, { reason: 'changed my mind' })).status).toBe(200);
    const [cancelled] = await buyerReceiver.waitFor((r) => r.json?.data?.id === second.id);
    expect(verify(buyerHook.secret, cancelled!).data).toMatchObject({ from: 'PENDING', to: 'CANCELLED', actor: 'buyer', status: 'CANCELLED' });
  });

  it('writes no event for a change that did not happen', async () => {
    const r = await receiver();
    await register(buyer, r.url);
    const before = (await app.sql.query(`SELECT count(*)::int AS n FROM "WebhookEvent"`)).rows[0].n;
    const tooMany = await send('POST', '/api/orders', buyer, { supplierId: f.supplierId, items: [{ productId: f.e.id, quantity: 1_000_000 }], shippingAddress: SHIP_TO });
    expect(tooMany.status).toBe(409);
    const invalid = await send('POST', '/api/orders', buyer, { supplierId: f.supplierId, items: [{ productId: f.inactive.id, quantity: 1 }], shippingAddress: SHIP_TO });
    expect(invalid.status).toBe(400);
    expect((await app.sql.query(`SELECT count(*)::int AS n FROM "WebhookEvent"`)).rows[0].n).toBe(before);
  });

  it('retries a receiver that answers 500 twice; the third attempt succeeds and the log shows all three', async () => {
    const r = await receiver();
    r.answer = (_req, n) => (n <= 2 ? { status: 500, body: 'busy' } : { status: 200, body: 'ok' });
    const hook = await register(buyer, r.url);
    await placeOrder();
    const got = await r.waitFor(() => true, 3, 10_000);
    expect(new Set(got.map((x) => x.headers['webhook-id'])).size).toBe(1);
    const [delivery] = await eventually('the delivery', () => deliveriesOf(buyer, hook.id), (d) => d[0]?.status === 'DELIVERED');
    expect(delivery).toMatchObject({ attempts: 3, lastStatus: 200, lastError: null, nextRetryAt: null });
    expect(delivery.attemptLog.map((a: any) => [a.number, a.outcome, a.statusCode, a.responseBody])).toEqual([
      [1, 'http_error', 500, 'busy'],
      [2, 'http_error', 500, 'busy'],
      [3, 'success', 200, 'ok'],
    ]);
    // The failed attempts were logged, one line each, without the secret or the URL's path.
    const failed = logLines.filter((l) => l.msg === 'webhook delivery attempt failed' && (l.webhook as { deliveryId: string }).deliveryId === delivery.id);
    expect(failed).toHaveLength(2);
    expect(JSON.stringify(failed)).not.toContain(hook.secret.slice(6));
    expect(JSON.stringify(failed)).not.toContain('/hooks');
  });

  it('delivers to a receiver that was down when the event happened, once it is up', async () => {
    const port = await freePort();
    const hook = await register(buyer, `http://127.0.0.1:${port}/hooks`);
    await placeOrder();
    await eventually('a refused attempt', () => deliveriesOf(buyer, hook.id), (d) => d[0]?.attemptLog.some((a: any) => a.outcome === 'connection_error'));
    const r = await receiver(port);
    await r.waitFor((x) => x.json?.type === 'order.created', 1, 10_000);
    const [delivery] = await eventually('delivered', () => deliveriesOf(buyer, hook.id), (d) => d[0]?.status === 'DELIVERED');
    expect(delivery.attempts).toBeGreaterThan(1);
    expect(delivery.attemptLog[0]).toMatchObject({ outcome: 'connection_error', statusCode: null });
  });

  it('gives up on a hanging receiver after the timeout and tries again', async () => {
    const r = await receiver();
    r.answer = (_req, n) => (n === 1 ? 'hang' : { status: 202 });
    const hook = await register(buyer, r.url);
    await placeOrder();
    const [delivery] = await eventually('delivered', () => deliveriesOf(buyer, hook.id), (d) => d[0]?.status === 'DELIVERED');
    expect(delivery.attemptLog[0]).toMatchObject({ outcome: 'timeout', statusCode: null });
    expect(delivery.attemptLog[0].durationMs).toBeGreaterThanOrEqual(900);
  });

  it('lets no hanging receiver hold back the events of another endpoint', async () => {
    const stuck = await receiver();
    stuck.answer = () => 'hang';
    const stuckHook = await register(outsider, stuck.url, ['order.created']);
    // More events for the hanging receiver than a worker sends at once, all due before the order's.
    await Promise.all(Array.from({ length: 20 }, () => send('POST', `/api/webhooks/${stuckHook.id}/test`, outsider)));
    await stuck.waitFor(() => true);
    const r = await receiver();
    await register(buyer, r.url, ['order.created']);
    await placeOrder();
    const placedAt = Date.now();
    const [got] = await r.waitFor(() => true, 1, 3000);
    // Stuck behind the hanging receiver it would wait for whole timeouts (1 s each): 1.9 s when measured.
    expect(got!.at - placedAt).toBeLessThan(1000);
    // One attempt at a time to the hanging receiver, not a worker's every slot.
    expect(await mostAttemptsAtOnce([stuckHook.id])).toBe(1);
  });

  it('is fair across accounts: ten hanging receivers of one account and thirty test sends hold back no other account', async () => {
    // The hostile report: another account's order event waited 28.5 s behind these (1 ms before).
    const stuck = await Promise.all(Array.from({ length: 10 }, () => receiver()));
    for (const r of stuck) r.answer = () => 'hang';
    const hooks: { id: string }[] = [];
    for (const r of stuck) hooks.push(await register(outsider, r.url, ['order.created']));
    await Promise.all(Array.from({ length: 30 }, (_, i) => send('POST', `/api/webhooks/${hooks[i % hooks.length]!.id}/test`, outsider)));
    await stuck[0]!.waitFor(() => true, 1, 3000).catch(() => undefined);
    const r = await receiver();
    await register(buyer, r.url, ['order.created']);
    await placeOrder();
    const placedAt = Date.now();
    const [got] = await r.waitFor(() => true, 1, 3000);
    expect(got!.at - placedAt).toBeLessThan(2000);
    // One account holds at most 2 of the worker's 8 slots: never more than 2 attempts to the ten
    // receivers under way at once, however many of its deliveries were due.
    expect(await mostAttemptsAtOnce(hooks.map((h) => h.id))).toBeLessThanOrEqual(2);
  });

  it('pauses an endpoint that keeps timing out (circuit breaker), and an answer closes it again', async () => {
    const r = await receiver();
    r.answer = () => 'hang';
    const hook = await register(outsider, r.url, ['order.created']);
    for (let i = 0; i < 5; i++) await send('POST', `/api/webhooks/${hook.id}/test`, outsider);
    // Three timeouts in a row (1 s each, one at a time to the endpoint) trip the breaker...
    await r.waitFor(() => true, 3, 8000);
    const [paused] = await eventually(
      'paused',
      async () => (await app.sql.query<{ timeoutStreak: number; paused: boolean }>(`SELECT "timeoutStreak", "pausedUntil" > now() AS paused FROM "WebhookEndpoint" WHERE id = $1`, [hook.id])).rows,
      (rows) => rows[0]?.paused === true,
    );
    expect(paused!.timeoutStreak).toBe(3);
    // ...and while it is open nothing is sent to it; its deliveries wait, losing no attempt.
    const attemptsThen = r.received.length;
    // Waited out on the real clock: that the open breaker sends nothing for a while is the subject.
    await new Promise((done) => setTimeout(done, 1500));
    expect(r.received.length).toBe(attemptsThen);
    const waiting = (await deliveriesOf(outsider, hook.id)).filter((d) => d.status === 'PENDING');
    expect(waiting.length).toBeGreaterThan(0);
    // The pause ends (here: moved to the past) and the receiver answers: the breaker closes.
    r.answer = () => ({ status: 204 });
    await app.sql.query(`UPDATE "WebhookEndpoint" SET "pausedUntil" = now() - interval '1 second' WHERE id = $1`, [hook.id]);
    await eventually('delivered', () => deliveriesOf(outsider, hook.id), (d) => d.every((x) => x.status === 'DELIVERED'));
    const { rows } = await app.sql.query(`SELECT "timeoutStreak", "pausedUntil" FROM "WebhookEndpoint" WHERE id = $1`, [hook.id]);
    expect(rows[0]).toEqual({ timeoutStreak: 0, pausedUntil: null });
  });

  it('keeps at most 1 KB of an answer, and does not follow redirects', async () => {
    const target = await receiver();
    const r = await receiver();
    r.answer = (_req, n) => (n === 1 ? { status: 200, body: 'é'.repeat(5000) } : { status: 204 });
    const hook = await register(buyer, r.url, ['order.created']);
    await placeOrder();
    const [big] = await eventually('delivered', () => deliveriesOf(buyer, hook.id), (d) => d[0]?.status === 'DELIVERED');
    expect(Buffer.byteLength(big.attemptLog[0].responseBody)).toBeLessThanOrEqual(1024);
    expect(big.attemptLog[0].responseBody).toMatch(/^é+$/);

    const redirecting = await receiver();
    redirecting.answer = () => ({ status: 302, body: '' });
    const redirectHook = await register(buyer, redirecting.url, ['order.created']);
    await placeOrder();
    const [moved] = await eventually('an attempt', () => deliveriesOf(buyer, redirectHook.id), (d) => d[0]?.attempts >= 1 && d[0].lastStatus !== null);
    expect(moved).toMatchObject({ lastStatus: 302, status: 'PENDING' });
    expect(target.received).toHaveLength(0);
  });

  it('deletes an endpoint while its failing deliveries are being retried, every time', async () => {
    for (let round = 0; round < 8; round++) {
      const hook = await register(buyer, `http://127.0.0.1:${await freePort()}/hooks`, ['order.created']);
      await Promise.all(Array.from({ length: 4 }, () => send('POST', `/api/webhooks/${hook.id}/test`, buyer)));
      // Each round deletes at another moment of the retries: the race is the subject, not a wait.
      await new Promise((resolve) => setTimeout(resolve, 150 + 40 * round));
      const deleted = await send('DELETE', `/api/webhooks/${hook.id}`, buyer);
      expect([deleted.status, deleted.body.error]).toEqual([200, undefined]);
    }
    expect((await app.sql.query(`SELECT count(*)::int AS n FROM "WebhookDelivery"`)).rows[0].n).toBe(0);
  });

  it('sends a test event on request, to that endpoint only', async () => {
    const r = await receiver();
    const other = await receiver();
    const hook = await register(buyer, r.url);
    const otherHook = await register(buyer, other.url);
    const res = await send('POST', `/api/webhooks/${hook.id}/test`, buyer);
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({ status: 'PENDING', event: { type: 'webhook.test' } });
    const [got] = await r.waitFor((x) => x.json?.type === 'webhook.test');
    expect(verify(hook.secret, got!).data).toMatchObject({ endpointId: hook.id });
    expect(await deliveryCount(otherHook.id)).toBe(0);
    expect(other.received).toHaveLength(0);
  });

  it('tells the supplier’s members when a tracked product’s stock falls to its threshold, once per fall', async () => {
    const r = await receiver();
    const hook = await register(member, r.url, ['stock.low']);
    const patch = (body: object) => send('PATCH', `/api/v1/stock/${f.b.id}`, member, body);
    expect((await patch({ stock: 20, lowStockThreshold: 10, trackInventory: true })).status).toBe(200);
    expect((await patch({ stock: 15 })).status).toBe(200); // still above: nothing
    expect((await patch({ stock: 10 })).status).toBe(200); // to the threshold: stock.low
    const stockLow = (x: Received) => x.json?.type === 'stock.low';
    const [first] = await r.waitFor(stockLow);
    const event = verify(hook.secret, first!);
    const record = await send('GET', `/api/v1/stock?productId=${f.b.id}`, member);
    expect(event.data).toEqual(record.body.data);
    expect(event.data).toMatchObject({ id: f.b.id, stock: 10, lowStockThreshold: 10 });
    expect((await patch({ stock: 5 })).status).toBe(200); // already low: nothing more

    // Back above, then an order takes it below: stock.low again, caused by the order.
    expect((await patch({ stock: 12 })).status).toBe(200);
    await placeOrder(buyer, 3, f.b.id);
    const lows = await waitForEvents(r, stockLow, 2);
    expect(verify(hook.secret, lows[1]!).data).toMatchObject({ id: f.b.id, stock: 9 });
    expect(await deliveryCount(hook.id)).toBe(2);
    expect(eventsAt(r, stockLow)).toHaveLength(2);
  });

  it('disables an endpoint that failed for the whole retry schedule, shows it, and enables it again', async () => {
    const r = await receiver();
    r.answer = () => ({ status: 503 });
    const hook = await register(buyer, r.url, ['order.created']);
    await placeOrder();
    const disabled = await eventually('disabled', async () => (await send('GET', `/api/webhooks/${hook.id}`, buyer)).body.data, (e) => e.status === 'DISABLED');
    expect(disabled.disabledAt).not.toBeNull();
    expect(disabled.failingSince).not.toBeNull();
    const [failed] = await deliveriesOf(buyer, hook.id);
    expect(failed).toMatchObject({ status: 'FAILED', attempts: RETRIES.split(',').length + 1, nextRetryAt: null });

    // Disabled: new events are not sent to it.
    r.answer = () => ({ status: 204 });
    await placeOrder();
    expect(await deliveriesOf(buyer, hook.id)).toHaveLength(1);

    const enabled = await send('POST', `/api/webhooks/${hook.id}/enable`, buyer);
    expect(enabled.body.data).toMatchObject({ status: 'ACTIVE', disabledAt: null, failingSince: null });
    await placeOrder();
    await eventually('delivered again', () => deliveriesOf(buyer, hook.id), (d) => d.some((x) => x.status === 'DELIVERED'));
  });

  it('counts deliveries by outcome and the backlog on /metrics', async () => {
    const r = await receiver();
    r.answer = (_req, n) => (n === 1 ? { status: 500 } : { status: 204 });
    await register(buyer, r.url, ['order.created']);
    await placeOrder();
    await r.waitFor(() => true, 2);
    await eventually('recorded', async () => (await app.get('/metrics')).body as string, (m) => /webhook_deliveries_total\{outcome="delivered"\} [1-9]/.test(m));
    const metrics = (await app.get('/metrics')).body as string;
    expect(metrics).toMatch(/webhook_delivery_attempts_total\{outcome="success"\} [1-9]/);
    expect(metrics).toMatch(/webhook_delivery_attempts_total\{outcome="http_error"\} [1-9]/);
    expect(metrics).toMatch(/^webhook_outbox_backlog \d+$/m);
    expect(metrics).toMatch(/^webhook_outbox_oldest_seconds [\d.e+-]+$/m);
  });
});

describe('the outbox', () => {
  it('deletes events past the retention once every delivery is done, and keeps pending ones', async () => {
    const r = await receiver();
    const hook = await register(buyer, r.url, ['order.created']);
    const add = (id: string, age: string, status: string) =>
      app.sql.query(
        `WITH e AS (INSERT INTO "WebhookEvent" (id, type, payload, "createdAt") VALUES ($1, 'order.created', '{}', now() - $2::interval) RETURNING id)
         INSERT INTO "WebhookDelivery" (id, "eventId", "endpointId", status, "nextAttemptAt") SELECT $1, id, $3, $4::"WebhookDeliveryStatus", CASE WHEN $4 = 'PENDING' THEN now() + interval '1 day' END FROM e`,
        [id, age, hook.id, status],
      );
    await add('msg_old_done', '31 days', 'DELIVERED');
    await add('msg_old_failed', '31 days', 'FAILED');
    await add('msg_old_pending', '31 days', 'PENDING');
    await add('msg_recent', '29 days', 'DELIVERED');
    expect(await pruneOutbox(prisma)).toBe(2);
    const { rows } = await app.sql.query(`SELECT id FROM "WebhookEvent" WHERE id LIKE 'msg\\_old%' OR id = 'msg_recent' ORDER BY id`);
    expect(rows.map((x) => x.id)).toEqual(['msg_old_pending', 'msg_recent']);
    expect((await app.sql.query(`SELECT count(*)::int AS n FROM "WebhookDelivery" WHERE "eventId" IN ('msg_old_done', 'msg_old_failed')`)).rows[0].n).toBe(0);
  });
});

describe('safe targets', () => {
  let strict: TestApp;
  let strictKey: TestKey;
  beforeAll(async () => {
    strict = await startTestApp({ template: 'migrated', env: { WEBHOOK_RETRY_SCHEDULE: '0.2' } });
    strictKey = await createTestKey(strict.url, { owner: 'ssrf@example.com', scopes: ['read:orders', 'write:webhooks'] });
  });
  afterAll(async () => {
    await strict?.close();
  });

  it('refuses loopback, private, link-local and metadata targets at registration', async () => {
    for (const url of [
      'http://127.0.0.1/x',
      'http://localhost:8080/x',
      'http://10.0.0.7/x',
      'http://192.168.1.1/x',
      'http://172.16.5.4/x',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://[fd00:ec2::254]/x',
      'http://0.0.0.0/x',
      'http://2130706433/x', // 127.0.0.1 written as one number
    ]) {
      const res = await strict.get('/api/webhooks', {
        method: 'POST',
        headers: { 'x-api-key': strictKey.key, 'content-type': 'application/json' },
        body: JSON.stringify({ url, events: ['order.created'] }),
      });
      expect([res.status, Object.keys(res.body.error?.details ?? {})], url).toEqual([400, ['url']]);
    }
    expect((await strict.sql.query(`SELECT count(*)::int AS n FROM "WebhookEndpoint"`)).rows[0].n).toBe(0);
  });

  it('checks the target again when delivering: an address that became private is not contacted', async () => {
    const r = await receiver();
    // As if its DNS had changed since registration: the stored URL now names this machine.
    await strict.sql.query(
      `INSERT INTO "WebhookEndpoint" (id, "accountId", "keyId", url, events, secret) VALUES ('crebind', $1, $2, $3, ARRAY['order.created'], 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`,
      [strictKey.accountId, strictKey.id, r.url],
    );
    const res = await strict.get('/api/webhooks/crebind/test', { method: 'POST', headers: { 'x-api-key': strictKey.key } });
    expect(res.status).toBe(202);
    const [delivery] = await eventually(
      'refused',
      async () => (await strict.get('/api/webhooks/crebind/deliveries', { headers: { 'x-api-key': strictKey.key } })).body.data,
      (d: any[]) => d[0]?.attemptLog?.[0]?.outcome === 'refused_target',
    );
    expect(delivery.attemptLog[0].statusCode).toBeNull();
    // Its retry is due 0.2 s later (WEBHOOK_RETRY_SCHEDULE): waited out, since it must not reach r either.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(r.received).toHaveLength(0);
  });

  it('takes https only in production', async () => {
    const production = await startTestApp({ template: 'migrated', env: { NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE: 'true' } });
    try {
      const key = await createTestKey(production.url, { owner: 'prod@example.com', scopes: ['read:orders', 'write:webhooks'] });
      const res = await production.get('/api/webhooks', {
        method: 'POST',
        headers: { 'x-api-key': key.key, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/x', events: ['order.created'] }),
      });
      expect(res.status).toBe(400);
      expect(res.body.error.details.url).toMatch(/https/);
    } finally {
      await production.close();
    }
  });
});

describe('at least once, across instances and crashes', () => {
  it('two instances deliver each event once', async () => {
    const second = await startTestApp({ url: app.url, env: ENV });
    try {
      const r = await receiver();
      const hook = await register(buyer, r.url, ['order.created']);
      // Open each instance's database connections first: on a loaded machine, opening five at once
      // inside the burst can exceed the 1 s connect timeout (a 503 that says nothing about delivery).
      await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? app : second).get('/api/categories?parentOnly=1')));
      const orders = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? placeOrder() : second.get('/api/orders', {
        method: 'POST',
        headers: { 'x-api-key': buyer.key, 'content-type': 'application/json' },
        body: JSON.stringify({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }], shippingAddress: SHIP_TO }),
      }).then((res) => {
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        return res.body.data as { id: string };
      }))));
      await r.waitFor(() => true, orders.length, 30_000);
      // Each outcome is recorded after its receiver answered. Every delivery done after one claim
      // (a claim counts its attempt) is sent no more: the receiver's count is final.
      const log = await eventually('every delivery recorded', () => deliveriesOf(buyer, hook.id), (d) => d.length === orders.length && d.every((x) => x.status === 'DELIVERED'));
      expect(log.every((d) => d.attempts === 1)).toBe(true);
      const ids = r.received.map((x) => x.headers['webhook-id']);
      expect(ids).toHaveLength(orders.length);
      expect(new Set(ids).size).toBe(orders.length);
      expect(new Set(r.received.map((x) => x.json.data.id))).toEqual(new Set(orders.map((o) => o.id)));
    } finally {
      await second.close();
    }
  });
});

describe('a crash between the commit and the delivery', () => {
  // A database of its own: only the spawned service delivers from it.
  let db: TestDatabase;
  let service: Service | undefined;
  beforeAll(async () => {
    db = await createTestDatabase('seeded');
  });
  afterEach(() => killGroup(service));
  afterAll(async () => {
    killGroup(service);
    await db?.drop();
  });

  const start = async () => {
    service = npmStart({ DATABASE_URL: db.url, PORT: '0', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_SECONDS: '2', WEBHOOK_RETRY_SCHEDULE: RETRIES });
    return `http://127.0.0.1:${await listeningPort(service)}`;
  };
  const call = async (base: string, method: string, path: string, key: TestKey, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: { 'x-api-key': key.key, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('delivers after a restart what a killed process had committed but not delivered', async () => {
    const sql = new pg.Pool({ connectionString: db.url, max: 1 });
    sql.on('error', () => undefined);
    const fixture = await makeOrderFixture(sql);
    const key = await createTestKey(db.url, { owner: 'crash@example.com', scopes: ['read:orders', 'write:orders', 'write:webhooks'] });
    const r = await receiver();
    // The first attempt reaches the receiver, which holds it: the process is killed mid-delivery.
    r.answer = (_req, n) => (n === 1 ? 'hang' : { status: 204 });

    let base = await start();
    const hook = (await call(base, 'POST', '/api/webhooks', key, { url: r.url, events: ['order.created'] })).body.data as { id: string };
    const placed = await call(base, 'POST', '/api/orders', key, { supplierId: fixture.supplierId, items: [{ productId: fixture.a.id, quantity: 1 }], shippingAddress: SHIP_TO });
    expect(placed.status).toBe(201);
    await r.waitFor(() => true, 1, 5000);
    killGroup(service);
    await service!.exited;

    const { rows: stuck } = await sql.query(
      `SELECT d.status, d.attempts, a."finishedAt", a.outcome FROM "WebhookDelivery" d JOIN "WebhookAttempt" a ON a."deliveryId" = d.id WHERE d."endpointId" = $1`,
      [hook.id],
    );
    expect(stuck).toEqual([{ status: 'PENDING', attempts: 1, finishedAt: null, outcome: null }]);

    base = await start();
    const got = await r.waitFor(() => true, 2, 20_000);
    expect(got[1]!.json.data.id).toBe(placed.body.data.id);
    expect(got[1]!.headers['webhook-id']).toBe(got[0]!.headers['webhook-id']);
    const [delivered] = await eventually(
      'delivered',
      async () => (await call(base, 'GET', `/api/webhooks/${hook.id}/deliveries`, key)).body.data as any[],
      // A first request to the new process can find its pool still opening connections (a 503 on
      // a loaded machine): no list yet, read again.
      (d) => d?.[0]?.status === 'DELIVERED',
    );
    expect(delivered.attempts).toBe(2);
    expect(delivered.attemptLog.map((a: any) => a.outcome)).toEqual([null, 'success']);
    await sql.end();
  }, 90_000);
});
