import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GraphQLError } from 'graphql';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedServer } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { DB_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../src/db/prisma.js';
import { seedDatabase } from '../src/seed/seed.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';

// The database goes away under load and comes back: every request is answered quickly, 503
// SERVICE_UNAVAILABLE with Retry-After while it is gone (never 500, never a hang), and the
// service recovers by itself. This file runs its own PostgreSQL, so stopping it harms no other test.

const RETRY_AFTER = String(DB_RETRY_AFTER_SECONDS);
/** Whatever happens, a request of this test is abandoned after this long (and fails the test). */
const REQUEST_LIMIT_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Sample {
  kind: string;
  start: number;
  end: number;
  status: number | 'hung' | 'failed';
  headers?: Headers;
  body?: unknown;
}

let dataDir: string;
let pgServer: EmbeddedServer;
let app: TestApp;
let url: string;
let key: string;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mp-faults-'));
  pgServer = await startEmbeddedPostgres({ dataDir, ephemeral: true, log: () => undefined });
  const admin = new pg.Client({ connectionString: pgServer.url('postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE faults');
  await admin.end();
  url = pgServer.url('faults');
  await migrate(url);
  await seedDatabase(url, { seed: 7, products: 200 });
  key = (await createTestKey(url, { plan: 'pro', scopes: ['read:orders'] })).key;
  app = await startTestApp({ url });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await pgServer?.stop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

const gqlInit = (query: string, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify({ query }),
});

/** One request, timed; never waits longer than REQUEST_LIMIT_MS + 1 s. */
async function timed(kind: string, pathname: string, init: RequestInit = {}): Promise<Sample> {
  const start = Date.now();
  try {
    const res = await app.get(pathname, { ...init, signal: AbortSignal.timeout(REQUEST_LIMIT_MS + 1_000) });
    return { kind, start, end: Date.now(), status: res.status, headers: res.headers, body: res.body };
  } catch (error) {
    const hung = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    return { kind, start, end: Date.now(), status: hung ? 'hung' : 'failed', body: String(error) };
  }
}

const LOAD: Array<[string, string, RequestInit?]> = [
  ['rest products', '/api/products?limit=5&sortBy=price_asc'],
  ['rest categories', '/api/categories?includeProducts=true'],
  ['rest suppliers', '/api/suppliers?limit=3'],
  ['graphql products', '/graphql', gqlInit('{ products(limit: 3) { items { name supplier { companyName } } meta { total } } }')],
];

/** Runs `loops` concurrent request loops until stopped; every answer lands in `samples`. */
function steadyLoad(loops: number) {
  const samples: Sample[] = [];
  let running = true;
  const workers = Array.from({ length: loops }, async (_, i) => {
    for (let n = i; running; n++) {
      const [kind, pathname, init] = LOAD[n % LOAD.length]!;
      samples.push(await timed(kind, pathname, init));
    }
  });
  return {
    samples,
    /** Waits until the answers so far satisfy `enough` (at most 10 s): they are what the test reads. */
    until: async (enough: (samples: Sample[]) => boolean) => {
      for (const deadline = Date.now() + 10_000; !enough(samples) && Date.now() < deadline; ) await sleep(50);
    },
    stop: async () => {
      running = false;
      await Promise.all(workers);
    },
  };
}

/** The contract's 503: envelope over REST, a coded error over GraphQL, Retry-After on both. */
function expectUnavailable(sample: Sample) {
  const where = `${sample.kind} at +${sample.start}`;
  expect(sample.status, where).toBe(503);
  expect(sample.headers?.get('retry-after'), where).toBe(RETRY_AFTER);
  if (sample.kind.startsWith('graphql')) {
    const body = sample.body as { data?: Record<string, unknown> | null; errors: Array<{ message: string; extensions: Record<string, unknown> }> };
    expect(body.errors[0]!.extensions.code, where).toBe('SERVICE_UNAVAILABLE');
    expect(body.errors[0]!.extensions.retryAfter, where).toBe(DB_RETRY_AFTER_SECONDS);
    // Root fields are nullable: nothing answered is every one of them null.
    expect(Object.values(body.data ?? {}).every((value) => value === null), where).toBe(true);
  } else {
    expect(sample.body, where).toEqual({
      success: false,
      error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), retryAfter: DB_RETRY_AFTER_SECONDS },
    });
  }
}

const describeStatuses = (samples: Sample[]) =>
  samples.map((s) => `${s.kind} ${s.status} ${s.end - s.start}ms${typeof s.status === 'number' && s.status >= 500 && s.status !== 503 ? ` ${JSON.stringify(s.body)}` : ''}`);

