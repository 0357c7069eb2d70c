import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, tracingOf } from '../src/config/config.js';
import { createLogger } from '../src/config/logger.js';
import { startTracing, type Tracing } from '../src/tracing/sdk.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { eventually } from './helpers/eventually.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { killGroup, listeningPort, npmStart, type Service } from './helpers/npm-start.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './helpers/otlp-receiver.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

// OpenTelemetry tracing as an operator meets it: off unless OTEL_* sets an endpoint, and then
// spans sent over OTLP/HTTP to a real receiver started here (a collector as far as the service
// can tell), decoded and checked: a request continuing its caller's traceparent, named by its
// route or GraphQL operation, with the gate, the response cache, GraphQL's phases and every
// statement under it; a webhook delivery continuing the trace of the order that made its event and
// handing it on to the receiver; the trace in the request's log lines; never a key, a secret or a
// statement's values in any span. The tracing-off case runs first, in a process where the SDK
// was never started.

const SHIP_TO = { fullName: 'Ana Pop', phone: '0700000000', address: 'Str. 1', city: 'Cluj-Napoca', county: 'Cluj', postalCode: '400001' };
const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', ORDER_CREATE_LIMIT: '1000' };
/** Client::query before anything could wrap it. */
const untracedQuery = pg.Client.prototype.query;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const traceparent = (traceId: string, parentId = hex(8)) => `00-${traceId}-${parentId}-01`;

/** A logger as the server makes it (src/server.ts), writing its lines here. */
function capturedLogger(traceIds: boolean) {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger('debug', 'test', { traceIds, destination: sink }) };
}

/** Webhooks from a buyer's key: an endpoint at `r`, and an order placed with `headers`. */
async function orderWithWebhook(app: TestApp, f: OrderFixture, buyer: TestKey, r: Receiver, headers: Record<string, string>, notes: string) {
  const endpoint = await app.get('/api/webhooks', {
    method: 'POST',
    headers: { 'x-api-key': buyer.key, 'content-type': 'application/json' },
    body: JSON.stringify({ url: r.url, events: ['order.created'] }),
  });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  const order = await app.get('/api/orders', {
    method: 'POST',
    headers: { 'x-api-key': buyer.key, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }], shippingAddress: SHIP_TO, notes }),
  });
  expect(order.status, JSON.stringify(order.body)).toBe(201);
  const [delivery] = await r.waitFor((x) => x.json?.type === 'order.created', 1, 15_000);
  return { secret: endpoint.body.data.secret as string, delivery: delivery! };
}

