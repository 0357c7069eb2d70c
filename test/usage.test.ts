import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, type PrismaClient } from '../src/db/prisma.js';
import { MemoryRateLimitStore } from '../src/ratelimit/memory-store.js';
import { currentWindow, hourlyUsage } from '../src/usage/read.js';
import { createUsageRecorder, type UsageRecorder } from '../src/usage/recorder.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { manualClock } from './helpers/clock.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { asOperator } from './helpers/context.js';

// Per-key usage: counted in memory by the gate, flushed per (key, UTC hour) in one additive
// statement, read back as an hourly history and as the state of the current rate-limit window.

const HOUR = 3_600_000;
const at = (hour: number, minute = 0) => Date.UTC(2025, 5, 1, hour, minute);

interface Row {
  keyId: string;
  hour: Date;
  requests: number;
  limited: number;
}

describe('the usage recorder', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  let sql: pg.Pool;
  const statements: string[] = [];
  let a: TestKey;
  let b: TestKey;

  const rows = async (keyId: string) =>
    (await sql.query<Row>('SELECT "keyId", hour, requests, limited FROM "KeyUsage" WHERE "keyId" = $1 ORDER BY hour', [keyId])).rows.map((r) => ({
      hour: r.hour.getTime(),
      requests: r.requests,
      limited: r.limited,
    }));
  const total = async (keyId: string) =>
    (await sql.query<{ requests: number; limited: number }>('SELECT COALESCE(SUM(requests), 0)::int AS requests, COALESCE(SUM(limited), 0)::int AS limited FROM "KeyUsage" WHERE "keyId" = $1', [keyId]))
      .rows[0]!;
  /** A recorder whose timer never fires during a test: the test flushes. */
  const recorder = (now: () => number, client = prisma) => createUsageRecorder(client, { now, intervalMs: HOUR, onError: () => undefined });

  beforeAll(async () => {
    db = await createTestDatabase('migrated');
    prisma = createPrisma({ url: db.url, poolMax: 4, onQuery: (s) => statements.push(s) });
    sql = new pg.Pool({ connectionString: db.url, max: 3 });
    sql.on('error', () => undefined);
    a = await createTestKey(db.url, { owner: 'usage-a@example.com', scopes: ['read:products'] });
    b = await createTestKey(db.url, { owner: 'usage-b@example.com', scopes: ['read:products'] });
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await sql?.end();
    await db?.drop();
  });

  it('counts per key and UTC hour, 429s as limited too, and flushes them in one statement, adding', async () => {
    const clock = manualClock(at(10, 59));
    const usage = recorder(clock.now);
    usage.count(a.id, { limited: false });
    usage.count(a.id, { limited: false });
    usage.count(a.id, { limited: true });
    clock.advanceTo(at(11, 0));
    usage.count(a.id, { limited: false });
    usage.count(b.id, { limited: true });

    const before = statements.length;
    await usage.flush();
    expect(statements.slice(before)).toHaveLength(1);
    expect(statements[before]).toMatch(/INSERT INTO "KeyUsage"/);
    expect(await rows(a.id)).toEqual([
      { hour: at(10), requests: 3, limited: 1 },
      { hour: at(11), requests: 1, limited: 0 },
    ]);
    expect(await rows(b.id)).toEqual([{ hour: at(11), requests: 1, limited: 1 }]);

    // Nothing pending: no statement at all.
    const idle = statements.length;
    await usage.flush();
    expect(statements.length).toBe(idle);

    // A later flush adds to the hour's row, never overwrites it.
    usage.count(a.id, { limited: false });
    usage.count(a.id, { limited: true });
    await usage.flush();
    expect(await rows(a.id)).toEqual([
      { hour: at(10), requests: 3, limited: 1 },
      { hour: at(11), requests: 3, limited: 1 },
    ]);

    // stop() writes what is left; counts after it are ignored.
    usage.count(b.id, { limited: false });
    await usage.stop();
    usage.count(b.id, { limited: false });
    await usage.flush();
    expect(await rows(b.id)).toEqual([{ hour: at(11), requests: 2, limited: 1 }]);
  });

  it('sums exactly when several instances flush into the same rows at once', async () => {
    const key = await createTestKey(db.url, { owner: 'usage-c@example.com', scopes: ['read:products'] });
    const clients = [createPrisma({ url: db.url, poolMax: 2 }), createPrisma({ url: db.url, poolMax: 2 }), createPrisma({ url: db.url, poolMax: 2 })];
    const clock = manualClock(at(12, 30));
    const instances = clients.map((client) => recorder(clock.now, client));
    let requests = 0;
    let limited = 0;
    try {
      for (let round = 0; round < 8; round++) {
        // Each round every instance counts into the same hours (two of them new in the first round)
        // and all flush at the same moment.
        instances.forEach((usage, i) => {
          for (let n = 0; n < 3 + i + round; n++) {
            const refused = n % 3 === 0;
            usage.count(key.id, { limited: refused });
            usage.count(a.id, { limited: false });
            requests += 1;
            if (refused) limited += 1;
          }
        });
        await Promise.all(instances.map((usage) => usage.flush()));
        if (round === 3) clock.advanceTo(at(13, 5));
      }
      expect(await total(key.id)).toEqual({ requests, limited });
      expect((await rows(key.id)).map((r) => r.hour)).toEqual([at(12), at(13)]);
    } finally {
      await Promise.all(instances.map((usage) => usage.stop()));
      await Promise.all(clients.map((client) => client.$disconnect()));
    }
  });

  it('keeps the counts of a failed flush, merged with later ones, for the next flush', async () => {
    const key = await createTestKey(db.url, { owner: 'usage-d@example.com', scopes: ['read:products'] });
    const usage = recorder(manualClock(at(14, 10)).now);
    usage.count(key.id, { limited: false });
    usage.count(key.id, { limited: true });
    await sql.query('ALTER TABLE "KeyUsage" RENAME TO "KeyUsageAway"');
    try {
      await expect(usage.flush()).rejects.toThrow();
    } finally {
      await sql.query('ALTER TABLE "KeyUsageAway" RENAME TO "KeyUsage"');
    }
    usage.count(key.id, { limited: false });
    await usage.flush();
    expect(await rows(key.id)).toEqual([{ hour: at(14), requests: 3, limited: 1 }]);
    await usage.stop();
  });

  it('never runs two flushes at once: the second waits for the first', async () => {
    const key = await createTestKey(db.url, { owner: 'usage-e@example.com', scopes: ['read:products'] });
    const usage = recorder(manualClock(at(15, 0)).now);
    // Flushes in this database right now (a statement is logged only once it has run); the server
    // is shared with the other test files, whose apps flush their own KeyUsage every 10 s.
    const inFlight = async () =>
      (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%INSERT INTO "KeyUsage"%' AND state = 'active' AND pid <> pg_backend_pid()`)).rows[0]!.n;
    const locker = await sql.connect();
    let first: Promise<void> | undefined;
    let second: Promise<void> | undefined;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE "KeyUsage" IN EXCLUSIVE MODE');
      usage.count(key.id, { limited: false });
      first = usage.flush();
      // expect.poll gives up after 1 s by default: sending the first can take longer on a loaded machine.
      await expect.poll(inFlight, { timeout: 10_000 }).toBe(1);
      usage.count(key.id, { limited: true });
      second = usage.flush();
      await new Promise((resolve) => setTimeout(resolve, 200));
      // The first is held by the lock; the second has not been sent.
      expect(await inFlight()).toBe(1);
    } finally {
      await locker.query('COMMIT');
      locker.release();
    }
    await Promise.all([first, second]);
    expect(await rows(key.id)).toEqual([{ hour: at(15), requests: 2, limited: 1 }]);
    await usage.stop();
  });

  it('drops the counts of a key deleted meanwhile without failing the rest of the batch', async () => {
    const gone = await createTestKey(db.url, { owner: 'usage-f@example.com', scopes: ['read:products'] });
    const kept = await createTestKey(db.url, { owner: 'usage-f@example.com', scopes: ['read:products'] });
    const usage = recorder(manualClock(at(16, 0)).now);
    usage.count(gone.id, { limited: false });
    usage.count(kept.id, { limited: false });
    usage.count(gone.id, { limited: true });
    await sql.query('DELETE FROM "ApiKey" WHERE id = $1', [gone.id]);
    await usage.flush();
    expect(await rows(kept.id)).toEqual([{ hour: at(16), requests: 1, limited: 0 }]);
    expect(await rows(gone.id)).toEqual([]);
    // Nothing was put back to fail again.
    const before = statements.length;
    await usage.flush();
    expect(statements.length).toBe(before);
    await usage.stop();
  });

  it('reads a key’s hours back oldest first, zero-filled, ending with the current hour', async () => {
    const key = await createTestKey(db.url, { owner: 'usage-g@example.com', scopes: ['read:products'] });
    const insert = (keyId: string, hour: number, requests: number, limited: number) =>
      sql.query('INSERT INTO "KeyUsage" ("keyId", hour, requests, limited) VALUES ($1, $2, $3, $4)', [keyId, new Date(hour), requests, limited]);
    await insert(key.id, at(9), 100, 0); // before the range
    await insert(key.id, at(11), 7, 2);
    await insert(key.id, at(14), 5, 0); // the current hour
    await insert(key.id, at(15), 9, 9); // after now
    await insert(b.id, at(12), 40, 1); // another key's

    const usage = await hourlyUsage(asOperator(prisma, new Date(at(14, 42))), key.id, { hours: 5 });
    expect(usage).toEqual([
      { hour: new Date(at(10)), requests: 0, limited: 0 },
      { hour: new Date(at(11)), requests: 7, limited: 2 },
      { hour: new Date(at(12)), requests: 0, limited: 0 },
      { hour: new Date(at(13)), requests: 0, limited: 0 },
      { hour: new Date(at(14)), requests: 5, limited: 0 },
    ]);
    const week = await hourlyUsage(asOperator(prisma, new Date(at(14, 42))), key.id);
    expect(week).toHaveLength(168);
    expect(week[0]!.hour).toEqual(new Date(at(14) - 167 * HOUR));
    expect(week.at(-1)).toEqual({ hour: new Date(at(14)), requests: 5, limited: 0 });
    expect(week.reduce((sum, h) => sum + h.requests, 0)).toBe(112);
    await expect(hourlyUsage(asOperator(prisma), key.id, { hours: 0 })).rejects.toThrow(RangeError);
    await expect(hourlyUsage(asOperator(prisma), key.id, { hours: 1.5 })).rejects.toThrow(RangeError);
  });
});

