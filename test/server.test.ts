import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { killGroup, listeningPort, npmStart, waitForOutput, waitForText, type Service } from './helpers/npm-start.js';
import { unusedPort } from './helpers/processes.js';

// The quick start for real: `npm start` on an empty DATA_DIR starts embedded PostgreSQL,
// migrates, seeds, serves both interfaces, and stops cleanly on SIGTERM. Around it, what an
// operator meets: a busy port, a database of their own in production, the demo data switch.

const dataDirs: string[] = [];
const newDataDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mp-server-test-'));
  dataDirs.push(dir);
  return dir;
};
const databases: TestDatabase[] = [];
let running: Service | undefined;
afterEach(() => killGroup(running));
afterAll(async () => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  await Promise.all(databases.map((db) => db.drop()));
});

async function start(env: Record<string, string>): Promise<{ service: Service; base: string }> {
  running = npmStart({ PORT: '0', SEED_PRODUCTS: '300', ...env });
  const port = await listeningPort(running);
  return { service: running, base: `http://127.0.0.1:${port}` };
}

async function stop(service: Service): Promise<number | null> {
  process.kill(service.npm.pid!, 'SIGTERM');
  return (await service.exited).code;
}

const DEMO_KEY = /X-API-Key: (mk_[A-Za-z0-9_-]{43})'? (\S+)/;

/** The demo key and the URL of its curl line, printed after the "listening" line. */
async function demoKeyOf(service: Service): Promise<{ key?: string; url?: string }> {
  const found = await waitForOutput(service, DEMO_KEY);
  return { key: found?.[1], url: found?.[2] };
}

async function count(url: string, table: 'Product' | 'ApiKey'): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${table}"`);
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

