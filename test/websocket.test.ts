import { Writable } from 'node:stream';
import pino from 'pino';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBSOCKET_BOUNDS } from '../src/config/limits.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { eventually } from './helpers/eventually.js';
import { connect, nextAddress, Operation, run, wsUrl, type Closed } from './helpers/graphql-ws.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { makeOrderFixture, workedExample, type OrderFixture } from './helpers/orders.js';
import { untilListening } from './helpers/live.js';

// GraphQL over WebSocket (docs/api.md, "Subscriptions"): graphql-ws's own client (and, for what
// a client library never sends, a bare `ws` socket) against two instances of the app on one
// database, and a third with tight bounds for heartbeats, the socket and operation limits, an
// origin list and shutdown.

let db: TestDatabase;
let a: TestApp;
let b: TestApp;
let f: OrderFixture;
let buyer: TestKey;
let member: TestKey;
let catalogue: TestKey;
let watcher: TestKey;
let logs = '';

beforeAll(async () => {
  db = await createTestDatabase('seeded');
  const env = { ORDER_CREATE_LIMIT: '1000', SUBSCRIPTIONS_PER_KEY: '2' };
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => ((logs += chunk), done()) }));
  [a, b] = await Promise.all([startTestApp({ url: db.url, env }), startTestApp({ url: db.url, env, logger })]);
  f = await makeOrderFixture(a.sql);
  [buyer, member, catalogue, watcher] = await Promise.all([
    createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders', 'write:orders'] }),
    createTestKey(db.url, { owner: 'ws-clerk@supplier.example', scopes: ['read:orders', 'write:products'] }),
    createTestKey(db.url, { owner: 'ws-watcher@example.com', scopes: ['read:products'] }),
    createTestKey(db.url, { owner: 'ws-watcher@example.com', scopes: ['read:products', 'read:prices'] }),
  ]);
  await a.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [member.accountId, f.supplierId]);
  // Both instances hear changes before any test writes one (test/subscriptions.test.ts says why).
  await untilListening(a, 2);
}, 60_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  await db?.drop();
});

const ME = /* GraphQL */ `{ me { email } }`;
const ORDER_EVENTS = /* GraphQL */ `subscription { orderEvents { type order { id status } } }`;
const PRODUCT_CHANGED = /* GraphQL */ `subscription($id: ID!) { productChanged(id: $id) { id product { price } price { price } } }`;
const CREATE_ORDER = /* GraphQL */ `mutation($input: CreateOrderInput!) { createOrder(input: $input) { id status } }`;
const UPDATE_PRICE = /* GraphQL */ `mutation($id: ID!, $price: Decimal!) { updatePrice(productId: $id, input: { price: $price }) { price } }`;

/** A GraphQL request over HTTP with a key, as the other tests send it. */
async function http(app: TestApp, query: string, variables: Record<string, unknown>, key: TestKey) {
  const res = await app.get('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key.key },
    body: JSON.stringify({ query, variables }),
  });
  return res.body;
}

/** The close that refused a connection (the client never connected). */
async function refusedWith(ws: ReturnType<typeof connect>): Promise<Closed> {
  return ws.acknowledged.then(
    () => {
      throw new Error('the connection was acknowledged');
    },
    (closed: Closed) => closed,
  );
}

/**
 * Does `write` until `heard` holds (the stream may take a moment to open: no message says it
 * has), at most `ms`.
 */
