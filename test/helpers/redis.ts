import { afterAll, beforeAll } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/** Debian's redis-server is installed by .ci/run; where it is missing, Redis tests are skipped. */
export const HAS_REDIS_SERVER = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;

/** An external Redis for the tests, if the environment names one. */
export const EXTERNAL_REDIS_URL = process.env.REDIS_URL || undefined;

// A throwaway redis-server child process.

export interface RedisServer {
  port: number;
  url: string;
  child: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

export async function startRedisServer(port?: number): Promise<RedisServer> {
  const p = port ?? (await freePort());
  // No persistence: nothing is written to disk, and a restart starts empty.
  const child = spawn('redis-server', ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    cwd: os.tmpdir(),
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  while (!(await ping(p))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not start on port ${p}`);
    }
    await sleep(50);
  }
  return {
    port: p,
    url: `redis://127.0.0.1:${p}`,
    child,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT'); // in case a test left it stopped
        child.kill(signal);
      }
      await exited;
    },
  };
}

/** True when something on `port` answers PING like Redis. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

/**
 * Registers this file's hooks for a Redis: REDIS_URL when set, else an own redis-server for the
 * file (stopped after it), else none. Returns a getter for its URL, undefined without Redis.
 */
export function useTestRedis(): () => string | undefined {
  let url = EXTERNAL_REDIS_URL;
  let own: RedisServer | undefined;
  beforeAll(async () => {
    if (!url && HAS_REDIS_SERVER) {
      own = await startRedisServer();
      url = own.url;
    }
  });
  afterAll(async () => {
    await own?.stop();
  });
  return () => url;
}