describe('with no OTEL_* variables', () => {
  let app: TestApp;
  let f: OrderFixture;
  let buyer: TestKey;
  let hooks: Receiver;
  const { lines, logger } = capturedLogger(tracingOf(loadConfig({ ...ENV })) !== undefined);

  beforeAll(async () => {
    app = await startTestApp({ env: ENV, logger });
    f = await makeOrderFixture(app.sql);
    buyer = await createTestKey(app.url, { owner: 'untraced@example.com', scopes: ['read:orders', 'write:orders', 'write:webhooks'] });
    hooks = await startReceiver();
  });
  afterAll(async () => {
    await hooks?.close();
    await app?.close();
  });

  it('is off: the settings say so, and OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none keep it off with an endpoint', () => {
    const endpoint = 'http://collector.example:4318';
    expect(tracingOf(loadConfig({}))).toBeUndefined();
    expect(tracingOf(loadConfig({ OTEL_SERVICE_NAME: 'shop', OTEL_TRACES_SAMPLER: 'always_on' }))).toBeUndefined();
    expect(tracingOf(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'true' }))).toBeUndefined();
    expect(tracingOf(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'none' }))).toBeUndefined();
    expect(tracingOf(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: `${endpoint}/` }))).toMatchObject({ tracesUrl: `${endpoint}/v1/traces`, serviceName: 'marketplace-api' });
    expect(tracingOf(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other.example/traces' }))?.tracesUrl).toBe('http://other.example/traces');
    // A typo fails the start rather than tracing nothing, or everything.
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER: 'ratio' })).toThrow(ConfigError);
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => loadConfig({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/OTEL_TRACES_EXPORTER/);
  });

  it('sends no traceparent on webhooks, logs no trace ids, and leaves only the API’s no-op tracer and the driver untouched', async () => {
    const incoming = hex(16);
    const { delivery } = await orderWithWebhook(app, f, buyer, hooks, { traceparent: traceparent(incoming), 'x-request-id': 'untraced-order' }, 'no trace');
    expect(delivery.headers.traceparent).toBeUndefined();
    expect(delivery.headers.tracestate).toBeUndefined();
    const { rows } = await app.sql.query(`SELECT traceparent, tracestate FROM "WebhookEvent"`);
    expect(rows).toEqual([{ traceparent: null, tracestate: null }]);

    const access = lines.find((l) => l.requestId === 'untraced-order');
    expect(access).toMatchObject({ msg: 'request', status: 201 });
    expect(lines.filter((l) => 'traceId' in l || 'spanId' in l)).toEqual([]);
    expect(JSON.stringify(lines)).not.toContain(incoming);

    // What the service's spans are made by: the API's no-op tracer, recording nothing.
    const span = trace.getTracer('marketplace-api').startSpan('probe');
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toBe('0'.repeat(32));
    expect(pg.Client.prototype.query).toBe(untracedQuery);
  });
});

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let app: TestApp;
  let otlp: OtlpReceiver;
  let tracing: Tracing;
  let f: OrderFixture;
  let reader: TestKey;
  let buyer: TestKey;
  let hooks: Receiver;
  const { lines, logger } = capturedLogger(true);

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    const env = { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_SERVICE_NAME: 'tracing-test' };
    // The batch goes out every 50 ms rather than every 5 s: the test reads what arrived.
    process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
    // As src/server.ts starts it, from the same settings the app reads.
    tracing = startTracing(tracingOf(loadConfig({ NODE_ENV: 'test', ...env }))!, logger);
    app = await startTestApp({ env, logger });
    f = await makeOrderFixture(app.sql);
    reader = await createTestKey(app.url, { owner: 'traced-reader@example.com', scopes: ['read:products'] });
    buyer = await createTestKey(app.url, { owner: 'traced@example.com', scopes: ['read:orders', 'write:orders', 'write:webhooks'] });
    hooks = await startReceiver();
  });
  afterAll(async () => {
    await hooks?.close();
    await app?.close();
    await tracing?.shutdown();
    await otlp?.close();
    delete process.env.OTEL_BSP_SCHEDULE_DELAY;
  });

  /** The spans of a trace once its server span (and `also`) arrived. */
  const traceOf = (traceId: string, also: (spans: ReceivedSpan[]) => boolean = () => true) =>
    eventually(
      `the spans of trace ${traceId}`,
      async () => otlp.spans.filter((s) => s.traceId === traceId),
      (spans) => spans.some((s) => s.kind === 2) && also(spans),
      15_000,
    );
  const serverSpanOf = (spans: ReceivedSpan[]) => spans.find((s) => s.kind === 2)!;
  const named = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);
  /** True when `span` is `ancestor` or below it. */
  const isUnder = (spans: ReceivedSpan[], span: ReceivedSpan, ancestor: ReceivedSpan): boolean => {
    for (let at: ReceivedSpan | undefined = span; at; at = spans.find((s) => s.spanId === at!.parentSpanId)) if (at.spanId === ancestor.spanId) return true;
    return false;
  };

  it('continues the caller’s trace in a server span named by the route, with the gate, the response cache and each statement under it', async () => {
    const traceId = hex(16);
    const parentId = hex(8);
    const search = 'tracedterm';
    const res = await app.get(`/api/products?limit=2&search=${search}`, {
      headers: { 'x-api-key': reader.key, traceparent: traceparent(traceId, parentId), tracestate: 'shop=7', 'x-request-id': 'traced-products' },
    });
    expect(res.status).toBe(200);
    const spans = await traceOf(traceId, (s) => s.some((x) => x.attributes['db.system'] === 'postgresql'));
    const server = serverSpanOf(spans);
    expect(server).toMatchObject({ name: 'GET /api/products', parentSpanId: parentId, status: 0 });
    expect(server.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.route': '/api/products', 'url.path': '/api/products', 'http.response.status_code': 200, 'marketplace.request_id': 'traced-products' });
    expect(server.resource['service.name']).toBe('tracing-test');
    // Every span of the request is under its server span.
    for (const span of spans) expect(isUnder(spans, span, server), span.name).toBe(true);

    const [gate] = named(spans, 'gate admit');
    expect(gate).toMatchObject({ parentSpanId: server.spanId, kind: 1 });
    expect(gate!.attributes).toEqual({ 'gate.caller.kind': 'key', 'gate.ratelimit.policy': 'pro', 'gate.ratelimit.bucket': `key:${reader.id}`, 'gate.ratelimit.allowed': true });
    const [lookup] = named(spans, 'response cache lookup');
    expect(lookup!.attributes).toEqual({ 'cache.face': 'rest', 'cache.result': 'miss' });
    const [execute] = named(spans, 'graphql.execute');
    expect(execute).toBeDefined();

    const statements = spans.filter((s) => s.attributes['db.system'] === 'postgresql');
    for (const statement of statements) {
      expect(statement.kind).toBe(3);
      expect(statement.attributes).toMatchObject({ 'db.system.name': 'postgresql', 'db.namespace': new URL(app.url).pathname.slice(1), 'db.query.text': expect.any(String) });
      expect(statement.name).toBe(`${statement.attributes['db.operation.name']} ${statement.attributes['db.namespace']}`);
    }
    // The page's read, made while executing, with its search term bound, not written in.
    const read = statements.find((s) => /FROM "public"\."Product"|FROM "Product"/.test(String(s.attributes['db.query.text'])) && isUnder(spans, s, execute!));
    expect(read, JSON.stringify(statements.map((s) => s.attributes['db.query.text']))).toBeDefined();
    expect(String(read!.attributes['db.query.text'])).toMatch(/\$1/);

    // The same request again is the cache's hit, and reads nothing more of the catalogue.
    const again = hex(16);
    await app.get(`/api/products?limit=2&search=${search}`, { headers: { 'x-api-key': reader.key, traceparent: traceparent(again) } });
    const second = await traceOf(again, (s) => named(s, 'response cache lookup').length > 0);
    expect(named(second, 'response cache lookup')[0]!.attributes['cache.result']).toBe('hit');
    expect(named(second, 'graphql.execute')).toEqual([]);

    expect(otlp.bodies.join('\n')).not.toContain(search);
    expect(otlp.bodies.join('\n')).not.toContain(reader.key);
  });

  it('shows a refused key as the gate’s refusal, never the key; a request without traceparent starts a trace of its own', async () => {
    const madeUp = `mk_live_${hex(16)}`;
    const res = await app.get('/api/products?limit=1', { headers: { 'x-api-key': madeUp, 'x-request-id': 'traced-refusal' } });
    expect(res.status).toBe(401);
    const server = await eventually(
      'the refused request’s span',
      async () => otlp.spans.find((s) => s.kind === 2 && s.attributes['marketplace.request_id'] === 'traced-refusal'),
      (s) => s !== undefined,
      15_000,
    );
    expect(server!.parentSpanId).toBeUndefined();
    expect(server).toMatchObject({ name: 'GET /api/products', status: 0, attributes: expect.objectContaining({ 'http.response.status_code': 401 }) });
    const spans = await traceOf(server!.traceId, (s) => named(s, 'gate admit').length > 0);
    expect(named(spans, 'gate admit')[0]!.attributes).toMatchObject({ 'gate.caller.kind': 'refused', 'gate.ratelimit.policy': 'invalid-keys', 'gate.refused.status': 401 });
    expect(otlp.bodies.join('\n')).not.toContain(madeUp);
    expect(otlp.bodies.join('\n')).not.toContain(madeUp.slice(8));
  });

  it('starts a trace of its own for a traceparent it cannot read, and answers as always', async () => {
    for (const [i, given] of [`00-${'g'.repeat(32)}-${hex(8)}-01`, `00-${'0'.repeat(32)}-${hex(8)}-01`, 'x'.repeat(2000)].entries()) {
      const res = await app.get('/api/categories', { headers: { traceparent: given, tracestate: '=,'.repeat(300), 'x-request-id': `traced-odd-${i}` } });
      expect(res.status).toBe(200);
      const server = await eventually(
        'the span',
        async () => otlp.spans.find((s) => s.kind === 2 && s.attributes['marketplace.request_id'] === `traced-odd-${i}`),
        (s) => s !== undefined,
        15_000,
      );
      expect(server!.parentSpanId).toBeUndefined();
      expect(server!.traceId).not.toBe('0'.repeat(32));
    }
  });

  it('names a GraphQL request by its operation, with parse, validate and execute under it', async () => {
    const traceId = hex(16);
    const res = await app.get('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparent(traceId) },
      body: JSON.stringify({ query: 'query Cheapest { products(limit: 1) { items { id } } }' }),
    });
    expect(res.status).toBe(200);
    const spans = await traceOf(traceId, (s) => named(s, 'graphql.execute').length > 0);
    const server = serverSpanOf(spans);
    expect(server.name).toBe('query Cheapest');
    expect(server.attributes).toMatchObject({ 'http.route': '/graphql', 'http.request.method': 'POST', 'http.response.status_code': 200 });
    for (const phase of ['graphql.parse', 'graphql.validate', 'graphql.execute']) expect(named(spans, phase)[0]?.parentSpanId, phase).toBe(server.spanId);
    expect(named(spans, 'graphql.execute')[0]!.attributes).toMatchObject({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'Cheapest' });
    expect(named(spans, 'gate admit')[0]!.attributes).toMatchObject({ 'gate.caller.kind': 'anonymous', 'gate.ratelimit.policy': 'anonymous' });
  });

  it('continues the order’s trace in its webhook delivery, a client span whose context the receiver is sent', async () => {
    const traceId = hex(16);
    const notes = 'leave it with the neighbour, code 4711';
    const { secret, delivery } = await orderWithWebhook(app, f, buyer, hooks, { traceparent: traceparent(traceId), tracestate: 'shop=7' }, notes);
    const sent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(delivery.headers.traceparent));
    expect(sent?.[1], String(delivery.headers.traceparent)).toBe(traceId);
    expect(delivery.headers.tracestate).toBe('shop=7');

    const spans = await traceOf(traceId, (s) => s.some((x) => x.spanId === sent![2]));
    const attempt = spans.find((s) => s.spanId === sent![2])!;
    expect(attempt).toMatchObject({ name: 'webhook delivery', kind: 3, status: 0 });
    expect(attempt.attributes).toEqual({
      'server.address': '127.0.0.1',
      'server.port': hooks.port,
      'http.request.method': 'POST',
      'http.response.status_code': 204,
      'webhook.event.type': 'order.created',
      'webhook.endpoint.id': expect.any(String),
      'webhook.attempt': 1,
      'webhook.outcome': 'success',
    });
    // Its parent is the span the order's event was written in, under the order's request.
    const server = serverSpanOf(spans);
    expect(server).toMatchObject({ name: 'POST /api/orders', attributes: expect.objectContaining({ 'http.response.status_code': 201 }) });
    const writer = spans.find((s) => s.spanId === attempt.parentSpanId);
    expect(writer && isUnder(spans, writer, server)).toBe(true);
    // The order's statements are there, without the values they wrote.
    expect(spans.some((s) => /^INSERT INTO "public"\."Order"/.test(String(s.attributes['db.query.text'])))).toBe(true);
    const everything = otlp.bodies.join('\n');
    for (const secretText of [notes, secret, buyer.key, delivery.headers['webhook-signature'] as string, hooks.url]) expect(everything).not.toContain(secretText);
  });

  it('writes the trace and span in the request’s log lines: its access line, and any line logged while serving it', async () => {
    const traceId = hex(16);
    await app.get('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: traceparent(traceId), 'x-request-id': 'traced-log' },
      body: JSON.stringify({ query: '{ categories { items { id } } }' }),
    });
    const server = serverSpanOf(await traceOf(traceId));
    const access = lines.find((l) => l.requestId === 'traced-log');
    expect(access).toMatchObject({ msg: 'request', traceId, spanId: server.spanId });
    // Yoga's own debug lines, logged while the request is served.
    const during = lines.filter((l) => l.traceId === traceId && l !== access);
    expect(during.length, JSON.stringify(lines.slice(-10))).toBeGreaterThan(0);
  });
});

