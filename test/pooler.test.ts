import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { runKeysCli } from './helpers/keys-cli.js';
import { killGroup, listeningPort, npmStart, waitForText, type Service } from './helpers/npm-start.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';
import { eventually } from './helpers/eventually.js';
import { HAS_PGBOUNCER, startPgbouncer, startRelay, type Pgbouncer } from './helpers/pgbouncer.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

// The service with DATABASE_URL on Debian's PgBouncer in transaction mode with its default
// settings (so no startup parameter but the few it knows, no session state from one transaction
// to the next) and DATABASE_DIRECT_URL on the server. Instance A is the real compiled server
// (npm start); instance B runs in this process, its direct connection through a relay the tests
// can cut; A leaves the webhooks to B's worker (WEBHOOK_WORKER=false).
//
// Needs /usr/sbin/pgbouncer (installed by .ci/run); reported skipped without it.

const SHIP_TO = { fullName: 'Ana Pop', phone: '0700000000', address: 'Str. 1', city: 'Cluj-Napoca', county: 'Cluj', postalCode: '400001' };
const SCOPES = 'read:orders,write:orders,read:products,write:webhooks';

function logSink() {
  let text = '';
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => ((text += chunk), done()) }));
  return { logger, text: () => text };
}


describe.skipIf(!HAS_PGBOUNCER)('behind PgBouncer in transaction mode with its default settings', () => {
  let db: TestDatabase;
  let bouncer: Pgbouncer;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let pooled: string;
  let direct: pg.Pool;
  let a: Service | undefined;
  let aBase: string;
  let b: TestApp;
  const bLogs = logSink();
  let f: OrderFixture;
  let dataDir: string;

  const env = () => ({ DATABASE_URL: pooled, DATABASE_DIRECT_URL: db.url });
  const createKey = async (owner: string) => {
    const run = await runKeysCli(['create', '--owner', owner, '--plan', 'pro', '--scopes', SCOPES, '--json'], env());
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as { id: string; key: string };
  };
  const call = async (base: string, method: string, url: string, key?: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(base + url, {
      method,
      headers: { ...(key ? { 'x-api-key': key } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.status, headers: res.headers, text, body: json };
  };

  beforeAll(async () => {
    db = await createTestDatabase('empty');
    bouncer = await startPgbouncer(db.url);
    pooled = bouncer.url(db.url);
    relay = await startRelay(db.url);
    direct = new pg.Pool({ connectionString: db.url, max: 3 });
    direct.on('error', () => undefined);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pooler-'));
    // A migrates and seeds the empty database: both through the direct connection.
    a = npmStart({ PORT: '0', DATA_DIR: dataDir, ...env(), DEMO_DATA: 'true', WEBHOOK_WORKER: 'false', TRUSTED_PROXIES: 'loopback', NODE_ENV: 'test' });
    aBase = `http://127.0.0.1:${await listeningPort(a)}`;
    b = await startTestApp({
      url: pooled,
      directUrl: relay.url(db.url),
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', ORDER_CREATE_LIMIT: '1000' },
      logger: bLogs.logger,
    });
    f = await makeOrderFixture(direct);
  }, 180_000);

  afterAll(async () => {
    if (a?.npm.pid !== undefined) {
      process.kill(-a.npm.pid, 'SIGTERM');
      await Promise.race([a.exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    }
    killGroup(a);
    await b?.close();
    await direct?.end();
    await relay?.close();
    await bouncer?.stop();
    await db?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('the pooler is at its defaults: it refuses the statement_timeout startup parameter', async () => {
    const client = new pg.Client({ connectionString: pooled, statement_timeout: 4000 });
    client.on('error', () => undefined);
    await expect(client.connect()).rejects.toThrow(/unsupported startup parameter: statement_timeout/);
    await client.end().catch(() => undefined);
  });

  it('starts: migrations and demo data through the direct connection, listeners that hear, ready', async () => {
    const output = a!.output();
    expect(output).toContain('migrations applied');
    expect(output).toContain('demo data seeded');
    expect(output).toContain('API key cache on');
    expect(output).not.toMatch(/hears nothing|failed to start/);
    expect(bLogs.text()).toContain('API key cache on');
    expect((await call(aBase, 'GET', '/readyz')).status).toBe(200);
    expect((await call(b.base, 'GET', '/readyz')).status).toBe(200);
  });

  it('answers REST and GraphQL reads on both instances', async () => {
    for (const base of [aBase, b.base]) {
      const rest = await call(base, 'GET', '/api/products?limit=3&sortBy=price_asc');
      expect(rest.status, rest.text).toBe(200);
      expect(rest.body.data).toHaveLength(3);
      expect(rest.body.meta.total).toBe(1200 - (await direct.query(`SELECT count(*)::int AS n FROM "Product" WHERE NOT "isActive"`)).rows[0].n);
      const graph = await call(base, 'POST', '/graphql', undefined, { query: '{ categories(limit: 2) { items { name } } suppliers(limit: 2) { meta { total } } }' });
      expect(graph.status, graph.text).toBe(200);
      expect(graph.body.errors).toBeUndefined();
      expect(graph.body.data.categories.items).toHaveLength(2);
    }
  });

  it('the keys CLI works through the pooler (migrating through the direct connection)', async () => {
    const created = await createKey('pooled-cli@example.com');
    expect(created.key).toMatch(/^mk_/);
    const list = await runKeysCli(['list', '--owner', 'pooled-cli@example.com', '--json'], env());
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { id: string }[]).map((k) => k.id)).toEqual([created.id]);
  });

  it('places orders in transactions, and replays an idempotent retry on either instance', async () => {
    const { key } = await createKey('pooled-buyer@example.com');
    const order = { supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 2 }], shippingAddress: SHIP_TO };
    const stockBefore = (await direct.query(`SELECT stock FROM "Product" WHERE id = $1`, [f.a.id])).rows[0].stock as number;
    const first = await call(aBase, 'POST', '/api/orders', key, order, { 'idempotency-key': 'pooled-1' });
    expect(first.status, first.text).toBe(201);
    for (const base of [aBase, b.base]) {
      const again = await call(base, 'POST', '/api/orders', key, order, { 'idempotency-key': 'pooled-1' });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.text).toBe(first.text);
    }
    expect((await direct.query(`SELECT stock FROM "Product" WHERE id = $1`, [f.a.id])).rows[0].stock).toBe(stockBefore - 2);
    const graph = await call(b.base, 'POST', '/graphql', key, {
      query: 'mutation($input: CreateOrderInput!) { createOrder(input: $input) { id status } }',
      variables: { input: order },
    });
    expect(graph.status, graph.text).toBe(200);
    expect(graph.body.data.createOrder.status).toBe('PENDING');
  });

  it('a key revoked with the keys CLI, or by SQL through the pooler, is refused by every instance within 2 s', async () => {
    for (const revokeBy of ['cli', 'sql'] as const) {
      const created = await createKey(`revoked-by-${revokeBy}@example.com`);
      for (const base of [aBase, b.base]) {
        // Twice each: the second answer comes from the instance's memory.
        expect((await call(base, 'GET', '/api/orders', created.key)).status).toBe(200);
        expect((await call(base, 'GET', '/api/orders', created.key)).status).toBe(200);
      }
      const reads = b.statements.filter((s) => /SELECT/.test(s) && /"ApiKey"/.test(s)).length;
      expect((await call(b.base, 'GET', '/api/orders', created.key)).status).toBe(200);
      expect(b.statements.filter((s) => /SELECT/.test(s) && /"ApiKey"/.test(s)).length).toBe(reads);

      const started = Date.now();
      if (revokeBy === 'cli') {
        const run = await runKeysCli(['revoke', created.id], env());
        expect(run.code, run.stderr).toBe(0);
      } else {
        // A plain UPDATE through the pooler, as any other tool would write it.
        const through = new pg.Client({ connectionString: pooled });
        await through.connect();
        await through.query(`UPDATE "ApiKey" SET "revokedAt" = now() WHERE id = $1`, [created.id]);
        await through.end();
      }
      const revokedAt = Date.now();
      for (const base of [aBase, b.base]) {
        await eventually(`${base} with the revoked key`, async () => (await call(base, 'GET', '/api/orders', created.key)).status, (s) => s === 401, 2_000);
      }
      expect(Date.now() - revokedAt).toBeLessThan(2_000);
      expect(revokedAt - started).toBeLessThan(60_000);
    }
  }, 120_000);

  let hooks: Receiver;
  let hookKey: string;
  it('delivers a webhook within 2 s of its event (the order placed on the other instance)', async () => {
    hooks = await startReceiver();
    hookKey = (await createKey('pooled-hooks@example.com')).key;
    const endpoint = await call(b.base, 'POST', '/api/webhooks', hookKey, { url: hooks.url, events: ['order.created'] });
    expect(endpoint.status, endpoint.text).toBe(201);
    const placed = await call(aBase, 'POST', '/api/orders', hookKey, { supplierId: f.supplierId, items: [{ productId: f.b.id, quantity: 1 }], shippingAddress: SHIP_TO });
    expect(placed.status, placed.text).toBe(201);
    const committed = Date.now();
    const [delivery] = await hooks.waitFor((r) => r.json?.data?.id === placed.body.data.id, 1, 2_000);
    expect(delivery!.at - committed).toBeLessThan(2_000);
  });

  it('bounds a slow statement: cancelled on the server, answered 503 in under 5 s', async () => {
    const blocker = await direct.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE "Supplier" IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      const res = await call(b.base, 'GET', '/api/suppliers?limit=1');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(Date.now() - started).toBeLessThan(5_000);
      // The server stopped waiting too: the service's statement no longer queues for the lock.
      await eventually(
        'statements waiting for the lock',
        async () => (await direct.query(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = '"Supplier"'::regclass`)).rows[0].n as number,
        (n) => n === 0,
        1_000,
      );
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    expect((await call(b.base, 'GET', '/api/suppliers?limit=1')).status).toBe(200);
  }, 30_000);

  it('while its direct connection is cut, an instance still refuses a revoked key at once and delivers webhooks by polling; it listens again once it is back', async () => {
    const created = await createKey('cut-direct@example.com');
    await relay.cut();
    await eventually('B noticing', async () => bLogs.text(), (t) => t.includes('API key cache off'), 5_000);
    expect((await call(b.base, 'GET', '/api/orders', created.key)).status).toBe(200);
    const run = await runKeysCli(['revoke', created.id], env());
    expect(run.code, run.stderr).toBe(0);
    expect((await call(b.base, 'GET', '/api/orders', created.key)).status).toBe(401);

    const placed = await call(aBase, 'POST', '/api/orders', hookKey, { supplierId: f.supplierId, items: [{ productId: f.b.id, quantity: 1 }], shippingAddress: SHIP_TO });
    expect(placed.status, placed.text).toBe(201);
    const committed = Date.now();
    // A poll comes within 2 s (the worker's POLL_MS); the rest is room for a loaded machine. Not
    // polling, nothing would come before the relay is restored.
    const [delivery] = await hooks.waitFor((r) => r.json?.data?.id === placed.body.data.id, 1, 6_000);
    expect(delivery!.at - committed).toBeLessThan(6_000);

    const listeningLines = () => bLogs.text().split('API key cache on').length;
    const before = listeningLines();
    await relay.restore();
    await eventually('B listening again', async () => listeningLines(), (n) => n > before, 35_000);
  }, 60_000);

  it('while the pooler is down, requests are 503 with Retry-After at once; back without a restart', async () => {
    const { key } = await createKey('pooler-down@example.com');
    expect((await call(b.base, 'GET', '/api/orders', key)).status).toBe(200);
    await bouncer.stop();
    try {
      for (const base of [aBase, b.base]) {
        const started = Date.now();
        const res = await call(base, 'GET', '/api/orders', key);
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('5');
        expect(Date.now() - started).toBeLessThan(1_500);
      }
    } finally {
      await bouncer.restart();
    }
    for (const base of [aBase, b.base]) {
      await eventually(`${base} after the pooler is back`, async () => (await call(base, 'GET', '/api/orders', key)).status, (s) => s === 200, 10_000);
    }
  }, 60_000);

  it('refuses to start when the direct connection is not a session (DATABASE_DIRECT_URL unset, or on the pooler), naming it', async () => {
    const hidden = new URL(pooled);
    hidden.password = '***';
    const unset = await runKeysCli(['list'], { DATABASE_URL: pooled, DATABASE_DIRECT_URL: '' });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toBe(
      `Error: DATABASE_URL ${hidden.toString()} is not a session connection: a LISTEN through it heard nothing (a transaction pooler, such as PgBouncer with pool_mode = transaction?). ` +
        'Migrations and LISTEN need a session: set DATABASE_DIRECT_URL to the PostgreSQL server itself (or a session-mode pooler) and keep DATABASE_URL on the pooler\n',
    );
    const onPooler = await runKeysCli(['list'], { DATABASE_URL: pooled, DATABASE_DIRECT_URL: pooled });
    expect(onPooler.code).toBe(1);
    expect(onPooler.stderr).toMatch(/^Error: DATABASE_DIRECT_URL \S+ is not a session connection: .*point DATABASE_DIRECT_URL at the PostgreSQL server itself/);
    expect(onPooler.stderr).not.toContain(new URL(pooled).password);

    const service = npmStart({ PORT: '0', DATA_DIR: dataDir, DATABASE_URL: pooled, DATABASE_DIRECT_URL: '' });
    try {
      const { code } = await service.exited;
      expect(code).toBe(1);
      expect(service.output()).toContain(`marketplace API failed to start: DATABASE_URL ${hidden.toString()} is not a session connection`);
    } finally {
      killGroup(service);
    }
  }, 60_000);

  it('an app given a pooler as its direct connection says so as an error, and keeps no key (a revoked key is refused at once)', async () => {
    const logs = logSink();
    const deaf = await startTestApp({ url: pooled, env: { WEBHOOK_ALLOW_PRIVATE: 'true' }, logger: logs.logger });
    try {
      const text = await waitForText(logs.text, /"level":50[^\n]*API key cache off: LISTEN hears nothing[^\n]*DATABASE_DIRECT_URL/, { ms: 5_000 });
      expect(text).toBeDefined();
      expect(await waitForText(logs.text, /"level":50[^\n]*webhook worker: LISTEN hears nothing/, { ms: 5_000 })).toBeDefined();
      const created = await createKey('deaf@example.com');
      expect((await call(deaf.base, 'GET', '/api/orders', created.key)).status).toBe(200);
      expect((await call(deaf.base, 'GET', '/api/orders', created.key)).status).toBe(200);
      await direct.query(`UPDATE "ApiKey" SET "revokedAt" = now() WHERE id = $1`, [created.id]);
      expect((await call(deaf.base, 'GET', '/api/orders', created.key)).status).toBe(401);
    } finally {
      await deaf.close();
    }
  }, 30_000);
});
