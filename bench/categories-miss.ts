import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { benchChildren, createBenchKey, freePort, gitCommit, HOST, openBenchDatabase, ROOT, startFlags } from './common.js';

// `npx tsx bench/categories-miss.ts [--products 100000] [--runs 11] [--save-answers FILE] [--check-answers FILE] [--dist DIR --database NAME]`
//
// The miss path of GET /api/categories and of GraphQL `categories`: every documented parameter
// combination (parentOnly, includeProducts, page/limit; over GraphQL the same arguments, with the
// products selected or not), each answered by a service that keeps no answers (RESPONSE_CACHE=off),
// so every request runs its statements. Requests go one at a time, in rounds of one request per
// combination: 3 rounds of warm-up, then --runs rounds, and each combination's median, fastest and
// slowest are reported, in ms, as this process sees them over 127.0.0.1.
//
// On the bench's own embedded database (.data-bench-<products>/, as bench/run.ts makes it: started
// or joined, migrated, seeded to <products>). Build first (npm run build): the service runs as
// dist/server.js, pinned to core 0, this process to core 1, as in bench/run.ts.
//
// --dist DIR runs another build of the service (e.g. an older commit's, `npx tsc -p
// tsconfig.build.json --outDir DIR` in a checkout of it) and --database NAME has it read another
// database of the bench's cluster (a copy made with CREATE DATABASE … TEMPLATE marketplace and
// taken back to that commit's schema): the figures before a change, measured the same way.
//
// --save-answers FILE writes each combination's answer (its SHA-256 and size) to FILE;
// --check-answers FILE fails unless every answer is byte for byte the one FILE recorded: a change
// meant to make the answers faster, not different, is measured and checked in one run.

const { values: args } = parseArgs({
  options: {
    products: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '11' },
    'save-answers': { type: 'string' },
    'check-answers': { type: 'string' },
    dist: { type: 'string', default: 'dist' },
    database: { type: 'string' },
  },
  strict: true,
});
const PRODUCTS = Number(args.products);
const RUNS = Number(args.runs);
if (!Number.isSafeInteger(PRODUCTS) || PRODUCTS < 1 || !Number.isSafeInteger(RUNS) || RUNS < 1) {
  process.stderr.write('--products and --runs must be positive integers\n');
  process.exit(2);
}
const WARM_UPS = 3;
const log = (msg: string) => process.stderr.write(`[categories-miss] ${msg}\n`);

// GET /api/categories's own representation (src/rest/routes.ts), asked over /graphql: what a
// GraphQL client reading the same data sends.
const CATEGORY_FIELDS = `id name nameEn slug description image parentId order isActive createdAt children { id name slug } _count { products }`;
const PRODUCT_FIELDS = `products(limit: 4) { id name slug price images }`;

interface Combination {
  name: string;
  request: { method: 'GET' | 'POST'; path: string; body?: string };
}

/** parentOnly × includeProducts × (the whole list, or a page): over REST, then the same over GraphQL. */
function combinations(): Combination[] {
  const out: Combination[] = [];
  const parentOnly = [undefined, true, false] as const;
  const includeProducts = [undefined, true] as const;
  const pages = [undefined, { page: 1, limit: 12 }, { page: 2, limit: 5 }] as const;
  for (const p of parentOnly) {
    for (const i of includeProducts) {
      for (const g of pages) {
        const query = new URLSearchParams();
        if (p !== undefined) query.set('parentOnly', String(p));
        if (i !== undefined) query.set('includeProducts', String(i));
        if (g) {
          query.set('page', String(g.page));
          query.set('limit', String(g.limit));
        }
        const qs = query.toString();
        out.push({ name: `REST /api/categories${qs ? `?${qs}` : ''}`, request: { method: 'GET', path: `/api/categories${qs ? `?${qs}` : ''}` } });
      }
    }
  }
  for (const p of parentOnly) {
    for (const i of includeProducts) {
      for (const g of pages) {
        const argList = [...(p !== undefined ? [`parentOnly: ${p}`] : []), ...(g ? [`page: ${g.page}`, `limit: ${g.limit}`] : [])];
        const call = `categories${argList.length ? `(${argList.join(', ')})` : ''}`;
        const query = `{ ${call} { items { ${CATEGORY_FIELDS}${i ? ` ${PRODUCT_FIELDS}` : ''} }${g ? ' meta { page limit total totalPages }' : ''} } }`;
        out.push({ name: `GraphQL ${call}${i ? ' with products' : ''}`, request: { method: 'POST', path: '/graphql', body: JSON.stringify({ query }) } });
      }
    }
  }
  return out;
}

const { children, stopAll } = benchChildren();

