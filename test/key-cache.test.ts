import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KEY_CHANGED_CHANNEL } from '../src/auth/key-cache.js';
import { CHECKED_COLUMNS, hashApiKey } from '../src/auth/key-check.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';
import { waitForText } from './helpers/npm-start.js';
import { classify, sentSince } from './helpers/statements.js';

// A key checked once is kept in memory, and forgotten the moment anything authentication reads
// of it changes, whoever changes it: the "ApiKey" trigger notifies every instance.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How a test changes each column the key check reads (typed: a new column needs a line here). */
const CHANGE: Record<keyof typeof CHECKED_COLUMNS, string> = {
  id: `"id" = "id" || '-moved'`,
  accountId: `"accountId" = (SELECT id FROM "Account" WHERE id <> "ApiKey"."accountId" LIMIT 1)`,
  plan: `"plan" = 'BASIC'`,
  scopes: `"scopes" = ARRAY['read:stock']`,
  rateLimit: `"rateLimit" = coalesce("rateLimit", 0) + 1`,
  rateWindowSeconds: `"rateWindowSeconds" = coalesce("rateWindowSeconds", 0) + 1`,
  expiresAt: `"expiresAt" = now() + interval '1 day'`,
  revokedAt: `"revokedAt" = now()`,
  kind: `"kind" = 'PUBLISHABLE'`,
  origins: `"origins" = ARRAY['https://shop.example']`,
  allowServer: `"allowServer" = true`,
};

/** Notifications on the key channel, as a listening instance receives them. */
async function listener(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const heard: string[] = [];
  client.on('notification', (n) => n.channel === KEY_CHANGED_CHANNEL && heard.push(n.payload ?? ''));
  await client.query(`LISTEN ${KEY_CHANGED_CHANNEL}`);
  return {
    heard,
    /** Waits until `count` notifications have arrived (at most 5 s). */
    async next(count: number) {
      for (let i = 0; i < 500 && heard.length < count; i++) await sleep(10);
      return heard.slice();
    },
    close: () => client.end(),
  };
}

describe('the ApiKey trigger', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ template: 'migrated' });
    await createTestKey(app.url, { owner: 'other@example.com', scopes: ['read:stock'] });
  });
  afterAll(() => app?.close());

  it('notifies the hash on a change to each column the check reads, and nothing for the name or last use', async () => {
    const listening = await listener(app.url);
    try {
      let expected = 0;
      for (const column of Object.keys(CHECKED_COLUMNS) as (keyof typeof CHECKED_COLUMNS)[]) {
        const key = await createTestKey(app.url, { scopes: ['read:orders'] });
        // Neither of these is read by the check: no notification.
        await app.sql.query(`UPDATE "ApiKey" SET "name" = 'renamed', "lastUsedAt" = now() WHERE id = $1`, [key.id]);
        await app.sql.query(`UPDATE "ApiKey" SET ${CHANGE[column]} WHERE id = $1`, [key.id]);
        expected += 1;
        expect((await listening.next(expected))[expected - 1], column).toBe(hashApiKey(key.key));
      }
      const gone = await createTestKey(app.url, { scopes: ['read:stock'] });
      await app.sql.query(`DELETE FROM "ApiKey" WHERE id = $1`, [gone.id]);
      expect((await listening.next(expected + 1)).at(-1)).toBe(hashApiKey(gone.key));
      await app.sql.query(`TRUNCATE "ApiKey" CASCADE`);
      expect((await listening.next(expected + 2)).at(-1)).toBe('*');
      // Delivered in commit order: had a name or last-use change notified, there would be more.
      expect(listening.heard).toHaveLength(expected + 2);
    } finally {
      await listening.close();
    }
  });
});

