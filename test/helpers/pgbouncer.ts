import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isExecutable, unusedPort } from './processes.js';

// Debian's PgBouncer (installed by .ci/run) as a child process, in transaction mode with its
// default settings otherwise: no ignore_startup_parameters, no server_reset_query in transaction
// mode, no named prepared statements carried across transactions (1.18 has no such support).
// Where the binary is missing, the tests that need it report themselves skipped.

export const PGBOUNCER = '/usr/sbin/pgbouncer';
export const HAS_PGBOUNCER = isExecutable(PGBOUNCER);

export interface Pgbouncer {
  port: number;
  /** `serverUrl` (same user, password, database) through the pooler. */
  url(serverUrl: string): string;
  /** Everything PgBouncer wrote to stderr so far. */
  log(): string;
  /** Stops it at once (SIGTERM: immediate shutdown), clients and all. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same settings. */
  restart(): Promise<void>;
}

/**
 * Starts PgBouncer on a free loopback port in front of the server of `serverUrl`, any database
 * of it (a `*` fallback entry), authenticating clients and itself with that URL's user and
 * password (SCRAM, from an auth_file).
 */
export async function startPgbouncer(serverUrl: string): Promise<Pgbouncer> {
  const server = new URL(serverUrl);
  const port = await unusedPort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgbouncer-'));
  const user = decodeURIComponent(server.username);
  const password = decodeURIComponent(server.password);
  const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
  fs.writeFileSync(path.join(dir, 'userlist.txt'), `${quote(user)} ${quote(password)}\n`, { mode: 0o600 });
  fs.writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = scram-sha-256',
      `auth_file = ${path.join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      '',
    ].join('\n'),
  );
  // PgBouncer refuses to run as root: as root (CI containers), it switches to Debian's postgres user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    for (const file of [dir, path.join(dir, 'userlist.txt'), path.join(dir, 'pgbouncer.ini')]) fs.chownSync(file, uid, gid);
  }
  let child: ChildProcess | undefined;
  let stderr = '';
  let exited: Promise<void> = Promise.resolve();

  const start = async () => {
    const args = [...(asRoot ? ['-u', 'postgres'] : []), path.join(dir, 'pgbouncer.ini')];
    const proc = spawn(PGBOUNCER, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    proc.stderr!.on('data', (d) => (stderr += d));
    exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    // Never outlives the test process that started it.
    const orphaned = () => proc.kill('SIGTERM');
    process.once('exit', orphaned);
    proc.once('exit', () => process.off('exit', orphaned));
    const deadline = Date.now() + 10_000;
    while (!(await accepts(port))) {
      if (proc.exitCode !== null || Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(`pgbouncer did not start on port ${port}:\n${stderr}`);
      }
      await sleep(50);
    }
  };
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  await start();

  return {
    port,
    url(target) {
      const through = new URL(target);
      through.hostname = '127.0.0.1';
      through.port = String(port);
      return through.toString();
    },
    log: () => stderr,
    async stop() {
      await stop();
    },
    async restart() {
      await stop();
      await start();
    },
  };
}

/** True when something accepts a TCP connection on the loopback `port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => done(true));
  });
}

export interface Relay {
  /** `serverUrl` with its host and port replaced by the relay's. */
  url(serverUrl: string): string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  /** From now on, what the server sends waits in the relay (a notification heard late). */
  hold(): void;
  /** Sends everything held, in order, and stops holding. */
  release(): void;
  close(): Promise<void>;
}

/**
 * A TCP relay to `target` (host:port of a URL) that a test can cut and restore: every connection
 * through it is destroyed by `cut()`, and new ones are refused until `restore()`. Stands for a
 * network failure between the service and one of its connections; `hold()` for a slow one.
 */
export async function startRelay(targetUrl: string): Promise<Relay> {
  const target = new URL(targetUrl);
  const sockets = new Set<net.Socket>();
  const port = await unusedPort();
  let server: net.Server | undefined;
  let held = false;
  const waiting: { socket: net.Socket; chunk: Buffer }[] = [];
  const open = async () => {
    server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(client).add(upstream);
      const end = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
      client.pipe(upstream);
      upstream.on('data', (chunk: Buffer) => (held ? waiting.push({ socket: client, chunk }) : client.write(chunk)));
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
  };
  const shut = async () => {
    const closing = server && new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await closing;
  };
  await open();
  return {
    url(serverUrl) {
      const through = new URL(serverUrl);
      through.hostname = '127.0.0.1';
      through.port = String(port);
      return through.toString();
    },
    cut: shut,
    restore: open,
    hold: () => void (held = true),
    release() {
      held = false;
      for (const { socket, chunk } of waiting.splice(0)) socket.write(chunk);
    },
    close: shut,
  };
}
