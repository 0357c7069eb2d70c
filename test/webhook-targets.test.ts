import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RESPONSE_BODY_LIMIT, sendWebhook } from '../src/domain/webhooks/send.js';
import { targetProblem, type TargetPolicy } from '../src/domain/webhooks/targets.js';

// Webhook targets (SSRF rules) through the real resolver, and single delivery attempts against real
// local HTTP servers. The rules themselves, with a stand-in resolver: test/unit/webhook-targets.test.ts.

const PRIVATE = 'must not point to a private, loopback or link-local address';
const publicOnly: TargetPolicy = { allowPrivate: false, requireHttps: false };
const development: TargetPolicy = { allowPrivate: true, requireHttps: false };

describe('targetProblem through the real resolver', () => {
  it('refuses localhost through the real resolver unless private targets are allowed', async () => {
    expect(await targetProblem('http://localhost:3000/hooks', publicOnly)).toBe(PRIVATE);
    expect(await targetProblem('http://localhost:3000/hooks', development)).toBeNull();
  });
});

// ---- Delivery attempts against real servers on 127.0.0.1 ----

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface TestServer {
  url: string;
  port: number;
  received: Received[];
}

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

/** A server on 127.0.0.1 that records each request (once its body has arrived) and answers with `answer`. */
async function startServer(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<TestServer> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    res.on('error', () => {});
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      answer(req, res);
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, received };
}

const answerWith = (status: number, body = '', headers: http.OutgoingHttpHeaders = {}) => (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(status, headers).end(body);
};

const options = (policy: TargetPolicy, timeoutMs = 5000) => ({ timeoutMs, policy });

/**
 * Waits out what a sendWebhook that has returned could still have on its way (a request, a
 * connection): the tests that use it prove that none comes, which no event can tell.
 */
const stragglersLanded = () => new Promise((done) => setTimeout(done, 100));

describe('sendWebhook', () => {
  it('POSTs the body with its headers and reports a 2xx as success', async () => {
    const server = await startServer(answerWith(200, '{"ok":true}'));
    const body = JSON.stringify({ event: 'order.created', data: { id: 'ord_1', note: 'ăîșț' } });
    const result = await sendWebhook(`${server.url}/hooks?token=abc`, body, { 'X-Webhook-Signature': 'v1=abc' }, options(development));

    expect(result).toMatchObject({ outcome: 'success', statusCode: 200, error: null, responseBody: '{"ok":true}' });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(server.received).toHaveLength(1);
    const [request] = server.received;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/hooks?token=abc');
    expect(request!.body).toBe(body);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(request!.headers['user-agent']).toBe('marketplace-webhooks/1');
    expect(request!.headers['x-webhook-signature']).toBe('v1=abc');
  });

  it('reports no response body as null', async () => {
    const server = await startServer(answerWith(204));
    expect(await sendWebhook(server.url, '{}', {}, options(development))).toMatchObject({ outcome: 'success', statusCode: 204, responseBody: null });
  });

  it('reports a 500 as an HTTP error with the status and body', async () => {
    const server = await startServer(answerWith(500, 'boom'));
    const result = await sendWebhook(`${server.url}/hooks?token=secret`, '{}', {}, options(development));
    expect(result).toMatchObject({ outcome: 'http_error', statusCode: 500, error: 'answered 500', responseBody: 'boom' });
    expect(result.error).not.toContain('secret');
  });

  it('does not follow redirects', async () => {
    const elsewhere = await startServer(answerWith(200));
    const server = await startServer(answerWith(302, '', { location: `${elsewhere.url}/stolen` }));
    const result = await sendWebhook(server.url, '{}', {}, options(development));
    expect(result).toMatchObject({ outcome: 'http_error', statusCode: 302, error: 'redirects are not followed (302)' });
    await stragglersLanded();
    expect(server.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
  });

  it('gives up on a receiver that never answers at the deadline', async () => {
    const server = await startServer(() => {});
    const started = Date.now();
    const result = await sendWebhook(server.url, '{}', {}, options(development, 300));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result).toMatchObject({ outcome: 'timeout', statusCode: null, error: 'timed out after 300 ms', responseBody: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
  });

  it('gives up on a body that never ends at the deadline', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    const started = Date.now();
    const result = await sendWebhook(server.url, '{}', {}, options(development, 300));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result).toMatchObject({ outcome: 'timeout', statusCode: 200, responseBody: 'partial' });
  });

  it('reports a closed port as a connection error', async () => {
    const server = await startServer(answerWith(200));
    const closed = servers.pop()!;
    await new Promise((done) => closed.close(done));
    const result = await sendWebhook(server.url, '{}', {}, options(development));
    expect(result).toMatchObject({ outcome: 'connection_error', statusCode: null, error: 'connection refused', responseBody: null });
  });

  it('reports a connection dropped before any answer as a connection error', async () => {
    const server = await startServer((req) => req.socket.destroy());
    const result = await sendWebhook(server.url, '{}', {}, options(development));
    expect(result).toMatchObject({ outcome: 'connection_error', statusCode: null, error: 'connection reset' });
  });

  it('reads at most 1024 bytes of a 10 MB body and returns without waiting for the rest', async () => {
    // Loopback would swallow 10 MB sent at once in a few ms, so the rest is held back for a while:
    // a client waiting for the whole body would take that long.
    const size = 10 * 1024 * 1024;
    const head = 64 * 1024;
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-length': size });
      res.write('x'.repeat(head));
      const rest = setTimeout(() => res.end('x'.repeat(size - head)), 1500);
      res.on('close', () => clearTimeout(rest));
    });
    const started = Date.now();
    const result = await sendWebhook(server.url, '{}', {}, options(development, 10_000));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(result.outcome).toBe('success');
    expect(result.responseBody).toBe('x'.repeat(RESPONSE_BODY_LIMIT));
  });

  it('returns promptly from a body that never ends once it has 1024 bytes', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(500);
      const timer = setInterval(() => res.write('y'.repeat(100)), 5);
      res.on('close', () => clearInterval(timer));
    });
    const result = await sendWebhook(server.url, '{}', {}, options(development, 10_000));
    expect(result).toMatchObject({ outcome: 'http_error', statusCode: 500, responseBody: 'y'.repeat(RESPONSE_BODY_LIMIT) });
    expect(result.durationMs).toBeLessThan(2000);
  });

  it('does not end the body with half a character when the cut falls inside one', async () => {
    // 'é' is 2 bytes and '€' 3: the 1024-byte cut lands on the first byte of each.
    for (const [prefix, char] of [['a'.repeat(1023), 'é'], ['a'.repeat(1022), '€'], ['a'.repeat(1023), '€']] as const) {
      const server = await startServer(answerWith(200, prefix + char.repeat(10)));
      const result = await sendWebhook(server.url, '{}', {}, options(development));
      expect(result.responseBody).toBe(prefix);
      expect(result.responseBody).not.toContain('\uFFFD');
    }
    const whole = await startServer(answerWith(200, 'a'.repeat(1022) + 'é'.repeat(10)));
    expect((await sendWebhook(whole.url, '{}', {}, options(development))).responseBody).toBe('a'.repeat(1022) + 'é');
  });

  it('reaches a named host through the guarded lookup when private targets are allowed', async () => {
    const server = await startServer(answerWith(200, 'ok'));
    const result = await sendWebhook(`http://localhost:${server.port}/`, '{}', {}, options(development));
    expect(result).toMatchObject({ outcome: 'success', statusCode: 200, responseBody: 'ok' });
    // Without autoSelectFamily Node asks lookup for one address instead of all of them.
    const autoSelect = net.getDefaultAutoSelectFamily();
    net.setDefaultAutoSelectFamily(false);
    try {
      const single = await sendWebhook(`http://localhost:${server.port}/`, '{}', {}, options(development));
      expect(single).toMatchObject({ outcome: 'success', statusCode: 200, responseBody: 'ok' });
    } finally {
      net.setDefaultAutoSelectFamily(autoSelect);
    }
    expect(server.received).toHaveLength(2);
  });

  it('refuses a name that does not resolve as a connection error', async () => {
    const result = await sendWebhook('http://nowhere.invalid/', '{}', {}, options(development));
    expect(result).toMatchObject({ outcome: 'connection_error', statusCode: null });
    expect(result.error).toMatch(/^host does not resolve/);
  });
});

