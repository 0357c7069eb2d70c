import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RESPONSE_BODY_LIMIT, sendWebhook } from '../src/domain/webhooks/send.js';
import { isPublicAddress, MAX_URL_LENGTH, targetProblem, urlProblem, type TargetPolicy } from '../src/domain/webhooks/targets.js';

// Webhook targets (SSRF rules) and single delivery attempts against real local HTTP servers.

const PRIVATE = 'must not point to a private, loopback or link-local address';
const production: TargetPolicy = { allowPrivate: false, requireHttps: true };
const publicOnly: TargetPolicy = { allowPrivate: false, requireHttps: false };
const development: TargetPolicy = { allowPrivate: true, requireHttps: false };

describe('isPublicAddress', () => {
  it('accepts public unicast addresses', () => {
    for (const ip of ['8.8.8.8', '93.184.216.34', '2001:4860:4860::8888', '::ffff:8.8.8.8']) expect(isPublicAddress(ip), ip).toBe(true);
  });

  it('refuses loopback, private, link-local, special-purpose and unparsable addresses', () => {
    for (const ip of [
      '127.0.0.1', '127.8.9.10', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
      '0.0.0.0', '224.0.0.1', '255.255.255.255', '192.0.2.1', '198.51.100.1', '203.0.113.1', '198.18.0.1', '240.0.0.1',
      '::1', '::', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd00:ec2::254', 'ff02::1', '2001:db8::1',
      '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::7f00:1',
      '2002:7f00:1::', '2001::1', '64:ff9b::a00:1',
      'nonsense', '', '127.1', '0x7f.0.0.1', '2130706433', '8.8.8.8.', ' 8.8.8.8',
    ]) {
      expect(isPublicAddress(ip), ip).toBe(false);
    }
  });
});

describe('urlProblem', () => {
  it('accepts an https URL with a public name, without DNS', () => {
    expect(urlProblem('https://example.com/x', production)).toBeNull();
    expect(urlProblem('https://example.com:8443/hooks?key=1', production)).toBeNull();
    expect(urlProblem('http://example.com/x', publicOnly)).toBeNull();
    expect(urlProblem('https://8.8.8.8/x', production)).toBeNull();
  });

  it('refuses what is not an absolute http(s) URL', () => {
    expect(urlProblem('ftp://example.com/x', publicOnly)).toBe('must be an http or https URL');
    expect(urlProblem('javascript:alert(1)', publicOnly)).toBe('must be an http or https URL');
    expect(urlProblem('file:///etc/passwd', publicOnly)).toBe('must be an http or https URL');
    expect(urlProblem('ftp://example.com/x', production)).toBe('must be an https URL');
    expect(urlProblem('/hooks', publicOnly)).toBe('must be an absolute URL');
    expect(urlProblem('example.com/hooks', publicOnly)).toBe('must be an absolute URL');
    expect(urlProblem('', publicOnly)).toBe('must be an absolute URL');
    expect(urlProblem('http://', publicOnly)).toBe('must be an absolute URL');
  });

  it('refuses non-strings', () => {
    for (const value of [undefined, null, 42, {}, ['https://example.com/'], new URL('https://example.com/')]) {
      expect(urlProblem(value, publicOnly)).toBe('must be a string');
    }
  });

  it('refuses plain http when https is required', () => {
    expect(urlProblem('http://example.com/x', production)).toBe('must be an https URL');
    expect(urlProblem('http://example.com/x', { allowPrivate: true, requireHttps: true })).toBe('must be an https URL');
  });

  it('refuses credentials, fragments and over-long URLs', () => {
    expect(urlProblem('https://user:secret@example.com/x', production)).toBe('must not contain credentials (user:password@)');
    expect(urlProblem('https://user@example.com/x', production)).toBe('must not contain credentials (user:password@)');
    expect(urlProblem('https://example.com/x#part', production)).toBe('must not contain a fragment (#…)');
    expect(urlProblem('https://example.com/x#', production)).toBe('must not contain a fragment (#…)');
    const base = 'https://example.com/';
    expect(urlProblem(base + 'a'.repeat(MAX_URL_LENGTH - base.length), production)).toBeNull();
    expect(urlProblem(base + 'a'.repeat(MAX_URL_LENGTH - base.length + 1), production)).toBe('must be at most 2000 characters');
  });

  it('refuses IP literals that are not public unless private targets are allowed', () => {
    for (const url of [
      'http://127.0.0.1/x', 'http://127.0.0.1:8080/x', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/', 'http://[::1]:3000/', 'http://[fe80::1]/', 'http://[::ffff:127.0.0.1]/', 'http://0.0.0.0/',
      // WHATWG URL parsing turns these into 127.0.0.1 before we look.
      'http://2130706433/', 'http://0x7f.1/', 'http://127.1/',
    ]) {
      expect(urlProblem(url, publicOnly), url).toBe(PRIVATE);
      expect(urlProblem(url, development), url).toBeNull();
    }
  });

  it('leaves names to DNS: localhost is not refused here', () => {
    expect(urlProblem('http://localhost:3000/', publicOnly)).toBeNull();
  });
});

