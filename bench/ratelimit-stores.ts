import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RLWrapperTimeouts } from 'rate-limiter-flexible';
import { MemoryRateLimitStore } from '../src/ratelimit/memory-store.js';
import { RedisRateLimitStore } from '../src/ratelimit/redis-store.js';
import type { RateLimitStore } from '../src/ratelimit/store.js';
import { FlexibleMemoryStore, FlexibleRedisStore } from './ratelimit-flexible.js';

// `npx tsx bench/ratelimit-stores.ts [--seconds 1] [--rounds 5] [--no-redis]`
//
// Calls per second of RateLimitStore.hit, the call the gate makes for every request: the
// hand-written stores (src/ratelimit) against the same interface on rate-limiter-flexible
// (bench/ratelimit-flexible.ts), in the same process and run. Scenarios:
//   memory, one bucket / 10,000 buckets (round robin)         one call at a time, awaited
//   redis,  one bucket / 10,000 buckets                        one call at a time, awaited
//   redis,  one bucket, 32 calls in flight                     (a busy instance's concurrency)
// Redis is a redis-server this script starts on a free port of 127.0.0.1 (no persistence) and
// stops at the end. Each round runs every implementation of a scenario for --seconds (after a
// short warm-up), alternating which goes first; the table gives the median of the rounds
// and their range (a shared machine's load shows there).
// With taskset available, this process runs on core 1 and redis-server on core 0.
//
// Then, with Redis, what happens while Redis cannot answer in time, the hand-written
// RedisRateLimitStore against the library's own answer to it (RateLimiterRedis with
// rejectIfRedisNotReady, wrapped in RLWrapperTimeouts with the same 1 s timeout, and a
// RateLimiterMemory as insuranceLimiter): 20 hits in flight while the event loop is blocked for
// 1.6 s with Redis answering at once (a busy machine, not an outage), then 3 s of a hung Redis
// (SIGSTOP) with 10 clients sending one hit after the other.

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '5' },
    'no-redis': { type: 'boolean', default: false },
  },
});
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
if (!(SECONDS > 0 && SECONDS <= 10) || !(Number.isInteger(ROUNDS) && ROUNDS >= 1 && ROUNDS <= 20)) {
  throw new RangeError('--seconds must be in (0, 10] and --rounds an integer from 1 to 20');
}

const WINDOW_MS = 3_600_000;
const LIMIT = 1_000_000_000; // never refused: the allowed path, which is what nearly every request takes
const MANY = 10_000;
const HAS_TASKSET = spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;

interface Impl {
  name: string;
  make: () => Promise<RateLimitStore>;
}

interface Scenario {
  name: string;
  keys: number;
  inFlight: number;
  impls: Impl[];
}

/** Calls of `store.hit` completed in `seconds`, `inFlight` at a time, over `keys` buckets. */
async function measure(store: RateLimitStore, keys: number, inFlight: number, seconds: number, tag: string): Promise<number> {
  const names = Array.from({ length: keys }, (_, i) => `bench:${tag}:${i}`);
  let calls = 0;
  const until = performance.now() + seconds * 1000;
  const worker = async (offset: number) => {
    let i = offset;
    while (performance.now() < until) {
      // 256 calls between clock reads: performance.now() costs about as much as a memory hit.
      for (let j = 0; j < 256; j++) {
        await store.hit(names[i % keys]!, LIMIT, WINDOW_MS);
        i += inFlight;
        calls++;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, (_, k) => worker(k)));
  return calls / ((performance.now() - started) / 1000);
}

async function runScenario(s: Scenario): Promise<Map<string, number[]>> {
  const results = new Map<string, number[]>(s.impls.map((i) => [i.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? [...s.impls].reverse() : s.impls;
    for (const impl of order) {
      const store = await impl.make();
      try {
        const tag = `${impl.name}:${round}`;
        // Warm-up: the JIT, and every bucket created (a window's first hit is the rarer path).
        await measure(store, s.keys, s.inFlight, Math.min(0.3, SECONDS), tag);
        results.get(impl.name)!.push(await measure(store, s.keys, s.inFlight, SECONDS, tag));
      } finally {
        await store.close();
      }
    }
  }
  return results;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

async function startRedis(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const argv = ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child = HAS_TASKSET ? spawn('taskset', ['-c', '0', ...argv], { cwd: os.tmpdir(), stdio: 'ignore' }) : spawn(argv[0]!, argv.slice(1), { cwd: os.tmpdir(), stdio: 'ignore' });
  for (const deadline = Date.now() + 10_000; ; ) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      const done = (ok: boolean) => (socket.destroy(), resolve(ok));
      socket.once('error', () => done(false));
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (d) => done(d.toString().startsWith('+PONG')));
    });
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
    await sleep(50);
  }
  return { url: `redis://127.0.0.1:${port}`, child };
}

async function redisImpl(name: string, make: (url: string) => RateLimitStore, url: string): Promise<Impl> {
  return {
    name,
    make: async () => {
      const store = make(url);
      if (!(await store.waitUntilReady(5000))) throw new Error('Redis not ready');
      return store;
    },
  };
}

/** A RateLimiterMemory that counts the calls it decides (as the library's insuranceLimiter). */
class CountingMemory extends RateLimiterMemory {
  decided = 0;
  override penalty(...args: Parameters<RateLimiterMemory['penalty']>) {
    this.decided++;
    return super.penalty(...args);
  }
}