async function startService(dbUrl: string, key: string): Promise<string> {
  const port = await freePort();
  const child = spawn('taskset', ['-c', '0', process.execPath, ...startFlags(), path.join(args.dist, 'server.js')], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: dbUrl, PORT: String(port), HOST, LOG_LEVEL: 'warn', DEMO_DATA: 'false', NODE_ENV: 'production', RESPONSE_CACHE: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.stdout?.on('data', (d: Buffer) => process.stderr.write(`[service] ${d.toString()}`));
  child.stderr?.on('data', (d: Buffer) => process.stderr.write(`[service] ${d.toString()}`));
  const url = `http://${HOST}:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/api/categories?limit=1`, { headers: { 'x-api-key': key } })).ok) return url;
    } catch {
      /* not listening yet */
    }
    if (i > 300) throw new Error('the service did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function send(url: string, key: string, c: Combination): Promise<{ ms: number; body: string }> {
  const started = process.hrtime.bigint();
  const res = await fetch(url + c.request.path, {
    method: c.request.method,
    headers: { 'x-api-key': key, ...(c.request.body ? { 'content-type': 'application/json' } : {}) },
    body: c.request.body,
  });
  const body = await res.text();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (!res.ok || body.includes('"errors"')) throw new Error(`${c.name}: ${res.status} ${body.slice(0, 300)}`);
  return { ms, body };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main() {
  if (!existsSync(path.resolve(ROOT, args.dist, 'server.js'))) throw new Error(`${args.dist}/server.js is missing: run npm run build`);
  const db = await openBenchDatabase(PRODUCTS, log);
  try {
    execFileSync('taskset', ['-a', '-cp', '1', String(process.pid)], { stdio: 'ignore' });
    const target = new URL(db.url);
    if (args.database) target.pathname = `/${args.database}`;
    const dbUrl = target.toString();
    const client = new pg.Client({ connectionString: dbUrl });
    await client.connect();
    const counts = await client
      .query<{ products: number; categories: number }>(`SELECT (SELECT count(*)::int FROM "Product" WHERE "isActive") AS products, (SELECT count(*)::int FROM "Category" WHERE "isActive") AS categories`)
      .then((r) => r.rows[0]!)
      .finally(() => client.end());
    const key = await createBenchKey(dbUrl);
    const url = await startService(dbUrl, key);

    const expected = args['check-answers'] ? (JSON.parse(readFileSync(args['check-answers'], 'utf8')) as Record<string, { sha256: string; bytes: number }>) : null;
    const answers: Record<string, { sha256: string; bytes: number }> = {};
    const rows: string[] = [];
    const load = os.loadavg()[0]!.toFixed(2);
    const all = combinations();
    // Warm-ups first, for every combination (the service's first requests compile and optimise
    // code), then the runs in rounds, each round one request of every combination: a moment of
    // noise on this shared machine spreads over every combination instead of landing on one.
    const times = new Map<string, number[]>(all.map((c) => [c.name, []]));
    const bodies = new Map<string, string>();
    for (let round = 0; round < WARM_UPS + RUNS; round++) {
      for (const c of all) {
        const r = await send(url, key, c);
        if (round >= WARM_UPS) times.get(c.name)!.push(r.ms);
        bodies.set(c.name, r.body);
      }
    }
    for (const c of all) {
      const measured = times.get(c.name)!;
      // GraphQL's extensions.cost tells the key's remaining budget, which changes from request to request: the answer is the rest.
      const { extensions: _cost, ...answer } = JSON.parse(bodies.get(c.name)!) as Record<string, unknown>;
      const text = JSON.stringify(answer);
      answers[c.name] = { sha256: createHash('sha256').update(text).digest('hex'), bytes: Buffer.byteLength(text) };
      const same = expected ? (expected[c.name]?.sha256 === answers[c.name]!.sha256 ? 'same' : 'DIFFERENT') : '';
      rows.push(`| ${c.name} | ${median(measured).toFixed(1)} | ${Math.min(...measured).toFixed(1)} | ${Math.max(...measured).toFixed(1)} | ${answers[c.name]!.bytes}${same ? ` (${same})` : ''} |`);
    }
    process.stdout.write(
      `\n${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, commit ${gitCommit()}${args.dist === 'dist' ? '' : ` (service: ${args.dist})`}${args.database ? ` (database ${args.database})` : ''}, ${os.cpus()[0]?.model ?? 'unknown CPU'} (${os.cpus().length} cores), ` +
        `Node ${process.version}; ${counts.products} active products, ${counts.categories} active categories; ` +
        `RESPONSE_CACHE=off, one request at a time, ${WARM_UPS} rounds of warm-up then ${RUNS} rounds; load average at start ${load}\n\n` +
        `| combination | median ms | fastest ms | slowest ms | answer bytes |\n|---|---:|---:|---:|---:|\n${rows.join('\n')}\n`,
    );
    if (args['save-answers']) writeFileSync(args['save-answers'], `${JSON.stringify(answers, null, 2)}\n`);
    if (expected) {
      const different = Object.keys(answers).filter((name) => expected[name]?.sha256 !== answers[name]!.sha256);
      if (different.length) throw new Error(`answers differ from ${args['check-answers']}: ${different.join('; ')}`);
      log(`every answer is byte for byte the one ${args['check-answers']} recorded`);
    }
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