describe('targetProblem', () => {
  const resolvingTo = (...addresses: string[]) => async () => addresses.map((address) => ({ address, family: net.isIP(address) }));

  it('refuses a name that resolves to a private address', async () => {
    expect(await targetProblem('https://internal.example/x', production, resolvingTo('10.0.0.5'))).toBe(PRIVATE);
    expect(await targetProblem('https://internal.example/x', production, resolvingTo('::ffff:192.168.0.1'))).toBe(PRIVATE);
  });

  it('accepts a name that resolves to public addresses only', async () => {
    expect(await targetProblem('https://example.com/x', production, resolvingTo('93.184.216.34'))).toBeNull();
    expect(await targetProblem('https://example.com/x', production, resolvingTo('93.184.216.34', '2606:2800:220:1::1'))).toBeNull();
  });

  it('refuses a name with any private address among public ones', async () => {
    expect(await targetProblem('https://example.com/x', production, resolvingTo('93.184.216.34', '127.0.0.1'))).toBe(PRIVATE);
    expect(await targetProblem('https://example.com/x', production, resolvingTo('93.184.216.34', 'fd00::1'))).toBe(PRIVATE);
  });

  it('allows private addresses when told to', async () => {
    expect(await targetProblem('http://internal.example/x', development, resolvingTo('10.0.0.5'))).toBeNull();
  });

  it('refuses a name that does not resolve', async () => {
    const failing = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' });
    };
    expect(await targetProblem('https://nowhere.invalid/x', production, failing)).toBe('must have a host that resolves (nowhere.invalid)');
    expect(await targetProblem('https://nowhere.invalid/x', production, resolvingTo())).toBe('must have a host that resolves (nowhere.invalid)');
  });

  it('gives up on a resolver that takes longer than 5 s', async () => {
    vi.useFakeTimers();
    try {
      const answer = targetProblem('https://slow.example/x', production, () => new Promise(() => {}));
      await vi.advanceTimersByTimeAsync(5000);
      expect(await answer).toBe('must have a host that resolves (slow.example)');
    } finally {
      vi.useRealTimers();
    }
  });

  it('checks the URL before resolving anything', async () => {
    let asked = false;
    const resolver = async () => {
      asked = true;
      return [{ address: '93.184.216.34', family: 4 }];
    };
    expect(await targetProblem('http://example.com/x', production, resolver)).toBe('must be an https URL');
    expect(await targetProblem('https://[::1]/x', production, resolver)).toBe(PRIVATE);
    expect(await targetProblem('https://8.8.8.8/x', production, resolver)).toBeNull();
    expect(asked).toBe(false);
  });

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
    await new Promise((done) => setTimeout(done, 100));
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
    await new Promise((done) => setTimeout(done, 100));
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
    await new Promise((done) => setTimeout(done, 100));
    expect(connections).toHaveLength(0);
    expect(server.received).toHaveLength(0);
  });

  it('refuses plain http when https is required, without connecting', async () => {
    const server = await startServer(answerWith(200));
    const result = await sendWebhook(server.url, '{}', {}, options({ requireHttps: true, allowPrivate: true }));
    expect(result).toMatchObject({ outcome: 'refused_target', statusCode: null, error: 'url must be an https URL' });
    await new Promise((done) => setTimeout(done, 100));
    expect(server.received).toHaveLength(0);
  });
});
