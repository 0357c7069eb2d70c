import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// The quick start for real: `npm start` on an empty DATA_DIR starts embedded PostgreSQL,
// migrates, seeds, serves both interfaces, and stops cleanly on SIGTERM.

const root = path.resolve(import.meta.dirname, '..');
const dataDir = mkdtempSync(path.join(tmpdir(), 'mp-server-test-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

interface Running {
  child: ChildProcess;
  base: string;
  output: () => string;
}

async function start(): Promise<Running> {
  const child = spawn(path.join(root, 'node_modules/.bin/tsx'), ['src/server.ts'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SEED_PRODUCTS: '300' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s:\n${output}`)), 60_000);
    const check = () => {
      const line = output.split('\n').find((l) => l.includes('marketplace API listening'));
      if (line) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${JSON.parse(line).port}`);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
  return { child, base, output: () => output };
}

const stop = (running: Running) =>
  new Promise<number | null>((resolve) => {
    running.child.once('exit', (code) => resolve(code));
    running.child.kill('SIGTERM');
  });

describe('npm start', () => {
  it('starts on an empty data dir, serves REST and GraphQL, and stops cleanly on SIGTERM', async () => {
    const first = await start();
    expect(first.output()).toContain('seeding the demo data');
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
    expect(first.output()).not.toMatch(/password/i);

    // The demo key, printed once on the first start, works at once with the Pro plan's limit.
    const demoKey = /X-API-Key: (mk_[A-Za-z0-9_-]{43})/.exec(first.output())?.[1];
    expect(demoKey).toBeDefined();
    const keyed = await fetch(`${first.base}/api/products?limit=1`, { headers: { 'x-api-key': demoKey! } });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get('x-ratelimit-limit')).toBe('5000');
    expect(await stop(first)).toBe(0);
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);

    // Second start: same data, no second seeding.
    const second = await start();
    expect(second.output()).not.toContain('seeding the demo data');
    expect(second.output()).not.toContain('Demo API key');
    const again = await (await fetch(`${second.base}/api/products?limit=3`)).json();
    expect(again.meta.total).toBe(body.meta.total);
    expect(again.data).toEqual(body.data);
    expect(await stop(second)).toBe(0);
  }, 150_000);
});
