import { spawn } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { createApiKey } from '../src/accounts/api-keys.js';
import { startApp } from '../src/app.js';
import { createContexts } from '../src/contexts.js';
import { openDatabase } from '../src/db/database.js';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/config/logger.js';

// `npx tsx bench/explain-pages.ts [--products 100000] [--pages 1,400] [--path /api/products?limit=12] [--no-analyze] [--peer]`
//
// The SQL statements the service sends for the bench's nested GraphQL query (or a REST path) at
// the given pages, each with EXPLAIN (ANALYZE, BUFFERS) on the bench's seeded cluster
// (.data-bench-<products>/, made by `npm run bench`). The app runs in this process. With --peer,
// the same for PostGraphile 4 (bench/peer/, its SQL read from its debug log) instead.

const ROOT = path.resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    products: { type: 'string', default: '100000' },
    pages: { type: 'string', default: '1,400' },
    path: { type: 'string' },
    'no-analyze': { type: 'boolean', default: false },
    peer: { type: 'boolean', default: false },
  },
});

const PEER = (page: number) => `query BenchNested { allProducts(first: 50, offset: ${(page - 1) * 50}, orderBy: [CREATED_AT_DESC, ID_ASC], condition: { isActive: true }) {
  nodes { id name slug price
    supplierBySupplierId { id companyName verified rating } categoryByCategoryId { id name slug }
    reviewsByProductId(first: 3, orderBy: [CREATED_AT_DESC, ID_ASC]) { nodes { id rating title createdAt } } } } }`;

/** PostGraphile's statements for its form of the query at each page, from its debug log. */
async function peerStatements(url: string, pages: number[]): Promise<{ page: number; sql: string }[]> {
  const child = spawn(process.execPath, ['bench/peer/server.mjs'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, PORT: '0', DEBUG: 'postgraphile:postgres', DEBUG_COLORS: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const port = await new Promise<number>((resolve) => child.stdout.on('data', (d: Buffer) => { const m = /LISTENING (\d+)/.exec(d.toString()); if (m) resolve(Number(m[1])); }));
  const out: { page: number; sql: string }[] = [];
  try {
    for (const page of pages) {
      log = '';
      const res = await fetch(`http://127.0.0.1:${port}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: PEER(page) }) });
      await res.text();
      await new Promise((r) => setTimeout(r, 200));
      // debug's lines: "<date> postgraphile:postgres <sql>", the statement spanning lines; the
      // page's statement is the last one, its one parameter the condition isActive = true.
      const text = log.replace(/\n?\S+ postgraphile:postgres /g, '\n');
      out.push({ page, sql: text.slice(text.lastIndexOf('with __local_0__ as')).trim().replace(/\$1\b/g, 'true') });
    }
  } finally {
    child.kill('SIGTERM');
  }
  return out;
}

const NESTED = (page: number) => `query BenchNested { products(limit: 50, page: ${page}) { items { id name slug price
  supplier { id companyName verified rating } category { id name slug }
  reviews(limit: 3) { id rating title createdAt } } meta { total } } }`;

async function main() {
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: path.join(ROOT, `.data-bench-${args.products}`), LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  const db = await openDatabase(loadConfig(env));
  const sent: { query: string; params: string }[] = [];
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: db.url }), log: [{ emit: 'event', level: 'query' }] });
  prisma.$on('query', (e) => sent.push({ query: e.query, params: e.params }));
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  try {
    if (args.peer) {
      for (const { page, sql: text } of await peerStatements(db.url, args.pages.split(',').map(Number))) {
        process.stdout.write(`\n=== PostGraphile, page ${page}\n${text}\n`);
        if (args['no-analyze']) continue;
        const plan = await sql.query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`);
        process.stdout.write(plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n') + '\n');
      }
      return;
    }
    const logger = createLogger('silent');
    const config = loadConfig({ ...env, NODE_ENV: 'production', DEMO_DATA: 'false' });
    const { key } = await createApiKey(createContexts({ prisma, logger, config }).contexts.forOperator(), {
      owner: 'bench@example.com',
      plan: 'ENTERPRISE',
      scopes: ['admin:all'],
      rateLimit: 10_000_000,
      rateWindowSeconds: 3600,
      name: `explain ${new Date().toISOString()}`,
    });
    const app = await startApp({ prisma, databaseUrl: db.url, logger, config });
    const ask = (page: number) =>
      args.path
        ? app.fetch(new Request(`http://localhost${args.path}&page=${page}`, { headers: { 'x-api-key': key } }))
        : app.fetch(
            new Request('http://localhost/graphql', {
              method: 'POST',
              headers: { 'x-api-key': key, 'content-type': 'application/json' },
              body: JSON.stringify({ query: NESTED(page) }),
            }),
          );
    for (const page of args.pages.split(',').map(Number)) {
      await (await ask(page)).text(); // warm: totals, the key
      sent.length = 0;
      const res = await ask(page);
      const text = await res.text();
      process.stdout.write(`\n=== page ${page}: ${res.status}, ${text.length} bytes, ${sent.length} statements\n`);
      for (const s of sent) {
        process.stdout.write(`\n-- ${s.query}\n-- params ${s.params}\n`);
        if (args['no-analyze'] || !/^\s*SELECT/i.test(s.query) || /"ApiKey"/.test(s.query)) continue;
        const plan = await sql.query(`EXPLAIN (ANALYZE, BUFFERS) ${s.query}`, JSON.parse(s.params) as unknown[]);
        process.stdout.write(plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n') + '\n');
      }
    }
    await app.dispose();
  } finally {
    await sql.end();
    await prisma.$disconnect();
    await db.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
