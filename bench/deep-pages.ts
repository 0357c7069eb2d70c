import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { createApiKey } from '../src/accounts/api-keys.js';
import { createContexts } from '../src/contexts.js';
import { openDatabase } from '../src/db/database.js';
import { createPrisma } from '../src/db/prisma.js';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/config/logger.js';
import { benchChildren, cpuMs, nextLine, ROOT, startFlags, startOnCore0 } from './common.js';

// `npx tsx bench/deep-pages.ts [--products 100000] [--duration 5] [--pages 400] [--rounds 1] [--only nested|list|alloc|heap] [--before DIR] [--cpu-prof]`
//
// Distinct pages (issue 27, the miss path): every request asks the next page of 1..pages, so a
// page's cost at depth counts, not page 1's. On the bench's own seeded cluster
// (.data-bench-<products>/, made by `npm run bench`; this script neither migrates nor seeds):
// - the nested GraphQL query of bench/run.ts, pages 1..N, the service against PostGraphile 4
//   (bench/peer/, same query with `offset`), and page 1 only for both;
// - GET /api/products?limit=12&page=1..N, the service against bench/baseline-server.ts;
// - the JS heap allocated per REST list request (bench/alloc-meter.mjs), page 1 and distinct pages;
//   with --only heap, a sampling heap profile of it instead (bench/alloc-profile.mjs).
// Service, peer and baseline run pinned to core 0 (one loaded at a time), this process to core 1.
// Build first (npm run build): the service runs as dist/server.js. --before DIR: a second build of
// the service (e.g. an older commit's, `npx tsc -p tsconfig.build.json --outDir DIR` inside the
// work tree so that it finds node_modules), measured in the same run right after the first.

const { values: args } = parseArgs({
  options: {
    products: { type: 'string', default: '100000' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    pages: { type: 'string', default: '400' },
    rounds: { type: 'string', default: '1' },
    only: { type: 'string' },
    before: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
  },
});
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const PAGES = Number(args.pages);
const ROUNDS = Number(args.rounds);
const DATA_DIR = path.join(ROOT, `.data-bench-${args.products}`);
const log = (msg: string) => process.stderr.write(`[deep] ${msg}\n`);

const { children, stopAll } = benchChildren();


const NODE_FLAGS = startFlags();
const ALLOC_METER = ['--import', './bench/alloc-meter.mjs'];

const start = (name: string, script: string, env: Record<string, string>, flags: string[], probe: string, init: RequestInit = {}) =>
  startOnCore0(name, script, { env, flags, probe, init, children });

const NESTED = (page: number) => `query BenchNested { products(limit: 50, page: ${page}) { items { id name slug price
  supplier { id companyName verified rating } category { id name slug }
  reviews(limit: 3) { id rating title createdAt } } meta { total } } }`;
const PEER = (page: number) => `query BenchNested { allProducts(first: 50, offset: ${(page - 1) * 50}, orderBy: [CREATED_AT_DESC, ID_ASC], condition: { isActive: true }) {
  nodes { id name slug price
    supplierBySupplierId { id companyName verified rating } categoryByCategoryId { id name slug }
    reviewsByProductId(first: 3, orderBy: [CREATED_AT_DESC, ID_ASC]) { nodes { id rating title createdAt } } } } }`;

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** The request for the n-th page (1-based). */
  request: (page: number) => { method: 'GET' | 'POST'; path: string; body?: string };
  pages: number;
  /** The process answering, whose CPU time per request is reported (less noisy than req/s on a shared machine). */
  pid?: number | undefined;
}

