import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';

// Requests Node's HTTP parser refuses before the app sees them (a bad request line or header,
// headers over Node's size limit) are answered in the contract's JSON, not Node's plain text.
// Raw sockets: no HTTP client would send these.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

async function raw(bytes: string): Promise<{ status: number; headers: string; body: string }> {
  const socket = net.connect(Number(new URL(app.base).port), '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write(bytes);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const at = text.indexOf('\r\n\r\n');
  return { status: Number(text.split(' ')[1]), headers: text.slice(0, at).toLowerCase(), body: text.slice(at + 4) };
}

describe("Node's own refusals", () => {
  it.each([
    ['a request line that is no HTTP', 'GARBAGE\r\n\r\n'],
    ['a header line without a colon', 'GET /api/products HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n'],
    ['a space in the header name', 'GET /api/products HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n'],
    ['an unknown HTTP version', 'GET /api/products HTTP/9.9\r\nHost: x\r\n\r\n'],
  ])('%s → 400 VALIDATION_ERROR in the JSON envelope, connection closed', async (_name, bytes) => {
    const res = await raw(bytes);
    expect(res.status).toBe(400);
    expect(res.headers).toContain('content-type: application/json; charset=utf-8');
    expect(res.headers).toContain('connection: close');
    expect(JSON.parse(res.body)).toEqual({
      success: false,
      error: { code: 'VALIDATION_ERROR', message: 'Malformed HTTP request', details: { request: expect.any(String) } },
    });
  });

  it('headers over the size limit → 431 HEADERS_TOO_LARGE, in the shape of the path', async () => {
    const big = 'x'.repeat(20_000);
    const rest = await raw(`GET /api/products HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`);
    expect(rest.status).toBe(431);
    expect(rest.headers).toContain('content-type: application/json; charset=utf-8');
    expect(JSON.parse(rest.body)).toEqual({ success: false, error: { code: 'HEADERS_TOO_LARGE', message: expect.stringMatching(/at most \d+ KiB/) } });

    const graph = await raw(`POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Big: ${big}\r\n\r\n`);
    expect(graph.status).toBe(431);
    expect(JSON.parse(graph.body)).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'HEADERS_TOO_LARGE' } }] });
  });

  it('answers a refused HEAD without a body, and a bad request after good ones on a kept-alive connection', async () => {
    const head = await raw('HEAD mailto:x HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(head.status).toBe(400);
    expect(head.body).toBe('');
    // One good request answered, then a bad one on the same connection.
    const socket = net.connect(Number(new URL(app.base).port), '127.0.0.1');
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const first = await new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString('utf8'))));
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    socket.write('GET /api/categories HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n');
    const chunks: Buffer[] = [];
    for await (const chunk of socket) chunks.push(chunk as Buffer);
    const second = Buffer.concat(chunks).toString('utf8');
    expect(second).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(second).toContain('"code":"VALIDATION_ERROR"');
  });

  it('still serves well-formed requests on the same server', async () => {
    const res = await raw('GET /api/categories HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(res.status).toBe(200);
  });
});
