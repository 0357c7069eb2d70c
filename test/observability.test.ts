import net from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';

let app: TestApp;
let logs = '';
beforeAll(async () => {
  const sink = new Writable({ write: (chunk, _enc, done) => ((logs += chunk), done()) });
  app = await startTestApp({ logger: pino({ level: 'info' }, sink), env: { CORS_ORIGINS: 'https://shop.example.com, https://admin.example.com' } });
});
afterAll(() => app?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request ids', () => {
  it('echoes a plain client id, replaces an unsafe one, and makes one up otherwise', async () => {
    const given = await app.get('/api/categories', { headers: { 'x-request-id': 'client-42.a:b' } });
    expect(given.headers.get('x-request-id')).toBe('client-42.a:b');
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon', '']) {
      const res = await app.get('/api/categories', { headers: { 'x-request-id': bad } });
      expect(res.headers.get('x-request-id')).toMatch(UUID);
    }
    const none = await app.get('/api/nope');
    expect(none.headers.get('x-request-id')).toMatch(UUID);
    const graph = await app.graphql('{ categories { items { id } } }');
    expect(graph.status).toBe(200);
  });

  it('logs each request as JSON with its id, route and status, without the query string', async () => {
    await app.get('/api/products?search=secret-term', { headers: { 'x-request-id': 'trace-me-1' } });
    const line = logs.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.requestId === 'trace-me-1');
    expect(line).toMatchObject({ msg: 'request', method: 'GET', path: '/api/products', route: '/api/products', status: 200 });
    expect(typeof line.ms).toBe('number');
    expect(logs).not.toContain('secret-term');
  });

  it('names each path by the route that answers it, a bounded set whatever the path', async () => {
    const named: Array<[path: string, route: string]> = [
      ['/', '/'],
      ['/healthz', '/healthz'],
      ['/metrics', '/metrics'],
      ['/graphql', '/graphql'],
      ['/api/openapi.json', '/api/openapi.json'],
      ['/api/docs/', '/api/docs'],
      ['/api/docs/swagger-ui.css', '/api/docs'],
      ['/dashboard/sign-in', '/dashboard'],
      ['/graphiql/0.0.1/no-such-asset.js', '/graphiql'],
      ['/api/products/any-slug/', '/api/products/:slug'],
      ['/api/me/addresses', '/api/me/addresses'],
      ['/api', '/api/other'],
      ['/api/no/such/path', '/api/other'],
      ['/no-such-page', 'other'],
    ];
    for (const [i, [path]] of named.entries()) await fetch(`${app.base}${path}`, { headers: { 'x-request-id': `route-name-${i}` } });
    const lines = logs.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const routeOf = (i: number) => lines.find((l) => l.requestId === `route-name-${i}`)?.route;
    expect(named.map(([path], i) => [path, routeOf(i)])).toEqual(named);
  });

  it('does not log a client that hangs up mid-body as an error, on either interface', async () => {
    const { port } = new URL(app.base);
    const hangUp = (path: string) =>
      new Promise<void>((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1', () => {
          socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":`);
          setTimeout(() => socket.destroy(), 100);
        });
        socket.on('close', () => resolve());
        socket.on('error', reject);
      });
    const before = logs.length;
    await hangUp('/graphql');
    await hangUp('/api/orders');
    // That nothing is logged is the subject: a line for the hang-ups would be written within this.
    await new Promise((r) => setTimeout(r, 200));
    const errors = logs.slice(before).split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.level >= 50);
    expect(errors).toEqual([]);
  });
});

describe('HTTP conventions', () => {
  it('names the API version on every response', async () => {
    for (const path of ['/api/products?limit=1', '/api/nope', '/graphql?query=%7B__typename%7D']) {
      expect((await app.get(path)).headers.get('x-api-version')).toBe('1.0.0');
    }
  });

  it('answers CORS preflights for allowed origins and exposes the rate-limit headers', async () => {
    const preflight = await fetch(`${app.base}/api/orders`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, content-type, idempotency-key' },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://shop.example.com');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-api-key');
    // Not charged, but it says where the caller's bucket stands, like every /api answer.
    expect(preflight.headers.get('x-ratelimit-limit')).not.toBeNull();
    const get = await app.get('/api/categories', { headers: { origin: 'https://admin.example.com' } });
    expect(get.headers.get('access-control-allow-origin')).toBe('https://admin.example.com');
    expect(get.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('x-ratelimit-remaining');
    expect(get.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('x-request-id');
    const stranger = await app.get('/api/categories', { headers: { origin: 'https://evil.example.net' } });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('metrics', () => {
  it('counts requests by route pattern, method and status, and times them', async () => {
    await app.get('/api/products/no-such-product');
    await app.get('/api/products/another-missing-one');
    await app.get('/api/zzz-random-path-1');
    const text = await (await fetch(`${app.base}/metrics`)).text();
    expect(text).toMatch(/^http_requests_total\{route="\/api\/products\/:slug",method="GET",status="404"\} [2-9]\d*$/m);
    expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="0\.1",route="\/api\/products\/:slug",method="GET"\} \d+$/m);
    expect(text).not.toContain('zzz-random-path');
    expect(text).toContain('route="/api/other"');
    expect(text).toMatch(/^db_pool_connections\{state="max"\} 5$/m);
    // The idle connections at the instant of a scrape: the list totals' save (every second) may
    // hold the pool's only connection then.
    await eventually(
      'the idle connections on /metrics',
      async () => /^db_pool_connections\{state="idle"\} .*$/m.exec(await (await fetch(`${app.base}/metrics`)).text())?.[0],
      (line) => line !== undefined && /^db_pool_connections\{state="idle"\} [1-5]$/.test(line),
    );
  });
});