async function outageComparison(redis: { url: string; child: ChildProcess }): Promise<void> {
  const insurance = new CountingMemory({ points: LIMIT, duration: 1, keyPrefix: '' });
  // The library leaves the client to the caller: the same settings as the hand-written store's.
  const client = new Redis(redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  const own = new RedisRateLimitStore({ redisUrl: redis.url });
  try {
    await new Promise((resolve) => client.once('ready', resolve));
    const lib = new RLWrapperTimeouts({
      limiter: new RateLimiterRedis({ storeClient: client, keyPrefix: 'rl', points: LIMIT, duration: 1, rejectIfRedisNotReady: true }),
      timeoutMs: 1000,
      insuranceLimiter: insurance,
    });
    if (!(await own.waitUntilReady(5000))) throw new Error('Redis not ready');
    const impls = [
      { name: 'hand-written', hit: (key: string) => own.hit(key, LIMIT, WINDOW_MS), inMemory: () => own.fallbackHits },
      { name: 'rate-limiter-flexible', hit: (key: string) => lib.penalty(key, 1, { customDuration: WINDOW_MS / 1000 }), inMemory: () => insurance.decided },
    ];
    // Both scripts loaded, so that no hit below waits for a second round trip (NOSCRIPT → EVAL).
    for (const impl of impls) await impl.hit('bench:outage:warm');

    console.log('\n| while Redis cannot answer in time | hand-written | rate-limiter-flexible |');
    console.log('|---|---:|---:|');
    const busy: string[] = [];
    for (const impl of impls) {
      const before = impl.inMemory();
      const pending = Promise.all(Array.from({ length: 20 }, (_, i) => impl.hit(`bench:outage:busy:${i % 2}`)));
      for (const until = Date.now() + 1600; Date.now() < until; ) {
        // busy: Redis has answered, but nothing is read until the loop is free
      }
      await pending;
      busy.push(`${impl.inMemory() - before} of 20`);
    }
    console.log(`| event loop blocked 1.6 s, Redis answering: hits decided in memory | ${busy.join(' | ')} |`);

    redis.child.kill('SIGSTOP');
    const hung: { count: number; slow: number; median: number }[] = [];
    try {
      for (const impl of impls) {
        const latencies: number[] = [];
        const until = Date.now() + 3000;
        await Promise.all(
          Array.from({ length: 10 }, async (_, c) => {
            for (let i = 0; Date.now() < until; i++) {
              const started = performance.now();
              await impl.hit(`bench:outage:hung:${c}:${i % 100}`);
              latencies.push(performance.now() - started);
            }
          }),
        );
        hung.push({ count: latencies.length, slow: latencies.filter((ms) => ms >= 500).length, median: median(latencies) });
      }
    } finally {
      redis.child.kill('SIGCONT');
    }
    console.log(`| Redis hung 3 s, 10 clients: hits decided | ${hung.map((h) => h.count.toLocaleString('en')).join(' | ')} |`);
    console.log(`| of those, hits that waited 0.5 s or more | ${hung.map((h) => h.slow).join(' | ')} |`);
    console.log(`| median wait per hit, ms | ${hung.map((h) => h.median.toFixed(3)).join(' | ')} |`);
  } finally {
    client.disconnect();
    await own.close();
  }
}

async function main() {
  if (HAS_TASKSET) spawnSync('taskset', ['-a', '-cp', '1', String(process.pid)], { stdio: 'ignore' });
  const memoryImpls: Impl[] = [
    { name: 'hand-written', make: async () => new MemoryRateLimitStore() },
    { name: 'rate-limiter-flexible', make: async () => new FlexibleMemoryStore() },
  ];
  const scenarios: Scenario[] = [
    { name: 'memory, 1 bucket', keys: 1, inFlight: 1, impls: memoryImpls },
    { name: `memory, ${MANY.toLocaleString('en')} buckets`, keys: MANY, inFlight: 1, impls: memoryImpls },
  ];
  let redis: { url: string; child: ChildProcess } | undefined;
  try {
    if (!args['no-redis']) {
      redis = await startRedis();
      const impls = [
        await redisImpl('hand-written', (url) => new RedisRateLimitStore({ redisUrl: url }), redis.url),
        await redisImpl('rate-limiter-flexible', (url) => new FlexibleRedisStore({ redisUrl: url }), redis.url),
      ];
      scenarios.push(
        { name: 'redis, 1 bucket', keys: 1, inFlight: 1, impls },
        { name: `redis, ${MANY.toLocaleString('en')} buckets`, keys: MANY, inFlight: 1, impls },
        { name: 'redis, 1 bucket, 32 in flight', keys: 1, inFlight: 32, impls },
      );
    }
    console.log(`node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), ${ROUNDS} rounds of ${SECONDS} s, median calls/s`);
    console.log('| scenario | hand-written | (range) | rate-limiter-flexible | (range) | library / hand-written |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const s of scenarios) {
      const r = await runScenario(s);
      const fmt = (n: number) => Math.round(n).toLocaleString('en');
      const range = (xs: number[]) => `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`;
      const own = r.get('hand-written')!;
      const lib = r.get('rate-limiter-flexible')!;
      console.log(`| ${s.name} | ${fmt(median(own))} | ${range(own)} | ${fmt(median(lib))} | ${range(lib)} | ${(median(lib) / median(own)).toFixed(2)} |`);
    }
    if (redis) await outageComparison(redis);
  } finally {
    redis?.child.kill('SIGTERM');
  }
}

await main();