describe('the server process (npm start)', () => {
  let db: TestDatabase;
  let otlp: OtlpReceiver;
  let running: Service | undefined;
  beforeAll(async () => {
    db = await createTestDatabase('seeded');
    otlp = await startOtlpReceiver();
  });
  afterAll(async () => {
    killGroup(running);
    await otlp?.close();
    await db?.drop();
  });

  /** Starts the service with `env`, sends it one request continuing `traceId`, and stops it with SIGTERM. */
  async function oneRequest(env: Record<string, string>, traceId: string) {
    running = npmStart({ NODE_ENV: 'development', DATABASE_URL: db.url, PORT: '0', ...env });
    const port = await listeningPort(running);
    const res = await fetch(`http://127.0.0.1:${port}/api/categories`, { headers: { traceparent: traceparent(traceId) } });
    expect(res.status).toBe(200);
    process.kill(running.npm.pid!, 'SIGTERM');
    expect((await running.exited).code).toBe(0);
    return running.output();
  }

  it('sends the spans still batched as it stops; with OTEL_SDK_DISABLED=true, sends nothing', async () => {
    const traceId = hex(16);
    // Batches would go out every 10 minutes: the span arrives because shutdown sends it.
    const output = await oneRequest({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_SERVICE_NAME: 'tracing-process', OTEL_BSP_SCHEDULE_DELAY: '600000' }, traceId);
    expect(output).toContain('tracing: spans are sent over OTLP');
    const server = otlp.spans.find((s) => s.traceId === traceId && s.kind === 2);
    expect(server, output).toMatchObject({ name: 'GET /api/categories', resource: expect.objectContaining({ 'service.name': 'tracing-process' }) });
    expect(otlp.strays).toEqual([]);

    const before = otlp.bodies.length;
    const off = await oneRequest({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_SDK_DISABLED: 'true', OTEL_BSP_SCHEDULE_DELAY: '10' }, hex(16));
    expect(off).not.toContain('tracing:');
    expect(otlp.bodies.length).toBe(before);
    expect(otlp.strays).toEqual([]);
  }, 120_000);
});