async function writeUntil(what: string, write: (n: number) => Promise<void>, heard: () => boolean, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (let n = 1; !heard(); n++) {
    if (Date.now() > deadline) throw new Error(`${what}: not heard within ${ms} ms`);
    await write(n);
    const until = Date.now() + 300;
    while (!heard() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('two instances on one database', () => {
  it('a price written through one instance’s API arrives on a socket of the other', async () => {
    const ws = connect(b, { init: { 'X-API-Key': watcher.key } });
    const live = new Operation(ws.client, PRODUCT_CHANGED, { id: f.a.id });
    await writeUntil(
      'the price change',
      async (n) => {
        const written = await http(a, UPDATE_PRICE, { id: f.a.id, price: `31.${String(n).padStart(2, '0')}` }, member);
        expect(written.errors).toBeUndefined();
      },
      () => live.results.length > 0,
    );
    const { rows } = await a.sql.query<{ price: string }>(`SELECT price::text FROM "Product" WHERE id = $1`, [f.a.id]);
    expect(live.results.at(-1)).toEqual({ data: { productChanged: { id: f.a.id, product: { price: Number(rows[0]!.price) }, price: { price: Number(rows[0]!.price) } } } });
    live.stop();
    await ws.dispose();
  });

  it('a mutation and a query run over a socket; the order the mutation placed is heard on the other instance’s socket', async () => {
    const [writer, listener] = [connect(a, { init: { 'X-API-Key': buyer.key } }), connect(b, { init: { 'X-API-Key': buyer.key } })];
    const events = new Operation(listener.client, ORDER_EVENTS);
    const placed: string[] = [];
    await writeUntil(
      'the order placed over the other socket',
      async () => {
        const created = await run(writer.client, CREATE_ORDER, { input: workedExample(f) });
        expect(created.completed).toBe(true);
        expect(created.results).toHaveLength(1);
        expect(created.results[0]!.data).toEqual({ createOrder: { id: expect.any(String), status: 'PENDING' } });
        placed.push((created.results[0]!.data as any).createOrder.id);
      },
      () => events.results.some((r) => placed.includes((r.data as any)?.orderEvents?.order?.id)),
    );
    // The rows say the same as the socket.
    const { rows } = await a.sql.query<{ id: string; status: string }>(`SELECT id, status::text FROM "Order" WHERE id = ANY($1::text[]) ORDER BY id`, [placed]);
    expect(rows.map((r) => r.id).sort()).toEqual([...placed].sort());
    const heard = events.results.find((r) => placed.includes((r.data as any)?.orderEvents?.order?.id))!;
    expect(heard.data).toMatchObject({ orderEvents: { type: 'CREATED', order: { status: 'PENDING' } } });

    // A query on the same socket: the order, as the buyer's.
    const read = await run(writer.client, `query($id: ID!) { order(id: $id) { id status } }`, { id: placed[0] });
    expect(read.results).toEqual([{ data: { order: { id: placed[0], status: 'PENDING' } }, extensions: { cost: expect.objectContaining({ requested: expect.any(Number) }) } }]);
    expect(read.completed).toBe(true);
    events.stop();
    await Promise.all([writer.dispose(), listener.dispose()]);
  });
});

describe('authentication', () => {
  it('takes the key from connection_init (X-API-Key in any letter case, Authorization: Bearer), from the handshake’s headers, or from an operation’s extensions.headers', async () => {
    const forms: Array<[string, Parameters<typeof connect>[1]]> = [
      ['X-API-Key in connection_init', { init: { 'X-API-Key': buyer.key } }],
      ['x-api-key in connection_init', { init: { 'x-api-key': buyer.key } }],
      ['AUTHORIZATION: Bearer in connection_init', { init: { AUTHORIZATION: `Bearer ${buyer.key}` } }],
      ['X-API-Key on the handshake', { headers: { 'X-API-Key': buyer.key } }],
      ['Authorization: bearer on the handshake', { headers: { Authorization: `bearer ${buyer.key}` } }],
      ['the same key on the handshake and in connection_init', { headers: { 'X-API-Key': buyer.key }, init: { authorization: `Bearer ${buyer.key}` } }],
    ];
    for (const [form, opts] of forms) {
      const ws = connect(b, opts);
      const me = await run(ws.client, ME);
      expect(me.results[0]?.data, form).toEqual({ me: { email: 'buyer@example.com' } });
      await ws.dispose();
    }
    // GraphiQL sends the headers of its Headers pane with each operation.
    const graphiql = connect(b);
    const withHeaders = await run(graphiql.client, ME, undefined, { headers: { 'X-API-Key': buyer.key } });
    expect(withHeaders.results[0]?.data).toEqual({ me: { email: 'buyer@example.com' } });
    // Without a key the socket is anonymous: the catalogue answers, `me` says UNAUTHORIZED.
    const anonymous = await run(graphiql.client, `{ me { email } categories(limit: 1) { items { id } } }`);
    expect(anonymous.results[0]?.data).toMatchObject({ me: null, categories: { items: [{ id: expect.any(String) }] } });
    expect(anonymous.results[0]?.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
    await graphiql.dispose();
  });

  it('closes with 4403 Forbidden for an invalid key, wherever it is presented, and says why', async () => {
    const cases: Array<Parameters<typeof connect>[1]> = [
      { init: { 'X-API-Key': 'mk_live_not_a_real_key' } },
      { headers: { 'X-API-Key': 'mk_live_not_a_real_key' } },
      { init: { Authorization: 'Bearer ' } },
      { headers: { Authorization: `Bearer ${buyer.key}x` } },
    ];
    for (const opts of cases) {
      const closed = await refusedWith(connect(b, opts));
      expect(closed, JSON.stringify(opts)).toEqual({ code: 4403, reason: 'Invalid API key: unknown, revoked or expired' });
    }
    // A credential that is no string: the payload is malformed (4400).
    const malformed = await refusedWith(connect(b, { init: { 'X-API-Key': 42 } }));
    expect(malformed.code).toBe(4400);
    expect(malformed.reason).toContain('X-API-Key');
  });

  it('refuses conflicting keys as HTTP does: 4403, “Conflicting credentials”', async () => {
    const other = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'] });
    const conflicts: Array<Parameters<typeof connect>[1]> = [
      { headers: { 'X-API-Key': buyer.key }, init: { 'X-API-Key': other.key } },
      { init: { 'X-API-Key': buyer.key, authorization: `Bearer ${other.key}` } },
      { headers: { 'X-API-Key': buyer.key, Authorization: `Bearer ${other.key}` } },
    ];
    for (const opts of conflicts) {
      const closed = await refusedWith(connect(b, opts));
      expect(closed.code, JSON.stringify(opts)).toBe(4403);
      expect(closed.reason).toMatch(/^Conflicting credentials/);
    }
    // An operation presenting another key than its socket's is refused alone; the socket stays.
    const ws = connect(b, { init: { 'X-API-Key': buyer.key } });
    const conflicting = await run(ws.client, ME, undefined, { headers: { 'x-api-key': other.key } });
    expect(conflicting.refusal?.[0]).toMatchObject({ message: expect.stringMatching(/^Conflicting credentials/), extensions: { code: 'UNAUTHORIZED' } });
    expect((await run(ws.client, ME)).results[0]?.data).toEqual({ me: { email: 'buyer@example.com' } });
    expect(ws.closes).toEqual([]);
    await ws.dispose();
  });
});

describe('the same rules as over HTTP', () => {
  it('a missing scope refuses the operation with FORBIDDEN; the socket stays open', async () => {
    const ws = connect(b, { init: { 'X-API-Key': catalogue.key } });
    const refused = await run(ws.client, ORDER_EVENTS);
    expect(refused.refusal?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: ['read:orders'] } });
    const orders = await run(ws.client, `{ orders { items { id } } }`);
    expect(orders.results[0]?.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await run(ws.client, `{ categories(limit: 1) { items { id } } }`)).results[0]?.data).toBeTruthy();
    expect(ws.closes).toEqual([]);
    await ws.dispose();
  });

  it('document rules and the per-key bound on open streams apply to a socket’s operations', async () => {
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'] });
    const ws = connect(b, { init: { 'X-API-Key': key.key } });
    const deep = await run(ws.client, `subscription { orderEvents { order { items { product { supplier { products { items { category { parent { parent { parent { id } } } } } } } } } } } }`);
    expect(deep.refusal?.[0]).toMatchObject({ message: expect.stringMatching(/depth/i), extensions: { code: 'VALIDATION_ERROR' } });
    const tooMany = await run(ws.client, `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: __typename`).join(' ')} categories { items { ${Array.from({ length: 16 }, (_, i) => `n${i}: name`).join(' ')} } } }`);
    expect(tooMany.refusal?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');

    // SUBSCRIPTIONS_PER_KEY is 2 here: a third stream of the key is refused, on any socket.
    const first = new Operation(ws.client, ORDER_EVENTS);
    const second = new Operation(ws.client, ORDER_EVENTS);
    let third: Operation | undefined;
    await eventually(
      'a third stream refused once two are open',
      async () => (third = await run(ws.client, ORDER_EVENTS)),
      (op) => op.refusal?.[0]?.extensions?.code === 'RATE_LIMIT_EXCEEDED',
    );
    expect(third!.refusal![0]).toMatchObject({ message: expect.stringContaining('SUBSCRIPTIONS_PER_KEY'), extensions: { details: { openSubscriptions: 2, limit: 2 } } });
    expect(first.ended || second.ended).toBe(false);
    first.stop();
    second.stop();
    await ws.dispose();
  });

  it('each operation is a request of the key’s rate limit: past it the operation is refused with RATE_LIMIT_EXCEEDED and the socket stays; a new connection closes with 4429', async () => {
    // Enterprise: its own limit. connection_init is one request, each operation one more.
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', plan: 'enterprise', limit: 4, windowSeconds: 3600, scopes: ['read:orders'] });
    const ws = connect(b, { init: { 'X-API-Key': key.key } });
    for (let i = 0; i < 3; i++) expect((await run(ws.client, ME)).results[0]?.data).toEqual({ me: { email: 'buyer@example.com' } });
    const over = await run(ws.client, ME);
    expect(over.refusal?.[0]).toMatchObject({ message: expect.stringMatching(/^Rate limit exceeded: at most 4 requests per hour/), extensions: { code: 'RATE_LIMIT_EXCEEDED', retryAfter: expect.any(Number) } });
    const overAgain = await run(ws.client, `subscription { orderEvents { type } }`);
    expect(overAgain.refusal?.[0]?.extensions?.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(ws.closes).toEqual([]);
    await ws.dispose();

    const closed = await refusedWith(connect(b, { init: { 'X-API-Key': key.key } }));
    expect(closed.code).toBe(4429);
    expect(closed.reason).toMatch(/^Rate limit exceeded: at most 4 requests per hour for this API key/);
  });

  it('a revoked key’s subscription ends within 2 s, saying why; its later operations are refused', async () => {
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'] });
    const ws = connect(b, { init: { 'X-API-Key': key.key } });
    const stream = new Operation(ws.client, ORDER_EVENTS);
    // Open once the key's order is heard (no message says a stream has opened).
    await writeUntil('an order', async () => void (await http(a, CREATE_ORDER, { input: workedExample(f) }, buyer)), () => stream.results.length > 0);
    const revokedAt = Date.now();
    await a.sql.query(`UPDATE "ApiKey" SET "revokedAt" = now() WHERE id = $1`, [key.id]);
    await stream.until('the stream ends', (s) => s.ended, 2000);
    expect(stream.endedAt - revokedAt).toBeLessThan(2000);
    expect(stream.completed).toBe(true);
    expect(stream.results.at(-1)?.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
    const after = await run(ws.client, ME);
    expect(after.refusal?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
    await ws.dispose();
  });

  it('an expired key’s subscription ends, saying why', async () => {
    const expiresAt = new Date(Date.now() + 6000);
    const key = await createTestKey(db.url, { owner: 'buyer@example.com', scopes: ['read:orders'], expiresAt });
    const ws = connect(b, { init: { 'X-API-Key': key.key } });
    const stream = new Operation(ws.client, ORDER_EVENTS);
    await writeUntil('an order', async () => void (await http(a, CREATE_ORDER, { input: workedExample(f) }, buyer)), () => stream.results.length > 0, 5000);
    // The hub's sweep ends it (docs/api.md: within its sweep of the keys of open streams).
    await stream.until('the stream ends', (s) => s.ended, 20_000);
    expect(stream.endedAt).toBeGreaterThanOrEqual(expiresAt.getTime());
    expect(stream.results.at(-1)?.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
    await ws.dispose();
  });
});

/** A bare socket, for what graphql-ws's client never sends. */
function bare(app: TestApp, opts: { protocol?: string | null; headers?: Record<string, string>; autoPong?: boolean; path?: string } = {}) {
  const protocols = opts.protocol === null ? [] : [opts.protocol ?? 'graphql-transport-ws'];
  const socket = new WebSocket(wsUrl(app, opts.path), protocols, { headers: { 'x-forwarded-for': nextAddress(), ...opts.headers }, autoPong: opts.autoPong ?? true });
  const messages: any[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data))));
  socket.on('error', () => undefined);
  const closed = new Promise<Closed & { at: number }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: String(reason), at: Date.now() })));
  const opened = new Promise<void>((resolve, reject) => {
    socket.on('open', () => resolve());
    socket.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk));
      res.on('end', () => reject(Object.assign(new Error(`answered ${res.statusCode}`), { status: res.statusCode, headers: res.headers, body: JSON.parse(body || 'null') })));
    });
  });
  opened.catch(() => undefined);
  const send = (message: unknown) => socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  return { socket, messages, closed, opened, send };
}

describe('the protocol, held to', () => {
  it('a message that is not the protocol’s closes with 4400; one before connection_init with 4401; a second connection_init with 4429', async () => {
    const garbage = bare(b);
    await garbage.opened;
    garbage.send('{ not json');
    expect(await garbage.closed).toMatchObject({ code: 4400, reason: 'Invalid message received' });

    for (const message of [{ type: 'next', id: '1', payload: {} }, { type: 'subscribe', id: '1', payload: { query: 42 } }, { type: 'nonsense' }, [1, 2]]) {
      const socket = bare(b);
      await socket.opened;
      socket.send({ type: 'connection_init' });
      await eventually('the acknowledgement', async () => socket.messages, (m) => m.some((x) => x.type === 'connection_ack'));
      socket.send(message);
      expect(await socket.closed, JSON.stringify(message)).toMatchObject({ code: 4400 });
    }

    const early = bare(b);
    await early.opened;
    early.send({ type: 'subscribe', id: '1', payload: { query: '{ __typename }' } });
    expect((await early.closed).code).toBe(4401);

    const twice = bare(b);
    await twice.opened;
    twice.send({ type: 'connection_init' });
    twice.send({ type: 'connection_init' });
    expect((await twice.closed).code).toBe(4429);
  });

  it('a message over the size limit closes with 1009; a socket without the subprotocol with 4406', async () => {
    const big = bare(b);
    await big.opened;
    big.send({ type: 'connection_init' });
    await eventually('the acknowledgement', async () => big.messages, (m) => m.length > 0);
    big.send({ type: 'subscribe', id: '1', payload: { query: `{ __typename }${' '.repeat(WEBSOCKET_BOUNDS.messageBytes)}` } });
    expect((await big.closed).code).toBe(1009);

    const noProtocol = bare(b, { protocol: null });
    await noProtocol.opened;
    expect((await noProtocol.closed).code).toBe(4406);
  });

  it('a socket that never sends connection_init is closed with 4408', async () => {
    const quiet = bare(b);
    await quiet.opened;
    const openedAt = Date.now();
    const closed = await quiet.closed;
    expect(closed).toMatchObject({ code: 4408, reason: 'Connection initialisation timeout' });
    expect(closed.at - openedAt).toBeGreaterThanOrEqual(WEBSOCKET_BOUNDS.connectionInitMs - 100);
  });

  it('a handshake elsewhere than /graphql is 404 in the contract’s JSON; an upgrade to another protocol is answered as a plain request', async () => {
    const elsewhere = bare(b, { path: '/api/products' });
    const refused = await elsewhere.opened.then(() => null, (error: { status: number; body: unknown }) => error);
    expect(refused).toMatchObject({ status: 404, body: { success: false, error: { code: 'NOT_FOUND' } } });

    // curl --http2 over http:// asks to upgrade to h2c: HTTP lets the server ignore that.
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(`${b.base}/api/categories?limit=1`);
      import('node:http').then(({ request }) => {
        const req = request(url, { headers: { connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c', 'http2-settings': 'AAMAAABkAAQAoAAAAAIAAAAA' } }, (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, body }));
        });
        req.on('error', reject);
        req.end();
      }, reject);
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ success: true, data: [{ id: expect.any(String) }] });
  });
});

describe('the logs', () => {
  it('log the handshake and each operation as requests, and the socket when it closes, without the key', async () => {
    const ws = connect(b, { init: { 'X-API-Key': buyer.key }, headers: { 'X-Request-ID': 'ws-trace-1' } });
    await run(ws.client, ME);
    await ws.dispose();
    const lines = () => logs.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
    const closeLine = await eventually('the socket’s closing line', async () => lines().find((l) => l.requestId === 'ws-trace-1' && l.msg === 'websocket closed'), (l) => l !== undefined);
    expect(closeLine).toMatchObject({ closeCode: 1000, operations: 1, ms: expect.any(Number) });
    const handshakeLine = lines().find((l) => l.requestId === 'ws-trace-1' && l.msg === 'request');
    expect(handshakeLine).toMatchObject({ method: 'GET', path: '/graphql', route: '/graphql', status: 101, transport: 'websocket', ms: expect.any(Number) });
    const operationLine = lines().find((l) => l.requestId === 'ws-trace-1:1');
    expect(operationLine).toMatchObject({ msg: 'request', method: 'POST', path: '/graphql', route: '/graphql', status: 200, transport: 'websocket' });
    // A refused handshake is a request too, and the metrics count both.
    await refusedWith(connect(b, { init: { 'X-API-Key': 'mk_live_not_a_real_key' } }));
    const metrics = await (await fetch(`${b.base}/metrics`)).text();
    expect(metrics).toMatch(/^http_requests_total\{route="\/graphql",method="GET",status="101"\} [1-9]\d*$/m);
    expect(metrics).toMatch(/^graphql_ws_closes_total\{code="4403"\} [1-9]\d*$/m);
    expect(metrics).toMatch(/^graphql_ws_connections \d+$/m);
    expect(logs).not.toContain(buyer.key);
  });
});

describe('bounds and shutdown', () => {
  let c: TestApp;
  let stopped = false;
  afterAll(async () => {
    if (!stopped) await c?.close();
  });
  beforeAll(async () => {
    c = await startTestApp({
      url: db.url,
      env: { CORS_ORIGINS: 'https://shop.example' },
      websocket: { keepAliveMs: 200, maxOperations: 2, maxSockets: 3, maxSocketsPerAddress: 2 },
    });
  }, 60_000);

  it('refuses a handshake from an origin CORS_ORIGINS does not list (403); a listed one and the server’s own pass', async () => {
    const evil = bare(c, { headers: { origin: 'https://evil.example' } });
    const refused = await evil.opened.then(() => null, (error: { status: number; body: any }) => error);
    expect(refused).toMatchObject({ status: 403, body: { errors: [{ extensions: { code: 'FORBIDDEN' } }] } });
    for (const origin of ['https://shop.example', new URL(c.base).origin]) {
      const socket = bare(c, { headers: { origin } });
      await socket.opened;
      socket.socket.close();
      await socket.closed;
    }
  });

  it('pings: a peer that stops answering is dropped, one that answers stays', async () => {
    const [dead, alive] = [bare(c, { autoPong: false }), bare(c)];
    await Promise.all([dead.opened, alive.opened]);
    for (const s of [dead, alive]) s.send({ type: 'connection_init' });
    const closed = await dead.closed;
    expect(closed.code).toBe(1006);
    expect(alive.socket.readyState).toBe(WebSocket.OPEN);
    alive.socket.close();
    await alive.closed;
  });

  it('bounds the operations of one socket, the sockets of one client address and those of one process', async () => {
    const ws = connect(c, { init: { 'X-API-Key': catalogue.key } });
    const streams = [new Operation(ws.client, PRODUCT_CHANGED, { id: f.b.id }), new Operation(ws.client, PRODUCT_CHANGED, { id: f.c.id })];
    const third = await run(ws.client, ME);
    expect(third.refusal?.[0]).toMatchObject({ extensions: { code: 'RATE_LIMIT_EXCEEDED', details: { openOperations: 2, limit: 2 } } });
    for (const s of streams) s.stop();
    const after = await eventually('an operation once one is completed', async () => run(ws.client, `{ categories(limit: 1) { items { id } } }`), (op) => op.results.length > 0);
    expect(after.results[0]?.data).toBeTruthy();

    // Two from one address (its most here); a third from it is refused, from another it is not.
    const address = { 'x-forwarded-for': nextAddress() };
    const more = [bare(c, { headers: address }), bare(c, { headers: address })];
    await Promise.all(more.map((s) => s.opened));
    const sameAddress = await bare(c, { headers: address }).opened.then(() => null, (error: { status: number; body: any }) => error);
    expect(sameAddress).toMatchObject({ status: 429, body: { errors: [{ extensions: { code: 'RATE_LIMIT_EXCEEDED', details: { openSockets: 2, limit: 2 } } }] } });
    // Three sockets are open now, the process's most here: a fourth is refused, whoever asks.
    const over = bare(c);
    const refused = await over.opened.then(() => null, (error: { status: number; headers: Record<string, string>; body: any }) => error);
    expect(refused).toMatchObject({ status: 503, body: { errors: [{ extensions: { code: 'SERVICE_UNAVAILABLE' } }] } });
    expect(refused!.headers['retry-after']).toBe('1');
    for (const s of more) s.socket.close();
    await Promise.all(more.map((s) => s.closed));
    await ws.dispose();
  });

  it('closing the server closes every socket with 1001, and the app stops', async () => {
    const ws = connect(c, { init: { 'X-API-Key': watcher.key } });
    await ws.acknowledged;
    const stream = new Operation(ws.client, PRODUCT_CHANGED, { id: f.d.id });
    const quiet = bare(c);
    await quiet.opened;
    stopped = true;
    await c.close();
    await stream.until('the stream ends', (s) => s.ended, 5000);
    expect(ws.closes[0]).toMatchObject({ code: 1001, reason: 'The server is shutting down: connect again (to another instance)' });
    expect(await quiet.closed).toMatchObject({ code: 1001 });
  });
});
