import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { createTestKey } from './helpers/keys.js';
import { HAS_REDIS_SERVER, startRedisServer, type RedisServer } from './helpers/redis.js';

// Several instances behind a load balancer: with REDIS_URL they enforce one limit exactly.
// Needs Redis (REDIS_URL, or Debian's redis-server which .ci/run installs); skipped without.

describe.skipIf(!HAS_REDIS_SERVER)('two instances sharing one Redis', () => {
  let redis: RedisServer;
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let logs = '';

  beforeAll(async () => {
    redis = await startRedisServer();
    db = await createTestDatabase('seeded');
    const env = { REDIS_URL: redis.url, ANON_RATE_LIMIT: '30' };
    const sink = new Writable({ write: (chunk, _enc, done) => ((logs += chunk), done()) });
    a = await startTestApp({ url: db.url, env, logger: pino({ level: 'info' }, sink) });
    b = await startTestApp({ url: db.url, env });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
    await redis?.stop();
  });

  it('let exactly the key limit through a burst spread over both', async () => {
    const key = await createTestKey(db.url, { plan: 'enterprise', scopes: ['read:orders'], limit: 40, windowSeconds: 3600 });
    const h = { headers: { 'x-api-key': key.key } };
    // Open each instance's database connections first: on a loaded machine, opening five at once
    // inside the burst can exceed the 1 s connect timeout (a 503 that says nothing about limits).
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).get('/api/categories?parentOnly=1')));
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).get('/api/categories?parentOnly=1', h)));
    // Anything but 200 or 429 would be another failure than the limit's: show it first.
    expect(results.filter((r) => r.status !== 200 && r.status !== 429).map((r) => [r.status, r.body])).toEqual([]);
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(40);
    expect(results.filter((r) => r.status === 429)).toHaveLength(60);
    expect(new Set(ok.map((r) => r.headers.get('x-ratelimit-remaining'))).size).toBe(40);
    expect(new Set(results.map((r) => r.headers.get('x-ratelimit-reset'))).size).toBe(1);
  });

  it('share the anonymous bucket of a client IP', async () => {
    const h = { headers: { 'x-forwarded-for': '203.0.113.7' } };
    const first = await a.get('/api/categories', h);
    const second = await b.get('/api/categories', h);
    expect(Number(second.headers.get('x-ratelimit-remaining'))).toBe(Number(first.headers.get('x-ratelimit-remaining')) - 1);
  });

  it('keep serving when Redis goes away, and say so in the log', async () => {
    await redis.stop();
    const res = await a.get('/api/products?limit=1');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('30');
    expect(logs).toMatch(/redis/i);
    const metrics = await (await fetch(`${a.base}/metrics`)).text();
    expect(metrics).toMatch(/^ratelimit_store_fallback 1$/m);
    expect(metrics).toMatch(/^ratelimit_store_fallback_hits [1-9]\d*$/m);
  });
});
