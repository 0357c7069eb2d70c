import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { connect, run } from './helpers/graphql-ws.js';
import { runKeysCli } from './helpers/keys-cli.js';
import { groupAlive, killGroup, listeningPort, npmStart, waitForOutput, waitUntil, type Service } from './helpers/npm-start.js';
import { halfSent, outcomeUntilRefused } from './helpers/in-flight.js';
import { alive, childrenOf } from './helpers/processes.js';

// WEB_CONCURRENCY: `npm start` as a primary process and its workers on one port, through real
// HTTP. Which worker holds a connection is read where an operator would read it: the process list
// and each process's open sockets (/proc), never anything the service sends.

const root = path.resolve(import.meta.dirname, '..');

/** The primary (npm's one child) and the workers under it (postgres is its child too, but not a worker). */
function tree(service: Service): { primary: number; workers: number[] } {
  const [primary, ...others] = childrenOf(service.npm.pid!);
  expect(others).toEqual([]);
  expect(primary!.command).toMatch(/^node .*dist\/server\.js$/);
  const workers = childrenOf(primary!.pid)
    .filter((c) => /dist\/server\.js$/.test(c.command))
    .map((c) => c.pid);
  return { primary: primary!.pid, workers };
}

/** For each pid, how many established TCP connections to `port` it holds the server side of. */
function connectionsHeld(port: number, pids: number[]): Map<number, number> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const localPort = Number.parseInt(fields[1]!.split(':').pop()!, 16);
      // 01: ESTABLISHED
      if (localPort === port && fields[3] === '01') inodes.add(fields[9]!);
    }
  }
  const held = new Map<number, number>();
  for (const pid of pids) {
    let count = 0;
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match && inodes.has(match[1]!)) count++;
      } catch {
        // closed meanwhile
      }
    }
    held.set(pid, count);
  }
  return held;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function get(port: number, pathname: string, agent: http.Agent | false, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathname, agent, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** The value of one sample line of the Prometheus text, 0 when absent. */
function sample(metrics: string, line: string): number {
  const found = metrics.split('\n').find((l) => l.startsWith(`${line} `));
  return found ? Number(found.slice(line.length + 1)) : 0;
}

describe('WEB_CONCURRENCY=2 with the embedded database and no Redis', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'mp-cluster-test-'));
  const postmasterPidFile = path.join(dataDir, 'pg', 'postmaster.pid');
  let service: Service;
  let port: number;
  let primary: number;
  let workers: number[];

  beforeAll(async () => {
    service = npmStart({ NODE_ENV: 'development', WEB_CONCURRENCY: '2', DATABASE_URL: '', DATA_DIR: dataDir, PORT: '0', SEED_PRODUCTS: '200' });
    port = await listeningPort(service, 180_000);
    ({ primary, workers } = tree(service));
  }, 200_000);
  afterAll(() => {
    killGroup(service);
    const pid = existsSync(postmasterPidFile) ? Number.parseInt(readFileSync(postmasterPidFile, 'utf8'), 10) : NaN;
    if (Number.isInteger(pid) && alive(pid)) process.kill(pid, 'SIGQUIT');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs one primary, which started PostgreSQL, migrated and seeded once, and two workers', async () => {
    expect(workers).toHaveLength(2);
    // The demo key is printed after the "listening" line, which may reach us first.
    expect(await waitForOutput(service, /X-API-Key: mk_/)).toBeDefined();
    const postgres = Number.parseInt(readFileSync(postmasterPidFile, 'utf8'), 10);
    expect(childrenOf(primary).map((c) => c.pid)).toContain(postgres);
    const output = service.output();
    expect(output.match(/"msg":"demo data seeded"/g)).toHaveLength(1);
    expect(output.match(/"msg":"migrations applied"/g)).toHaveLength(1);
    expect(output.match(/marketplace API listening/g)).toHaveLength(1);
    expect(output).toMatch(/"workers":2,.*"msg":"marketplace API listening"/);
    expect(output.match(/X-API-Key: mk_/g)).toHaveLength(1);
  });

  it('answers from both workers on the one port', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    try {
      // The workers' first requests open their pools' connections: on a loaded machine opening one
      // can take longer than the service's 1 s connect timeout (a 503), not what is tested here.
      await Promise.all(Array.from({ length: 8 }, () => get(port, '/api/categories', agent)));
      const answers = await Promise.all(Array.from({ length: 8 }, () => get(port, '/api/categories', agent)));
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
      // The connections stay open (keep-alive): each is held by the worker that answered on it.
      // The primary closes its copy of one once the worker says it took it, which on a loaded
      // machine can come after the worker has answered on it.
      await waitUntil('the primary did not let go of the connections', () => connectionsHeld(port, [primary]).get(primary) === 0, 10_000, service.output);
      const held = connectionsHeld(port, [primary, ...workers]);
      expect(held.get(primary)).toBe(0);
      expect(held.get(workers[0]!)).toBeGreaterThan(0);
      expect(held.get(workers[1]!)).toBeGreaterThan(0);
      expect(held.get(workers[0]!)! + held.get(workers[1]!)!).toBe(8);
    } finally {
      agent.destroy();
    }
  });

  it('lets exactly 50 of 300 concurrent requests through a 50-request limit, answered by both workers', async () => {
    const cli = (args: string[]) => runKeysCli(['create', ...args, '--json'], { DATA_DIR: dataDir, DATABASE_URL: '' });
    const [limitedKey, warmKey] = await Promise.all([
      cli(['--owner', 'cluster@example.com', '--plan', 'enterprise', '--limit', '50', '--window', '1h', '--scopes', 'read:categories']),
      cli(['--owner', 'warm@example.com', '--plan', 'pro', '--scopes', 'read:products']),
    ]);
    expect(limitedKey.code, limitedKey.stderr).toBe(0);
    expect(warmKey.code, warmKey.stderr).toBe(0);
    const { key } = JSON.parse(limitedKey.stdout) as { key: string };
    // Both workers' pools open their connections first (reads that miss the response cache, on
    // another key), so that the burst does not wait for PostgreSQL to start backends.
    const warm = (JSON.parse(warmKey.stdout) as { key: string }).key;
    await Promise.all(Array.from({ length: 40 }, (_, i) => get(port, `/api/products?limit=1&page=${i + 1}`, false, { 'x-api-key': warm })));

    const agent = new http.Agent({ keepAlive: true, maxSockets: 300 });
    try {
      const answers = await Promise.all(Array.from({ length: 300 }, () => get(port, '/api/categories?parentOnly=true', agent, { 'x-api-key': key })));
      const held = connectionsHeld(port, workers);
      expect(held.get(workers[0]!)).toBeGreaterThan(0);
      expect(held.get(workers[1]!)).toBeGreaterThan(0);

      // The limiter's decisions: each counted answer carries the rate-limit headers; exactly 50 of
      // them were let through, one per remaining count 49…0, and every other one is a 429.
      const counted = answers.filter((a) => a.headers['x-ratelimit-remaining'] !== undefined);
      const through = counted.filter((a) => a.status !== 429);
      const limited = answers.filter((a) => a.status === 429);
      expect(through).toHaveLength(50);
      expect(through.map((a) => Number(a.headers['x-ratelimit-remaining'])).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
      expect(limited).toHaveLength(counted.length - 50);
      for (const answer of limited) {
        const body = JSON.parse(answer.body) as { error: { retryAfter: number } };
        expect(body).toEqual({ success: false, error: { code: 'RATE_LIMIT_EXCEEDED', message: expect.any(String), retryAfter: expect.any(Number) } });
        expect(answer.headers['retry-after']).toBe(String(body.error.retryAfter));
        expect(answer.headers['x-ratelimit-limit']).toBe('50');
        expect(answer.headers['x-ratelimit-remaining']).toBe('0');
      }
      // With room on the machine every answer is a 200 or a 429. A starved database (this machine
      // is shared) can add only 503s: a key that could not be checked (not counted), or a read
      // that could not be made (counted, among the 50).
      const others = answers.filter((a) => a.status !== 200 && a.status !== 429);
      for (const answer of others) expect(`${answer.status} ${answer.body}`).toMatch(/^503 .*"code":"SERVICE_UNAVAILABLE"/);
      expect(others.length).toBeLessThanOrEqual(15);
      if (others.length) console.warn(`cluster test: ${others.length} of 300 answers were 503 (database starved)`);
      const metrics = (await get(port, '/metrics', false)).body;
      expect(sample(metrics, 'ratelimit_rejections_total{policy="enterprise"}')).toBe(limited.length);
    } finally {
      agent.destroy();
    }
  }, 120_000);

  it('charges one GraphQL cost budget per key across both workers', async () => {
    const created = await runKeysCli(['create', '--owner', 'budget@example.com', '--plan', 'basic', '--scopes', 'read:products', '--json'], { DATA_DIR: dataDir, DATABASE_URL: '' });
    expect(created.code, created.stderr).toBe(0);
    const { key } = JSON.parse(created.stdout) as { key: string };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    try {
      const query = `/graphql?query=${encodeURIComponent('{ products(limit: 100) { items { name } } }')}`;
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 24 }, () => get(port, query, agent, { 'x-api-key': key, accept: 'application/json' })));
      const seconds = (Date.now() - started) / 1000;
      const held = connectionsHeld(port, workers);
      expect(held.get(workers[0]!)).toBeGreaterThan(0);
      expect(held.get(workers[1]!)).toBeGreaterThan(0);
      const costs = answers.map((a) => (JSON.parse(a.body) as { extensions: { cost: { requested: number; limit: number; remaining: number } } }).extensions.cost);
      for (const cost of costs) expect(cost).toMatchObject({ requested: 101, limit: 20_000 });
      // One bucket, charged 101 at a time and refilled at 100 per second meanwhile: it took all 24
      // charges (a bucket per worker would have taken about half each), and within a second no
      // refill makes up for a charge, so every answer saw a different balance (a bucket per worker
      // would have started twice at 19 899). A slower burst (a loaded machine) can refill 101
      // points between two charges and show a balance twice.
      const remaining = costs.map((c) => c.remaining);
      expect(Math.min(...remaining)).toBeLessThanOrEqual(20_000 - 24 * 101 + Math.ceil(100 * seconds));
      if (seconds < 1) expect(new Set(remaining).size).toBe(24);
    } finally {
      agent.destroy();
    }
  });

  it('serves on /metrics the sum of both workers’ request counters', async () => {
    const line = 'http_requests_total{route="/api/suppliers",method="GET",status="200"}';
    const before = sample((await get(port, '/metrics', false)).body, line);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
    try {
      const answers = await Promise.all(Array.from({ length: 10 }, () => get(port, '/api/suppliers?limit=1', agent)));
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
      const held = connectionsHeld(port, workers);
      // Both workers answered some of the ten, so neither alone counted all ten.
      expect(held.get(workers[0]!)).toBeGreaterThan(0);
      expect(held.get(workers[1]!)).toBeGreaterThan(0);
    } finally {
      agent.destroy();
    }
    // Whichever worker answers the scrape, it is the instance's.
    for (let i = 0; i < 4; i++) {
      const metrics = (await get(port, '/metrics', false)).body;
      expect(sample(metrics, line)).toBe(before + 10);
      expect(sample(metrics, 'cluster_workers')).toBe(2);
      expect(metrics).toMatch(/^http_request_duration_seconds_count\{route="\/api\/suppliers",method="GET"\} \d+$/m);
    }
  });

  it('replaces a worker that dies, and keeps serving meanwhile', async () => {
    const [victim, survivor] = workers;
    process.kill(victim!, 'SIGKILL');
    await waitForOutput(service, /"msg":"worker died: starting another"/, 10_000);
    expect(service.output()).toMatch(new RegExp(`"pid":${victim},"code":null,"signal":"SIGKILL".*"msg":"worker died: starting another"`));
    // The survivor answers while the replacement starts.
    expect((await get(port, '/api/categories', false)).status).toBe(200);
    await waitForOutput(service, /"msg":"worker replaced"/, 60_000);
    const now = tree(service).workers;
    expect(now).toHaveLength(2);
    expect(now).toContain(survivor);
    expect(now).not.toContain(victim);
    workers = now;
    const metrics = (await get(port, '/metrics', false)).body;
    expect(sample(metrics, 'cluster_worker_restarts_total')).toBe(1);
    expect(sample(metrics, 'cluster_workers')).toBe(2);
    // The replacement takes connections too.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 6 });
    try {
      await Promise.all(Array.from({ length: 6 }, () => get(port, '/api/categories', agent)));
      const held = connectionsHeld(port, workers);
      expect([...held.values()].every((n) => n > 0)).toBe(true);
    } finally {
      agent.destroy();
    }
  }, 90_000);

  it('on SIGTERM drains the in-flight requests of every worker, stops PostgreSQL last and exits 0', async () => {
    const postgres = Number.parseInt(readFileSync(postmasterPidFile, 'utf8'), 10);
    const query = JSON.stringify({ query: '{ products(limit: 50, sortBy: PRICE_DESC) { items { name price supplier { companyName } } } }' });
    const inFlight = Array.from({ length: 20 }, () => halfSent(port, '/graphql', query));
    // In flight once a worker has taken the request up (its "100 Continue"): a draining worker
    // closes at once a connection whose request has not begun (Node counts it idle), and the
    // primary hands connections over one at a time, which on a loaded machine can take longer
    // than any fixed pause.
    await waitUntil('the workers did not take up the 20 requests', () => inFlight.every((request) => request.taken()), 30_000, service.output);
    const held = connectionsHeld(port, workers);
    expect(held.get(workers[0]!)).toBeGreaterThan(0);
    expect(held.get(workers[1]!)).toBeGreaterThan(0);
    // GraphQL WebSockets, served by the workers: closed with 1001 as they drain.
    const sockets = Array.from({ length: 2 }, () => connect({ base: `http://127.0.0.1:${port}` }));
    for (const socket of sockets) expect((await run(socket.client, '{ __typename }')).results).toEqual([{ data: { __typename: 'Query' }, extensions: expect.anything() }]);

    process.kill(primary, 'SIGTERM');
    await waitUntil('the primary did not start shutting down', () => /"signal":"SIGTERM","msg":"shutting down"/.test(service.output()), 10_000, service.output);
    expect(await outcomeUntilRefused(port, 5_000)).toBe('ECONNREFUSED');
    expect(alive(postgres)).toBe(true);

    for (const request of inFlight) request.finish();
    const answers = await Promise.all(inFlight.map((r) => r.answer));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    for (const answer of answers) expect((JSON.parse(answer.body) as { data: { products: { items: unknown[] } } }).data.products.items).toHaveLength(50);

    expect(await service.exited).toEqual({ code: 0, signal: null });
    for (const socket of sockets) expect(socket.closes[0]?.code).toBe(1001);
    const output = service.output();
    expect(output.match(/"msg":"worker stopped"/g)).toHaveLength(2);
    expect(output).toMatch(/"msg":"stopped"/);
    expect(output).not.toMatch(/"level":(50|60)(?![^\n]*worker died)/);
    await waitUntil('processes of the tree are still running', () => !groupAlive(service.npm.pid!) && !alive(postgres), 10_000, service.output);
    expect(existsSync(postmasterPidFile)).toBe(false);
  }, 120_000);
});

