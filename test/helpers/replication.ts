import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { isExecutable, unusedPort } from './processes.js';

// A primary and a streaming replica of Debian's PostgreSQL 15 (package postgresql-15, installed by
// .ci/run), each a child cluster in a temporary directory on a free loopback port: the primary
// with wal_level=replica, the replica a pg_basebackup -R of it. Run as the "postgres" OS user when
// the tests run as root (PostgreSQL refuses root). pg_stat_statements is loaded on both, so a test
// can see which statements each received. Where the binaries are missing, the tests that need
// them report themselves skipped.

export const PG15_BIN = '/usr/lib/postgresql/15/bin';
export const HAS_PG15 = ['initdb', 'pg_ctl', 'postgres', 'pg_basebackup'].every((bin) => isExecutable(path.join(PG15_BIN, bin)));

/** The password in every URL handed out: trust authentication ignores it; the service must never show it. */
export const PASSWORD = 'replica-secret-pw';

export interface Cluster {
  port: number;
  dir: string;
  /** postgresql://postgres:PASSWORD@127.0.0.1:port/<database> */
  url(database?: string): string;
  start(): void;
  /** Immediate stop (as a crash would: no checkpoint). */
  stop(): void;
}

export interface Replication {
  primary: Cluster;
  replica: Cluster;
  close(): void;
}

const asRoot = process.getuid?.() === 0;
const postgresUser = (() => {
  if (!asRoot) return undefined;
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
})();

function run(bin: string, args: string[]): void {
  const result = spawnSync(path.join(PG15_BIN, bin), args, { encoding: 'utf8', ...postgresUser, timeout: 120_000, env: { ...process.env, LC_ALL: 'C' } });
  if (result.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed (${result.status}): ${result.stderr}${result.stdout}`);
}

function cluster(dir: string, port: number): Cluster {
  return {
    port,
    dir,
    url: (database = 'marketplace') => `postgresql://postgres:${PASSWORD}@127.0.0.1:${port}/${database}`,
    start: () => run('pg_ctl', ['-D', dir, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', 'start']),
    stop: () => run('pg_ctl', ['-D', dir, '-m', 'immediate', '-w', 'stop']),
  };
}

/** Waits until `url` answers. */
export async function waitForServer(url: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/**
 * Starts a primary, lets `prepare` fill it (the application database "marketplace" exists), then
 * makes a replica of it with pg_basebackup -R and starts it. `close` stops both and removes them.
 */
export async function startReplication(prepare: (primaryUrl: string) => Promise<void>): Promise<Replication> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'replicas-'));
  fs.chmodSync(root, 0o755);
  if (postgresUser) fs.chownSync(root, postgresUser.uid, postgresUser.gid);
  const [primaryPort, replicaPort] = [await unusedPort(), await unusedPort()];
  const primary = cluster(path.join(root, 'primary'), primaryPort);
  const replica = cluster(path.join(root, 'replica'), replicaPort);
  const stopAll = () => {
    for (const c of [replica, primary]) {
      if (fs.existsSync(path.join(c.dir, 'postmaster.pid'))) {
        try {
          c.stop();
        } catch {
          // already stopped
        }
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
    process.off('exit', stopAll);
  };
  // A test process that ends without afterAll (a crash, a timeout) leaves no server behind.
  process.once('exit', stopAll);
  try {
    run('initdb', ['-D', primary.dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    fs.appendFileSync(
      path.join(primary.dir, 'postgresql.conf'),
      [
        `port = ${primaryPort}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${primary.dir}'`,
        'wal_level = replica',
        'max_wal_senders = 5',
        'fsync = off',
        'full_page_writes = off',
        'shared_buffers = 32MB',
        "shared_preload_libraries = 'pg_stat_statements'",
        'pg_stat_statements.track = all',
        'max_connections = 100',
        '',
      ].join('\n'),
    );
    primary.start();
    await waitForServer(primary.url('postgres'));
    const admin = new pg.Client({ connectionString: primary.url('postgres') });
    await admin.connect();
    await admin.query('CREATE DATABASE marketplace');
    await admin.end();
    await prepare(primary.url());
    const ext = new pg.Client({ connectionString: primary.url() });
    await ext.connect();
    await ext.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await ext.end();
    run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replica.dir, '-R', '-X', 'stream', '-c', 'fast']);
    fs.appendFileSync(
      path.join(replica.dir, 'postgresql.conf'),
      [`port = ${replicaPort}`, `unix_socket_directories = '${replica.dir}'`, 'hot_standby = on', ''].join('\n'),
    );
    replica.start();
    await waitForServer(replica.url());
  } catch (error) {
    stopAll();
    throw error;
  }
  return { primary, replica, close: stopAll };
}
