import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import type { Database } from '../src/db/database.js';
import { createBenchKey, freePort, gitCommit, HOST, NESTED_QUERY, openBenchDatabase, ROOT, startFlags } from './common.js';

// `npx tsx bench/cluster.ts [--products 10000] [--duration 10] [--connections 32] [--workers auto]`
//
// Throughput of the service with WEB_CONCURRENCY=1 against WEB_CONCURRENCY=auto (one worker per
// core; --workers to choose another count) on the same machine, the same database and the same
// requests: REST list, REST product by slug and the nested GraphQL query, each repeated (so with
// the response cache on, its default, mostly the HTTP, gate and cache path is measured). The
// bench's own embedded database (.data-bench-<products>, shared with bench/run.ts), seeded and
// with a key of its own. Nothing is pinned: the workers need every core, so the load generator
// (this process) and PostgreSQL share them with the service, as they would on a small machine.
// Not part of npm test. Prints the machine, Node, date and commit, then one table.

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

const { values: args } = parseArgs({
  options: {
    products: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    workers: { type: 'string', default: 'auto' },
  },
  strict: true,
});
const positive = (flag: string, v: string) => {
  if (!/^\d+$/.test(v) || Number(v) < 1) {
    log(`${flag} must be a positive integer, got ${v}`);
    process.exit(2);
  }
  return Number(v);
};
const PRODUCTS = positive('--products', args.products);
const DURATION = positive('--duration', args.duration);
const CONNECTIONS = positive('--connections', args.connections);
const WORKERS = args.workers === 'auto' ? os.availableParallelism() : positive('--workers', args.workers);
const WARM_UP_S = 3;

let db: Database | undefined;
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const child of children) child.kill('SIGTERM');
    void (db?.close() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

interface Scenario {
  name: string;
  path: string;
  method: 'GET' | 'POST';
  body?: string;
}

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  failed: number;
}

/** The service as `npm start` runs it (its V8 flags), with `concurrency` workers; resolves once every worker listens. */
async function startService(databaseUrl: string, concurrency: number, key: string) {
  const port = await freePort();
  const child = spawn(process.execPath, [...startFlags(), 'dist/server.js'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST,
      WEB_CONCURRENCY: String(concurrency),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      DEMO_DATA: 'false',
      REDIS_URL: '',
    },
    // Its logs (warnings only) go to stderr: stdout carries the table alone.
    stdio: ['ignore', 2, 2],
  });
  children.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://${HOST}:${port}`;
  // Ready when it answers and, with several workers, /metrics says they all listen.
  for (const deadline = Date.now() + 120_000; ; ) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}) before it was ready`);
    try {
      const probe = await fetch(`${base}/api/products?limit=1`, { headers: { 'x-api-key': key } });
      const metrics = concurrency > 1 ? await (await fetch(`${base}/metrics`)).text() : '';
      if (probe.ok && (concurrency === 1 || new RegExp(`^cluster_workers ${concurrency}$`, 'm').test(metrics))) break;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error('the service was not ready within 120 s');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    base,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      children.delete(child);
    },
  };
}

async function measure(base: string, key: string, s: Scenario, duration: number): Promise<Measured> {
  const r = await autocannon({
    url: `${base}${s.path}`,
    method: s.method,
    body: s.body,
    headers: { 'x-api-key': key, ...(s.body ? { 'content-type': 'application/json' } : {}) },
    connections: CONNECTIONS,
    duration,
    timeout: 10,
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, failed: r.non2xx + r.errors + r.timeouts };
}

async function main() {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  const header = [
    `Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    `Commit: ${gitCommit()}`,
    `Node: ${process.version}`,
    `Cores: ${os.availableParallelism()} (${cpu}), ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    `Load average at start: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    `Catalogue: ${PRODUCTS} products; ${CONNECTIONS} connections; ${WARM_UP_S} s warm-up + ${DURATION} s per scenario`,
  ];

  db = await openBenchDatabase(PRODUCTS, log);
  const key = await createBenchKey(db.url);
  const slug = await (async () => {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: db!.url });
    await client.connect();
    try {
      return (await client.query<{ slug: string }>(`SELECT slug FROM "Product" WHERE "isActive" ORDER BY "createdAt" DESC, id LIMIT 1`)).rows[0]!.slug;
    } finally {
      await client.end();
    }
  })();
  const scenarios: Scenario[] = [
    { name: 'REST list (limit 12)', path: '/api/products?limit=12', method: 'GET' },
    { name: 'REST product by slug', path: `/api/products/${slug}`, method: 'GET' },
    { name: 'GraphQL nested (50 × supplier, category, 3 reviews)', path: '/graphql', method: 'POST', body: JSON.stringify({ query: NESTED_QUERY, variables: { page: 1 } }) },
  ];

  const results = new Map<number, Measured[]>();
  for (const concurrency of [1, WORKERS]) {
    log(`WEB_CONCURRENCY=${concurrency}: starting`);
    const service = await startService(db.url, concurrency, key);
    const measured: Measured[] = [];
    for (const s of scenarios) {
      await measure(service.base, key, s, WARM_UP_S);
      log(`WEB_CONCURRENCY=${concurrency}: ${s.name}, ${DURATION} s`);
      measured.push(await measure(service.base, key, s, DURATION));
    }
    results.set(concurrency, measured);
    await service.stop();
  }
  await db.close();
  db = undefined;

  const one = results.get(1)!;
  const many = results.get(WORKERS)!;
  const rows = scenarios.map((s, i) => {
    const a = one[i]!;
    const b = many[i]!;
    return `| ${s.name} | ${a.rps.toFixed(0)} | ${a.p50} / ${a.p99} | ${b.rps.toFixed(0)} | ${b.p50} / ${b.p99} | ${(b.rps / a.rps).toFixed(2)}× | ${a.failed + b.failed} |`;
  });
  process.stdout.write(
    [
      ...header,
      '',
      `| Scenario | req/s, 1 worker | p50 / p99 ms | req/s, ${WORKERS} workers | p50 / p99 ms | ratio | failed |`,
      '|---|---|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
}

main().catch(async (error: unknown) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  for (const child of children) child.kill('SIGTERM');
  await db?.close().catch(() => undefined);
  process.exit(1);
});