describe('WEB_CONCURRENCY=auto', () => {
  let db: TestDatabase;
  let service: Service | undefined;
  beforeAll(async () => {
    db = await createTestDatabase('seeded');
  });
  afterAll(async () => {
    killGroup(service);
    await db?.drop();
  });

  it('starts one worker per core', async () => {
    service = npmStart({ NODE_ENV: 'test', WEB_CONCURRENCY: 'auto', DATABASE_URL: db.url, PORT: '0' });
    const port = await listeningPort(service, 180_000);
    const cores = os.availableParallelism();
    expect(tree(service).workers).toHaveLength(cores);
    expect(service.output()).toMatch(new RegExp(`"workers":${cores},.*"msg":"marketplace API listening"`));
    expect((await get(port, '/api/categories', false)).status).toBe(200);
    process.kill(service.npm.pid!, 'SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
  }, 200_000);
});

describe('an invalid WEB_CONCURRENCY', () => {
  it.each(['0', 'two', '1.5', '257', '-1'])('%s stops the start with a message naming the setting', async (value) => {
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, ['dist/server.js'], { cwd: root, env: { ...process.env, WEB_CONCURRENCY: value, PORT: '0' } }, (error, _stdout, stderr) =>
        resolve({ code: error ? (error.code as number) : 0, stderr }),
      );
    });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      'marketplace API failed to start: Invalid configuration: WEB_CONCURRENCY: must be a whole number of worker processes from 1 to 256, or auto (one per core)',
    );
  });
});
