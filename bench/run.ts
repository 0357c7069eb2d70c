import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon, { type Options as AutocannonOptions } from 'autocannon';
import * as loadtest from 'loadtest';
import pg from 'pg';
import { loadConfig } from '../src/config/config.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { seedDatabase } from '../src/seed/seed.js';
import { Redis } from 'ioredis';
import { createBenchKey, freePort, gitCommit, HOST, NESTED_QUERY, nextLine, ROOT, startFlags } from './common.js';
import { FLOOD_BOUND_BYTES, FLOOD_PAGES, FLOOD_SAFETY_BYTES, FLOOD_SAVE_EVERY_MS, keysByPrefix, mib, redisSample, redisServerPath, sampleRedis, saveProfileSteadily, type RedisSample } from './flood.js';
import {
  addCounters,
  browsingSequence,
  cacheCounters,
  counterDelta,
  failureList,
  hitRatio,
  MIXED_SLUGS,
  mixedFixtures,
  NO_COUNTS,
  ORDER_RATES,
  orderFailures,
  percentile,
  SLUG_SHARE,
  startOrders,
  ZIPF_S,
  zipfShare,
  type CacheCounters,
  type MixedFixtures,
  type OrderStats,
} from './mixed.js';
import { profileSplit, renderSplit } from './profile.js';

// `npm run bench -- [--products 100000] [--duration 10] [--rounds 2] [--connections 10] [--only list,slug-distinct,…]
//                   [--response-cache on|off] [--flood-seconds 60] [--soak S] [--cpu-prof] [--no-report]`
//
// Performance at catalogue scale against references measured in the same run (BENCHMARKS.md, How to run):
//  1. its own embedded PostgreSQL under .data-bench-<products> (never the development .data), migrated and
//     seeded to N products (the seed tops up, so reruns start in seconds);
//  2. the service (src/server.ts), a minimal node:http + pg baseline (bench/baseline-server.ts) and
//     PostGraphile 4 (bench/peer/) as child processes pinned to core 0; PostgreSQL is not pinned;
//  3. autocannon (as fast as the service answers) and loadtest (a steady rate) in this process,
//     pinned to core 1 once PostgreSQL has started, one bounded scenario after the other,
//     127.0.0.1 only: each workload repeated (one request) and distinct (a fixed set of different
//     requests sent in turn), each right after its references, in alternating rounds (best kept);
//  4. tables and issue 27's targets on stdout and in BENCHMARKS.md (between the bench:results markers).
// Everything it starts is stopped on exit, on error and on Ctrl-C.

const REPORT = path.join(ROOT, 'BENCHMARKS.md');
const SEED = 42;

/** A wrong command line: said in one line, before anything is started. */
function argError(msg: string): never {
  process.stderr.write(`[bench] ${msg}\n`);
  process.exit(2);
}

const { values: args } = (() => {
  try {
    return parseArgs({
      options: {
        products: { type: 'string', default: '100000' },
        duration: { type: 'string', default: '10' },
        /** Rounds of each scenario and its references, alternating; each keeps its fastest. */
        rounds: { type: 'string', default: '2' },
        connections: { type: 'string', default: '10' },
        'no-report': { type: 'boolean', default: false },
        /** Writes V8 CPU profiles of the service to .data-bench-<products>/cpu-prof/ (inspect in Chrome DevTools). */
        'cpu-prof': { type: 'boolean', default: false },
        /** Seconds of steady mixed load at half the maximum rate while the service's RSS is sampled (0: none). */
        soak: { type: 'string', default: '0' },
        /** Comma-separated parts to run (SECTIONS below); all of them when unset. */
        only: { type: 'string' },
        /** off: the service runs with RESPONSE_CACHE=off; on: with its default (RESPONSE_CACHE unset). */
        'response-cache': { type: 'string', default: 'on' },
        /** Seconds of the flood part's read load (the profile saves run as long). */
        'flood-seconds': { type: 'string', default: '60' },
      },
      strict: true,
    });
  } catch (err) {
    return argError(err instanceof Error ? err.message : String(err));
  }
})();
const PRODUCTS = positiveInt('--products', args.products);
const DURATION = positiveInt('--duration', args.duration);
const ROUNDS = positiveInt('--rounds', args.rounds);
const CONNECTIONS = positiveInt('--connections', args.connections);
const SOAK = args.soak === '0' ? 0 : positiveInt('--soak', args.soak);
const FLOOD_SECONDS = positiveInt('--flood-seconds', args['flood-seconds']);
const RESPONSE_CACHE = args['response-cache'];
if (RESPONSE_CACHE !== 'on' && RESPONSE_CACHE !== 'off') argError(`--response-cache must be on or off, got ${RESPONSE_CACHE}`);

/** What --only can choose; a full run runs them all, in this order. */
const SECTIONS = {
  list: 'REST list (limit 12), repeated, after its baseline',
  slug: 'REST product by slug, repeated, after its baseline',
  nested: 'GraphQL nested query, repeated, after its baseline and PostGraphile 4',
  'list-distinct': 'REST list over 700 distinct (limit, page) pairs, after its baseline',
  'slug-distinct': 'REST product by slug over 2,000 distinct slugs, after its baseline',
  'nested-deep': 'GraphQL nested query over pages 1–400, after its baseline and PostGraphile 4',
  'list-filtered': 'REST list filtered by category and price (no baseline)',
  'list-search': 'REST list search (no baseline)',
  order: 'REST create order (no baseline)',
  connections: 'the repeated scenarios chosen (list, slug, nested) again at 4 and 32 connections',
  'half-rate': 'the repeated scenarios chosen and their baselines at half their maximum, evenly spaced',
  alloc: 'JS heap allocated per REST list request (repeated and distinct), service and baseline',
  mixed: 'the response cache under a busy shop: skewed browsing while orders are placed (0, 2, 10/s), after its baseline',
  'search-latency': 'search latency, 40 terms one at a time, four passes',
  flood: 'the response cache in Redis: list reads while a profile is saved every 25 ms, Redis memory against its bound',
} as const;
type Section = keyof typeof SECTIONS;
const ONLY = args.only === undefined ? undefined : new Set(args.only.split(',').map((k) => k.trim()).filter(Boolean));
for (const k of ONLY ?? []) {
  if (!(k in SECTIONS)) argError(`--only: unknown part "${k}"; one or more of:\n${Object.entries(SECTIONS).map(([key, what]) => `  ${key.padEnd(15)} ${what}`).join('\n')}`);
}
const runs = (section: Section) => !ONLY || ONLY.has(section);
// One database per catalogue size: a 1,000,000-product run does not turn the default one into it.
const DATA_DIR = path.join(ROOT, `.data-bench-${PRODUCTS}`);

function positiveInt(flag: string, v: string | undefined): number {
  if (!v || !/^\d+$/.test(v) || Number(v) < 1) argError(`${flag} must be a positive integer, got ${v}`);
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
/** Set on Ctrl-C (or SIGTERM, SIGHUP): the run stops where it is, and reports nothing. */
let interrupted = false;
/** autocannon runs in flight, stopped on a signal. */
const inFlight = new Set<{ stop(): void }>();

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    // Once: Ctrl-C reaches this process both from the terminal and relayed by tsx.
    if (interrupted) return;
    log(`${sig}: stopping`);
    interrupted = true;
    process.exitCode = 130;
    for (const run of inFlight) run.stop();
    void cleanup().finally(() => process.exit(130));
  });
}