describe('database outage under load', () => {
  it('answers 503 with Retry-After within 1 s while PostgreSQL is down, never 500 or a hang, and recovers without a restart', async () => {
    const load = steadyLoad(4);
    let stopStarted = 0;
    let stopped = 0;
    let restartStarted = 0;
    let restarted = 0;
    let keyed: Sample[] = [];
    try {
      // Under way: a few answers of each kind first (the first requests also warm the app up).
      const warm = Date.now() + 15_000;
      while (load.samples.filter((s) => s.status === 200).length < 12 && Date.now() < warm) await sleep(50);

      stopStarted = Date.now();
      await pgServer.stop();
      stopped = Date.now();
      // Keyed requests are asked well into the outage, not at its first instant.
      await sleep(500);
      // A key cannot be checked without the database: 503, not 500 and not 401.
      keyed = await Promise.all([
        timed('rest keyed orders', '/api/orders', { headers: { 'x-api-key': key } }),
        timed('rest keyed products', '/api/products?limit=1', { headers: { authorization: `Bearer ${key}` } }),
        timed('graphql keyed', '/graphql', gqlInit('{ orders { meta { total } } }', { 'x-api-key': key })),
      ]);
      // Down long enough for the answers read below (more than 10 of them).
      await load.until((answers) => answers.filter((s) => s.start >= stopped).length > 10);

      restartStarted = Date.now();
      pgServer = await startEmbeddedPostgres({ dataDir, port: pgServer.port, ephemeral: true, log: () => undefined });
      restarted = Date.now();
      // Recovery is expected at once (the pool opens new connections on demand); bounded anyway.
      await load.until((answers) => answers.some((s) => s.start >= restarted && s.status === 200));
      // Back long enough for the answers read below (more than 4 asked from 0.5 s after the restart).
      await load.until((answers) => answers.filter((s) => s.start >= restarted + 500).length > 4);
    } finally {
      await load.stop();
    }
    const { samples } = load;

    // Throughout: only 200 or 503, each in well under 5 s.
    const wrong = samples.filter((s) => s.status !== 200 && s.status !== 503);
    expect(describeStatuses(wrong)).toEqual([]);
    const slow = samples.filter((s) => s.end - s.start >= REQUEST_LIMIT_MS);
    expect(describeStatuses(slow)).toEqual([]);

    const before = samples.filter((s) => s.end < stopStarted);
    expect(before.length).toBeGreaterThan(4);
    expect(before.every((s) => s.status === 200)).toBe(true);

    // Down: everything asked after the stop is a proper 503, and the first came within 1 s.
    const during = samples.filter((s) => s.start >= stopped && s.end <= restartStarted);
    expect(during.length).toBeGreaterThan(10);
    for (const sample of during) expectUnavailable(sample);
    const first503 = Math.min(...samples.filter((s) => s.status === 503).map((s) => s.end));
    expect(first503 - stopStarted).toBeLessThan(1_000);

    for (const sample of keyed) expectUnavailable(sample);

    // Back: the same app, without a restart, answers again.
    const after = samples.filter((s) => s.start >= restarted + 500);
    expect(after.length).toBeGreaterThan(4);
    expect(describeStatuses(after.filter((s) => s.status !== 200))).toEqual([]);
    const again = await timed('rest keyed orders', '/api/orders', { headers: { 'x-api-key': key } });
    expect(again.status).toBe(200);
  }, 60_000);
});

describe('a statement that runs too long', () => {
  it('is cancelled by statement_timeout and answered 503 with Retry-After in under 5 s', async () => {
    // A lock held elsewhere makes the app's next statement on that table wait.
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE "Supplier" IN ACCESS EXCLUSIVE MODE');
      const [rest, graph] = await Promise.all([
        timed('rest suppliers', '/api/suppliers?limit=1'),
        timed('graphql suppliers', '/graphql', gqlInit('{ suppliers(limit: 1) { items { companyName } } }')),
      ]);
      for (const sample of [rest, graph]) {
        expectUnavailable(sample);
        expect(sample.end - sample.start).toBeLessThan(REQUEST_LIMIT_MS);
      }
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      await blocker.end();
    }
    expect((await timed('rest suppliers', '/api/suppliers?limit=1')).status).toBe(200);
  }, 30_000);
});

describe('a malformed order while the catalogue cannot be read', () => {
  it('is still the 400 naming what is wrong with the body, not a 503', async () => {
    const writer = (await createTestKey(url, { plan: 'pro', scopes: ['write:orders'] })).key;
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE "Supplier" IN ACCESS EXCLUSIVE MODE');
      const sample = await timed('rest order', '/api/orders', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': writer },
        body: JSON.stringify({ supplierId: 'some-supplier', items: [{ productId: 'some-product', quantity: 0 }] }),
      });
      expect(sample.status).toBe(400);
      expect(sample.body).toEqual({
        success: false,
        error: { code: 'VALIDATION_ERROR', message: 'Invalid order', details: { 'items[0].quantity': 'must be an integer between 1 and 1000000' } },
      });
      expect(sample.end - sample.start).toBeLessThan(REQUEST_LIMIT_MS);
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      await blocker.end();
    }
  }, 30_000);
});

describe('isDatabaseUnavailable', () => {
  const withCode = (message: string, props: Record<string, unknown>) => Object.assign(new Error(message), props);

  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED', syscall: 'connect', errno: -111 })],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    ['a connect timeout', new Error('timeout expired')],
    ['a pool checkout timeout', new Error('timeout exceeded when trying to connect')],
    ['a client-side query timeout', new Error('Query read timeout')],
    ['an administrator shutdown (57P01)', withCode('terminating connection due to administrator command', { code: '57P01', severity: 'FATAL' })],
    ['a server starting up (57P03)', withCode('the database system is starting up', { code: '57P03', severity: 'FATAL' })],
    ['a connection exception (08006)', withCode('connection failure', { code: '08006', severity: 'FATAL' })],
    ['a statement timeout (57014)', withCode('canceling statement due to statement timeout', { code: '57014', severity: 'ERROR' })],
    ['Prisma P1001', withCode("Can't reach database server", { code: 'P1001' })],
    [
      "Prisma's raw query error with the adapter's cause",
      withCode('Raw query failed', { code: 'P2010', meta: { driverAdapterError: { cause: { kind: 'postgres', originalCode: '57P01' } } } }),
    ],
    ['a resolver error wrapping one', new GraphQLError('x', { originalError: new Error('Connection terminated unexpectedly') })],
  ])('recognises %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a unique violation', withCode('Unique constraint failed', { code: 'P2002' })],
    ['a syntax error (42601)', withCode('syntax error', { code: '42601', severity: 'ERROR' })],
    ['a caller-supplied text quoted by GraphQL', new GraphQLError('Variable "$q" got invalid value "Connection terminated unexpectedly"')],
    ['nothing', undefined],
  ])('does not take %s for an outage', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
