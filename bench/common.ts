import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { createApiKey } from '../src/accounts/api-keys.js';
import { createContexts } from '../src/contexts.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { createPrisma } from '../src/db/prisma.js';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/config/logger.js';
import { seedDatabase } from '../src/seed/seed.js';

// What the bench scripts (run.ts, deep-pages.ts, ab-cpu.ts, cluster.ts) share: where they run, and how they start and
// listen to the programs they measure.

export const ROOT = path.resolve(import.meta.dirname, '..');
/** Every measured program listens here only. */
export const HOST = '127.0.0.1';

export function freePort(): Promise<number> {
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

/** Resolves with the first match of `pattern` in the child's stderr from now on. */
export function nextLine(child: ChildProcess, pattern: RegExp, timeoutMs = 10_000): Promise<RegExpExecArray> {
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

/**
 * The V8 flags `npm start` gives the service (package.json's start script): the service is
 * measured as it runs. The baselines and the peer get them too, so that every program runs on
 * the same Node settings.
 */
export function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const match = /\bnode((?:\s+--\S+)*)\s+dist\/server\.js\b/.exec(pkg.scripts.start ?? '');
  if (!match) throw new Error(`package.json's start script is not "node [--flags] dist/server.js": ${pkg.scripts.start}`);
  return match[1]!.split(/\s+/).filter(Boolean);
}

/** Seed value of every bench catalogue. */
export const BENCH_SEED = 42;

/**
 * The bench's own embedded database for a catalogue of `products` (under .data-bench-<products>,
 * never the development .data, whatever DATABASE_URL and DATA_DIR say): started or joined,
 * migrated, seeded (topping up what is there) and analysed after an insert.
 */
export async function openBenchDatabase(products: number, log: (msg: string) => void): Promise<Database> {
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: path.join(ROOT, `.data-bench-${products}`), LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  const db = await openDatabase(loadConfig(env), { log });
  try {
    await migrate(db.url, { log });
    log(`seeding to ${products} products (tops up what is there)`);
    const seeded = await seedDatabase(db.url, { seed: BENCH_SEED, products });
    log(`seed: ${seeded.inserted.products} products added in ${(seeded.durationMs / 1000).toFixed(1)} s`);
    if (seeded.inserted.products > 0) {
      // Right after a bulk insert the first run would measure a cold, unanalysed database.
      log('VACUUM (ANALYZE) after seeding');
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      await client.query('VACUUM (ANALYZE)').finally(() => client.end());
    }
    return db;
  } catch (error) {
    await db.close();
    throw error;
  }
}

/**
 * A new enterprise key with every scope and a limit no bench run reaches, of `owner`'s account
 * (made if new): another owner, another account (its own order limit, its own orders).
 */
export async function createBenchKey(url: string, owner = 'bench@example.com'): Promise<string> {
  const prisma = createPrisma({ url, poolMax: 2 });
  try {
    const operator = createContexts({ prisma, logger: createLogger('silent'), config: loadConfig({}) }).contexts.forOperator();
    const { key } = await createApiKey(operator, {
      owner,
      plan: 'ENTERPRISE',
      scopes: ['admin:all'],
      rateLimit: 10_000_000,
      rateWindowSeconds: 3600,
      name: `bench ${new Date().toISOString()}`,
    });
    return key;
  } finally {
    await prisma.$disconnect();
  }
}

/** Short hash of the checked-out commit, with "dirty" when tracked files or new files differ from it. */
export function gitCommit(): string {
  try {
    const git = (...a: string[]) => execFileSync('git', a, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const hash = git('rev-parse', '--short', 'HEAD');
    // node_modules is a symlink in worktrees (not matched by .gitignore's node_modules/): not a change.
    const changes = git('status', '--porcelain').split('\n').filter((l) => l && !/^\?\? node_modules$/.test(l));
    return changes.length ? `${hash} (dirty)` : hash;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

/**
 * The bench's nested GraphQL query: one page of 50 products, each with its supplier, category and
 * 3 newest reviews, and the list's total; the page is a variable.
 */
export const NESTED_QUERY = `query BenchNested($page: Int) { products(limit: 50, page: $page) { items { id name slug price
  supplier { id companyName verified rating } category { id name slug }
  reviews(limit: 3) { id rating title createdAt } } meta { total } } }`;

/** User + system CPU time of a process so far, in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
export function cpuMs(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Starts `node [flags] script` pinned to core 0 (the load generator runs elsewhere) on a free
 * port of HOST, adds it to `children` (stopped by the caller), echoes its output prefixed with
 * `name` (not the allocation meter's answers), and resolves once `probe` answers 2xx.
 */
export async function startOnCore0(
  name: string,
  script: string,
  { env, flags, probe, init = {}, children }: { env: Record<string, string>; flags: string[]; probe: string; init?: RequestInit; children: Set<ChildProcess> },
) {
  const port = await freePort();
  const child = spawn('taskset', ['-c', '0', process.execPath, ...flags, script], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.stdout?.on('data', (d: Buffer) => process.stderr.write(`[${name}] ${d.toString()}`));
  child.stderr?.on('data', (d: Buffer) => {
    if (!/^ALLOC \d+/m.test(d.toString())) process.stderr.write(`[${name}] ${d.toString()}`);
  });
  const url = `http://${HOST}:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(url + probe, init)).ok) break;
    } catch {
      /* not yet */
    }
    if (i > 300) throw new Error(`${name} did not start`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, child };
}

/**
 * The child processes a benchmark starts (servers, baselines): every one is sent SIGTERM when the
 * benchmark exits, however it ends; `stopAndWait` stops them and resolves once each has exited
 * (before their database goes, else a server dies of its pool's error).
 */
export function benchChildren() {
  const children = new Set<ChildProcess>();
  const stopAll = () => {
    for (const child of children) child.kill('SIGTERM');
  };
  process.on('exit', stopAll);
  const stopAndWait = async () => {
    const exited = [...children].map((child) => (child.exitCode !== null || child.signalCode !== null ? undefined : new Promise((resolve) => child.once('exit', resolve))));
    stopAll();
    await Promise.all(exited);
  };
  return { children, stopAll, stopAndWait };
}
