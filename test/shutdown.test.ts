import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { groupAlive, killGroup, listeningPort, npmStart, waitForOutput, waitUntil, type Service } from './helpers/npm-start.js';
import { halfSent, outcomeUntilRefused } from './helpers/in-flight.js';
import { alive, childrenOf } from './helpers/processes.js';

// Stopping `npm start` the three ways it is stopped in practice, each under 20 requests in flight:
//   - a signal to the whole process group: Ctrl-C in a terminal (SIGINT to npm and node, and npm
//     relays it to node once more), an init or systemd killing the control group;
//   - SIGTERM to npm alone, as `docker stop` does to PID 1;
//   - SIGTERM to node alone.
// Each time: every accepted request is answered in full, new connections are refused at once,
// the embedded PostgreSQL (in a process group of its own, so the group signal does not reach it)
// is stopped by the service after draining, npm exits 0 and nothing of the tree is left.
// "In flight" is made certain rather than hoped for: each request sends its headers and half
// its body, and the signal waits until the server has taken up every one of them (its "100
// Continue"); the rest of each body is sent only after the server has begun shutting down.

const dataDir = mkdtempSync(path.join(tmpdir(), 'mp-shutdown-test-'));
const postmasterPidFile = path.join(dataDir, 'pg', 'postmaster.pid');
let running: Service | undefined;
afterEach(() => {
  // Only if a test failed half-way: what it spawned must not outlive it.
  killGroup(running);
  const pid = existsSync(postmasterPidFile) ? Number.parseInt(readFileSync(postmasterPidFile, 'utf8'), 10) : NaN;
  if (Number.isInteger(pid) && alive(pid)) process.kill(pid, 'SIGQUIT');
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Process group of a live process, from /proc/<pid>/stat (field 5, after the parenthesised name). */
function processGroup(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

type Target = 'group' | 'npm' | 'node';

const cases: Array<{ target: Target; signal: NodeJS.Signals; how: string }> = [
  { target: 'group', signal: 'SIGINT', how: 'Ctrl-C: SIGINT to the whole process group' },
  { target: 'npm', signal: 'SIGTERM', how: 'SIGTERM to npm alone (docker stop)' },
  { target: 'node', signal: 'SIGTERM', how: 'SIGTERM to node alone' },
];

let demoKey: string | undefined;

describe.each(cases)('stopping npm start under load: $how', ({ target, signal }) => {
  it('answers all 20 in-flight requests, stops PostgreSQL after them, exits 0, leaves nothing', async () => {
    const service = npmStart({ NODE_ENV: 'development', DATABASE_URL: '', DATA_DIR: dataDir, PORT: '0', SEED_PRODUCTS: '200' });
    running = service;
    const port = await listeningPort(service);
    const base = `http://127.0.0.1:${port}`;
    const npmPid = service.npm.pid!;

    // The tree as started: npm → node (npm runs it with exec: no shell between them), and
    // postgres under node but in a process group of its own.
    const [node, ...others] = childrenOf(npmPid);
    expect(others).toEqual([]);
    expect(node!.command).toMatch(/^node .*dist\/server\.js$/);
    const postgresPid = Number.parseInt(readFileSync(postmasterPidFile, 'utf8'), 10);
    expect(childrenOf(node!.pid).map((c) => c.pid)).toContain(postgresPid);
    expect(processGroup(node!.pid)).toBe(npmPid);
    expect(processGroup(postgresPid)).not.toBe(npmPid);

    // An order to place during the shutdown, with the demo key printed on the first start.
    demoKey ??= (await waitForOutput(service, /X-API-Key: (mk_[A-Za-z0-9_-]{43})/))?.[1];
    expect(demoKey).toBeDefined();
    const products = (await (await fetch(`${base}/api/products?limit=50&sortBy=popular`)).json()) as {
      data: Array<{ id: string; stock: number; minOrder: number; supplier: { id: string } }>;
    };
    const product = products.data.find((p) => p.stock >= 20 * Math.max(1, p.minOrder))!;
    expect(product).toBeDefined();
    const order = { supplierId: product.supplier.id, items: [{ productId: product.id, quantity: Math.max(1, product.minOrder) }] };

    // A subscription open across the shutdown: it completes cleanly as shutdown begins, rather
    // than holding the drain until the grace period cuts it.
    const sse = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': demoKey! },
      body: JSON.stringify({ query: 'subscription($id: ID!) { productChanged(id: $id) { id } }', variables: { id: product.id } }),
    });
    expect(sse.status).toBe(200);
    let streamEndedAt = 0;
    const streamed = (async () => {
      let text = '';
      const decoder = new TextDecoder();
      for await (const chunk of sse.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
      streamEndedAt = Date.now();
      return text;
    })();

    const query = JSON.stringify({ query: '{ products(limit: 50, sortBy: PRICE_DESC) { items { name price supplier { companyName city } category { name } } meta { total } } }' });
    const inFlight = [
      ...Array.from({ length: 16 }, () => ({ kind: 'graphql', ...halfSent(port, '/graphql', query) })),
      ...Array.from({ length: 4 }, () => ({ kind: 'order', ...halfSent(port, '/api/orders', JSON.stringify(order), { 'x-api-key': demoKey! }) })),
    ];
    // The server has taken up every request (not merely been given time to: a loaded machine may
    // not have accepted them all within any fixed wait).
    await waitUntil('the server did not take up all 20 requests', () => inFlight.every((r) => r.taken()), 30_000, service.output);

    const signalledAt = Date.now();
    process.kill(target === 'group' ? -npmPid : target === 'npm' ? npmPid : node!.pid, signal);
    await waitUntil('the server did not start shutting down', () => service.output().includes('shutting down'), 10_000, service.output);
    // Listening stops at once (the log line is written just before the listener closes, so allow
    // a moment), while the requests above are still open and PostgreSQL still runs.
    expect(await outcomeUntilRefused(port, 2_000)).toBe('ECONNREFUSED');
    expect(alive(node!.pid)).toBe(true);
    expect(alive(postgresPid)).toBe(true);

    // The stream ended on its own, with GraphQL over SSE's last message, while the requests wait.
    expect(await streamed).toMatch(/event: complete\ndata:\n\n$/);
    expect(streamEndedAt - signalledAt).toBeLessThan(2000);
    for (const request of inFlight) request.finish();
    const answers = await Promise.all(inFlight.map(async (r) => ({ kind: r.kind, ...(await r.answer) })));
    expect(answers.map((a) => `${a.kind} ${a.status}`)).toEqual(inFlight.map((r) => `${r.kind} ${r.kind === 'order' ? 201 : 200}`));
    for (const answer of answers) {
      if (answer.kind === 'order') expect((JSON.parse(answer.body) as { data: { status: string } }).data.status).toBe('PENDING');
      else expect((JSON.parse(answer.body) as { data: { products: { items: unknown[] } } }).data.products.items).toHaveLength(50);
    }

    expect(await service.exited).toEqual({ code: 0, signal: null });
    const output = service.output();
    expect(output).toContain('"msg":"stopped"');
    // Nothing was cut off under a request: no terminated sessions, no errors logged.
    expect(output).not.toContain('57P01');
    expect(output).not.toMatch(/"level":(50|60)/);
    // The whole tree is gone: npm, node and PostgreSQL, which removed its pid file on a clean stop.
    await waitUntil('processes of the tree are still running', () => !groupAlive(npmPid) && !alive(node!.pid) && !alive(postgresPid), 5_000, service.output);
    expect(existsSync(postmasterPidFile)).toBe(false);
  }, 240_000);
});