describe('sendWebhook without private targets', () => {
  it('refuses a private IP literal without connecting', async () => {
    const server = await startServer(answerWith(200));
    const result = await sendWebhook(`${server.url}/hooks`, '{}', {}, options(publicOnly));
    expect(result).toMatchObject({ outcome: 'refused_target', statusCode: null, responseBody: null });
    expect(result.error).toContain('private');
    await stragglersLanded();
    expect(server.received).toHaveLength(0);
  });

  it('refuses a name resolving to loopback at connect time, in both lookup forms', async () => {
    const connections: net.Socket[] = [];
    const server = await startServer(answerWith(200));
    servers.at(-1)!.on('connection', (socket) => connections.push(socket));
    const url = `http://localhost:${server.port}/hooks?token=secret`;

    const result = await sendWebhook(url, '{}', {}, options(publicOnly));
    expect(result).toMatchObject({ outcome: 'refused_target', statusCode: null, error: 'resolves to a private address', responseBody: null });

    const autoSelect = net.getDefaultAutoSelectFamily();
    net.setDefaultAutoSelectFamily(false);
    try {
      const single = await sendWebhook(url, '{}', {}, options(publicOnly));
      expect(single).toMatchObject({ outcome: 'refused_target', error: 'resolves to a private address' });
    } finally {
      net.setDefaultAutoSelectFamily(autoSelect);
    }
    await stragglersLanded();
    expect(connections).toHaveLength(0);
    expect(server.received).toHaveLength(0);
  });

  it('refuses plain http when https is required, without connecting', async () => {
    const server = await startServer(answerWith(200));
    const result = await sendWebhook(server.url, '{}', {}, options({ requireHttps: true, allowPrivate: true }));
    expect(result).toMatchObject({ outcome: 'refused_target', statusCode: null, error: 'url must be an https URL' });
    await stragglersLanded();
    expect(server.received).toHaveLength(0);
  });
});
