import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon, { type Options as AutocannonOptions } from 'autocannon';
import * as loadtest from 'loadtest';
import pg from 'pg';
import { createApiKey } from '../src/accounts/api-keys.js';
import { loadConfig } from '../src/runtime/config.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { createPrisma } from '../src/db/prisma.js';
import { seedDatabase } from '../src/seed/seed.js';
import { profileSplit, renderSplit } from './profile.js';
import { createContextFactory } from '../src/context/context.js';
import { createLogger } from '../src/runtime/logger.js';

// `npm run bench -- [--products 100000] [--duration 10] [--connections 10]`
//
// Performance at catalogue scale against a raw baseline measured in the same run (issue 6):
//  1. its own embedded PostgreSQL under .data-bench-<products> (never the development .data), migrated and
//     seeded to N products (the seed tops up, so reruns start in seconds);
//  2. the service (src/server.ts) and a minimal node:http + pg baseline (bench/baseline-server.ts)
//     as child processes pinned to core 0; PostgreSQL is not pinned;
//  3. autocannon (as fast as the service answers) and loadtest (a steady rate) in this process,
//     pinned to core 1 once PostgreSQL has started, one bounded scenario after the other,
//     127.0.0.1 only;
//  4. a table on stdout and in BENCHMARKS.md (between the bench:results markers).
// Everything it starts is stopped on exit, on error and on Ctrl-C.

const ROOT = path.resolve(import.meta.dirname, '..');

const REPORT = path.join(ROOT, 'BENCHMARKS.md');
const HOST = '127.0.0.1';
const SEED = 42;

