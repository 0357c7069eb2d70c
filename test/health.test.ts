import net, { type AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db/migrate.js';
import { LISTENER_APPLICATION_NAME } from '../src/db/listen-check.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase } from './helpers/db.js';

// /healthz and /readyz on the real app over real HTTP (src/http/health.ts, mounted in src/app.ts
// outside the gate), against a ready database, one with migrations pending, one that refuses
// connections and one that accepts them and never answers.

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** The real app (test/helpers/app.ts) on `url`, which the test provides and drops. */
async function startHealthApp(url: string, env?: Record<string, string>): Promise<TestApp> {
  const app = await startTestApp({ url, env });
  cleanups.push(app.close);
  return app;
}

async function probe(base: string, path: string, method = 'GET') {
  const started = performance.now();
  const res = await fetch(base + path, { method });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null, ms: performance.now() - started };
}

async function database(template: 'seeded' | 'empty') {
  const db = await createTestDatabase(template);
  cleanups.push(db.drop);
  return db.url;
}

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('/healthz', () => {
  it('answers 200 ok with no I/O, even when the database is unreachable', async () => {
    const app = await startHealthApp(`postgresql://nobody:secret@127.0.0.1:${await closedPort()}/nothing`);
    const res = await probe(app.base, '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    // Not metered: no rate-limit headers, however often it is asked.
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();

    const head = await probe(app.base, '/healthz', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBeNull();

    const post = await probe(app.base, '/healthz', 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('/readyz', () => {
  it('is ready on the migrated, seeded database, and stays so (applied migrations are cached)', async () => {
    const url = await database('seeded');
    const app = await startHealthApp(url);
    const res = await probe(app.base, '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok' } });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('retry-after')).toBeNull();
    expect((await probe(app.base, '/readyz', 'HEAD')).status).toBe(200);

    // Once every migration was seen applied, the check is not asked again: emptying the history
    // now would make pendingMigrations report all of them, yet the answer stays 200.
    const sql = new pg.Client({ connectionString: url });
    await sql.connect();
    await sql.query('DELETE FROM _prisma_migrations');
    await sql.end();
    expect((await probe(app.base, '/readyz')).status).toBe(200);

    // Outside the gate: a bad key is not looked at, and no rate limit applies (anonymous callers
    // get 60 a minute on the API).
    const badKey = await fetch(`${app.base}/readyz`, { headers: { 'x-api-key': 'mk_not_a_key' } });
    expect([badKey.status, badKey.headers.get('x-ratelimit-limit')]).toEqual([200, null]);
    const many = await Promise.all(Array.from({ length: 80 }, (_, i) => fetch(`${app.base}/${i % 2 ? 'healthz' : 'readyz'}`)));
    expect(many.map((r) => r.status)).toEqual(Array(80).fill(200));

    // Other paths are the app's, as before.
    expect((await probe(app.base, '/api/products?limit=1')).status).toBe(200);
  });

  it('is not ready (503, Retry-After: 1) while a migration is pending, and ready once applied', async () => {
    const url = await database('empty');
    const app = await startHealthApp(url);
    const res = await probe(app.base, '/readyz');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body).toEqual({ status: 'not_ready', checks: { database: 'ok', migrations: 'pending' } });
    const head = await probe(app.base, '/readyz', 'HEAD');
    expect([head.status, head.headers.get('retry-after'), head.body]).toEqual([503, '1', null]);

    await migrate(url);
    expect((await probe(app.base, '/readyz')).body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok' } });
  });

  it('is not ready, at once, when the database refuses connections', async () => {
    const app = await startHealthApp(`postgresql://nobody:secret@127.0.0.1:${await closedPort()}/nothing`);
    const res = await probe(app.base, '/readyz');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body).toEqual({ status: 'not_ready', checks: { database: 'failed', migrations: 'unknown' } });
    expect(res.ms).toBeLessThan(1500);
    // The cause is logged, not sent: nothing of the URL or the error reaches the client.
    expect(JSON.stringify(res.body)).not.toMatch(/secret|nobody|ECONNREFUSED/);
  });

  it('answers within about 1 s when the database accepts connections and never answers, and does not pile up queries', async () => {
    // A "database" that takes the TCP connection and says nothing: the startup handshake hangs.
    const sockets = new Set<net.Socket>();
    // Connections that serve requests, told by their startup message from the listeners' (LISTEN
    // for subscriptions; the key cache and the webhook worker are off below), which retry on
    // their own schedule.
    let accepted = 0;
    const silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('data', (startup) => {
        if (!startup.includes(Buffer.from(`application_name\0${LISTENER_APPLICATION_NAME}\0`))) accepted++;
      });
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    // Without the key cache and the webhook worker, whose connections would be more (test/key-cache.test.ts).
    const app = await startHealthApp(`postgresql://nobody:secret@127.0.0.1:${(silent.address() as AddressInfo).port}/nothing`, { KEY_CACHE_SECONDS: '0', WEBHOOK_WORKER: 'false' });

    // Five probes at once share one SELECT 1, so one connection attempt, not five; the migration
    // check is not even tried while the database does not answer.
    const probes = await Promise.all(Array.from({ length: 5 }, () => probe(app.base, '/readyz')));
    for (const res of probes) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      // 'failed' when the pool's own connect timeout (about as long) gives up first.
      expect(res.body).toEqual({ status: 'not_ready', checks: { database: expect.stringMatching(/^(timeout|failed)$/), migrations: 'unknown' } });
      expect(res.ms).toBeGreaterThanOrEqual(900);
      expect(res.ms).toBeLessThan(1500);
    }
    expect(accepted).toBe(1);

    // And it keeps answering in time, probe after probe.
    for (let i = 0; i < 2; i++) {
      const res = await probe(app.base, '/readyz');
      expect([res.status, res.ms < 1500]).toEqual([503, true]);
    }
    // Liveness does not depend on any of it: well under the 900 ms a probe that waits on this
    // database takes (a tighter bound would measure the machine's load, not the handler).
    const live = await probe(app.base, '/healthz');
    expect([live.status, live.ms < 600]).toEqual([200, true]);
    // Close the app after the silent server let go of its sockets, or the pool would wait on them.
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
    });
  });
});
