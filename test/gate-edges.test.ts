import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../src/config/limits.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { classify, sentSince } from './helpers/statements.js';
import { randomBytes } from 'node:crypto';

// What clients meet at the edge of the gate: repeated credentials, methods /graphql does not
// take, OPTIONS answers, and what a refused request is told.

const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit'];

/** One request over a raw socket, so header lines can repeat as the client wrote them. */
async function rawRequest(base: string, lines: string[]): Promise<{ status: number; headers: string; body: string }> {
  const { port } = new URL(base);
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.write([...lines, 'Host: localhost', 'Connection: close', '', ''].join('\r\n'));
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const [head = '', ...rest] = text.split('\r\n\r\n');
  // Chunked bodies: the JSON is the one line that starts with { or [.
  const body = rest.join('\r\n\r\n').split('\r\n').find((line) => line.startsWith('{') || line.startsWith('[')) ?? '';
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body };
}

let app: TestApp;
let pro: TestKey;
let basic: TestKey;
beforeAll(async () => {
  app = await startTestApp({ env: { ANON_RATE_LIMIT: '30' } });
  pro = await createTestKey(app.url, { plan: 'pro', scopes: ['read:orders'] });
  basic = await createTestKey(app.url, { plan: 'basic', scopes: ['read:orders'] });
});
afterAll(() => app?.close());

describe('repeated credentials', () => {
  const get = (headerLines: string[]) => rawRequest(app.base, ['GET /api/products?limit=1 HTTP/1.1', 'X-Forwarded-For: 10.99.0.1', ...headerLines]);

  it.each([
    ['two Authorization headers', (a: string, b: string) => [`Authorization: Bearer ${a}`, `Authorization: Bearer ${b}`]],
    ['two X-API-Key headers', (a: string, b: string) => [`X-API-Key: ${a}`, `X-API-Key: ${b}`]],
    ['two keys in one X-API-Key header', (a: string, b: string) => [`X-API-Key: ${a}, ${b}`]],
    ['X-API-Key and a second Bearer', (a: string, b: string) => [`X-API-Key: ${a}`, `Authorization: Bearer ${a}`, `Authorization: Bearer ${b}`]],
  ])('%s with different keys → 401 conflicting credentials, whichever comes first', async (_name, lines) => {
    for (const [first, second] of [
      [pro.key, basic.key],
      [basic.key, pro.key],
      [pro.key, 'mk_' + 'A'.repeat(43)],
    ] as const) {
      const res = await get(lines(first, second));
      expect(res.status).toBe(401);
      const body = JSON.parse(res.body) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('UNAUTHORIZED');
      expect(body.error.message).toMatch(/conflicting credentials/i);
      expect(res.body).not.toContain(first);
      expect(res.body).not.toContain(second);
    }
  });

  it('accepts one key presented several times', async () => {
    const res = await get([`Authorization: Bearer ${pro.key}`, `Authorization: Bearer ${pro.key}`, `X-API-Key: ${pro.key}`, `X-API-Key: ${pro.key}`]);
    expect(res.status).toBe(200);
    expect(res.headers).toContain('ratelimit-policy: "pro";q=5000;w=3600');
  });

  it('refuses disagreeing keys on /graphql and in-process too', async () => {
    const graph = await rawRequest(app.base, [
      'GET /graphql?query=%7B__typename%7D HTTP/1.1',
      'X-Forwarded-For: 10.99.0.2',
      `Authorization: Bearer ${pro.key}`,
      `Authorization: Bearer ${basic.key}`,
    ]);
    expect(graph.status).toBe(401);
    expect(JSON.parse(graph.body).errors[0].extensions.code).toBe('UNAUTHORIZED');

    const headers = new Headers({ 'x-forwarded-for': '10.99.0.3' });
    headers.append('authorization', `Bearer ${pro.key}`);
    headers.append('authorization', `Bearer ${basic.key}`);
    const inProcess = await app.fetchInProcess('/api/products?limit=1', { headers });
    expect(inProcess.status).toBe(401);
    expect(((await inProcess.json()) as { error: { message: string } }).error.message).toMatch(/conflicting credentials/i);

    const same = new Headers();
    same.append('x-api-key', pro.key);
    same.append('x-api-key', pro.key);
    expect((await app.fetchInProcess('/api/products?limit=1', { headers: same })).status).toBe(200);
  });
});