/** autocannon, stoppable by a signal; an interrupted run is an error, never a figure. */
async function cannon(opts: AutocannonOptions) {
  if (interrupted) throw new Error('interrupted');
  const run = autocannon(opts);
  inFlight.add(run);
  try {
    const result = await run;
    if (interrupted) throw new Error('interrupted');
    return result;
  } finally {
    inFlight.delete(run);
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers


/** What a child runs: compiled JavaScript as the service runs in production, or TypeScript through tsx. */
interface Program {
  script: string;
  tsx?: boolean;
  nodeFlags?: string[];
}

/** The child's environment: this process's, with `env` over it (undefined: the variable is removed). */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete merged[k];
  return merged;
}

function spawnPinned(core: number, program: Program, env: Record<string, string | undefined>, name: string): ChildProcess {
  // node itself (taskset execs it): one process, which node flags (--cpu-prof) and signals reach.
  const args = [...(program.nodeFlags ?? []), ...(program.tsx ? ['--import', 'tsx'] : []), program.script];
  const child = spawn('taskset', ['-c', String(core), process.execPath, ...args], {
    cwd: ROOT,
    env: childEnv(env),
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

/**
 * A throwaway redis-server on 127.0.0.1:`port` (no snapshots, no append-only file, its working
 * directory `dir`), on every core as PostgreSQL is (this process is pinned to core 1 by then and
 * its children would inherit that); stopped with the other children, on exit, error and Ctrl-C.
 */
async function startRedis(bin: string, port: number, dir: string): Promise<ChildProcess> {
  mkdirSync(dir, { recursive: true });
  const child = spawn('taskset', ['-c', `0-${os.cpus().length - 1}`, bin, '--bind', HOST, '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.stderr?.on('data', (d: Buffer) => process.stderr.write(`[redis] ${d.toString()}`));
  child.once('exit', (code, signal) => {
    children.delete(child);
    if (!stopRequested.has(child)) log(`redis-server exited early (code ${code}, signal ${signal})`);
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not get ready within 10 s:\n${seen.slice(-1000)}`)), 10_000);
    child.stdout?.on('data', (d: Buffer) => {
      seen += d.toString();
      if (/Ready to accept connections/.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited before it was ready:\n${seen.slice(-1000)}`));
    });
  });
  return child;
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
  /** Distinct requests of the scenario's cycle (unset: one request, repeated). */
  distinct?: number;
}

/** One request of a scenario: its path (with the query string) and, for a POST, its body. */
interface Req {
  path: string;
  body?: string;
}

/**
 * Distinct requests sent in turn: each request, whichever connection sends it, takes the next one
 * (so concurrent requests differ), and after the last the first again. `next` carries on from a
 * warm-up to the measured run, so the measured run does not start on the requests just warmed.
 */
interface Cycle {
  requests: Req[];
  next: number;
}

interface Scenario {
  name: string;
  /** Origin and path of the (first) request; a cycle's requests replace the path and the body. */
  url: string;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  /** A fresh header per request (e.g. Idempotency-Key). */
  perRequestHeaders?: () => Record<string, string>;
  /** Distinct requests sent in turn (a distinct workload); unset: the same request every time. */
  cycle?: Cycle;
  /** A distinct workload's warm-up: requests of the same kind outside `cycle` (WARM_UP_SECONDS). */
  warmUp?: Cycle;
  /** Requests per second, evenly spaced (paced); unset: as fast as the service answers. */
  steadyRate?: number;
}

/** Requests that did not succeed: non-2xx answers, connection errors and timeouts. */
const failed = (r: Result) => r.non2xx + r.errors + r.timeouts;

/** Every measured run, and every warm-up that failed a request, for the "no errors under load" target. */
const measuredRuns: Result[] = [];

function autocannonOptions(s: Scenario, connections: number, duration: number): AutocannonOptions {
  const opts: AutocannonOptions = {
    url: s.url,
    connections,
    duration,
    method: s.method ?? 'GET',
    headers: s.headers ?? {},
    body: s.body,
    timeout: 10,
  };
  if (s.perRequestHeaders || s.cycle) {
    // One dynamic request, rebuilt before each sending (autocannon's defaults, url's path and
    // headers, come in as `req`): its path and body the cycle's next, its headers fresh ones.
    const { cycle, perRequestHeaders: fresh } = s;
    opts.requests = [
      {
        method: s.method ?? 'GET',
        body: s.body,
        setupRequest: (req) => {
          const next = cycle ? cycle.requests[cycle.next++ % cycle.requests.length]! : undefined;
          return {
            ...req,
            ...(next ? { path: next.path, body: next.body ?? s.body } : {}),
            headers: { ...(req.headers ?? {}), ...(s.headers ?? {}), ...(fresh?.() ?? {}) },
          };
        },
      },
    ];
  }
  return opts;
}

async function load(s: Scenario, { connections, duration } = { connections: CONNECTIONS, duration: DURATION }): Promise<Result> {
  if (s.steadyRate) return record(await paced(s, s.steadyRate, duration));
  log(`${s.name}: ${duration} s, ${connections} connections${s.cycle ? `, ${s.cycle.requests.length} distinct requests in turn` : ''}`);
  const r = await cannon(autocannonOptions(s, connections, duration));
  log(`${s.name}: ${r.requests.average.toFixed(0)} req/s`);
  return record({
    scenario: s.name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    ...(s.cycle ? { distinct: s.cycle.requests.length } : {}),
  });
}

function record(r: Result): Result {
  measuredRuns.push(r);
  return r;
}

/**
 * Before a scenario is measured: 1 s of its own requests (the cycle carries on from there), or for
 * a distinct workload WARM_UP_SECONDS of its warm-up set. Its failures count for "no errors under
 * load" (as a run of its own), its speed for nothing.
 */
async function warm(s: Scenario, connections = CONNECTIONS, seconds = 1): Promise<void> {
  const r = await cannon(s.warmUp ? autocannonOptions({ ...s, cycle: s.warmUp }, connections, WARM_UP_SECONDS) : autocannonOptions(s, connections, seconds));
  if (r.non2xx + r.errors + r.timeouts) {
    record({ scenario: `${s.name} (warm-up)`, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, requests: r.requests.total, non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts });
  }
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
  if (s.perRequestHeaders || s.cycle) throw new Error(`${s.name}: a steady rate sends the same request each time`);
  log(`${s.name}: ${seconds} s, ${rate}/s evenly spaced`);
  if (interrupted) throw new Error('interrupted');
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

/**
 * The bench's nested query (one page of 50 products, each with its supplier, category and 3 newest
 * reviews, and the list's total), and the same one in PostGraphile's schema, with and without the
 * total. The page is a variable: page 1 for the repeated workload, 1–NESTED_PAGES for the deep one
 * (PostGraphile: offset (page − 1) × 50, same order).
 */
const NESTED_LIMIT = 50;
const PEER_QUERY = (total: boolean) => `query BenchNested($offset: Int) { allProducts(first: ${NESTED_LIMIT}, offset: $offset, orderBy: [CREATED_AT_DESC, ID_ASC], condition: { isActive: true }) {
  nodes { id name slug price
    supplierBySupplierId { id companyName verified rating } categoryByCategoryId { id name slug }
    reviewsByProductId(first: 3, orderBy: [CREATED_AT_DESC, ID_ASC]) { nodes { id rating title createdAt } } }
  ${total ? 'totalCount' : ''} } }`;
const nestedBody = (page: number) => JSON.stringify({ query: NESTED_QUERY, variables: { page } });
const peerBody = (total: boolean, page: number) => JSON.stringify({ query: PEER_QUERY(total), variables: { offset: (page - 1) * NESTED_LIMIT } });

// The distinct workloads (issue 27): fixed sets of different requests, cycled through.
/** REST list: every (limit, page) pair of these limits and pages 1–LIST_PAGES: 700 pairs, the deepest at offset 17,400. */
const LIST_LIMITS = [12, 24, 50, 100];
const LIST_PAGES = 175;
/** Product by slug: this many active products' slugs, read from the bench database. */
const DISTINCT_SLUGS = 2_000;
/** GraphQL nested: pages 1–NESTED_PAGES of 50 (offset up to 19,950). */
const NESTED_PAGES = 400;
/**
 * Before a distinct workload is measured, every program that serves it (service, baseline, peer)
 * first answers WARM_UP_SECONDS of requests of the same kind that are *not* in the measured set:
 * list pages of other limits, other slugs, nested pages past the set's. A process that has only
 * just started runs mostly unoptimised code (V8 compiles a function for speed after it has run
 * many times): a fresh service answered its first 1,000 distinct slugs at 4.7 ms of CPU each, the
 * next 1,800 at 2.5 ms, then 1.4 ms, and 1.2 ms at once after a few seconds of one repeated slug,
 * with nothing kept per slug. Warming on the set itself would answer part of it before it is measured.
 */
const WARM_UP_SECONDS = 10;
const WARM_UP_LIST_LIMITS = [10, 20, 40, 80];

/** A fixed shuffle (seeded), so that a short run mixes shallow and deep pages as a long one does. */
function shuffled<T>(items: T[], seed = SEED): T[] {
  const out = [...items];
  let state = seed >>> 0;
  const random = () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The first, the middle and the last of a list (in its natural order: the last is the deepest). */
const firstMiddleLast = <T>(items: T[]): T[] => [...new Set([items[0]!, items[Math.floor(items.length / 2)]!, items.at(-1)!])];

// ---------------------------------------------------------------------------------------------
// The targets of issue 27, checked against this run's figures.

interface Check {
  target: string;
  measured: string;
  /** undefined: not measured in this run. */
  met: boolean | undefined;
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

async function main() {
  const started = Date.now();
  const machine = describeMachine();
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
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  let key: string;
  let fixtures: { slug: string; categoryId: string; word: string; productId: string; supplierId: string; minOrder: number; slugs: string[]; warmUpSlugs: string[] };
  let pgVersion: string;
  let activeProducts: number;
  /** The mixed part's: another account's key for its orders, the products browsed and ordered, the list pages. */
  let orderKey: string | undefined;
  let mixedSet: MixedFixtures | undefined;
  try {
    key = await createBenchKey(db.url);
    if (runs('mixed')) {
      orderKey = await createBenchKey(db.url, 'bench-orders@example.com');
      mixedSet = await mixedFixtures(client);
      if (mixedSet.products.length < MIXED_SLUGS) log(`mixed: the catalogue has ${mixedSet.products.length} products to browse and order, not ${MIXED_SLUGS}`);
    }
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
      // The distinct slugs: active products spread over the whole catalogue, the same ones every run.
      slugs: (await client.query<{ slug: string }>(`SELECT slug FROM "Product" WHERE "isActive" ORDER BY md5(id) LIMIT $1`, [DISTINCT_SLUGS])).rows.map((r) => r.slug),
      // The next ones in that order: the slug workload's warm-up (WARM_UP_SECONDS).
      warmUpSlugs: (await client.query<{ slug: string }>(`SELECT slug FROM "Product" WHERE "isActive" ORDER BY md5(id) OFFSET $1 LIMIT $1`, [DISTINCT_SLUGS])).rows.map((r) => r.slug),
    };
    pgVersion = (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;
    activeProducts = (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM "Product" WHERE "isActive"')).rows[0]!.n;
  } finally {
    await client.end();
  }

  // 3. Service, baselines and peer, all on core 0 (loaded one at a time: they take turns). The
  // baselines only when a scenario compares with them, the peer only for the nested query.
  const startPinned = async (name: string, program: Program, env: Record<string, string | undefined>, probe: string, init: RequestInit) => {
    const port = await freePort();
    const child = spawnPinned(0, program, { DATABASE_URL: db!.url, PORT: String(port), HOST, ...env }, name);
    const url = `http://${HOST}:${port}`;
    await waitForHttp(`${url}${probe}`, init, 60_000);
    return { url, child, stop: () => stopChild(child) };
  };
  const auth = { 'x-api-key': key };
  const serviceEnv = {
    LOG_LEVEL: 'warn',
    DEMO_DATA: 'false',
    NODE_ENV: 'production',
    ORDER_CREATE_LIMIT: '100000',
    // on: the service's default, whatever this shell's RESPONSE_CACHE says.
    RESPONSE_CACHE: RESPONSE_CACHE === 'off' ? 'off' : undefined,
  };
  const startService = (name: string, nodeFlags: string[] = [], env: Record<string, string | undefined> = serviceEnv) =>
    startPinned(name, { script: 'dist/server.js', nodeFlags: [...NODE_FLAGS, ...ALLOC_METER, ...nodeFlags] }, env, '/api/products?limit=1', { headers: auth });
  const PAIRS: Section[] = ['list', 'slug', 'nested', 'list-distinct', 'slug-distinct', 'nested-deep'];
  const REPEATED: Section[] = ['list', 'slug', 'nested'];
  const needBaseline = PAIRS.some(runs) || runs('alloc') || runs('mixed');
  const needPeer = runs('nested') || runs('nested-deep');
  const service = await startService('service');
  // The distinct workloads measure the miss path: with the cache on, a cycle's second pass would be
  // answered from it. Their service keeps nothing (RESPONSE_CACHE=off), so every request runs as
  // a first one would; with the cache on, a miss costs one more revision read besides.
  const DISTINCT: Section[] = ['list-distinct', 'slug-distinct', 'nested-deep'];
  const missService =
    RESPONSE_CACHE === 'on' && DISTINCT.some(runs)
      ? await startService('service, cache off', [], { ...serviceEnv, RESPONSE_CACHE: 'off' })
      : service;
  const baseline = needBaseline
    ? await startPinned('baseline', { script: 'bench/baseline-server.ts', tsx: true, nodeFlags: [...NODE_FLAGS, ...ALLOC_METER] }, {}, '/api/products?limit=1', {})
    : undefined;
  const peer = needPeer
    ? await startPinned('postgraphile', { script: 'bench/peer/server.mjs', nodeFlags: NODE_FLAGS }, {}, '/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ __typename }"}',
      })
    : undefined;

  // 4. The scenarios. Each pair: the service and its baseline on the same requests, one repeated
  // or a cycle of distinct ones (in a fixed shuffled order); for the nested query PostGraphile too.
  const json = { 'content-type': 'application/json' };
  const gql = { ...auth, ...json };
  const scenario = (name: string, origin: string, requests: Req[], headers: Record<string, string>, post: boolean, warmUp?: Req[]): Scenario => ({
    name,
    url: `${origin}${requests[0]!.path}`,
    method: post ? 'POST' : 'GET',
    body: requests[0]!.body,
    headers,
    ...(requests.length > 1 ? { cycle: { requests, next: 0 } } : {}),
    ...(warmUp?.length ? { warmUp: { requests: warmUp, next: 0 } } : {}),
  });
  // A distinct set shorter than asked when the catalogue is too small for it (full pages only).
  const listRequests: Req[] = [];
  for (let page = 1; page <= LIST_PAGES; page++) {
    for (const limit of LIST_LIMITS) if (page * limit <= activeProducts) listRequests.push({ path: `/api/products?limit=${limit}&page=${page}` });
  }
  const listWarmUp: Req[] = [];
  for (let page = 1; page <= LIST_PAGES; page++) {
    for (const limit of WARM_UP_LIST_LIMITS) if (page * limit <= activeProducts) listWarmUp.push({ path: `/api/products?limit=${limit}&page=${page}` });
  }
  const nestedPages = Math.min(NESTED_PAGES, Math.floor(activeProducts / NESTED_LIMIT));
  const pages = Array.from({ length: nestedPages }, (_, i) => i + 1);
  // The nested workload's warm-up: the pages after the set's, as many as the catalogue fills (up to as many again).
  const warmUpPages = Array.from({ length: Math.min(NESTED_PAGES, Math.floor(activeProducts / NESTED_LIMIT) - nestedPages) }, (_, i) => nestedPages + i + 1);
  const gqlPath = '/graphql';
  /** `warmUp`, `peerWarmUp`: a distinct workload's warm-up requests (WARM_UP_SECONDS). */
  const defs: { key: Section; name: string; requests: Req[]; warmUp?: Req[]; post?: boolean; peer?: (total: boolean, pageList?: number[]) => Req[] }[] = [
    { key: 'list', name: 'REST list (limit 12)', requests: [{ path: '/api/products?limit=12' }] },
    { key: 'slug', name: 'REST product by slug', requests: [{ path: `/api/products/${encodeURIComponent(fixtures.slug)}` }] },
    {
      key: 'nested',
      name: `GraphQL nested (${NESTED_LIMIT} × supplier, category, 3 reviews)`,
      requests: [{ path: gqlPath, body: nestedBody(1) }],
      post: true,
      peer: (total) => [{ path: gqlPath, body: peerBody(total, 1) }],
    },
    { key: 'list-distinct', name: `REST list, ${listRequests.length} distinct (limit, page) pairs`, requests: listRequests, warmUp: listWarmUp },
    {
      key: 'slug-distinct',
      name: `REST product by slug, ${fixtures.slugs.length} distinct slugs`,
      requests: fixtures.slugs.map((slug) => ({ path: `/api/products/${encodeURIComponent(slug)}` })),
      warmUp: fixtures.warmUpSlugs.map((slug) => ({ path: `/api/products/${encodeURIComponent(slug)}` })),
    },
    {
      key: 'nested-deep',
      name: `GraphQL nested, pages 1–${nestedPages} (offset up to ${(nestedPages - 1) * NESTED_LIMIT})`,
      requests: pages.map((page) => ({ path: gqlPath, body: nestedBody(page) })),
      warmUp: warmUpPages.map((page) => ({ path: gqlPath, body: nestedBody(page) })),
      post: true,
      peer: (total, pageList = pages) => pageList.map((page) => ({ path: gqlPath, body: peerBody(total, page) })),
    },
  ];
  if (listRequests.length < LIST_LIMITS.length * LIST_PAGES || nestedPages < NESTED_PAGES || fixtures.slugs.length < DISTINCT_SLUGS) {
    log(`catalogue of ${activeProducts} active products: ${listRequests.length} list pages, ${fixtures.slugs.length} slugs, ${nestedPages} nested pages`);
  }
  const pairs = baseline
    ? defs.map((d) => {
        const post = d.post ?? false;
        // Natural order (pages ascending: the last is the deepest) for the checks; shuffled for the load.
        const order = (r: Req[]) => (r.length > 1 ? shuffled(r) : r);
        const peerName = (total: boolean) => `PostGraphile 4: ${d.name}${total ? ' (with totalCount, counted per request)' : ' without totalCount'}`;
        return {
          ...d,
          samples: firstMiddleLast(d.requests),
          service: scenario(d.name, (DISTINCT.includes(d.key) ? missService : service).url, order(d.requests), post ? gql : auth, post, d.warmUp && order(d.warmUp)),
          baseline: scenario(`Baseline: ${d.name}`, baseline.url, order(d.requests), post ? json : {}, post, d.warmUp && order(d.warmUp)),
          /** [with totalCount, without]. */
          peers:
            peer && d.peer
              ? [true, false].map((total) => scenario(peerName(total), peer.url, order(d.peer!(total)), json, true, d.warmUp && order(d.peer!(total, warmUpPages))))
              : [],
        };
      })
    : [];
  const chosen = pairs.filter((p) => runs(p.key));
  const q = (s: string) => `${service.url}/api/products?${s}`;
  const others: (Scenario & { key: Section })[] = [
    { key: 'list-filtered' as const, name: 'REST list filtered (category, price, price_asc)', url: q(`limit=12&categoryId=${fixtures.categoryId}&minPrice=10&maxPrice=500&sortBy=price_asc`), headers: auth },
    { key: 'list-search' as const, name: `REST list search ("${fixtures.word}")`, url: q(`limit=12&search=${encodeURIComponent(fixtures.word)}`), headers: auth },
    {
      key: 'order' as const,
      name: 'REST create order (fresh Idempotency-Key)',
      url: `${service.url}/api/orders`,
      method: 'POST' as const,
      body: JSON.stringify({ supplierId: fixtures.supplierId, items: [{ productId: fixtures.productId, quantity: Math.max(1, fixtures.minOrder) }] }),
      headers: gql,
      perRequestHeaders: () => ({ 'idempotency-key': randomUUID() }),
    },
  ].filter((s) => runs(s.key));

  // 5. Same answers, byte for byte (bodies only: the service adds headers), on the first, a middle
  // and the last (deepest) request of each pair, and a probe of every other scenario before timing
  // it: a 4xx/5xx would otherwise be measured as speed.
  const answer = async (name: string, url: string, init: RequestInit) => {
    const r = await fetch(url, init);
    const text = await r.text();
    if (!r.ok || text.includes('"errors"')) throw new Error(`${name}: ${init.method ?? 'GET'} ${url}: ${r.status} ${text.slice(0, 400)}`);
    return text;
  };
  const send = (s: Scenario, req: Req) =>
    answer(s.name, `${new URL(s.url).origin}${req.path}`, { method: s.method ?? 'GET', headers: { ...(s.headers ?? {}), ...(s.perRequestHeaders?.() ?? {}) }, body: req.body });
  for (const p of chosen) {
    const sizes: number[] = [];
    let deepest = '';
    for (const req of p.samples) {
      const [reported, base] = await Promise.all([send(p.service, req), send(p.baseline, req)]);
      // Every GraphQL answer of the service ends with its cost report (extensions.cost), which the
      // baseline has no budget to give: the rest must be the same bytes.
      const svc = p.post ? reported.replace(/,"extensions":\{"cost":\{"requested":\d+,"limit":\d+,"remaining":\d+,"restoreRate":\d+\}\}\}$/, '}') : reported;
      if (p.post && svc === reported) throw new Error(`${p.name}: the service's GraphQL answer has no cost report: …${reported.slice(-120)}`);
      const what = `${p.post ? 'POST' : 'GET'} ${req.path}${req.body ? ` ${req.body.slice(-40)}` : ''}`;
      if (svc !== base) throw new Error(`baseline and service disagree on ${what}:\n${firstDifference(svc, base)}`);
      sizes.push(svc.length);
      deepest = svc;
    }
    log(`${p.name}: bodies identical on ${p.samples.length} of its requests (${sizes.join(', ')} bytes)`);
    if (!p.peers.length) continue;
    // The peer on the deepest page: 50 products, the service's, in the same order.
    const ids = (JSON.parse(deepest) as { data: { products: { items: { id: string }[] } } }).data.products.items.map((i) => i.id);
    for (const [i, s] of p.peers.entries()) {
      const deepReq = p.peer!(i === 0).at(-1)!;
      const nodes = (JSON.parse(await send(s, deepReq)) as { data: { allProducts: { nodes: { id: string }[] } } }).data.allProducts.nodes;
      if (nodes.length !== NESTED_LIMIT) throw new Error(`${s.name}: ${nodes.length} products on page ${p.requests.length}, not ${NESTED_LIMIT}`);
      if (nodes.map((n) => n.id).join() !== ids.join()) throw new Error(`${s.name}: other products than the service's on page ${p.requests.length}`);
    }
    log(`${p.name}: PostGraphile answers the service's ${NESTED_LIMIT} products on page ${p.requests.length}`);
  }
  for (const s of others) await send(s, { path: new URL(s.url).pathname + new URL(s.url).search, body: s.body });
  if (mixedSet && baseline) {
    // Every list page of the mix, and its most, middle and least popular products.
    const paths = [...mixedSet.lists, ...firstMiddleLast(mixedSet.products).map((p) => `/api/products/${encodeURIComponent(p.slug)}`)];
    for (const p of paths) {
      const [svc, base] = await Promise.all([answer('mixed', `${service.url}${p}`, { headers: auth }), answer('mixed baseline', `${baseline.url}${p}`, { headers: auth })]);
      if (svc !== base) throw new Error(`baseline and service disagree on GET ${p}:\n${firstDifference(svc, base)}`);
    }
    log(`mixed: bodies identical on its ${mixedSet.lists.length} list pages and ${paths.length - mixedSet.lists.length} of its products`);
  }

  // 6. Load: each scenario right after its own baseline (and the peer), 1 s of warm-up first
  // (none for order creation: each request creates an order).
  const measured = async (s: Scenario, connections = CONNECTIONS) => {
    if (!s.perRequestHeaders) await warm(s, connections);
    return load(s, { connections, duration: DURATION });
  };
  const byPair = new Map<Section, PairResult>();
  // A pair runs in alternating rounds (its baseline, the service, the peer; then again), each
  // keeping its fastest round: this machine's speed drifts over tens of seconds (a shared host),
  // and one round each, one after the other, compared the two at different speeds (the same
  // commit's distinct slugs measured 48.7 % and 65.3 % of the baseline within minutes). Every
  // round's failures count for "no errors under load".
  const fastest = (kept: Result | undefined, r: Result) => (kept && kept.rps >= r.rps ? kept : r);
  for (const p of chosen) {
    let base: Result | undefined;
    let svc: Result | undefined;
    const peerResults: Result[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      base = fastest(base, await measured(p.baseline));
      svc = fastest(svc, await measured(p.service));
      for (const [i, s] of p.peers.entries()) peerResults[i] = fastest(peerResults[i], await measured(s));
    }
    byPair.set(p.key, { name: p.name, baseline: base!, service: svc!, peers: peerResults });
  }
  const otherResults: Result[] = [];
  for (const s of others) otherResults.push(await measured(s));

  // 7. Connections: 4 and 32 beside the 10 above, for the repeated scenarios measured.
  const repeated = chosen.filter((p) => REPEATED.includes(p.key));
  const scaling: { name: string; rps: Record<number, number> }[] = [];
  if (runs('connections')) {
    if (!repeated.length) log('--only connections: no repeated scenario (list, slug, nested) chosen to run at 4 and 32 connections');
    for (const p of repeated) {
      const rps: Record<number, number> = { [CONNECTIONS]: byPair.get(p.key)!.service.rps };
      for (const c of [4, 32]) if (c !== CONNECTIONS) rps[c] = (await measured({ ...p.service, name: `${p.name}, ${c} connections` }, c)).rps;
      scaling.push({ name: p.name, rps });
    }
  }

  // 8. Tail latency at half the measured maximum, evenly spaced: each baseline, then the service.
  const half: { name: string; baseline?: Result; service?: Result }[] = [];
  if (runs('half-rate')) {
    if (!repeated.length) log('--only half-rate: no repeated scenario (list, slug, nested) chosen to run at half its rate');
    for (const p of repeated) {
      const r = byPair.get(p.key)!;
      half.push({ name: p.name, baseline: await loadAtHalfRate(p.baseline, r.baseline.rps), service: await loadAtHalfRate(p.service, r.service.rps) });
    }
  }

  // 9. Allocation per REST list request, the service's and the baseline's, repeated and distinct.
  const allocations: Allocation[] = [];
  if (runs('alloc') && baseline) {
    for (const key of ['list', 'list-distinct'] as const) {
      const p = pairs.find((x) => x.key === key)!;
      // The process that serves the scenario: the distinct list goes to the instance that keeps nothing.
      const serving = DISTINCT.includes(key) ? missService : service;
      allocations.push(await measureAllocation(serving.child, p.service), await measureAllocation(baseline.child, p.baseline));
    }
  }

  // 9b. The response cache under a busy shop: at each order rate, the service then the baseline
  // (in ROUNDS alternating rounds, each keeping its fastest), the orders running throughout.
  const mixedRates: MixedRate[] = [];
  if (mixedSet && baseline && orderKey) {
    const sequence = browsingSequence(mixedSet, SEED);
    const browse = (name: string, origin: string): Scenario => ({ name, url: `${origin}${sequence[0]!.path}`, headers: auth, cycle: { requests: sequence, next: 0 } });
    const svcBrowse = browse('Mixed browsing', service.url);
    const baseBrowse = browse('Baseline: mixed browsing', baseline.url);
    const sql = new pg.Pool({ connectionString: db.url, max: 4 });
    // An idle connection ended by PostgreSQL stopping (Ctrl-C) is no error of the run.
    sql.on('error', () => undefined);
    try {
      // Every page of the mix once, through both, before any order: a shop that has run a while has
      // been asked for each of them (the service keeps them, PostgreSQL has their rows in memory
      // for both), and each answer must be the same bytes from both.
      const paths = [...new Set(sequence.map((r) => r.path))];
      let nextPath = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (nextPath < paths.length) {
            const p = paths[nextPath++]!;
            const [svc, base] = await Promise.all([answer('mixed', `${service.url}${p}`, { headers: auth }), answer('mixed baseline', `${baseline.url}${p}`, { headers: auth })]);
            if (svc !== base) throw new Error(`baseline and service disagree on GET ${p}:\n${firstDifference(svc, base)}`);
          }
        }),
      );
      log(`mixed: bodies identical on all ${paths.length} pages of the mix (each asked once of both before measuring)`);
      for (const rate of ORDER_RATES) {
        log(`mixed: ${rate} orders/s${rate ? ' (another account, through the service, each followed by a stale-read check)' : ''}`);
        const firstRun = measuredRuns.length;
        const orders = startOrders({ service: service.url, orderKey, browseKey: key, rate, products: mixedSet.products, seed: SEED + rate, sql, stopped: () => interrupted, log });
        let counts: CacheCounters = NO_COUNTS;
        let svc: Result | undefined;
        let base: Result | undefined;
        let stats: OrderStats;
        try {
          for (let round = 0; round < ROUNDS; round++) {
            const at = (s: Scenario): Scenario => ({ ...s, name: `${s.name}, ${rate} orders/s` });
            await warm(at(svcBrowse), CONNECTIONS, MIXED_WARM_UP_SECONDS);
            const before = await cacheCounters(service.url);
            svc = fastest(svc, await load(at(svcBrowse)));
            counts = addCounters(counts, counterDelta(before, await cacheCounters(service.url)));
            await warm(at(baseBrowse), CONNECTIONS, MIXED_WARM_UP_SECONDS);
            base = fastest(base, await load(at(baseBrowse)));
          }
        } finally {
          stats = await orders.stop();
        }
        const browseFailures = measuredRuns.slice(firstRun).reduce((n, r) => n + failed(r), 0);
        mixedRates.push({ rate, service: svc!, baseline: base!, counts, orders: stats, browseFailures });
        log(
          `mixed, ${rate} orders/s: service ${svc!.rps.toFixed(0)} vs baseline ${base!.rps.toFixed(0)} req/s (${pct(svc!.rps / base!.rps)}), ` +
            `hit ratio ${pct(hitRatio(counts))}; ${stats.placed} orders placed (${failureList(stats)} failed), ${stats.checks} checks, ${stats.stale} stale` +
            (stats.staleSamples.length ? `: ${stats.staleSamples.join('; ')}` : ''),
        );
      }
    } finally {
      await sql.end();
    }
  }
  await Promise.all([baseline?.stop(), peer?.stop()]);

  // 10. Search latency and, with --soak, memory over a long run.
  const search = runs('search-latency')
    ? await withClient(db.url, (sql) =>
        searchLatency({ service: service.url, headers: auth, sql, productId: fixtures.productId, startInstance: () => startService('service 2') }),
      )
    : [];
  const soaked =
    SOAK && repeated.length
      ? await soak(service.child.pid!, SOAK, repeated.map((p) => ({ ...p.service, steadyRate: Math.max(1, Math.round(byPair.get(p.key)!.service.rps / 4)) })))
      : undefined;
  if (SOAK && !repeated.length) log('--soak: no repeated scenario (list, slug, nested) chosen to soak with');
  await service.stop();

  // 10b. The response cache in Redis under a flood of writes: a service of its own with REDIS_URL
  // (a throwaway redis-server) and RESPONSE_CACHE_MAX_BYTES; list reads while a profile is saved
  // every FLOOD_SAVE_EVERY_MS; Redis' memory sampled every second.
  let flood: FloodResult | { skipped: string } | undefined;
  if (runs('flood')) {
    const bin = redisServerPath();
    if (!bin) {
      flood = { skipped: 'redis-server is not installed (Debian: apt-get install redis-server)' };
      log(`flood: skipped, ${flood.skipped}`);
    } else {
      const port = await freePort();
      const redisChild = await startRedis(bin, port, path.join(DATA_DIR, 'redis-flood'));
      const redisUrl = `redis://${HOST}:${port}`;
      const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
      redis.on('error', (error: Error) => log(`flood: redis client: ${error.message}`));
      const sql = new pg.Pool({ connectionString: db.url, max: 2 });
      sql.on('error', () => undefined);
      try {
        const redisVersion = /^redis_version:(\S+)/m.exec(await redis.info('server'))?.[1] ?? 'unknown';
        await createBenchKey(db.url, 'bench-profile@example.com');
        const accountId = (await sql.query<{ id: string }>(`SELECT id FROM "Account" WHERE email = 'bench-profile@example.com'`)).rows[0]!.id;
        // The cache always on here, whatever --response-cache says: the part measures its bound.
        const floodService = await startService('service, Redis', [], {
          ...serviceEnv,
          RESPONSE_CACHE: undefined,
          REDIS_URL: redisUrl,
          RESPONSE_CACHE_MAX_BYTES: String(FLOOD_BOUND_BYTES),
        });
        try {
          // Redis' own overhead (and the service's few keys: its rate-limit counters), before the load.
          const overhead = (await redisSample(redis, performance.now())).usedMemory;
          const pages = Array.from({ length: FLOOD_PAGES }, (_, i) => ({ path: `/api/products?limit=12&page=${i + 1}` }));
          const keysBefore = await keysByPrefix(redis);
          for (const p of pages) await answer('flood', `${floodService.url}${p.path}`, { headers: auth });
          const counts0 = await cacheCounters(floodService.url);
          let stoppedEarly: string | undefined;
          const sampler = await sampleRedis(
            redis,
            (s) => {
              stoppedEarly = `stopped after ${s.at.toFixed(0)} s: Redis used ${mib(s.usedMemory).toFixed(0)} MiB, past the bench's safety stop of ${mib(FLOOD_SAFETY_BYTES).toFixed(0)} MiB`;
              log(`flood: ${stoppedEarly}`);
              for (const run of inFlight) run.stop();
            },
            log,
          );
          const saver = saveProfileSteadily(sql, accountId, () => interrupted || stoppedEarly !== undefined, log);
          log(`flood: ${FLOOD_SECONDS} s of ${FLOOD_PAGES} list pages round-robin; the profile saved every ${FLOOD_SAVE_EVERY_MS} ms; RESPONSE_CACHE_MAX_BYTES ${mib(FLOOD_BOUND_BYTES)} MiB`);
          let reader: Result;
          let saved: Awaited<ReturnType<typeof saver.stop>>;
          let samples: RedisSample[];
          try {
            reader = await load({ name: 'Flood: REST list, 20 pages round-robin', url: `${floodService.url}${pages[0]!.path}`, headers: auth, cycle: { requests: pages, next: 0 } }, { connections: CONNECTIONS, duration: FLOOD_SECONDS });
          } finally {
            saved = await saver.stop();
            samples = await sampler.stop();
          }
          const counts = counterDelta(counts0, await cacheCounters(floodService.url));
          const keysAfter = await keysByPrefix(redis);
          flood = { seconds: (performance.now() - sampler.since) / 1000, stoppedEarly, reader, counts, saves: saved.saves, saveFailures: saved.failures, overhead, samples, redisVersion, keysBefore, keysAfter };
          const max = Math.max(...samples.map((s) => s.usedMemory));
          log(`flood: Redis used_memory ${mib(samples[0]!.usedMemory).toFixed(1)} → max ${mib(max).toFixed(1)} → ${mib(samples.at(-1)!.usedMemory).toFixed(1)} MiB, keys ${samples[0]!.keys} → ${samples.at(-1)!.keys}; ${saved.saves} saves; hit ratio ${pct(hitRatio(counts))}`);
        } finally {
          await floodService.stop();
        }
      } finally {
        redis.disconnect();
        await sql.end();
        await stopChild(redisChild);
      }
    }
  }

  // 11. With --cpu-prof: one profiled instance per scenario, so each profile holds one scenario.
  const profiles: string[] = [];
  if (args['cpu-prof']) {
    for (const p of chosen) {
      const dir = path.join(DATA_DIR, 'cpu-prof', p.key);
      rmSync(dir, { recursive: true, force: true });
      // Like the instance it stands for: a distinct workload's keeps nothing.
      const distinct = DISTINCT.includes(p.key);
      const profiled = await startService(`profiled ${p.key}`, ['--cpu-prof', `--cpu-prof-dir=${dir}`], distinct ? { ...serviceEnv, RESPONSE_CACHE: 'off' } : serviceEnv);
      const s: Scenario = {
        ...p.service,
        name: `${p.name} (profiled)`,
        url: p.service.url.replace((distinct ? missService : service).url, profiled.url),
        ...(p.service.cycle ? { cycle: { requests: p.service.cycle.requests, next: 0 } } : {}),
      };
      await warm(s);
      // The split covers the load only, not the start-up and warm-up before it (same monotonic clock).
      const from = Number(process.hrtime.bigint() / 1000n);
      await load(s);
      await profiled.stop();
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
      if (file) profiles.push(renderSplit(profileSplit(path.join(dir, file), from), `${p.name}: CPU profile, \`.data-bench-${PRODUCTS}/cpu-prof/${p.key}/\``));
    }
  }

  // 12. Report: the header (machine, date, commit) on every results block, stdout's and the file's.
  const checks = targetChecks(byPair, new Map(defs.map((d) => [d.key, d.name])), allocations, measuredRuns);
  const table = [
    byPair.size || otherResults.length ? renderTable([...byPair.values()], otherResults) : '',
    renderChecks(checks),
    scaling.length ? renderScaling(scaling) : '',
    half.length ? renderHalf(half) : '',
    allocations.length ? renderAllocation(allocations) : '',
    search.length ? renderSearch(search) : '',
    soaked ? renderSoak(soaked) : '',
    ...profiles,
  ].filter(Boolean).join('\n\n');
  const distinct = {
    list: `${listRequests.length} (limit, page) pairs (limits ${LIST_LIMITS.join(', ')} × pages 1–${Math.max(...listRequests.map((r) => Number(/page=(\d+)/.exec(r.path)![1])))})`,
    slugs: fixtures.slugs.length,
    nestedPages,
  };
  const header = { ...machine, postgres: pgVersion, products: activeProducts };
  const results = renderResults(header, table, fixtures, distinct);
  // The response cache parts: blocks of their own, each with its header and targets (a skipped
  // flood is said on stdout only: the file keeps the figures it has).
  const parts: PartBlocks = {};
  if (mixedSet && mixedRates.length) parts.mixed = renderPart(header, 'mixed', [renderMixed(mixedRates, mixedSet), renderChecks(mixedChecks(mixedRates), 'Target (the response cache under a busy shop)')]);
  if (flood && !('skipped' in flood)) parts.flood = renderPart(header, 'flood', [renderFlood(flood), renderChecks(floodChecks(flood), 'Target (the response cache in Redis)')]);
  if (interrupted) throw new Error('interrupted');
  process.stdout.write(`\n${results}\n`);
  for (const block of Object.values(parts)) process.stdout.write(`\n${block}\n`);
  if (flood && 'skipped' in flood) process.stdout.write(`\n${renderFlood(flood)}\n`);
  if (!args['no-report']) writeReport(results, parts);
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

interface PairResult {
  name: string;
  baseline: Result;
  service: Result;
  /** PostGraphile 4: [with totalCount, without] (the nested query only). */
  peers: Result[];
}

/** The run's machine, date and commit, taken as it starts. */
function describeMachine() {
  return {
    cpu: /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length, // not availableParallelism(): this process is pinned to one core later
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    commit: gitCommit(),
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    /** 1, 5 and 15 minutes, as the run starts: anything else running shares the 2 cores. */
    load: os.loadavg().map((x) => x.toFixed(2)).join(' / '),
  };
}

const p99OverP50 = (r: Result) => (r.p50 > 0 ? r.p99 / r.p50 : NaN);

/** Issue 27's targets, against the references measured in the same run; a part not run is said so. */
function targetChecks(byPair: Map<Section, PairResult>, names: Map<Section, string>, allocations: Allocation[], runs: Result[]): Check[] {
  const notRun = (target: string): Check => ({ target, measured: 'not run (--only)', met: undefined });
  const rps = (r: Result) => r.rps.toFixed(0);
  const vsBaseline = (key: Section, least: number, target: string): Check => {
    const r = byPair.get(key);
    if (!r) return notRun(target);
    const x = r.service.rps / r.baseline.rps;
    return { target, measured: `${pct(x)} (${rps(r.service)} vs ${rps(r.baseline)} req/s)`, met: x >= least };
  };
  // PostGraphile's faster form decides (without totalCount, unless it measured slower): the
  // service answers the total as well, so this is the stricter comparison.
  const vsPeer = (key: Section, least: number, target: string): Check => {
    const r = byPair.get(key);
    if (!r) return notRun(target);
    const [withTotal, without] = r.peers as [Result, Result];
    const fastest = without.rps >= withTotal.rps ? without : withTotal;
    const x = r.service.rps / fastest.rps;
    const form = fastest === without ? 'without totalCount' : 'with totalCount';
    const other = fastest === without ? withTotal : without;
    return {
      target,
      measured: `${pct(x)} (${rps(r.service)} vs ${rps(fastest)} req/s, its faster form, ${form}; ${pct(r.service.rps / other.rps)} of the other)`,
      met: x >= least,
    };
  };
  const name = (key: Section) => names.get(key) ?? key;
  const checks: Check[] = [
    vsBaseline('list', 1, 'Repeated REST list ≥ 100 % of the hand-written server (which reads the database every time)'),
    vsBaseline('slug', 1, 'Repeated product by slug ≥ 100 % of the hand-written server (which reads the database every time)'),
    vsPeer('nested', 3, 'Repeated nested GraphQL ≥ 300 % of PostGraphile 4'),
    vsBaseline('list-distinct', 0.5, `Distinct list pages (${name('list-distinct')}) ≥ 50 % of the hand-written server doing the same work`),
    vsBaseline('slug-distinct', 0.5, `Distinct slugs (${name('slug-distinct')}) ≥ 50 % of the hand-written server doing the same work`),
    vsPeer('nested-deep', 1, `Distinct nested pages (${name('nested-deep')}) ≥ 100 % of PostGraphile 4`),
  ];
  const [repeatedList, , distinctList] = allocations;
  const allocTarget = '≤ 400 KB allocated per list request (REST list, limit 12, repeated)';
  if (!repeatedList) checks.push(notRun(allocTarget));
  else {
    const kb = repeatedList.bytesPerRequest / 1024;
    const distinct = distinctList ? `; distinct pages: ${(distinctList.bytesPerRequest / 1024).toFixed(0)} KB, not a target` : '';
    checks.push({ target: allocTarget, measured: `${kb.toFixed(0)} KB${distinct}`, met: kb <= 400 });
  }
  const bad = runs.filter((r) => failed(r) > 0);
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  checks.push({
    target: 'No errors under load (non-2xx, connection errors, timeouts: 0 in every scenario run, warm-ups and references included)',
    measured: bad.length
      ? bad.map((r) => `${r.scenario}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`).join('; ')
      : `0 in ${runs.length} measured runs (${requests} requests) and their warm-ups`,
    met: bad.length === 0,
  });
  return checks;
}

function renderTable(pairs: PairResult[], others: Result[]): string {
  const row = (r: Result, against?: Result) => {
    const bad = failed(r);
    const vs = against ? pct(r.rps / against.rps) : '—';
    const passes = r.distinct ? ` (${(r.requests / r.distinct).toFixed(1)} passes)` : '';
    return `| ${r.scenario} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${p99OverP50(r).toFixed(1)}× | ${vs} | ${r.requests}${passes}${bad ? ` (${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts)` : ''} |`;
  };
  return [
    `Each scenario right after its own hand-written baseline (byte-identical bodies), ${CONNECTIONS} connections, in ${ROUNDS} alternating round${ROUNDS === 1 ? '' : 's'} each keeping its fastest; a distinct workload sends its requests in turn, cycling (passes: requests ÷ distinct requests):`,
    '',
    '| Scenario | req/s | p50 (ms) | p99 (ms) | p99/p50 | vs its baseline | requests |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...pairs.flatMap((p) => [row(p.baseline, p.baseline), row(p.service, p.baseline), ...p.peers.map((r) => row(r, p.baseline))]),
    ...others.map((r) => row(r)),
  ].join('\n');
}

function renderChecks(checks: Check[], title = 'Target (issue 27)'): string {
  const status = (c: Check) => (c.met === undefined ? '—' : c.met ? 'met' : '**not met**');
  return [`| ${title} | measured | |`, '|---|---|---|', ...checks.map((c) => `| ${c.target} | ${c.measured} | ${status(c)} |`)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// The response cache under load: the mixed part (skewed browsing while orders are placed) and the
// flood part (Redis' memory against RESPONSE_CACHE_MAX_BYTES while a profile is saved every 25 ms).

/** Seconds of browsing before each measured mixed run (the orders already running). */
const MIXED_WARM_UP_SECONDS = 3;

interface MixedRate {
  rate: number;
  /** The fastest of the rounds, each. */
  service: Result;
  baseline: Result;
  /** /metrics deltas over every measured window of the service at this rate, summed. */
  counts: CacheCounters;
  orders: OrderStats;
  /** Browsing requests that failed at this rate: every run, warm-ups and baseline included. */
  browseFailures: number;
}

interface FloodResult {
  seconds: number;
  /** Set when the bench's safety stop ended the load early. */
  stoppedEarly?: string;
  reader: Result;
  counts: CacheCounters;
  saves: number;
  saveFailures: number;
  /** Redis' used_memory before the load: its own overhead, allowed above the bound. */
  overhead: number;
  /** One a second from the load's start (the first) to its end (the last). */
  samples: RedisSample[];
  redisVersion: string;
  /** Keys by prefix before the load (after the service started) and after it. */
  keysBefore: string;
  keysAfter: string;
}

/** The mixed part's targets: browsing against the baseline at each order rate, the hit ratio, stale reads, errors. */
function mixedChecks(rates: MixedRate[]): Check[] {
  const notRun = (target: string): Check => ({ target, measured: 'not run', met: undefined });
  const at = (rate: number) => rates.find((r) => r.rate === rate);
  const vsBaseline = (rate: number, least: number, target: string): Check => {
    const r = at(rate);
    if (!r) return notRun(target);
    const x = r.service.rps / r.baseline.rps;
    return { target, measured: `${pct(x)} (${r.service.rps.toFixed(0)} vs ${r.baseline.rps.toFixed(0)} req/s)`, met: x >= least };
  };
  const checks: Check[] = [
    vsBaseline(0, 3, 'Mixed browsing with no writes ≥ 300 % of the hand-written server (which reads the database every time)'),
    vsBaseline(2, 2.5, 'Mixed browsing with 2 orders/s ≥ 250 % of the hand-written server'),
    vsBaseline(10, 2, 'Mixed browsing with 10 orders/s ≥ 200 % of the hand-written server'),
  ];
  const ten = at(10);
  const hitTarget = 'Response cache hit ratio ≥ 80 % at 10 orders/s (`/metrics` over the measured windows)';
  checks.push(ten ? { target: hitTarget, measured: `${pct(hitRatio(ten.counts))} (${ten.counts.hits} hits, ${ten.counts.misses} misses)`, met: hitRatio(ten.counts) >= 0.8 } : notRun(hitTarget));
  const staleTarget = 'No stale reads: after each order’s 201, the product through the service shows the stock the database holds';
  const withOrders = rates.filter((r) => r.rate > 0);
  const checked = withOrders.reduce((n, r) => n + r.orders.checks, 0);
  const stale = withOrders.reduce((n, r) => n + r.orders.stale, 0);
  checks.push(
    withOrders.length
      ? { target: staleTarget, measured: `${stale} stale in ${checked} checks${checked ? '' : ' (no order placed: nothing checked)'}`, met: stale === 0 && checked > 0 }
      : notRun(staleTarget),
  );
  const errorsTarget = 'No errors in the mixed part (browsing: non-2xx, connection errors, timeouts, warm-ups and baseline included; orders other than 201; checks other than 200)';
  if (!rates.length) checks.push(notRun(errorsTarget));
  else {
    const parts = rates
      .filter((r) => r.browseFailures + orderFailures(r.orders) + r.orders.checkFailures > 0)
      .map((r) => `${r.rate} orders/s: ${r.browseFailures} browsing, ${orderFailures(r.orders)} orders (${failureList(r.orders)}), ${r.orders.checkFailures} checks`);
    const requests = rates.reduce((n, r) => n + r.orders.sent + r.orders.checks, 0);
    checks.push({ target: errorsTarget, measured: parts.length ? parts.join('; ') : `0 (browsing runs and ${requests} orders and checks)`, met: parts.length === 0 });
  }
  return checks;
}

/** The flood part's target: Redis' memory within RESPONSE_CACHE_MAX_BYTES and its own overhead. */
function floodChecks(flood: FloodResult): Check[] {
  const max = Math.max(...flood.samples.map((s) => s.usedMemory));
  const limit = FLOOD_BOUND_BYTES + flood.overhead;
  return [
    {
      target: `Redis under its bound (RESPONSE_CACHE_MAX_BYTES ${mib(FLOOD_BOUND_BYTES)} MiB + Redis' own overhead measured before the load), every sample`,
      measured: `max ${mib(max).toFixed(1)} MiB against ${mib(limit).toFixed(1)} MiB (${mib(FLOOD_BOUND_BYTES)} + ${mib(flood.overhead).toFixed(1)})${flood.stoppedEarly ? `; ${flood.stoppedEarly}` : ''}`,
      met: max <= limit && !flood.stoppedEarly,
    },
  ];
}

type Part = 'mixed' | 'flood';
type PartBlocks = Partial<Record<Part, string>>;
const PART_KEYS: Part[] = ['mixed', 'flood'];

/** A response cache part's block: its own header (machine, date, commit, catalogue), then its tables, within its markers. */
function renderPart(m: ReturnType<typeof describeMachine> & { postgres: string; products: number }, part: Part, body: string[]): string {
  const cache = part === 'flood' ? 'response cache on, in Redis' : `response cache ${RESPONSE_CACHE === 'off' ? 'off (RESPONSE_CACHE=off)' : "on (the service's default, in memory)"}`;
  const pinned = part === 'flood' ? 'service pinned to core 0, autocannon to core 1, PostgreSQL and Redis unpinned' : 'service and baseline pinned to core 0, autocannon and the orders to core 1, PostgreSQL unpinned';
  return [
    partMarker(part, 'start'),
    `Run of ${m.date}, commit ${m.commit}: ${m.cpu}, ${m.cores} cores, ${m.memGiB} GiB (load average ${m.load} as it started); Node ${m.node}; PostgreSQL ${m.postgres} (embedded); ` +
      `${PRODUCTS} products seeded (${m.products} active); ${cache}; ${pinned}.`,
    '',
    ...body.flatMap((b, i) => (i ? ['', b] : [b])),
    partMarker(part, 'end'),
  ].join('\n');
}

function renderMixed(rates: MixedRate[], f: MixedFixtures): string {
  const cell = (r: MixedRate) => {
    const o = r.orders;
    const errors = r.browseFailures + orderFailures(o) + o.checkFailures;
    const orders = r.rate ? `${o.placed} (${percentile(o.latencies, 0.5).toFixed(0)} / ${percentile(o.latencies, 0.99).toFixed(0)} ms)` : '—';
    return (
      `| ${r.rate} | ${r.service.rps.toFixed(0)} | ${r.service.p50} / ${r.service.p99} | ${r.baseline.rps.toFixed(0)} | ${r.baseline.p50} / ${r.baseline.p99} | ${pct(r.service.rps / r.baseline.rps)} | ` +
      `${pct(hitRatio(r.counts))} (${r.counts.hits} / ${r.counts.hits + r.counts.misses}) | ${r.counts.invalidations} | ${orders} | ${r.rate ? `${o.stale} in ${o.checks} (${o.overlapped} overlapped)` : '—'} | ` +
      `${errors ? `${r.browseFailures} browsing, ${orderFailures(o)} orders (${failureList(o)}), ${o.checkFailures} checks` : '0'} |`
    );
  };
  return [
    `The response cache under a busy shop (\`mixed\`): ${CONNECTIONS} connections browsing with an enterprise key, ${pct(SLUG_SHARE)} product by slug over ${f.products.length} products ` +
      `with a Zipf-like skew (s = ${ZIPF_S}: the top 20 draw ${pct(zipfShare(f.products.length, ZIPF_S, 20))} of them), the rest ${f.lists.length} list pages in equal shares ` +
      `(pages 1–5 of the default sort, 1–3 of each price sort, 6 top-level categories' pages 1–2 and page 1 by price); a seeded sequence, the same for both programs. ` +
      `Orders (\`POST /api/orders\`, 1 unit of a product drawn with the same skew) by another account through the service, evenly spaced, throughout each rate's runs, ` +
      `the baseline's included. Each rate: the service, then the baseline, in ${ROUNDS} alternating round${ROUNDS === 1 ? '' : 's'} of ${MIXED_WARM_UP_SECONDS} s of warm-up and ${DURATION} s measured, each keeping its fastest. ` +
      `Hit ratio: \`response_cache_hits_total\` ÷ (hits + \`response_cache_misses_total\`), deltas over the service's measured windows (every round's), as is \`response_cache_invalidations_total\`. ` +
      `Stale-read check after each 201: stock read with pg, the product through the service (the browsing key), pg again; the service's stock must lie between the two (overlapped: another order of it committed in between).`,
    '',
    '| Orders/s | service req/s | p50 / p99 (ms) | baseline req/s | p50 / p99 (ms) | service vs baseline | cache hit ratio (hits / reads) | invalidations | orders placed (p50 / p99) | stale reads in checks | errors |',
    '|---:|---:|---|---:|---|---:|---:|---:|---:|---|---|',
    ...rates.map(cell),
  ].join('\n');
}

function renderFlood(flood: FloodResult | { skipped: string }): string {
  if ('skipped' in flood) return `The response cache in Redis under a flood of writes (\`flood\`): not run, ${flood.skipped}.`;
  const first = flood.samples[0]!;
  const last = flood.samples.at(-1)!;
  const maxMem = flood.samples.reduce((a, b) => (b.usedMemory > a.usedMemory ? b : a));
  const maxKeys = flood.samples.reduce((a, b) => (b.keys > a.keys ? b : a));
  const r = flood.reader;
  return [
    `The response cache in Redis under a flood of writes (\`flood\`): a service of its own with \`REDIS_URL\` (a throwaway redis-server ${flood.redisVersion} on 127.0.0.1, no persistence) ` +
      `and \`RESPONSE_CACHE_MAX_BYTES\` ${mib(FLOOD_BOUND_BYTES)} MiB; an enterprise key reads ${FLOOD_PAGES} list pages (limit 12, pages 1–${FLOOD_PAGES}) round-robin with ${CONNECTIONS} connections ` +
      `for ${flood.seconds.toFixed(0)} s while one account's profile is saved every ${FLOOD_SAVE_EVERY_MS} ms with SQL (its name alternating: ${flood.saves} saves` +
      `${flood.saveFailures ? `, ${flood.saveFailures} failed` : ''}). Redis sampled every second (\`INFO memory\` used_memory, \`DBSIZE\`); its own overhead, ` +
      `before the load: ${mib(flood.overhead).toFixed(1)} MiB.${flood.stoppedEarly ? ` **${flood.stoppedEarly}.**` : ''}`,
    '',
    '| Redis | start | max | end |',
    '|---|---:|---:|---:|',
    `| used_memory (MiB) | ${mib(first.usedMemory).toFixed(1)} | ${mib(maxMem.usedMemory).toFixed(1)} (at ${maxMem.at.toFixed(0)} s) | ${mib(last.usedMemory).toFixed(1)} (at ${last.at.toFixed(0)} s) |`,
    `| DBSIZE (keys) | ${first.keys} | ${maxKeys.keys} (at ${maxKeys.at.toFixed(0)} s) | ${last.keys} |`,
    '',
    `Keys by prefix: before the load (the service started, nothing read yet) ${flood.keysBefore || 'none'}; after it ${flood.keysAfter || 'none'}.`,
    '',
    `Reads: ${r.rps.toFixed(0)} req/s (p50 ${r.p50} ms, p99 ${r.p99} ms), ${r.requests} requests, ${failed(r)} failed; response cache hit ratio ${pct(hitRatio(flood.counts))} ` +
      `(${flood.counts.hits} hits, ${flood.counts.misses} misses), ${flood.counts.invalidations} invalidations, ${flood.counts.storeErrors} store errors.`,
  ].join('\n');
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

function renderResults(
  m: ReturnType<typeof describeMachine> & { postgres: string; products: number },
  table: string,
  f: { categoryId: string; word: string; slug: string },
  distinct: { list: string; slugs: number; nestedPages: number },
): string {
  return [
    `Run of ${m.date}, commit ${m.commit}: ${m.cpu}, ${m.cores} cores, ${m.memGiB} GiB (load average ${m.load} as it started); Node ${m.node}; PostgreSQL ${m.postgres} (embedded);`,
    `${PRODUCTS} products seeded (${m.products} active); ${DURATION} s per scenario, ${CONNECTIONS} connections; ` +
      `response cache ${RESPONSE_CACHE === 'off' ? 'off (RESPONSE_CACHE=off)' : "on (the service's default)"}; ${ONLY ? `only ${[...ONLY].join(', ')}` : 'every part'};`,
    `service, baselines and PostGraphile pinned to core 0 (loaded in turn), autocannon to core 1, PostgreSQL unpinned.`,
    `Fixtures: categoryId \`${f.categoryId}\`, search \`${f.word}\`, slug \`${f.slug}\`; distinct workloads, each in a fixed shuffled order: ` +
      `${distinct.list}, ${distinct.slugs} slugs of active products (by md5(id)), nested pages 1–${distinct.nestedPages} of ${NESTED_LIMIT}.`,
    '',
    table,
  ].join('\n');
}

// One block per catalogue size, so a 1,000,000-product run does not replace the 100,000 one.
const START = `<!-- bench:results:${PRODUCTS}:start -->`;
const END = `<!-- bench:results:${PRODUCTS}:end -->`;

/** The markers of a response cache part's own block, inside its catalogue's results block. */
const partMarker = (part: Part, end: 'start' | 'end') => `<!-- bench:results:${PRODUCTS}:${part}:${end} -->`;

/** A part's block (markers included) as the text holds it, or undefined. */
function partBlock(text: string, part: Part): string | undefined {
  const a = text.indexOf(partMarker(part, 'start'));
  const b = text.indexOf(partMarker(part, 'end'));
  return a >= 0 && b > a ? text.slice(a, b + partMarker(part, 'end').length) : undefined;
}

/**
 * Replaces only the results between the markers, so the hand-written analysis stays. The response
 * cache parts (mixed, flood) have blocks of their own inside: a run of only those parts replaces
 * only their blocks, and any run keeps the block of a part it did not run (each block says when it
 * was measured), so that a run of other parts does not throw those figures away.
 */
function writeReport(results: string, parts: PartBlocks) {
  const text = existsSync(REPORT) ? readFileSync(REPORT, 'utf8') : '# Benchmarks\n';
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  const old = a >= 0 && b > a ? text.slice(a + START.length, b) : undefined;
  let inner: string;
  if (old !== undefined && ONLY && [...ONLY].every((k) => (PART_KEYS as string[]).includes(k))) {
    inner = old;
    for (const part of PART_KEYS) {
      const block = parts[part];
      if (!block) continue;
      const kept = partBlock(inner, part);
      // A new part's block goes before the blocks of the parts after it (mixed before flood), else last.
      const later = PART_KEYS.slice(PART_KEYS.indexOf(part) + 1).map((p) => partBlock(inner, p)).find(Boolean);
      if (kept) inner = inner.replace(kept, () => block);
      else if (later) inner = inner.replace(later, () => `${block}\n\n${later}`);
      else inner = `${inner.trimEnd()}\n\n${block}\n`;
    }
  } else {
    const blocks = PART_KEYS.map((part) => parts[part] ?? (old !== undefined ? partBlock(old, part) : undefined)).filter(Boolean);
    inner = `\n${[results, ...blocks].join('\n\n')}\n`;
  }
  const block = `${START}${inner}${END}`;
  writeFileSync(
    REPORT,
    a >= 0 && b > a
      ? text.slice(0, a) + block + text.slice(b + END.length)
      : `${text.trimEnd()}\n\n## Latest results at ${PRODUCTS} products\n\n${block}\n`,
  );
  log(`results written to ${path.relative(ROOT, REPORT)}${ONLY && [...ONLY].every((k) => (PART_KEYS as string[]).includes(k)) ? ` (the ${Object.keys(parts).join(' and ') || 'no'} block only)` : ''}`);
}

main()
  .catch((err: unknown) => {
    if (interrupted) return; // the signal's exit code (130) stands
    process.stderr.write(`[bench] failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanup().then(() => process.exit()));
