import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// SIGTERM on the real server (`npm start`): requests already in flight are answered in full, new
// connections are refused at once, the embedded PostgreSQL it started is stopped, exit code 0.
// "In flight" is made certain rather than hoped for: each request sends its headers and half
// its body before the signal, and the rest only after the server has begun shutting down.

const root = path.resolve(import.meta.dirname, '..');
const dataDir = mkdtempSync(path.join(tmpdir(), 'mp-shutdown-test-'));
let child: ChildProcess | undefined;
afterAll(() => {
  // Only if the test failed half-way: the server it spawned must not outlive it.
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, check: () => boolean, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms; server output:\n${output()}`);
    await sleep(25);
  }
}

interface Answer {
  status: number;
  body: string;
}

/** A POST whose body is sent in two parts: `finish()` sends the rest; `answer` is the response. */
function halfSent(port: number, pathname: string, body: string, headers: Record<string, string> = {}) {
  const bytes = Buffer.from(body);
  const cut = Math.floor(bytes.length / 2);
  // agent: false, one connection per request, closed after its response.
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: pathname,
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': String(bytes.length), ...headers },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  req.write(bytes.subarray(0, cut));
  return { answer, finish: () => req.end(bytes.subarray(cut)) };
}

function connectOutcome(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('SIGTERM', () => {
  it('finishes in-flight requests, refuses new connections, stops the embedded PostgreSQL and exits 0', async () => {
    const server = spawn(path.join(root, 'node_modules/.bin/tsx'), ['src/server.ts'], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SEED_PRODUCTS: '200' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = server;
    let output = '';
    server.stdout!.on('data', (d) => (output += d));
    server.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    const listening = () => output.split('\n').find((l) => l.includes('marketplace API listening'));
    await waitFor('the server did not start', () => listening() !== undefined || server.exitCode !== null, 90_000, () => output);
    const port = Number(JSON.parse(listening()!).port);
    const base = `http://127.0.0.1:${port}`;

    // An order to place during the shutdown, with the demo key printed on the first start.
    const key = /X-API-Key: (mk_[A-Za-z0-9_-]{43})/.exec(output)?.[1];
    expect(key).toBeDefined();
    const products = (await (await fetch(`${base}/api/products?limit=50&sortBy=popular`)).json()) as {
      data: Array<{ id: string; stock: number; minOrder: number; supplier: { id: string } }>;
    };
    const product = products.data.find((p) => p.stock >= 2 * Math.max(1, p.minOrder))!;
    expect(product).toBeDefined();
    const order = { supplierId: product.supplier.id, items: [{ productId: product.id, quantity: Math.max(1, product.minOrder) }] };

    const query = JSON.stringify({ query: '{ products(limit: 50, sortBy: PRICE_DESC) { items { name price supplier { companyName city } category { name } } meta { total } } }' });
    const inFlight = [
      ...Array.from({ length: 8 }, () => ({ kind: 'graphql', ...halfSent(port, '/graphql', query) })),
      ...Array.from({ length: 2 }, () => ({ kind: 'order', ...halfSent(port, '/api/orders', JSON.stringify(order), { 'x-api-key': key! }) })),
    ];
    // Let the server read the headers and the first half of each body.
    await sleep(500);

    server.kill('SIGTERM');
    await waitFor('the server did not start shutting down', () => output.includes('shutting down'), 10_000, () => output);
    // Listening stops at once (the log line is written just before the listener closes, so allow
    // a moment), while the requests above are still open.
    let outcome = await connectOutcome(port);
    for (const deadline = Date.now() + 2_000; outcome !== 'ECONNREFUSED' && Date.now() < deadline; outcome = await connectOutcome(port)) await sleep(20);
    expect(outcome).toBe('ECONNREFUSED');
    expect(server.exitCode).toBeNull();

    for (const request of inFlight) request.finish();
    const answers = await Promise.all(inFlight.map(async (r) => ({ kind: r.kind, ...(await r.answer) })));
    for (const answer of answers) {
      expect({ kind: answer.kind, status: answer.status }).toEqual({ kind: answer.kind, status: answer.kind === 'order' ? 201 : 200 });
      expect(() => JSON.parse(answer.body)).not.toThrow();
    }
    const graphql = JSON.parse(answers[0]!.body) as { data: { products: { items: unknown[] } } };
    expect(graphql.data.products.items).toHaveLength(50);
    for (const answer of answers.filter((a) => a.kind === 'order')) {
      expect((JSON.parse(answer.body) as { data: { status: string } }).data.status).toBe('PENDING');
    }

    expect(await exited).toBe(0);
    expect(output).toContain('"msg":"stopped"');
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  }, 150_000);
});