const { values: args } = parseArgs({
  options: {
    products: { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    'no-report': { type: 'boolean', default: false },
    /** Writes V8 CPU profiles of the service to .data-bench-<products>/cpu-prof/ (inspect in Chrome DevTools). */
    'cpu-prof': { type: 'boolean', default: false },
    /** Seconds of steady mixed load at half the maximum rate while the service's RSS is sampled (0: none). */
    soak: { type: 'string', default: '0' },
  },
  strict: true,
});
const PRODUCTS = positiveInt('--products', args.products);
const DURATION = positiveInt('--duration', args.duration);
const CONNECTIONS = positiveInt('--connections', args.connections);
const SOAK = args.soak === '0' ? 0 : positiveInt('--soak', args.soak);
// One database per catalogue size: a 1,000,000-product run does not turn the default one into it.
const DATA_DIR = path.join(ROOT, `.data-bench-${PRODUCTS}`);

function positiveInt(flag: string, v: string | undefined): number {
  if (!v || !/^\d+$/.test(v) || Number(v) < 1) throw new Error(`${flag} must be a positive integer, got ${v}`);
  return Number(v);
}

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

// ---------------------------------------------------------------------------------------------
// Cleanup: children and the embedded server go away whatever happens.

const children = new Set<ChildProcess>();
const stopRequested = new WeakSet<ChildProcess>();
let db: Database | undefined;
let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all([...children].map((c) => stopChild(c)));
    await db?.close().catch(() => undefined);
  })();
  return cleaning;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  stopRequested.add(child);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 12_000);
    child.once('exit', () => {
      clearTimeout(timer);
      children.delete(child);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    log(`${sig}: stopping`);
    void cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------
// Helpers

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, HOST, () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** What a child runs: compiled JavaScript as the service runs in production, or TypeScript through tsx. */
interface Program {
  script: string;
  tsx?: boolean;
  nodeFlags?: string[];
}

function spawnPinned(core: number, program: Program, env: Record<string, string>, name: string): ChildProcess {
  // node itself (taskset execs it): one process, which node flags (--cpu-prof) and signals reach.
  const args = [...(program.nodeFlags ?? []), ...(program.tsx ? ['--import', 'tsx'] : []), program.script];
  const child = spawn('taskset', ['-c', String(core), process.execPath, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.stdout?.on('data', (d: Buffer) => process.stderr.write(`[${name}] ${d.toString()}`));
  child.stderr?.on('data', (d: Buffer) => {
    const text = d.toString();
    // The allocation meter's answers are read by measureAllocation, not echoed.
    if (!/^ALLOC \d+/m.test(text)) process.stderr.write(`[${name}] ${text}`);
  });
  child.once('exit', (code, signal) => {
    children.delete(child);
    if (!stopRequested.has(child)) log(`${name} exited early (code ${code}, signal ${signal})`);
  });
  return child;
}

/** Resolves with the first match of `pattern` in the child's stderr from now on. */
function nextLine(child: ChildProcess, pattern: RegExp, timeoutMs = 10_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.stderr?.off('data', onData);
      reject(new Error(`no ${pattern} from the child within ${timeoutMs} ms`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      const match = pattern.exec(d.toString());
      if (!match) return;
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      resolve(match);
    };
    child.stderr?.on('data', onData);
  });
}

async function waitForHttp(url: string, init: RequestInit, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await fetch(url, init);
      if (r.ok) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function withClient<T>(url: string, use: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await use(c);
  } finally {
    await c.end();
  }
}

function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const ctx = (s: string) => JSON.stringify(s.slice(Math.max(0, i - 80), i + 80));
  return `bodies differ at byte ${i} (service ${a.length} chars, baseline ${b.length} chars)\n  service:  …${ctx(a)}…\n  baseline: …${ctx(b)}…`;
}

interface Result {
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

interface Scenario {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  /** A fresh header per request (e.g. Idempotency-Key). */
  perRequestHeaders?: () => Record<string, string>;
  /** Requests per second, evenly spaced (paced); unset: as fast as the service answers. */
  steadyRate?: number;
}

/** Requests that did not succeed: non-2xx answers, connection errors and timeouts. */
const failed = (r: Result) => r.non2xx + r.errors + r.timeouts;

async function load(s: Scenario, { connections, duration } = { connections: CONNECTIONS, duration: DURATION }): Promise<Result> {
  if (s.steadyRate) return paced(s, s.steadyRate, duration);
  const opts: AutocannonOptions = {
    url: s.url,
    connections,
    duration,
    method: s.method ?? 'GET',
    headers: s.headers ?? {},
    body: s.body,
    timeout: 10,
  };
  if (s.perRequestHeaders) {
    const fresh = s.perRequestHeaders;
    opts.requests = [
      {
        method: s.method ?? 'GET',
        body: s.body,
        setupRequest: (req: { headers?: Record<string, string> }) => ({ ...req, headers: { ...(req.headers ?? {}), ...(s.headers ?? {}), ...fresh() } }),
      },
    ];
  }
  log(`${s.name}: ${duration} s, ${connections} connections`);
  const r = await autocannon(opts);
  return {
    scenario: s.name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
  };
}

interface PacedResult {
  effectiveRps: number;
  totalRequests: number;
  totalErrors: number;
  percentiles: Record<50 | 99, number>;
  errorCodes: Record<string, number>;
}
// loadtest 8 resolves a promise when called without a callback; its bundled index.d.ts still
// describes the older callback API.
const loadTest = loadtest.loadTest as unknown as (options: object) => Promise<PacedResult>;

/**
 * A steady rate: one request every 1/rate s, on a new connection whenever every open one is busy
 * (open loop). autocannon's overallRate cannot do this: each connection sends its share of a
 * second back to back at the start of the second, so "half the maximum rate" would be the full
 * rate for half of each second, and its p99 the queue of that burst.
 */
async function paced(s: Scenario, rate: number, seconds: number): Promise<Result> {
  if (s.perRequestHeaders) throw new Error(`${s.name}: a steady rate sends the same request each time`);
  log(`${s.name}: ${seconds} s, ${rate}/s evenly spaced`);
  const r = await loadTest({
    url: s.url,
    method: s.method ?? 'GET',
    headers: s.headers ?? {},
    ...(s.body ? { body: s.body, contentType: s.headers?.['content-type'] ?? 'application/json' } : {}),
    requestsPerSecond: rate,
    maxSeconds: seconds,
    agentKeepAlive: true,
    timeout: 10_000,
    quiet: true,
  });
  const codes = Object.entries(r.errorCodes);
  const non2xx = codes.filter(([code]) => /^\d+$/.test(code) && Number(code) > 0).reduce((n, [, c]) => n + c, 0);
  return {
    scenario: s.name,
    rps: r.effectiveRps,
    p50: r.percentiles[50],
    p99: r.percentiles[99],
    requests: r.totalRequests,
    non2xx,
    errors: r.totalErrors - non2xx,
    timeouts: 0,
  };
}

/** The scenario again at half its measured maximum, evenly spaced; nothing below 2 req/s. */
async function loadAtHalfRate(s: Scenario, maxRps: number): Promise<Result | undefined> {
  if (maxRps < 2) return undefined;
  const rate = Math.round(maxRps / 2);
  return load({ ...s, name: `${s.name} at half max rate (${rate}/s)`, steadyRate: rate });
}

// ---------------------------------------------------------------------------------------------
// Search latency: one client, one request at a time, over terms of every kind the seed's names
// hold: words in most products ("pentru"), common, mid and rare ones, two-word terms, word
// fragments, numbers, terms without diacritics, and terms nothing matches.

const SEARCH_TERMS = [
  'pentru', 'cutie', 'pachet', 'ssd', 'laptop', 'monitor', 'dezinfectant', 'otel', 'surub', 'tigla',
  'gresie', 'schneider', 'kanlux', 'westrock', 'rondocarton', 'uree', 'laptop core', 'monitor led',
  'cutie carton', 'adeziv gresie', 'monit', 'dezinf', 'usb', 'inox', 'switch', 'executive', 'zzzz',
  'xylofon', 'hendi', 'auto', 'electric', 'disc', 'tablou', 'original', 'uhd', 'cod', '220', '600',
  'professional', 'sistem',
];
const WARM_ROUNDS = 4;

interface Sample {
  term: string;
  ms: number;
  failed: boolean;
}

interface Latency {
  name: string;
  failed: number;
  p50: number;
  p95: number;
  max: number;
  requests: number;
  /** The slowest terms, for the report. */
  slowest: string;
}

function latency(name: string, samples: Sample[]): Latency {
  const sorted = [...samples].sort((a, b) => a.ms - b.ms);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!.ms;
  const worst = new Map<string, number>();
  for (const s of sorted) worst.set(s.term, s.ms); // ascending: each term keeps its slowest
  const slowest = [...worst].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([term, ms]) => `${term} ${ms.toFixed(0)} ms`).join(', ');
  return { name, p50: at(0.5), p95: at(0.95), max: at(1), requests: samples.length, failed: samples.filter((s) => s.failed).length, slowest };
}

interface SearchSetup {
  service: string;
  headers: Record<string, string>;
  /** SQL on the bench database, for the catalogue changes of pass 3. */
  sql: pg.Client;
  /** A product whose isFeatured pass 3 flips (an even number of times: it ends as it began). */
  productId: string;
  /** Starts another instance of the service on the same database; resolves to its base URL and a stop. */
  startInstance: () => Promise<{ url: string; stop: () => Promise<void> }>;
}

/**
 * Four passes over the terms, one request at a time:
 *  1. never counted: no instance keeps or has saved a total for any term (saved ones are deleted);
 *  2. WARM_ROUNDS more rounds: totals kept, catalogue unchanged;
 *  3. a busy catalogue: before each request a product is featured or unfeatured (a new revision),
 *     so every total is carried over by the change log instead of counted;
 *  4. another instance, started after all that: totals read from those saved by the first.
 */
async function searchLatency({ service, headers, sql, productId, startInstance }: SearchSetup): Promise<Latency[]> {
  const once = async (base: string, term: string) => {
    const t = performance.now();
    const r = await fetch(`${base}/api/products?limit=12&search=${encodeURIComponent(term)}`, { headers });
    await r.text();
    // A failure (503 when a count outlives the statement timeout) is reported, not fatal.
    if (!r.ok) log(`search "${term}": ${r.status}`);
    return { term, ms: performance.now() - t, failed: !r.ok };
  };
  log(`search latency: ${SEARCH_TERMS.length} terms, never counted, ${WARM_ROUNDS} rounds kept, carried over, another instance`);
  await sql.query('DELETE FROM "ListTotal"');
  const never: Sample[] = [];
  for (const term of SEARCH_TERMS) never.push(await once(service, term));
  const kept: Sample[] = [];
  for (let round = 0; round < WARM_ROUNDS; round++) for (const term of SEARCH_TERMS) kept.push(await once(service, term));
  const carried: Sample[] = [];
  for (const term of SEARCH_TERMS) {
    await sql.query('UPDATE "Product" SET "isFeatured" = NOT "isFeatured" WHERE id = $1', [productId]);
    carried.push(await once(service, term));
  }
  if (SEARCH_TERMS.length % 2) await sql.query('UPDATE "Product" SET "isFeatured" = NOT "isFeatured" WHERE id = $1', [productId]);
  const other = await startInstance();
  const saved: Sample[] = [];
  try {
    // A new process is slow on its first requests whatever it serves (JIT, first plans, new
    // connections): warm it on requests outside the measured terms, as a load balancer would.
    for (let i = 0; i < 20; i++) {
      await once(other.url, `warmup${i}`);
      await fetch(`${other.url}/api/products?limit=12&page=${i + 1}`, { headers }).then((r) => r.text());
    }
    for (const term of SEARCH_TERMS) saved.push(await once(other.url, term));
  } finally {
    await other.stop();
  }
  return [
    latency('Search, first request of each term, never counted before (counted)', never),
    latency(`Search, ${WARM_ROUNDS} more rounds (totals kept, catalogue unchanged)`, kept),
    latency('Search, each request after a catalogue change (totals carried over by the change log)', carried),
    latency('Search, another instance started afterwards (warmed up), first request of each term (saved totals)', saved),
  ];
}

// ---------------------------------------------------------------------------------------------
// Memory over a long run: steady load, the service's resident set sampled from /proc.

interface Soak {
  seconds: number;
  rate: string;
  rssStartMiB: number;
  rssEndMiB: number;
  rssMaxMiB: number;
  growth: number;
  requests: number;
  bad: number;
}

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

async function soak(pid: number, seconds: number, targets: Scenario[]): Promise<Soak> {
  log(`soak: ${seconds} s of ${targets.map((t) => `${t.name} at ${t.steadyRate}/s`).join(' + ')}, RSS every 5 s`);
  const samples: number[] = [rssMiB(pid)];
  const timer = setInterval(() => samples.push(rssMiB(pid)), 5_000);
  try {
    const runs = await Promise.all(targets.map((t) => load(t, { connections: CONNECTIONS, duration: seconds })));
    samples.push(rssMiB(pid));
    const start = samples[0]!;
    const end = samples.at(-1)!;
    return {
      seconds,
      rate: targets.map((t) => `${t.steadyRate}/s ${t.name}`).join(' + '),
      rssStartMiB: start,
      rssEndMiB: end,
      rssMaxMiB: Math.max(...samples),
      growth: (end - start) / start,
      requests: runs.reduce((n, r) => n + r.requests, 0),
      bad: runs.reduce((n, r) => n + failed(r), 0),
    };
  } finally {
    clearInterval(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// Allocation: bytes of JS heap per request, from the meter preloaded into the service and the
// baseline (bench/alloc-meter.mjs), over a run of one scenario.

const ALLOC_METER = ['--import', './bench/alloc-meter.mjs'];

/**
 * The V8 flags `npm start` gives the service (package.json's start script): the service is
 * measured as it runs. The baselines and the peer get them too, so that every program runs on
 * the same Node settings.
 */
function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const match = /\bnode((?:\s+--\S+)*)\s+dist\/server\.js\b/.exec(pkg.scripts.start ?? '');
  if (!match) throw new Error(`package.json's start script is not "node [--flags] dist/server.js": ${pkg.scripts.start}`);
  return match[1]!.split(/\s+/).filter(Boolean);
}
const NODE_FLAGS = startFlags();

interface Allocation {
  name: string;
  bytesPerRequest: number;
  requests: number;
  collections: number;
}

async function measureAllocation(child: ChildProcess, s: Scenario): Promise<Allocation> {
  child.kill('SIGUSR2'); // starts the meter
  await new Promise((r) => setTimeout(r, 100));
  const r = await load({ ...s, name: `${s.name} (allocation)` }, { connections: CONNECTIONS, duration: Math.min(DURATION, 5) });
  const answer = nextLine(child, /^ALLOC (\d+) (\d+)/m);
  child.kill('SIGUSR2');
  const [, bytes, collections] = await answer;
  return { name: s.name, bytesPerRequest: Number(bytes) / r.requests, requests: r.requests, collections: Number(collections) };
}

// ---------------------------------------------------------------------------------------------
// The peer: PostGraphile 4 in a folder of its own (it needs graphql 15; the service has 16).

const PEER_DIR = path.join(ROOT, 'bench', 'peer');

function ensurePeerInstalled() {
  if (existsSync(path.join(PEER_DIR, 'node_modules', 'postgraphile', 'package.json'))) return;
  log('installing the peer (PostGraphile 4) into bench/peer/node_modules from its lock file');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: PEER_DIR, stdio: ['ignore', 'inherit', 'inherit'] });
}

/** The bench's nested query, and the same one in PostGraphile's schema (with and without the total). */
const NESTED_QUERY = `query BenchNested { products(limit: 50) { items { id name slug price
  supplier { id companyName verified rating } category { id name slug }
  reviews(limit: 3) { id rating title createdAt } } meta { total } } }`;
const PEER_QUERY = (total: boolean) => `query BenchNested { allProducts(first: 50, orderBy: [CREATED_AT_DESC, ID_ASC], condition: { isActive: true }) {
  nodes { id name slug price
    supplierBySupplierId { id companyName verified rating } categoryByCategoryId { id name slug }
    reviewsByProductId(first: 3, orderBy: [CREATED_AT_DESC, ID_ASC]) { nodes { id rating title createdAt } } }
  ${total ? 'totalCount' : ''} } }`;

// ---------------------------------------------------------------------------------------------
// The targets of issue 14, checked against this run's figures.

interface Check {
  target: string;
  measured: string;
  met: boolean;
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

async function main() {
  const started = Date.now();
  if (os.availableParallelism() < 2) log('warning: fewer than 2 cores; service and load generator will share one');
  if (!existsSync(path.join(ROOT, 'dist', 'server.js'))) throw new Error('dist/server.js is missing: run npm run build (npm run bench does)');
  ensurePeerInstalled();
  log(`node flags of every program measured (from npm start): ${NODE_FLAGS.join(' ') || 'none'}`);

  // 1. Database: the bench's own embedded cluster, whatever DATABASE_URL/DATA_DIR say.
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR, LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  const config = loadConfig(env);
  db = await openDatabase(config, { log });
  await migrate(db.url, { log });
  log(`seeding to ${PRODUCTS} products (tops up what is there)`);
  const seeded = await seedDatabase(db.url, { seed: SEED, products: PRODUCTS });
  log(`seed: ${seeded.inserted.products} products added in ${(seeded.durationMs / 1000).toFixed(1)} s`);
  if (seeded.inserted.products > 0) {
    // Right after a bulk insert the first run measured a cold, unanalysed database (baseline
    // 10× slower than on the next run): settle it first.
    log('VACUUM (ANALYZE) after seeding');
    await withClient(db.url, (c) => c.query('VACUUM (ANALYZE)'));
  }

  // From here on this process (the load generator) runs on core 1. PostgreSQL, started above,
  // keeps the affinity it was started with (all cores).
  execFileSync('taskset', ['-a', '-cp', '1', String(process.pid)], { stdio: 'ignore' });

  // 2. Fixtures: a key, a product to order (ample stock), a category, a search word, a slug.
  const prisma = createPrisma({ url: db.url, poolMax: 2 });
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  let key: string;
  let fixtures: { slug: string; categoryId: string; word: string; productId: string; supplierId: string; minOrder: number };
  let pgVersion: string;
  let activeProducts: number;
  try {
    ({ key } = await createApiKey(createContextFactory({ prisma, logger: createLogger('silent'), webhookPolicy: { allowPrivate: false, requireHttps: false } }).forOperator(), {
      owner: 'bench@example.com',
      plan: 'ENTERPRISE',
      scopes: ['admin:all'],
      rateLimit: 10_000_000,
      rateWindowSeconds: 3600,
      name: `bench ${new Date().toISOString()}`,
    }));
    const newest = await client.query<{ slug: string; name: string }>(
      `SELECT slug, name FROM "Product" WHERE "isActive" ORDER BY "createdAt" DESC, id LIMIT 1`,
    );
    // The top-level category with the most active products (the filter takes its subtree).
    const cat = await client.query<{ id: string }>(
      `SELECT COALESCE(c."parentId", c.id) AS id FROM "Product" p JOIN "Category" c ON c.id = p."categoryId"
        WHERE p."isActive" GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`,
    );
    const orderable = await client.query<{ id: string; supplierId: string; minOrder: number }>(
      `SELECT p.id, p."supplierId", p."minOrder" FROM "Product" p JOIN "Supplier" s ON s.id = p."supplierId"
        JOIN "Category" c ON c.id = p."categoryId"
        WHERE p."isActive" AND s."isActive" AND c."isActive" ORDER BY p."createdAt" DESC, p.id LIMIT 1`,
    );
    await client.query(`UPDATE "Product" SET stock = 1000000000, "trackInventory" = true WHERE id = $1`, [orderable.rows[0]!.id]);
    const word = newest.rows[0]!.name.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().split(/[^a-z0-9]+/).find((w) => w.length >= 4) ?? 'set';
    fixtures = {
      slug: newest.rows[0]!.slug,
      categoryId: cat.rows[0]!.id,
      word,
      productId: orderable.rows[0]!.id,
      supplierId: orderable.rows[0]!.supplierId,
      minOrder: orderable.rows[0]!.minOrder,
    };
    pgVersion = (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;
    activeProducts = (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM "Product" WHERE "isActive"')).rows[0]!.n;
  } finally {
    await client.end();
    await prisma.$disconnect();
  }

  // 3. Service, baselines and peer, all on core 0 (loaded one at a time: they take turns).
  const startPinned = async (name: string, program: Program, env: Record<string, string>, probe: string, init: RequestInit) => {
    const port = await freePort();
    const child = spawnPinned(0, program, { DATABASE_URL: db!.url, PORT: String(port), HOST, ...env }, name);
    const url = `http://${HOST}:${port}`;
    await waitForHttp(`${url}${probe}`, init, 60_000);
    return { url, child, stop: () => stopChild(child) };
  };
  const auth = { 'x-api-key': key };
  const serviceEnv = { LOG_LEVEL: 'warn', DEMO_DATA: 'false', NODE_ENV: 'production', ORDER_CREATE_LIMIT: '100000' };
  const startService = (name: string, nodeFlags: string[] = []) =>
    startPinned(name, { script: 'dist/server.js', nodeFlags: [...NODE_FLAGS, ...ALLOC_METER, ...nodeFlags] }, serviceEnv, '/api/products?limit=1', { headers: auth });
  const service = await startService('service');
  const baseline = await startPinned('baseline', { script: 'bench/baseline-server.ts', tsx: true, nodeFlags: [...NODE_FLAGS, ...ALLOC_METER] }, {}, '/api/products?limit=1', {});
  const peer = await startPinned('postgraphile', { script: 'bench/peer/server.mjs', nodeFlags: NODE_FLAGS }, {}, '/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"query":"{ __typename }"}',
  });

  // 4. Same answers, byte for byte (bodies only: the service adds headers), and a probe of each
  // scenario before timing it: a 4xx/5xx would otherwise be measured as speed.
  const json = { 'content-type': 'application/json' };
  const gql = { ...auth, ...json };
  const nestedBody = JSON.stringify({ query: NESTED_QUERY });
  const pairs = [
    { key: 'list', name: 'REST list (limit 12)', path: '/api/products?limit=12' },
    { key: 'slug', name: 'REST product by slug', path: `/api/products/${fixtures.slug}` },
    { key: 'nested', name: 'GraphQL nested (50 × supplier, category, 3 reviews)', path: '/graphql', method: 'POST' as const, body: nestedBody },
  ].map((p) => ({
    ...p,
    service: { name: p.name, url: `${service.url}${p.path}`, method: p.method, body: p.body, headers: p.body ? gql : auth } as Scenario,
    baseline: { name: `Baseline: ${p.name}`, url: `${baseline.url}${p.path}`, method: p.method, body: p.body, headers: p.body ? json : {} } as Scenario,
  }));
  const probe = async (s: Scenario) => {
    const r = await fetch(s.url, { method: s.method ?? 'GET', headers: { ...(s.headers ?? {}), ...(s.perRequestHeaders?.() ?? {}) }, body: s.body });
    const text = await r.text();
    if (!r.ok || text.includes('"errors"')) throw new Error(`${s.name}: ${r.status} ${text.slice(0, 400)}`);
    return text;
  };
  for (const p of pairs) {
    const [svc, base] = await Promise.all([probe(p.service), probe(p.baseline)]);
    if (svc !== base) throw new Error(`baseline and service disagree on ${p.method ?? 'GET'} ${p.path}:\n${firstDifference(svc!, base!)}`);
    log(`${p.name}: bodies identical (${svc!.length} bytes)`);
  }
  const peers: Scenario[] = [true, false].map((total) => ({
    name: `PostGraphile 4: the same nested query${total ? ' (with totalCount, counted per request)' : ' without totalCount'}`,
    url: `${peer.url}/graphql`,
    method: 'POST',
    body: JSON.stringify({ query: PEER_QUERY(total) }),
    headers: json,
  }));
  const q = (s: string) => `${service.url}/api/products?${s}`;
  const others: Scenario[] = [
    { name: 'REST list filtered (category, price, price_asc)', url: q(`limit=12&categoryId=${fixtures.categoryId}&minPrice=10&maxPrice=500&sortBy=price_asc`), headers: auth },
    { name: `REST list search ("${fixtures.word}")`, url: q(`limit=12&search=${encodeURIComponent(fixtures.word)}`), headers: auth },
    {
      name: 'REST create order (fresh Idempotency-Key)',
      url: `${service.url}/api/orders`,
      method: 'POST',
      body: JSON.stringify({ supplierId: fixtures.supplierId, items: [{ productId: fixtures.productId, quantity: Math.max(1, fixtures.minOrder) }] }),
      headers: gql,
      perRequestHeaders: () => ({ 'idempotency-key': randomUUID() }),
    },
  ];
  for (const s of peers) {
    const answer = JSON.parse(await probe(s)) as { data: { allProducts: { nodes: unknown[] } } };
    if (answer.data.allProducts.nodes.length !== 50) throw new Error(`${s.name}: ${answer.data.allProducts.nodes.length} products, not 50`);
  }
  for (const s of others) await probe(s);

  // 5. Load: each scenario right after its own baseline (and the peer), 1 s of warm-up first.
  const warm = (s: Scenario) => autocannon({ url: s.url, connections: CONNECTIONS, duration: 1, headers: s.headers ?? {}, method: s.method ?? 'GET', body: s.body });
  const measured = async (s: Scenario, connections = CONNECTIONS) => {
    if (!s.perRequestHeaders) await warm(s);
    return load(s, { connections, duration: DURATION });
  };
  const byPair = new Map<string, { baseline: Result; service: Result; peers: Result[] }>();
  for (const p of pairs) {
    const base = await measured(p.baseline);
    const svc = await measured(p.service);
    const peerResults = p.key === 'nested' ? [await measured(peers[0]!), await measured(peers[1]!)] : [];
    byPair.set(p.key, { baseline: base, service: svc, peers: peerResults });
  }
  const otherResults: Result[] = [];
  for (const s of others) otherResults.push(await measured(s));

  // 6. Connections: 4 and 32 beside the 10 above.
  const scaling: { name: string; rps: Record<number, number> }[] = [];
  for (const p of pairs) {
    const rps: Record<number, number> = { [CONNECTIONS]: byPair.get(p.key)!.service.rps };
    for (const c of [4, 32]) if (c !== CONNECTIONS) rps[c] = (await measured({ ...p.service, name: `${p.name}, ${c} connections` }, c)).rps;
    scaling.push({ name: p.name, rps });
  }

  // 7. Tail latency at half the measured maximum, evenly spaced: each baseline, then the service.
  const half: { name: string; baseline?: Result; service?: Result }[] = [];
  for (const p of pairs) {
    const r = byPair.get(p.key)!;
    half.push({ name: p.name, baseline: await loadAtHalfRate(p.baseline, r.baseline.rps), service: await loadAtHalfRate(p.service, r.service.rps) });
  }

  // 8. Allocation per REST list request, the service's and the baseline's.
  const list = pairs[0]!;
  const allocations = [await measureAllocation(service.child, list.service), await measureAllocation(baseline.child, list.baseline)];
  await Promise.all([baseline.stop(), peer.stop()]);

  // 9. Search latency and, with --soak, memory over a long run.
  const search = await withClient(db.url, (sql) =>
    searchLatency({ service: service.url, headers: auth, sql, productId: fixtures.productId, startInstance: () => startService('service 2') }),
  );
  const soaked = SOAK
    ? await soak(service.child.pid!, SOAK, pairs.map((p) => ({ ...p.service, steadyRate: Math.max(1, Math.round(byPair.get(p.key)!.service.rps / 4)) })))
    : undefined;
  await service.stop();

  // 10. With --cpu-prof: one profiled instance per scenario, so each profile holds one scenario.
  const profiles: string[] = [];
  if (args['cpu-prof']) {
    for (const p of pairs) {
      const dir = path.join(DATA_DIR, 'cpu-prof', p.key);
      rmSync(dir, { recursive: true, force: true });
      const profiled = await startService(`profiled ${p.key}`, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
      const s = { ...p.service, name: `${p.name} (profiled)`, url: p.service.url.replace(service.url, profiled.url) };
      await warm(s);
      // The split covers the load only, not the start-up and warm-up before it (same monotonic clock).
      const from = Number(process.hrtime.bigint() / 1000n);
      await load(s);
      await profiled.stop();
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
      if (file) profiles.push(renderSplit(profileSplit(path.join(dir, file), from), `${p.name}: CPU profile, \`.data-bench-${PRODUCTS}/cpu-prof/${p.key}/\``));
    }
  }

  // 11. Report.
  const machine = {
    cpu: /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length, // not availableParallelism(): this process is pinned to one core by now
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    postgres: pgVersion,
    products: activeProducts,
    seeded: PRODUCTS,
    duration: DURATION,
    connections: CONNECTIONS,
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
  };
  const checks = targetChecks(byPair, scaling, half, allocations[0]!);
  const table = [
    renderTable(pairs.map((p) => ({ ...byPair.get(p.key)!, name: p.name })), otherResults),
    renderChecks(checks),
    renderScaling(scaling),
    renderHalf(half),
    renderAllocation(allocations),
    renderSearch(search),
    soaked ? renderSoak(soaked) : '',
    ...profiles,
  ].filter(Boolean).join('\n\n');
  process.stdout.write(`\n${table}\n`);
  if (!args['no-report']) writeReport(renderResults(machine, table, fixtures));
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

const p99OverP50 = (r: Result) => (r.p50 > 0 ? r.p99 / r.p50 : NaN);

function targetChecks(
  byPair: Map<string, { baseline: Result; service: Result; peers: Result[] }>,
  scaling: { name: string; rps: Record<number, number> }[],
  half: { name: string; baseline?: Result; service?: Result }[],
  allocation: Allocation,
): Check[] {
  const ratio = (k: string) => byPair.get(k)!.service.rps / byPair.get(k)!.baseline.rps;
  const nested = byPair.get('nested')!;
  const fastestPeer = Math.max(...nested.peers.map((r) => r.rps));
  const checks: Check[] = [
    { target: 'REST list ≥ 50 % of its baseline', measured: pct(ratio('list')), met: ratio('list') >= 0.5 },
    { target: 'REST product by slug ≥ 50 % of its baseline', measured: pct(ratio('slug')), met: ratio('slug') >= 0.5 },
    { target: 'GraphQL nested ≥ 40 % of its baseline', measured: pct(ratio('nested')), met: ratio('nested') >= 0.4 },
    {
      target: 'GraphQL nested ≥ PostGraphile 4 (its faster form, without totalCount)',
      measured: `${nested.service.rps.toFixed(0)} vs ${fastestPeer.toFixed(0)} req/s (${pct(nested.service.rps / fastestPeer)})`,
      met: nested.service.rps >= fastestPeer,
    },
  ];
  for (const s of scaling) {
    const best = Math.max(s.rps[4] ?? 0, s.rps[10] ?? 0);
    const at32 = s.rps[32];
    if (at32 !== undefined && best > 0) checks.push({ target: `${s.name}: 32 connections ≥ 90 % of the best of 4 and 10`, measured: pct(at32 / best), met: at32 >= 0.9 * best });
  }
  for (const r of byPair.values()) {
    checks.push({ target: `${r.service.scenario}: p99 ≤ 4 × p50 at ${CONNECTIONS} connections`, measured: `${r.service.p99} / ${r.service.p50} ms = ${p99OverP50(r.service).toFixed(1)}×`, met: p99OverP50(r.service) <= 4 });
  }
  for (const h of half) {
    if (h.service) checks.push({ target: `${h.name}: p99 ≤ 4 × p50 at half rate, evenly spaced`, measured: `${h.service.p99} / ${h.service.p50} ms = ${p99OverP50(h.service).toFixed(1)}×`, met: p99OverP50(h.service) <= 4 });
  }
  const kb = allocation.bytesPerRequest / 1024;
  checks.push({ target: 'Allocation per REST list request ≤ 200 KB', measured: `${kb.toFixed(0)} KB`, met: kb <= 200 });
  return checks;
}

function renderTable(pairs: { name: string; baseline: Result; service: Result; peers: Result[] }[], others: Result[]): string {
  const row = (r: Result, against?: Result) => {
    const bad = failed(r);
    const vs = against ? pct(r.rps / against.rps) : '—';
    return `| ${r.scenario} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${p99OverP50(r).toFixed(1)}× | ${vs} | ${r.requests}${bad ? ` (${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts)` : ''} |`;
  };
  return [
    `Each scenario right after its own hand-written baseline (byte-identical bodies), ${CONNECTIONS} connections:`,
    '',
    '| Scenario | req/s | p50 (ms) | p99 (ms) | p99/p50 | vs its baseline | requests |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...pairs.flatMap((p) => [row(p.baseline, p.baseline), row(p.service, p.baseline), ...p.peers.map((r) => row(r, p.baseline))]),
    ...others.map((r) => row(r)),
  ].join('\n');
}

function renderChecks(checks: Check[]): string {
  return ['| Target (issue 14) | measured | |', '|---|---|---|', ...checks.map((c) => `| ${c.target} | ${c.measured} | ${c.met ? 'met' : '**not met**'} |`)].join('\n');
}

function renderScaling(rows: { name: string; rps: Record<number, number> }[]): string {
  const counts = [...new Set(rows.flatMap((r) => Object.keys(r.rps).map(Number)))].sort((a, b) => a - b);
  return [
    'Throughput by connections (req/s):',
    '',
    `| Scenario | ${counts.map((c) => `${c} conn.`).join(' | ')} | 32 vs best of 4 and 10 |`,
    `|---|${counts.map(() => '---:').join('|')}|---:|`,
    ...rows.map((r) => `| ${r.name} | ${counts.map((c) => (r.rps[c] ?? 0).toFixed(0)).join(' | ')} | ${pct((r.rps[32] ?? 0) / Math.max(r.rps[4] ?? 0, r.rps[10] ?? 0))} |`),
  ].join('\n');
}

function renderHalf(rows: { name: string; baseline?: Result; service?: Result }[]): string {
  const cells = (r?: Result) => (r ? `${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${p99OverP50(r).toFixed(1)}×` : '— | — | — | —');
  return [
    'At half the measured maximum, evenly spaced (one request every 1/rate s):',
    '',
    '| Scenario | service req/s | p50 | p99 | p99/p50 | baseline req/s | p50 | p99 | p99/p50 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${cells(r.service)} | ${cells(r.baseline)} |`),
  ].join('\n');
}

function renderAllocation(rows: Allocation[]): string {
  return [
    'JS heap allocated per request (bench/alloc-meter.mjs: heap growth between collections):',
    '',
    '| Scenario | KB per request | requests | collections |',
    '|---|---:|---:|---:|',
    ...rows.map((a) => `| ${a.name} | ${(a.bytesPerRequest / 1024).toFixed(0)} | ${a.requests} | ${a.collections} |`),
  ].join('\n');
}

function renderSearch(rows: Latency[]): string {
  return [
    `Search latency, ${SEARCH_TERMS.length} terms (\`SEARCH_TERMS\` in bench/run.ts), one request at a time, \`GET /api/products?limit=12&search=…\`:`,
    '',
    '| Search | p50 (ms) | p95 (ms) | max (ms) | requests | slowest |',
    '|---|---:|---:|---:|---:|---|',
    ...rows.map((r) => `| ${r.name} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.max.toFixed(1)} | ${r.requests}${r.failed ? ` (${r.failed} failed)` : ''} | ${r.slowest} |`),
  ].join('\n');
}

function renderSoak(s: Soak): string {
  return [
    `Memory over ${s.seconds} s of steady load (${s.rate}; ${s.requests} requests, ${s.bad} failed):`,
    '',
    '| RSS at start (MiB) | at end (MiB) | highest (MiB) | growth |',
    '|---:|---:|---:|---:|',
    `| ${s.rssStartMiB.toFixed(0)} | ${s.rssEndMiB.toFixed(0)} | ${s.rssMaxMiB.toFixed(0)} | ${(100 * s.growth).toFixed(1)} % |`,
  ].join('\n');
}

function renderResults(m: Record<string, string | number>, table: string, f: { categoryId: string; word: string; slug: string }): string {
  return [
    `Run of ${m.date}: ${m.cpu}, ${m.cores} cores, ${m.memGiB} GiB; Node ${m.node}; PostgreSQL ${m.postgres} (embedded);`,
    `${m.seeded} products seeded (${m.products} active); ${m.duration} s per scenario, ${m.connections} connections;`,
    `service, baselines and PostGraphile pinned to core 0 (loaded in turn), autocannon to core 1, PostgreSQL unpinned.`,
    `Fixtures: categoryId \`${f.categoryId}\`, search \`${f.word}\`, slug \`${f.slug}\`.`,
    '',
    table,
  ].join('\n');
}

// One block per catalogue size, so a 1,000,000-product run does not replace the 100,000 one.
const START = `<!-- bench:results:${PRODUCTS}:start -->`;
const END = `<!-- bench:results:${PRODUCTS}:end -->`;

/** Replaces only the results between the markers, so the hand-written analysis stays. */
function writeReport(results: string) {
  const block = `${START}\n${results}\n${END}`;
  const text = existsSync(REPORT) ? readFileSync(REPORT, 'utf8') : '# Benchmarks\n';
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  writeFileSync(
    REPORT,
    a >= 0 && b > a
      ? text.slice(0, a) + block + text.slice(b + END.length)
      : `${text.trimEnd()}\n\n## Latest results at ${PRODUCTS} products\n\n${block}\n`,
  );
  log(`results written to ${path.relative(ROOT, REPORT)}`);
}

main()
  .catch((err: unknown) => {
    process.stderr.write(`[bench] failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanup().then(() => process.exit()));
