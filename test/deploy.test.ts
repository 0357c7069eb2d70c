import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { runKeysCli } from './helpers/keys-cli.js';
import { HAS_PGBOUNCER } from './helpers/pgbouncer.js';
import { alive, isExecutable } from './helpers/processes.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { HAS_PG15 } from './helpers/replication.js';

// docs/deploy.md, followed: scripts/deploy-local.sh builds the deployment the guide describes
// (a PostgreSQL 15 primary and a pg_basebackup -R replica, PgBouncer in transaction mode with the
// example file, Redis, the env file, seed and first key, two supervised instances of the compiled
// server) and this checks what a user of it sees, then that `stop` leaves no process behind.
//
// Two settings are added to the guide's env file for the local webhook receiver alone (with
// NODE_ENV=production, endpoints must be https addresses on the public internet):
// NODE_ENV=development and WEBHOOK_ALLOW_PRIVATE=true. Everything else is the guide's.
//
// Needs Debian's postgresql-15, pgbouncer and redis-server (installed by .ci/run); reported
// skipped without them.

const SCRIPT = path.resolve('scripts/deploy-local.sh');
const HAS_REDIS = isExecutable('/usr/bin/redis-server');
const missing = [!HAS_PG15 && 'postgresql-15', !HAS_PGBOUNCER && 'pgbouncer', !HAS_REDIS && 'redis-server'].filter(Boolean);
if (missing.length) console.warn(`test/deploy.test.ts skipped: needs Debian's ${missing.join(', ')} (.ci/run installs them)`);

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(SCRIPT, args, { env: { ...process.env, ...env }, timeout: 180_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** Running: a process that ended but is not reaped yet (a zombie) is not. */
const running = (pid: number): boolean => {
  if (!alive(pid)) return false;
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** KEY=value lines, as the script writes them. */
const readEnv = (file: string): Record<string, string> =>
  Object.fromEntries(
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1).replace(/^"|"$/g, '')]),
  );