describe('npm start', () => {
  it('starts on an empty data dir, serves REST and GraphQL, and stops cleanly on SIGTERM', async () => {
    const dataDir = newDataDir();
    const first = await start({ NODE_ENV: 'development', DATABASE_URL: '', DATA_DIR: dataDir });
    expect(first.service.output()).toContain('seeding the demo data');
    const rest = await fetch(`${first.base}/api/products?limit=3`);
    expect(rest.status).toBe(200);
    const body = await rest.json();
    expect(body.data).toHaveLength(3);
    const gql = await fetch(`${first.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ categories(parentOnly: true) { items { name } } }' }),
    });
    expect((await gql.json()).data.categories.items.length).toBeGreaterThanOrEqual(8);
    expect(first.service.output()).not.toMatch(/password/i);

    // The demo key, printed once on the first start after listening, with the real address; it
    // works at once with the Pro plan's limit.
    const { key: demoKey, url: demoUrl } = await demoKeyOf(first.service);
    expect(demoUrl).toBe(`${first.base}/api/orders`);
    const orders = await fetch(demoUrl!, { headers: { 'x-api-key': demoKey! } });
    expect(orders.status).toBe(200);
    expect(orders.headers.get('x-ratelimit-limit')).toBe('5000');
    const output = first.service.output();
    expect(output.indexOf('marketplace API listening')).toBeLessThan(output.indexOf('Demo API key'));
    // Not a terminal: the log stays JSON, one object a line, in development too.
    const logLines = output.split('\n').filter((line) => line.includes('"msg"'));
    expect(logLines.length).toBeGreaterThan(3);
    for (const line of logLines) expect(() => JSON.parse(line)).not.toThrow();
    expect(await stop(first.service)).toBe(0);
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);

    // Second start: same data, no second seeding.
    const second = await start({ NODE_ENV: 'development', DATABASE_URL: '', DATA_DIR: dataDir });
    expect(second.service.output()).not.toContain('seeding the demo data');
    expect(second.service.output()).not.toContain('Demo API key');
    const again = await (await fetch(`${second.base}/api/products?limit=3`)).json();
    expect(again.meta.total).toBe(body.meta.total);
    expect(again.data).toEqual(body.data);
    expect(await stop(second.service)).toBe(0);
  }, 240_000);

  it('reports a busy PORT in one line naming it, before any database work, and exits non-zero', async () => {
    const occupier = net.createServer();
    await new Promise<void>((resolve) => occupier.listen(0, '127.0.0.1', resolve));
    const port = (occupier.address() as net.AddressInfo).port;
    const dataDir = path.join(newDataDir(), 'data');
    try {
      running = npmStart({ NODE_ENV: 'development', DATABASE_URL: '', DATA_DIR: dataDir, PORT: String(port) });
      const { code } = await running.exited;
      expect(code).not.toBe(0);
      const lines = running.output().split('\n').filter((line) => line.includes('marketplace API'));
      expect(lines).toEqual([`marketplace API failed to start: PORT ${port} is already in use on 127.0.0.1: stop what uses it, or set PORT to another port`]);
      expect(running.output()).not.toMatch(/^\s+at /m);
      // No PostgreSQL was started for it: not even the data directory exists.
      expect(running.output()).not.toContain('PostgreSQL');
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      occupier.close();
    }
  }, 60_000);

  // util-linux's `script` runs npm start on a pseudo-terminal, as a developer's shell does. It
  // starts it through $SHELL -c: `exec` makes npm the terminal's foreground job whatever that shell
  // is, as at an interactive prompt (dash, waiting on npm instead, would die of the Ctrl-C itself).
  const script = ['/usr/bin/script', '/bin/script'].find((file) => existsSync(file));
  it.skipIf(!script)('logs human-readable lines in development at a terminal, and stops on Ctrl-C there', async () => {
    const db = await createTestDatabase('seeded');
    databases.push(db);
    const terminal = spawn(script!, ['--quiet', '--return', '--command', 'exec npm start', '/dev/null'], {
      cwd: path.resolve(import.meta.dirname, '..'),
      detached: true,
      env: { ...process.env, NODE_ENV: 'development', DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    terminal.stdout!.on('data', (d) => (output += d));
    terminal.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => terminal.once('exit', (code) => resolve(code)));
    try {
      const plain = () => output.replace(/\x1b\[[0-9;]*m/g, '');
      await waitForText(plain, /INFO.*marketplace API listening/, { ms: 60_000, stopped: () => terminal.exitCode !== null });
      expect(plain()).toMatch(/INFO.*: marketplace API listening/);
      expect(plain()).not.toContain('"msg"');
      terminal.stdin!.write('\x03'); // Ctrl-C: SIGINT to the terminal's foreground process group
      expect(await exited).toBe(0);
      expect(plain()).toMatch(/INFO.*: stopped/);
    } finally {
      if (terminal.exitCode === null) process.kill(-terminal.pid!, 'SIGKILL');
    }
  }, 120_000);

  it('refuses the retired SEED_ON_START, pointing at DEMO_DATA', async () => {
    running = npmStart({ DATA_DIR: path.join(newDataDir(), 'data'), SEED_ON_START: 'false' });
    expect((await running.exited).code).toBe(1);
    expect(running.output()).toContain('SEED_ON_START: was replaced by DEMO_DATA');
  }, 60_000);
});

describe('a DATABASE_URL the service cannot use', () => {
  // Each start fails on its own, sharing nothing: they run at once (two cores at work, not one).
  const failed: Service[] = [];
  afterAll(() => failed.forEach(killGroup));

  /** What the service printed, without npm's banner: `> marketplace-api-gateway@… start` and the command. */
  const printed = (service: Service) =>
    service
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('> '));

  async function failedStart(databaseUrl: string): Promise<{ code: number | null; lines: string[]; output: string }> {
    // PORT 0: these starts run at once, and each takes its port before any database work; on one
    // fixed port the second would fail for the port instead of for its database.
    const service = npmStart({ NODE_ENV: 'production', DATABASE_URL: databaseUrl, DATA_DIR: path.join(newDataDir(), 'data'), PORT: '0' });
    failed.push(service);
    const { code } = await service.exited;
    return { code, lines: printed(service), output: service.output() };
  }

  it.concurrent('an unreachable server is one line naming DATABASE_URL and the cause, without the password', async ({ expect }) => {
    const port = await unusedPort();
    const { code, lines, output } = await failedStart(`postgresql://shop:s3cret-pass@127.0.0.1:${port}/shop`);
    expect(code).toBe(1);
    expect(lines).toEqual([`marketplace API failed to start: DATABASE_URL postgresql://shop:***@127.0.0.1:${port}/shop: connection refused`]);
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toContain('s3cret-pass');
  }, 60_000);

  it.concurrent('a refused password is one line with PostgreSQL’s reason, and neither password', async ({ expect }) => {
    const admin = new URL(inject('pgAdminUrl'));
    const realPassword = decodeURIComponent(admin.password);
    admin.password = 'not-the-password';
    const { code, lines, output } = await failedStart(admin.toString());
    expect(code).toBe(1);
    admin.password = '***';
    expect(lines).toEqual([`marketplace API failed to start: DATABASE_URL ${admin.toString()}: password authentication failed for user "${decodeURIComponent(admin.username)}"`]);
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toContain('not-the-password');
    expect(output).not.toContain(realPassword);
  }, 60_000);

  it.concurrent('a URL of another database (mysql://) is refused as configuration, before any connection', async ({ expect }) => {
    const { code, lines, output } = await failedStart('mysql://shop:s3cret-pass@127.0.0.1:3306/shop');
    expect(code).toBe(1);
    expect(lines).toEqual([
      'marketplace API failed to start: Invalid configuration: DATABASE_URL: must be a postgresql:// or postgres:// URL (postgresql://user:pass@host:5432/db), not mysql://',
    ]);
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toContain('s3cret-pass');
  }, 60_000);
});

describe('demo data', () => {
  it('is not seeded into an empty DATABASE_URL database in production, and no key is minted', async () => {
    const db = await createTestDatabase('empty');
    databases.push(db);
    const { service, base } = await start({ NODE_ENV: 'production', DATABASE_URL: db.url });
    const products = (await (await fetch(`${base}/api/products`)).json()) as { meta: { total: number } };
    expect(products.meta.total).toBe(0);
    expect(service.output()).not.toContain('Demo API key');
    expect(await stop(service)).toBe(0);
    expect(await count(db.url, 'Product')).toBe(0);
    expect(await count(db.url, 'ApiKey')).toBe(0);
  }, 120_000);

  it('is seeded there with DEMO_DATA=true, with a key that can place an order', async () => {
    const db = await createTestDatabase('empty');
    databases.push(db);
    const { service, base } = await start({ NODE_ENV: 'production', DATABASE_URL: db.url, DEMO_DATA: 'true' });
    const { key, url } = await demoKeyOf(service);
    expect(url).toBe(`${base}/api/orders`);
    const products = (await (await fetch(`${base}/api/products?limit=50&sortBy=popular`)).json()) as {
      meta: { total: number };
      data: Array<{ id: string; stock: number; minOrder: number; supplier: { id: string } }>;
    };
    expect(products.meta.total).toBeGreaterThan(0);
    const product = products.data.find((p) => p.stock >= Math.max(1, p.minOrder))!;
    const order = await fetch(url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key! },
      body: JSON.stringify({ supplierId: product.supplier.id, items: [{ productId: product.id, quantity: Math.max(1, product.minOrder) }] }),
    });
    expect(order.status).toBe(201);
    expect(await stop(service)).toBe(0);
    expect(await count(db.url, 'ApiKey')).toBe(1);
  }, 120_000);

  it('is not seeded into a new embedded database with DEMO_DATA=false', async () => {
    const { service, base } = await start({ NODE_ENV: 'development', DATABASE_URL: '', DATA_DIR: newDataDir(), DEMO_DATA: 'false' });
    const products = (await (await fetch(`${base}/api/products`)).json()) as { meta: { total: number } };
    expect(products.meta.total).toBe(0);
    expect(service.output()).not.toContain('seeding the demo data');
    expect(service.output()).not.toContain('Demo API key');
    expect(await stop(service)).toBe(0);
  }, 120_000);
});
