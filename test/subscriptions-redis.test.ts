import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { LIMITS } from '../src/config/limits.js';
import { waitForText } from './helpers/npm-start.js';
import { makeOrderFixture, workedExample, type OrderFixture } from './helpers/orders.js';
import { HAS_PGBOUNCER, startPgbouncer, type Pgbouncer } from './helpers/pgbouncer.js';
import { HAS_REDIS_SERVER, startRedisServer, type RedisServer } from './helpers/redis.js';
import { subscribe, type Stream } from './helpers/sse.js';

// Subscriptions fed through Redis pub/sub (REDIS_URL; docs/api.md, "Subscriptions"): three
// instances on one database and one redis-server of the test's own. A and C LISTEN on the
// server itself; B's only connection is PgBouncer in transaction mode (DATABASE_DIRECT_URL on the
// pooler too), so B's LISTEN hears nothing and B hears changes only as A and C share them.
//
// Needs Debian's redis-server and /usr/sbin/pgbouncer (installed by .ci/run); reported skipped without.

function logSink() {
  let text = '';
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => ((text += chunk), done()) }));
  return { logger, text: () => text };
}

const ORDER_EVENTS = /* GraphQL */ `subscription { orderEvents { type order { id status } } }`;
const CREATE_ORDER = /* GraphQL */ `mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!HAS_REDIS_SERVER || !HAS_PGBOUNCER)('subscriptions shared through Redis (REDIS_URL)', () => {
  let db: TestDatabase;
  let redis: RedisServer;
  let bouncer: Pgbouncer;
  let a: TestApp;
  let b: TestApp;
  let c: TestApp;
  const aLogs = logSink();
  const bLogs = logSink();
  let f: OrderFixture;
  let buyer: TestKey;
  let rival: TestKey;

  beforeAll(async () => {
    db = await createTestDatabase('seeded');
    [redis, bouncer] = await Promise.all([startRedisServer(), startPgbouncer(db.url)]);
    const pooled = bouncer.url(db.url);
    const env = { ORDER_CREATE_LIMIT: '1000', REDIS_URL: redis.url };
    [a, b, c] = await Promise.all([
      startTestApp({ url: db.url, env, logger: aLogs.logger }),
      startTestApp({ url: pooled, directUrl: pooled, env, logger: bLogs.logger }),
      startTestApp({ url: db.url, env }),
    ]);
    f = await makeOrderFixture(a.sql);
    buyer = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders', 'write:orders'] });
    rival = await createTestKey(db.url, { owner: 'redis-rival@example.com', scopes: ['read:orders'] });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), c?.close()]);
    await redis?.stop();
    await bouncer?.stop();
    await db?.drop();
  });

  const createOrder = async (app: TestApp) => {
    const answer = await app.get('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': buyer.key },
      body: JSON.stringify({ query: CREATE_ORDER, variables: { input: workedExample(f) } }),
    });
    expect(answer.status).toBe(200);
    return { id: answer.body.data.createOrder.id as string, at: Date.now() };
  };
  const heardOf = (s: Stream, orderId: string) => s.events.filter((e) => e.event === 'next' && e.data?.data?.orderEvents?.order?.id === orderId);

  it('an instance that cannot LISTEN says so, and its subscriber hears an order created on another within 1 s; another account never does', async () => {
    // Said by B's first attempt to listen, or by a later one when that one's connection took over its
    // 1 s connect timeout on a loaded machine (the next comes 1 s later, and its probe waits 2 s).
    const deaf = /"level":40[^\n]*subscriptions: LISTEN hears nothing[^\n]*only as other instances share them through Redis \(REDIS_URL\)/;
    await waitForText(bLogs.text, deaf, { ms: 15_000 });
    expect(bLogs.text()).toMatch(deaf);
    const [mine, theirs] = await Promise.all([subscribe(b, ORDER_EVENTS, {}, buyer), subscribe(b, ORDER_EVENTS, {}, rival)]);
    expect(mine.status).toBe(200);

    const order = await createOrder(a);
    await mine.until('B’s buyer hears the order', (s) => heardOf(s, order.id).length > 0, 1000);
    expect(heardOf(mine, order.id)[0]!.at - order.at).toBeLessThan(1000);
    expect(heardOf(mine, order.id)[0]!.data).toEqual({ data: { orderEvents: { type: 'CREATED', order: { id: order.id, status: 'PENDING' } } } });

    // A change by plain SQL, on no instance at all, reaches B the same way.
    await a.sql.query(`UPDATE "Order" SET status = 'CANCELLED' WHERE id = $1`, [order.id]);
    await mine.until('B’s buyer hears the cancellation', (s) => heardOf(s, order.id).length > 1, 1000);
    expect(heardOf(mine, order.id)[1]!.data.data.orderEvents.type).toBe('CANCELLED');

    // That the other account hears nothing is the subject: no event tells it; waited out.
    await sleep(300);
    expect(theirs.nexts()).toEqual([]);
    expect(theirs.ended).toBe(false);
    mine.close();
    theirs.close();
  });

  it('each change is heard once on every instance, though A and C hear it both by LISTEN and through Redis (twice: both share it)', async () => {
    const streams = await Promise.all([a, b, c].map((app) => subscribe(app, ORDER_EVENTS, {}, buyer)));
    const order = await createOrder(c);
    await a.sql.query(`UPDATE "Order" SET status = 'CONFIRMED' WHERE id = $1`, [order.id]);
    for (const s of streams) await s.until('the status change is heard', (x) => heardOf(x, order.id).length >= 2, 1000);
    // Every copy has arrived by now: the two ways are milliseconds apart. (Two changes committed
    // this close together may be told in either order: each event reads its order as it comes.)
    await sleep(500);
    for (const s of streams) expect(heardOf(s, order.id).map((e) => e.data.data.orderEvents.type).sort()).toEqual(['CREATED', 'STATUS_CHANGED']);
    for (const s of streams) s.close();
  });

  it('the per-key bound holds across the three instances, B’s claims going through the pooler: of four more than SUBSCRIPTIONS_PER_KEY opened at once, SUBSCRIPTIONS_PER_KEY are let in', async () => {
    const perKey = LIMITS.subscriptions.perKey.max;
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'] });
    const streams = await Promise.all(Array.from({ length: perKey + 4 }, (_, i) => subscribe([a, b, c][i % 3]!, ORDER_EVENTS, {}, key)));
    const admitted = streams.filter((s) => !s.ended && s.events.length === 0);
    const refused = streams.filter((s) => s.nexts()[0]?.errors?.[0]?.extensions?.code === 'RATE_LIMIT_EXCEEDED');
    expect([admitted.length, refused.length]).toEqual([perKey, 4]);
    for (const s of streams) s.close();
  });

  it('an instance that cannot LISTEN (so hears no key change) still ends an expiring key’s stream within 2 s of the expiry', async () => {
    const expiresAt = Date.now() + 3000;
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'], expiresAt: new Date(expiresAt) });
    const stream = await subscribe(b, ORDER_EVENTS, {}, key);
    expect(stream.ended).toBe(false);
    await stream.until('the stream ends', (s) => s.ended, expiresAt + 5000 - Date.now());
    expect(stream.endedAt).toBeGreaterThanOrEqual(expiresAt);
    expect(stream.endedAt - expiresAt).toBeLessThan(2000);
    expect(stream.nexts().at(-1).errors[0].extensions.code).toBe('UNAUTHORIZED');
  });

  it('Redis stopped: nothing crashes, it is said once, streams stay open; Redis back: B’s stream hears changes again', async () => {
    const [onA, onB] = await Promise.all([subscribe(a, ORDER_EVENTS, {}, buyer), subscribe(b, ORDER_EVENTS, {}, buyer)]);
    const unreachable = /subscriptions: Redis unreachable/g;
    await redis.stop();
    // Several reconnection attempts fail meanwhile (they are at most 2 s apart).
    await sleep(3000);
    const during = await createOrder(a);
    await onA.until('A still hears by its LISTEN', (s) => heardOf(s, during.id).length > 0, 1000);
    expect(aLogs.text().match(unreachable)).toHaveLength(1);
    expect(bLogs.text().match(unreachable)).toHaveLength(1);
    expect(onB.ended).toBe(false);
    expect((await a.get('/healthz')).status).toBe(200);

    redis = await startRedisServer(redis.port);
    const back = Date.now();
    while (!/subscriptions: Redis reachable again/.test(bLogs.text()) || !/subscriptions: Redis reachable again/.test(aLogs.text())) {
      if (Date.now() - back > 10_000) throw new Error('the instances did not say that Redis was back within 10 s');
      await sleep(50);
    }
    const after = await createOrder(a);
    await onB.until('B hears again through Redis', (s) => heardOf(s, after.id).length > 0, 1000);
    expect(onB.ended).toBe(false);
    expect(onA.ended).toBe(false);
    onA.close();
    onB.close();
  }, 30_000);
});