describe.skipIf(missing.length > 0)('a deployment made by following docs/deploy.md (scripts/deploy-local.sh)', () => {
  let dir: string;
  let bases: string[];
  let env: Record<string, string>;
  let firstKey: string;
  let receiver: Receiver;
  let stopped = false;

  const call = async (base: string, method: string, route: string, key?: string, body?: unknown) => {
    const res = await fetch(base + route, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
  };

  /** Every pid the deployment's pid files and data directories name. */
  const pids = (): number[] => {
    const files = [
      ...fs.readdirSync(path.join(dir, 'run')).filter((f) => f.endsWith('.pid')).map((f) => path.join(dir, 'run', f)),
      path.join(dir, 'pgbouncer', 'pgbouncer.pid'),
      path.join(dir, 'primary', 'postmaster.pid'),
      path.join(dir, 'replica', 'postmaster.pid'),
    ];
    return files.filter((f) => fs.existsSync(f)).map((f) => Number(fs.readFileSync(f, 'utf8').split('\n')[0]));
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deploy-'));
    // A small catalogue: the seed's speed is not what is tested here.
    const started = await run(['start', dir, 'NODE_ENV=development', 'WEBHOOK_ALLOW_PRIVATE=true'], { SEED_PRODUCTS: '200' });
    expect(started.code, started.stderr + started.stdout).toBe(0);
    const deployment = readEnv(path.join(dir, 'deployment.env'));
    bases = deployment.INSTANCE_PORTS!.split(' ').map((port) => `http://127.0.0.1:${port}`);
    env = readEnv(path.join(dir, 'etc', 'env'));
    firstKey = JSON.parse(fs.readFileSync(path.join(dir, 'etc', 'first-key.json'), 'utf8')).key;
  }, 180_000);

  afterAll(async () => {
    if (!stopped && dir) await run(['stop', dir]);
    await receiver?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('runs two instances, ready, with the replica in use, behind PgBouncer, with both URLs set', async () => {
    expect(bases).toHaveLength(2);
    expect(new URL(env.DATABASE_URL!).port).toBe(readEnv(path.join(dir, 'deployment.env')).PGBOUNCER_PORT);
    expect(new URL(env.DATABASE_DIRECT_URL!).port).toBe(readEnv(path.join(dir, 'deployment.env')).PRIMARY_PORT);
    for (const base of bases) {
      const ready = await call(base, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.checks).toEqual({ database: 'ok', migrations: 'ok' });
      expect(ready.body.replicas).toEqual([expect.objectContaining({ state: 'ok' })]);
    }
  });

  it('serves the seeded catalogue with the first key on both instances, REST and GraphQL, read from the replica', async () => {
    // Other arguments on each instance: the answers are cached in Redis for every instance, and a
    // cached answer reads nothing.
    for (const [i, base] of bases.entries()) {
      const n = 2 + i;
      const rest = await call(base, 'GET', `/api/products?limit=${n}`, firstKey);
      expect(rest.status, rest.text).toBe(200);
      expect(rest.body.data).toHaveLength(n);
      const graph = await call(base, 'POST', '/graphql', firstKey, { query: `{ productsConnection(first: ${n}) { edges { node { id name } } } }` });
      expect(graph.status, graph.text).toBe(200);
      expect(graph.body.errors).toBeUndefined();
      expect(graph.body.data.productsConnection.edges).toHaveLength(n);
      // Catalogue reads went to the replica (db_reads_total counts them by target).
      const metrics = await fetch(`${base}/metrics`).then((r) => r.text());
      const replicaReads = /^db_reads_total\{target="replica",replica="127\.0\.0\.1:\d+\/marketplace"\} (\d+)/m.exec(metrics);
      expect(Number(replicaReads?.[1] ?? 0), metrics.split('\n').filter((l) => l.startsWith('db_reads_total')).join('\n')).toBeGreaterThanOrEqual(2);
    }
  });

  it('refuses a key revoked with the keys command on both instances', async () => {
    const created = await runKeysCli(['create', '--owner', 'revoked@example.com', '--plan', 'basic', '--scopes', 'read:products', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const { id, key } = JSON.parse(created.stdout);
    for (const base of bases) expect((await call(base, 'GET', '/api/products?limit=1', key)).status).toBe(200);
    const revoked = await runKeysCli(['revoke', id, '--json'], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    for (const base of bases) {
      const res = await eventually('the revoked key refused', () => call(base, 'GET', '/api/products?limit=1', key), (r) => r.status === 401, 5_000);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    }
  });

  it('delivers a webhook', async () => {
    const created = await runKeysCli(['create', '--owner', 'hooks@example.com', '--plan', 'pro', '--scopes', 'read:orders,write:webhooks', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const { key } = JSON.parse(created.stdout);
    const endpoint = await call(bases[0]!, 'POST', '/api/webhooks', key, { url: receiver.url, events: ['order.created'] });
    expect(endpoint.status, endpoint.text).toBe(201);
    // Asked on the other instance: the event goes through the outbox, whichever worker sends it.
    const test = await call(bases[1]!, 'POST', `/api/webhooks/${endpoint.body.data.id}/test`, key);
    expect(test.status, test.text).toBeLessThan(300);
    const [delivery] = await receiver.waitFor((r) => r.json?.type === 'webhook.test', 1, 10_000);
    expect(delivery!.headers['webhook-signature']).toMatch(/^v1,/);
  });

  it('stops everything: no process of the deployment is left', async () => {
    const before = pids();
    // Two supervisors and their instances, PgBouncer, Redis, the primary and the replica.
    expect(before.length).toBeGreaterThanOrEqual(8);
    expect(before.every(running)).toBe(true);
    const stop = await run(['stop', dir]);
    stopped = true;
    expect(stop.code, stop.stderr).toBe(0);
    expect(before.filter(running)).toEqual([]);
    for (const base of bases) await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  }, 60_000);
});
