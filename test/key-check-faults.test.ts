import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_RETRY_AFTER_SECONDS } from '../src/db/prisma.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { createTestKey } from './helpers/keys.js';
import { freePort } from './helpers/redis.js';

// A key the database cannot check is neither valid nor invalid: 503 SERVICE_UNAVAILABLE with
// Retry-After, never anonymous treatment (charged to the IP's bucket, answered with its limit).
// And an unavailable database is expected now and then: one warn line per burst, not an error
// with a stack per 503.

const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit'];

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

function logSink() {
  let text = '';
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => ((text += chunk), done()) }));
  return { logger, lines: () => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as LogLine), text: () => text };
}

const gql = (query: string, headers: Record<string, string>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify({ query }),
});

/** The contract's 503, in the shape of the path, with no rate-limit headers of a bucket it did not use. */
function expectKeyUnchecked(res: { status: number; headers: Headers; body: any }, graphql: boolean) {
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe(String(DB_RETRY_AFTER_SECONDS));
  for (const h of RATE_HEADERS) expect(res.headers.get(h), h).toBeNull();
  if (graphql) {
    expect(res.body.errors[0].extensions).toEqual({ code: 'SERVICE_UNAVAILABLE', retryAfter: DB_RETRY_AFTER_SECONDS });
  } else {
    expect(res.body).toEqual({ success: false, error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), retryAfter: DB_RETRY_AFTER_SECONDS } });
  }
}

describe('with the database refusing connections', () => {
  let app: TestApp;
  const logs = logSink();
  const key = 'mk_' + 'A'.repeat(42) + 'E'; // well-formed: only the database could say whether it exists
  beforeAll(async () => {
    const port = await freePort();
    app = await startTestApp({ url: `postgresql://postgres:none@127.0.0.1:${port}/gone`, env: { ANON_RATE_LIMIT: '30' }, logger: logs.logger });
  });
  afterAll(() => app?.close());

  it('a keyed request is 503 + Retry-After over REST and GraphQL, however many, and the IP bucket is not charged', async () => {
    const client = { 'x-forwarded-for': '198.51.100.50' };
    const requests = Array.from({ length: 40 }, (_, i) =>
      i % 2
        ? app.get('/api/products?limit=1', { headers: { ...client, 'x-api-key': key } }).then((res) => ({ res, graphql: false }))
        : app.get('/graphql', gql('{ products(limit: 1) { items { id } } }', { ...client, authorization: `Bearer ${key}` })).then((res) => ({ res, graphql: true })),
    );
    for (const { res, graphql } of await Promise.all(requests)) expectKeyUnchecked(res, graphql);

    // The same client without a key: its anonymous bucket saw none of the 40.
    const anonymous = await app.get('/api/products?limit=1', { headers: client });
    expect(anonymous.status).toBe(503);
    expect(anonymous.headers.get('x-ratelimit-limit')).toBe('30');
    expect(anonymous.headers.get('x-ratelimit-remaining')).toBe('29');
  });

  it('logs a burst of 503s as one warn line with its cause and a summary with counts, no error and no stack', async () => {
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 ? app.get('/api/categories') : app.get('/graphql', gql('{ categories { items { id } } }', {})),
      ),
    );
    expect(burst.map((r) => r.status)).toEqual(Array(20).fill(503));
    // The burst ends after 2 s without a 503: its summary lines then count every one.
    const burstOver = (l: LogLine) => l.msg === 'database available again: overload burst over';
    const summarised = () => logs.lines().filter(burstOver).reduce((sum, l) => sum + Number(l.totalInBurst), 0);
    await eventually('the bursts summarised', async () => summarised(), (total) => total >= 41 + 20);
    const lines = logs.lines();
    expect(lines.filter((l) => l.msg === 'unexpected error')).toEqual([]);
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    expect(logs.text()).not.toMatch(/"stack"|\bat .*\(.*:\d+:\d+\)/);
    const starts = lines.filter((l) => l.msg.startsWith('database unavailable: answering 503'));
    // One burst: the 41 requests of the test before and these 20 came within 2 s of each other or not;
    // either way every 503 is accounted for, in at most one start line per burst.
    expect(starts.length).toBeGreaterThanOrEqual(1);
    expect(starts.length).toBeLessThanOrEqual(2);
    for (const start of starts) {
      expect(start.level).toBe(40);
      expect(String(start.cause)).toMatch(/reach database server|ECONNREFUSED/i);
    }
    const ends = lines.filter(burstOver);
    expect(ends).toHaveLength(starts.length);
    const total = ends.reduce((sum, l) => sum + Number(l.totalInBurst), 0);
    expect(total).toBe(41 + 20);
    // A few lines in all, not one per request. Left out: the subscriptions' listener's warning at
    // each of its attempts to reconnect (1, 2, 4, 8… s apart), whose count is the file's running
    // time so far, not its requests'.
    const retries = (l: LogLine) => l.msg === 'subscriptions: not listening for changes; trying again';
    expect(lines.filter((l) => l.msg !== 'request' && !retries(l)).length).toBeLessThan(10);
  });
});