describe('usage through the real app', () => {
  let app: TestApp;
  let store: MemoryRateLimitStore;
  let usage: UsageRecorder;
  let prisma: PrismaClient;
  let db: TestDatabase;
  // The recorder's hours on a clock that stands still: a UTC hour ending mid-test would split a
  // key's requests over two rows.
  const clock = manualClock();

  beforeAll(async () => {
    // The recorder and the store are made here, as an embedding server (the dashboard's) would,
    // so the test can flush the one and read the other.
    db = await createTestDatabase('seeded');
    prisma = createPrisma({ url: db.url, poolMax: 2 });
    store = new MemoryRateLimitStore();
    usage = createUsageRecorder(prisma, { intervalMs: HOUR, onError: () => undefined, now: clock.now });
    app = await startTestApp({ url: db.url, usage, rateLimitStore: store });
  });
  afterAll(async () => {
    await app?.close();
    await usage?.stop();
    await store?.close();
    await prisma?.$disconnect();
    await db?.drop();
  });

  it('reads the current window of a key as the gate counted it', async () => {
    const key = await createTestKey(app.url, { scopes: ['read:products'], plan: 'basic' });
    for (let i = 0; i < 4; i++) expect((await app.get('/api/categories', { headers: { 'x-api-key': key.key } })).status).toBe(200);
    const window = await currentWindow(store, { id: key.id, plan: 'BASIC', rateLimit: null, rateWindowSeconds: null });
    expect(window).toMatchObject({ used: 4, limit: 1000, remaining: 996, windowSeconds: 3600 });
    expect(window.resetAt.getTime()).toBeGreaterThan(Date.now());
    expect(window.resetAt.getTime()).toBeLessThanOrEqual(Date.now() + 3600_000);
    // Reading does not count.
    expect((await currentWindow(store, { id: key.id, plan: 'BASIC', rateLimit: null, rateWindowSeconds: null })).used).toBe(4);
  });

  it('counts every request of a valid key, 429s as limited, over REST and GraphQL; nothing else', async () => {
    const key = await createTestKey(app.url, { scopes: ['read:products'], plan: 'enterprise', limit: 3, windowSeconds: 3600 });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await app.get('/api/categories', { headers: { 'x-api-key': key.key } })).status);
    for (let i = 0; i < 2; i++) {
      const res = await app.get('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}` },
        body: JSON.stringify({ query: '{ categories { items { id } } }' }),
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    // Not the key's usage: anonymous requests, and a key that is not valid.
    await app.get('/api/categories');
    await app.get('/api/categories', { headers: { 'x-api-key': `${key.key}x` } });

    await usage.flush();
    const hours = await hourlyUsage(asOperator(prisma, new Date(clock.now())), key.id, { hours: 2 });
    expect(hours.at(-1)).toMatchObject({ requests: 5, limited: 2 });
    expect(hours.reduce((sum, h) => sum + h.requests, 0)).toBe(5);
    expect((await app.sql.query('SELECT count(*)::int AS n FROM "KeyUsage" WHERE "keyId" = $1', [key.id])).rows[0].n).toBe(1);

    const window = await currentWindow(store, { id: key.id, plan: 'ENTERPRISE', rateLimit: 3, rateWindowSeconds: 3600 });
    expect(window).toMatchObject({ used: 3, limit: 3, remaining: 0, windowSeconds: 3600 });
  });
});