describe('keys kept by the gate', () => {
  let app: TestApp;
  let logs = '';
  beforeAll(async () => {
    const sink = new Writable({ write: (chunk, _enc, done) => ((logs += chunk), done()) });
    app = await startTestApp({ logger: pino({ level: 'info' }, sink) });
    // The app starts whether or not its first attempt to listen succeeded (on a loaded machine a
    // connection can take over its 1 s connect timeout; it tries again a second later): these
    // tests are about a cache that listens.
    if (!(await waitForText(() => logs, /API key cache on/, { ms: 15_000 }))) throw new Error(`the key cache did not listen within 15 s:\n${logs}`);
  });
  afterAll(() => app?.close());

  /**
   * Status of one request with the key, and how many statements it sent that read "ApiKey" (the
   * timed flush of the keys' hourly usage, which reads it too, left out: it may land meanwhile).
   */
  async function ask(key: string, path = '/api/orders?limit=1') {
    const before = app.statements.length;
    const res = await app.get(path, { headers: { 'x-api-key': key } });
    const keyReads = sentSince(app.statements, before).filter((sql) => classify(sql).reads.includes('ApiKey')).length;
    return { status: res.status, keyReads, body: res.body };
  }

  /** Asks until the status is `status` (a change made elsewhere arrives as a notification), at most 2 s. */
  async function askUntil(key: string, status: number, path?: string) {
    for (let i = 0; ; i++) {
      const answer = await ask(key, path);
      if (answer.status === status || i === 100) return answer;
      await sleep(20);
    }
  }

  it('reads a key once, then answers it from memory', async () => {
    const { key } = await createTestKey(app.url, { scopes: ['read:orders'] });
    expect(await ask(key)).toMatchObject({ status: 200, keyReads: 1 });
    expect(await ask(key)).toMatchObject({ status: 200, keyReads: 0 });
    expect(await ask(key)).toMatchObject({ status: 200, keyReads: 0 });
  });

  it('reads a key once for many concurrent requests that bring it', async () => {
    const { key } = await createTestKey(app.url, { scopes: ['read:orders'] });
    const before = app.statements.length;
    const answers = await Promise.all(Array.from({ length: 20 }, () => app.get('/api/orders?limit=1', { headers: { 'x-api-key': key } })));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(sentSince(app.statements, before).filter((sql) => classify(sql).reads.includes('ApiKey')).length).toBe(1);
  });

  it('stops a kept key revoked by another process as soon as the change is delivered', async () => {
    const { key, id } = await createTestKey(app.url, { scopes: ['read:orders'] });
    expect(await ask(key)).toMatchObject({ status: 200, keyReads: 1 });
    const started = Date.now();
    await app.sql.query(`UPDATE "ApiKey" SET "revokedAt" = now() WHERE id = $1`, [id]);
    expect((await askUntil(key, 401)).status).toBe(401);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('applies new scopes of a kept key', async () => {
    const { key, id } = await createTestKey(app.url, { scopes: ['read:orders'] });
    expect((await ask(key)).status).toBe(200);
    await app.sql.query(`UPDATE "ApiKey" SET "scopes" = ARRAY['read:stock'] WHERE id = $1`, [id]);
    const refused = await askUntil(key, 403);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
  });

  it('still compares a kept key with the clock: it stops when it expires, without a read', async () => {
    // Far enough ahead that the key is still valid for the two requests below however long its
    // creation takes (a connection of its own, which can take over a second on a loaded machine).
    const expiresAt = new Date(Date.now() + 5_000);
    const { key } = await createTestKey(app.url, { scopes: ['read:orders'], expiresAt });
    expect(await ask(key)).toMatchObject({ status: 200, keyReads: 1 });
    expect(await ask(key)).toMatchObject({ status: 200, keyReads: 0 });
    // The app runs in this process: its clock (Date; its timers run on) is moved past the expiry
    // rather than waited past it.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(expiresAt.getTime() + 100);
      expect(await ask(key)).toMatchObject({ status: 401, keyReads: 0 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps nothing while it cannot listen, and keeps again once it listens again', async () => {
    const { key } = await createTestKey(app.url, { scopes: ['read:orders'] });
    expect((await ask(key)).status).toBe(200);
    const killed = await app.sql.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = $1`,
      [`LISTEN ${KEY_CHANGED_CHANNEL}`],
    );
    expect(killed.rowCount).toBe(1);
    await waitForText(() => logs, /API key cache off/, { ms: 10_000 });
    expect(logs).toContain('API key cache off');
    expect(await ask(key)).toMatchObject({ status: 200, keyReads: 1 });
    expect(await ask(key)).toMatchObject({ status: 200, keyReads: 1 });
    const on = logs.split('API key cache on').length;
    // Listening again takes a second (its retry delay), or more when that attempt fails too (a
    // connection over its 1 s connect timeout on a loaded machine: the next is 2 s later, then 4 s).
    for (const deadline = Date.now() + 15_000; logs.split('API key cache on').length === on && Date.now() < deadline; ) await sleep(10);
    expect(logs.split('API key cache on').length).toBe(on + 1);
    expect(await ask(key)).toMatchObject({ status: 200, keyReads: 1 });
    expect(await ask(key)).toMatchObject({ status: 200, keyReads: 0 });
  });
});

describe('KEY_CACHE_SECONDS=0', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { KEY_CACHE_SECONDS: '0' } });
  });
  afterAll(() => app?.close());

  it('reads the key on every request, and opens no listening connection', async () => {
    const { key } = await createTestKey(app.url, { scopes: ['read:orders'] });
    for (let i = 0; i < 3; i++) {
      const before = app.statements.length;
      expect((await app.get('/api/orders?limit=1', { headers: { 'x-api-key': key } })).status).toBe(200);
      // sentSince: not the timed usage flush, which reads "ApiKey" too.
      expect(sentSince(app.statements, before).filter((sql) => classify(sql).reads.includes('ApiKey'))).toHaveLength(1);
    }
    // (The webhook worker listens on a channel of its own.)
    const listeners = await app.sql.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query = $1`, [`LISTEN ${KEY_CHANGED_CHANNEL}`]);
    expect(listeners.rowCount).toBe(0);
  });
});