describe('methods', () => {
  it.each(['PUT', 'DELETE', 'PATCH'])('%s /graphql → 405 METHOD_NOT_ALLOWED with Allow, in the GraphQL shape, counted', async (method) => {
    const res = await app.get('/graphql', { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, POST, OPTIONS');
    expect(res.body).toEqual({ errors: [{ message: expect.stringContaining(method), extensions: { code: 'METHOD_NOT_ALLOWED' } }] });
    for (const h of RATE_HEADERS) expect(res.headers.get(h), h).not.toBeNull();
  });

  it('OPTIONS answers under /api and /graphql carry the rate-limit headers without being charged', async () => {
    const client = { 'x-forwarded-for': '192.0.2.77' };
    const before = await app.get('/api/categories', { headers: client });
    const remaining = before.headers.get('x-ratelimit-remaining');
    const preflight = {
      origin: 'https://shop.example',
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'x-api-key',
    };
    for (const path of ['/api/products', '/api/orders/abc', '/graphql']) {
      for (const headers of [client, { ...client, ...preflight }]) {
        const res = await app.get(path, { method: 'OPTIONS', headers });
        expect(res.status, path).toBe(204);
        for (const h of RATE_HEADERS) expect(res.headers.get(h), `${h} on OPTIONS ${path}`).not.toBeNull();
        expect(res.headers.get('x-ratelimit-limit')).toBe('30');
        expect(res.headers.get('x-ratelimit-remaining')).toBe(remaining);
        expect(res.headers.get('x-ratelimit-reset')).toBe(before.headers.get('x-ratelimit-reset'));
      }
    }
    // Six OPTIONS later, the next request is the second one counted.
    const after = await app.get('/api/categories', { headers: client });
    expect(Number(after.headers.get('x-ratelimit-remaining'))).toBe(Number(remaining) - 1);
  });

  it('an OPTIONS never looks at a key: it carries the anonymous bucket, uncounted, and tells no plan', async () => {
    const client = { 'x-forwarded-for': '192.0.2.78' };
    const first = await app.get('/api/categories', { headers: client });
    const options = await app.get('/api/categories', { method: 'OPTIONS', headers: { ...client, 'x-api-key': basic.key } });
    expect(options.headers.get('ratelimit-policy')).toBe('"anonymous";q=30;w=60');
    expect(options.headers.get('x-ratelimit-remaining')).toBe(first.headers.get('x-ratelimit-remaining'));
    const unknown = await app.get('/api/categories', { method: 'OPTIONS', headers: { ...client, 'x-api-key': `mk_${'x'.repeat(43)}` } });
    expect(unknown.status).toBe(204);
    expect(unknown.headers.get('ratelimit-policy')).toBe('"anonymous";q=30;w=60');
  });
});

describe('what a refused request is told', () => {
  it('an anonymous 429 names the rule and says that a key raises the limit and where keys come from', async () => {
    const client = { headers: { 'x-forwarded-for': '192.0.2.88' } };
    let res = await app.get('/api/categories', client);
    for (let i = 0; i < 30 && res.status !== 429; i++) res = await app.get('/api/categories', client);
    expect(res.status).toBe(429);
    const message: string = res.body.error.message;
    expect(message).toMatch(/at most 30 requests per minute/);
    expect(message).toMatch(/API key raises the limit/);
    expect(message).toMatch(/create one in the developer dashboard at \/dashboard/);
    expect(message).toContain(`retry after ${res.body.error.retryAfter} s`);
  });

  it("a key's 429 names its own rule", async () => {
    const small = await createTestKey(app.url, { plan: 'enterprise', scopes: ['read:orders'], limit: 2, windowSeconds: 3600 });
    const h = { headers: { 'x-api-key': small.key } };
    await app.get('/api/categories', h);
    await app.get('/api/categories', h);
    const res = await app.get('/api/categories', h);
    expect(res.status).toBe(429);
    expect(res.body.error.message).toMatch(/^Rate limit exceeded: at most 2 requests per hour for this API key \(enterprise plan\)/);
    expect(res.body.error.message).not.toMatch(/dashboard/);
  });
});

describe('a flood of made-up keys', () => {
  // What a hostile client sent: a new random key on every request. A key that has not proved
  // itself is looked up only while its client's invalid-key bucket has room, and every invalid one
  // is charged to it; a key refused lately is refused from memory.
  const madeUp = () => `mk_${randomBytes(32).toString('base64url')}`;
  // sentSince: the timed flush of the keys' hourly usage reads "ApiKey" too (its join), and may land meanwhile.
  const keyLookups = (since: number) => sentSince(app.statements, since).filter((sql) => classify(sql).reads.includes('ApiKey')).length;

  it('reaches the database at most the invalid-key limit times; past it, 429 saying so, without a lookup', async () => {
    const client = { 'x-forwarded-for': '203.0.113.66' };
    const since = app.statements.length;
    const answers: { status: number; body: { error: { message: string } }; headers: Headers }[] = [];
    for (let i = 0; i < 45; i++) answers.push(await app.get('/api/categories', { headers: { ...client, 'x-api-key': madeUp() } }));
    const statuses = answers.map((a) => a.status);
    expect(LIMITS.invalidKeys.perClient.max).toBe(30);
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(401));
    expect(statuses.slice(30)).toEqual(Array(15).fill(429));
    expect(keyLookups(since)).toBe(30);
    // The limit named is the invalid keys', with its own bucket's headers.
    expect(answers[30]!.body.error.message).toMatch(/^Too many requests with an invalid API key from your address: at most 30 requests per minute; retry after \d+ s/);
    expect(answers[30]!.headers.get('ratelimit-policy')).toMatch(/invalid-keys/);
    // The client's anonymous allowance is untouched.
    expect((await app.get('/api/categories', { headers: client })).status).toBe(200);
    // Another client's real key is unaffected.
    expect((await app.get('/api/orders', { headers: { 'x-forwarded-for': '203.0.113.67', 'x-api-key': pro.key } })).status).toBe(200);
  });

  it('refuses a key it found invalid again from memory, still charging the client', async () => {
    const client = { 'x-forwarded-for': '203.0.113.68' };
    const key = madeUp();
    const first = await app.get('/api/categories', { headers: { ...client, 'x-api-key': key } });
    expect(first.status).toBe(401);
    const since = app.statements.length;
    const again = await app.get('/api/categories', { headers: { ...client, 'x-api-key': key } });
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe('UNAUTHORIZED');
    expect(keyLookups(since)).toBe(0);
    expect(Number(again.headers.get('x-ratelimit-remaining'))).toBe(Number(first.headers.get('x-ratelimit-remaining')) - 1);
  });

  it('never refuses a valid key for its address\'s anonymous traffic, even one not used lately', async () => {
    const office = { 'x-forwarded-for': '203.0.113.70' };
    // The office's anonymous allowance (30 here), spent by others behind the same address.
    for (let i = 0; i < 32; i++) await app.get('/api/categories', { headers: office });
    const anonymous = await app.get('/api/categories', { headers: office });
    expect(anonymous.status).toBe(429);
    expect(anonymous.body.error.message).toMatch(/without an API key/);
    // A developer's key that has not been used in the last minute (never, here) works from there.
    const fresh = await createTestKey(app.url, { scopes: ['read:orders'] });
    const keyed = await app.get('/api/orders', { headers: { ...office, 'x-api-key': fresh.key } });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get('ratelimit-policy')).not.toMatch(/anonymous/);
  });

  it('charges a real key to its own bucket alone once it has proved itself', async () => {
    const client = { 'x-forwarded-for': '203.0.113.69' };
    const anonymousBefore = Number((await app.get('/api/categories', { headers: client })).headers.get('x-ratelimit-remaining'));
    for (let i = 0; i < 3; i++) expect((await app.get('/api/orders', { headers: { ...client, 'x-api-key': basic.key } })).status).toBe(200);
    const anonymousAfter = Number((await app.get('/api/categories', { headers: client })).headers.get('x-ratelimit-remaining'));
    expect(anonymousAfter).toBe(anonymousBefore - 1);
  });
});