describe('with the key table locked or missing', () => {
  let app: TestApp;
  const logs = logSink();
  let key: string;
  beforeAll(async () => {
    app = await startTestApp({ env: { ANON_RATE_LIMIT: '30' }, logger: logs.logger });
    key = (await createTestKey(app.url, { plan: 'enterprise', scopes: ['read:orders'], limit: 100_000, windowSeconds: 3600 })).key;
  });
  afterAll(() => app?.close());

  it('pool exhausted and statements timed out: every keyed request is 503, none 429, none charged to the IP', async () => {
    const client = { 'x-forwarded-for': '198.51.100.60' };
    const blocker = await app.sql.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE "ApiKey" IN ACCESS EXCLUSIVE MODE');
      // 5 connections wait on the lock until statement_timeout; the rest wait for a connection.
      const started = Date.now();
      const answers = await Promise.all(
        Array.from({ length: 9 }, (_, i) =>
          i % 3 === 0
            ? app.get('/graphql', gql('{ orders { meta { total } } }', { ...client, 'x-api-key': key })).then((res) => ({ res, graphql: true }))
            : app.get('/api/orders', { headers: { ...client, 'x-api-key': key } }).then((res) => ({ res, graphql: false })),
        ),
      );
      expect(Date.now() - started).toBeLessThan(5_000 + 1_500);
      for (const { res, graphql } of answers) expectKeyUnchecked(res, graphql);
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    const anonymous = await app.get('/api/categories', { headers: client });
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get('x-ratelimit-remaining')).toBe('29');
    const keyed = await app.get('/api/orders', { headers: { ...client, 'x-api-key': key } });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get('ratelimit-policy')).toBe('"enterprise";q=100000;w=3600');
  }, 30_000);

  it('an unexpected failure of the check is 503 too (not a 500), and logged as the error it is', async () => {
    // `key` was checked above and is kept in memory (nothing about it changed); a key never
    // checked before must be read, and that read fails.
    const unchecked = (await createTestKey(app.url, { plan: 'pro', scopes: ['read:orders'] })).key;
    await app.sql.query('ALTER TABLE "ApiKey" RENAME TO "ApiKeyAway"');
    try {
      const rest = await app.get('/api/products?limit=1', { headers: { 'x-api-key': unchecked } });
      expectKeyUnchecked(rest, false);
      const graph = await app.get('/graphql', gql('{ products(limit: 1) { items { id } } }', { 'x-api-key': unchecked }));
      expectKeyUnchecked(graph, true);
    } finally {
      await app.sql.query('ALTER TABLE "ApiKeyAway" RENAME TO "ApiKey"');
    }
    expect(logs.lines().filter((l) => l.msg === 'unexpected error' && l.level === 50)).toHaveLength(2);
    expect(logs.text()).not.toContain(key);
    expect(logs.text()).not.toContain(unchecked);
  });
});