async function load(t: Target, duration = DURATION) {
  let n = 0;
  const next = () => t.request((n++ % t.pages) + 1);
  const first = next();
  const cpuBefore = cpuMs(t.pid);
  const r = await autocannon({
    url: t.url,
    connections: CONNECTIONS,
    duration,
    timeout: 10,
    headers: t.headers,
    requests: [
      {
        method: first.method,
        setupRequest: (req: object) => {
          const q = next();
          return { ...req, method: q.method, path: q.path, ...(q.body ? { body: q.body } : {}), headers: t.headers };
        },
      },
    ],
  });
  if (r.non2xx || r.errors || r.timeouts) throw new Error(`${t.name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
  const cpu = (cpuMs(t.pid) - cpuBefore) / r.requests.total;
  return { name: t.name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, requests: r.requests.total, cpu };
}

async function check(t: Target, page: number) {
  const q = t.request(page);
  const res = await fetch(t.url + q.path, { method: q.method, headers: t.headers, body: q.body });
  const text = await res.text();
  if (!res.ok || text.includes('"errors"')) throw new Error(`${t.name} page ${page}: ${res.status} ${text.slice(0, 300)}`);
  return text;
}


async function allocation(child: ChildProcess, t: Target) {
  await load(t, 1);
  child.kill('SIGUSR2');
  await new Promise((r) => setTimeout(r, 100));
  const r = await load(t, Math.min(DURATION, 5));
  const answer = nextLine(child, /^ALLOC (\d+) (\d+)/m);
  child.kill('SIGUSR2');
  const [, bytes] = await answer;
  return { name: t.name, kbPerRequest: Number(bytes) / r.requests / 1024, requests: r.requests };
}

async function main() {
  if (!existsSync(path.join(DATA_DIR, 'pg'))) throw new Error(`${DATA_DIR} is missing: run npm run bench -- --products ${args.products} first`);
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR, LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  const db = await openDatabase(loadConfig(env), { log });
  try {
    execFileSync('taskset', ['-a', '-cp', '1', String(process.pid)], { stdio: 'ignore' });
    const prisma = createPrisma({ url: db.url, poolMax: 2 });
    const { key } = await createApiKey(
      createContexts({ prisma, logger: createLogger('silent'), config: loadConfig({}) }).contexts.forOperator(),
      { owner: 'bench@example.com', plan: 'ENTERPRISE', scopes: ['admin:all'], rateLimit: 10_000_000, rateWindowSeconds: 3600, name: `deep-pages ${new Date().toISOString()}` },
    );
    await prisma.$disconnect();
    const active = await (async () => {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        return (await c.query<{ n: number }>('SELECT count(*)::int AS n FROM "Product" WHERE "isActive"')).rows[0]!.n;
      } finally {
        await c.end();
      }
    })();
    if (active < PAGES * 50) throw new Error(`${active} active products: fewer than ${PAGES} pages of 50`);

    const auth = { 'x-api-key': key };
    const gql = { ...auth, 'content-type': 'application/json' };
    const serviceEnv = { DATABASE_URL: db.url, LOG_LEVEL: 'warn', DEMO_DATA: 'false', NODE_ENV: 'production', RESPONSE_CACHE: 'off' };
    // The before build runs with BEFORE_NODE_OPTIONS in place of NODE_OPTIONS when it is set (e.g.
    // empty, when NODE_OPTIONS loads something only the current build should).
    const beforeEnv: Record<string, string> = process.env.BEFORE_NODE_OPTIONS === undefined ? {} : { NODE_OPTIONS: process.env.BEFORE_NODE_OPTIONS };
    const services = [
      { name: 'service', script: 'dist/server.js', env: {} as Record<string, string> },
      ...(args.before ? [{ name: 'before', script: path.join(args.before, 'server.js'), env: beforeEnv }] : []),
    ];
    const running = [];
    for (const { name, script, env: own } of services) {
      // --cpu-prof: each service writes its profile on exit, in .data-bench-<products>/cpu-prof/deep-<name>/ (bench/profile.ts reads it).
      const prof = args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.join(DATA_DIR, 'cpu-prof', `deep-${name}`)}`] : [];
      running.push({ name, ...(await start(name, script, { ...serviceEnv, ...own }, [...NODE_FLAGS, ...ALLOC_METER, ...prof], '/api/products?limit=1', { headers: auth })) });
    }
    const results: { name: string; rps: number; p50: number; p99: number; requests: number; cpu: number }[] = [];
    const rows: string[] = [];
    const nested = (service: { name: string; url: string; child: ChildProcess }, pages: number): Target => ({
      name: `${service.name} nested, pages 1–${pages}`,
      url: service.url,
      pid: service.child.pid,
      headers: gql,
      pages,
      request: (p) => ({ method: 'POST', path: '/graphql', body: JSON.stringify({ query: NESTED(p) }) }),
    });
    const list = (url: string, headers: Record<string, string>, pages: number, name: string, pid?: number): Target => ({
      name,
      url,
      pid,
      headers,
      pages,
      request: (p) => ({ method: 'GET', path: `/api/products?limit=12&page=${p}` }),
    });

    if (!args.only || args.only === 'nested') {
      const peer = await start('postgraphile', 'bench/peer/server.mjs', { DATABASE_URL: db.url }, NODE_FLAGS, '/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ __typename }"}',
      });
      const peerT = (pages: number): Target => ({
        name: `PostGraphile 4 nested, pages 1–${pages}`,
        url: peer.url,
        headers: { 'content-type': 'application/json' },
        pages,
        pid: peer.child.pid,
        request: (p) => ({ method: 'POST', path: '/graphql', body: JSON.stringify({ query: PEER(p) }) }),
      });
      // Same products on the deepest page, both ways.
      const svc = JSON.parse(await check(nested(running[0]!, PAGES), PAGES)) as { data: { products: { items: { id: string }[] } } };
      const per = JSON.parse(await check(peerT(PAGES), PAGES)) as { data: { allProducts: { nodes: { id: string }[] } } };
      if (JSON.stringify(svc.data.products.items.map((i) => i.id)) !== JSON.stringify(per.data.allProducts.nodes.map((i) => i.id))) {
        throw new Error(`page ${PAGES}: the service and the peer list different products`);
      }
      for (let round = 0; round < ROUNDS; round++) {
        for (const pages of [1, PAGES]) {
          const measured = [];
          for (const t of [peerT(pages), ...running.map((r) => nested(r, pages))]) {
            await load(t, 1);
            measured.push(await load(t));
          }
          results.push(...measured);
          const [p, ...ours] = measured;
          for (const [i, s] of ours.entries()) {
            rows.push(`| ${running[i]!.name}: nested, pages 1–${pages} | ${s.rps.toFixed(0)} | ${p!.rps.toFixed(0)} (PostGraphile 4) | ${((100 * s.rps) / p!.rps).toFixed(1)} % | ${s.p50} / ${p!.p50} | ${s.cpu.toFixed(2)} / ${p!.cpu.toFixed(2)} |`);
          }
        }
      }
      peer.child.kill('SIGTERM');
    }

    if (!args.only || args.only === 'list') {
      const baseline = await start('baseline', 'bench/baseline-server.ts', { DATABASE_URL: db.url }, [...NODE_FLAGS, '--import', 'tsx'], '/api/products?limit=1');
      for (let round = 0; round < ROUNDS; round++) {
        for (const pages of [1, PAGES]) {
          const measured = [];
          const targets = [
            list(baseline.url, {}, pages, `baseline REST list, pages 1–${pages}`, baseline.child.pid),
            ...running.map((r) => list(r.url, auth, pages, `${r.name} REST list, pages 1–${pages}`, r.child.pid)),
          ];
          for (const t of targets) {
            await load(t, 1);
            measured.push(await load(t));
          }
          results.push(...measured);
          const [b, ...ours] = measured;
          for (const [i, s] of ours.entries()) {
            rows.push(`| ${running[i]!.name}: REST list (12), pages 1–${pages} | ${s.rps.toFixed(0)} | ${b!.rps.toFixed(0)} (baseline) | ${((100 * s.rps) / b!.rps).toFixed(1)} % | ${s.p50} / ${b!.p50} | ${s.cpu.toFixed(2)} / ${b!.cpu.toFixed(2)} |`);
          }
        }
      }
      baseline.child.kill('SIGTERM');
    }

    if (args.only === 'heap') {
      // A sampling heap profile of the first service under the REST list (page 1), for bench/alloc-profile-top.ts.
      const out = path.join(DATA_DIR, `alloc-${Date.now()}.heapprofile`);
      const profiled = await start('profiled', 'dist/server.js', { ...serviceEnv, ALLOC_PROFILE_OUT: out }, [...NODE_FLAGS, '--import', './bench/alloc-profile.mjs'], '/api/products?limit=1', { headers: auth });
      const t = list(profiled.url, auth, 1, 'profiled REST list, page 1');
      await load(t, 2);
      profiled.child.kill('SIGUSR2');
      await new Promise((r) => setTimeout(r, 100));
      const r = await load(t, Math.min(DURATION, 5));
      const written = nextLine(profiled.child, /^HEAPPROF (\S+)/m, 120_000);
      profiled.child.kill('SIGUSR2');
      await written;
      rows.push(`| heap profile: ${out} | ${r.requests} requests | | | npx tsx bench/alloc-profile-top.ts ${path.relative(ROOT, out)} --requests ${r.requests} |`);
    }

    if (!args.only || args.only === 'alloc' || args.only === 'list') {
      for (const r of running) {
        for (const pages of [1, PAGES]) {
          const a = await allocation(r.child, list(r.url, auth, pages, `${r.name} REST list, pages 1–${pages}`));
          rows.push(`| ${r.name}: allocation, REST list (12), pages 1–${pages} | ${a.kbPerRequest.toFixed(0)} KB/request | | | ${a.requests} requests |`);
        }
      }
    }

    process.stdout.write(`\n| scenario | req/s | against req/s | ratio | p50 ms (ours / theirs) | CPU ms per request of the Node process (ours / theirs) |\n|---|---:|---:|---:|---:|---:|\n${rows.join('\n')}\n`);
    for (const r of results) log(`${r.name}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, CPU ${r.cpu.toFixed(2)} ms/request (${r.requests})`);
  } finally {
    stopAll();
    await new Promise((r) => setTimeout(r, 500));
    await db.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  stopAll();
  process.exitCode = 1;
});
