// Rate-limit bucket stores: the memory store and the Redis store (with its memory fallback).
//
// Redis comes from REDIS_URL when set (it must then be reachable), otherwise from a
// `redis-server` child process this file starts on a free port. With neither, every test that
// needs a real Redis is reported as skipped. The outage tests always start their own server
// (they stop and restart it), so they need the binary even when REDIS_URL is set.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { manualClock, type ManualClock } from './helpers/clock.js';
import { EXTERNAL_REDIS_URL, freePort, HAS_REDIS_SERVER, startRedisServer, useTestRedis, type RedisServer } from './helpers/redis.js';
import { MemoryRateLimitStore } from '../src/ratelimit/memory-store.js';
import { RedisRateLimitStore } from '../src/ratelimit/redis-store.js';
import { createRateLimitStore } from '../src/ratelimit/create-store.js';
import type { RateLimitDecision, RateLimitStore, RateLimitStoreEvent } from '../src/ratelimit/store.js';

const REDIS_AVAILABLE = Boolean(EXTERNAL_REDIS_URL) || HAS_REDIS_SERVER;
if (!REDIS_AVAILABLE) process.stderr.write('ratelimit-store.test: no REDIS_URL and no redis-server binary; Redis tests are skipped\n');

/** A bucket name no other test (or earlier run against the same external Redis) has used. */
const bucketName = (label: string) => `test:${label}:${randomUUID()}`;

function tally(decisions: RateLimitDecision[]) {
  const allowed = decisions.filter((d) => d.allowed);
  return {
    allowed: allowed.length,
    remainingOfAllowed: allowed.map((d) => d.remaining).sort((a, b) => b - a),
    resets: new Set(decisions.map((d) => d.resetAt)),
  };
}

const countdown = (from: number) => Array.from({ length: from + 1 }, (_, i) => from - i);

// ---------------------------------------------------------------------------------------------
// Behaviour every store must have, run against each backend.

interface Backend {
  name: string;
  skip: boolean;
  make: () => Promise<RateLimitStore>;
}

const redisUrl = useTestRedis();

const opened: RateLimitStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

async function redisStore(url = redisUrl(), onEvent?: (e: RateLimitStoreEvent) => void): Promise<RateLimitStore> {
  if (!url) throw new Error('no Redis for this test');
  const store = createRateLimitStore({ redisUrl: url, ...(onEvent ? { onEvent } : {}) });
  opened.push(store);
  expect(await store.waitUntilReady(5000)).toBe(true);
  return store;
}

const backends: Backend[] = [
  {
    name: 'memory',
    skip: false,
    make: async () => {
      const store = createRateLimitStore({});
      opened.push(store);
      return store;
    },
  },
  { name: 'redis', skip: !REDIS_AVAILABLE, make: () => redisStore() },
];

for (const backend of backends) {
  describe.skipIf(backend.skip)(`${backend.name} store`, () => {
    it('has the expected kind and counters', async () => {
      const store = await backend.make();
      expect(store.kind).toBe(backend.name);
      expect(store.fallbackHits).toBe(0);
      expect(store.redisErrors).toBe(0);
      expect(store.usingFallback).toBe(false);
    });

    it('lets exactly `limit` of 200 concurrent hits through, remaining counting down 49…0 once each', async () => {
      const store = await backend.make();
      const bucket = bucketName('concurrent');
      const decisions = await Promise.all(Array.from({ length: 200 }, () => store.hit(bucket, 50, 60_000)));
      const t = tally(decisions);
      expect(t.allowed).toBe(50);
      expect(t.remainingOfAllowed).toEqual(countdown(49));
      for (const d of decisions.filter((x) => !x.allowed)) expect(d.remaining).toBe(0);
      expect(decisions.every((d) => d.limit === 50)).toBe(true);
      // Denied hits still count: the bucket stays closed for the rest of the window.
      expect((await store.hit(bucket, 50, 60_000)).allowed).toBe(false);
      expect(store.fallbackHits).toBe(0);
    });

    it('reports one resetAt for every hit of a window, one window after the first hit', async () => {
      const store = await backend.make();
      const bucket = bucketName('reset');
      const before = Date.now();
      const first = await store.hit(bucket, 5, 60_000);
      const rest = [];
      for (let i = 0; i < 6; i++) rest.push(await store.hit(bucket, 5, 60_000));
      rest.push(...(await Promise.all(Array.from({ length: 20 }, () => store.hit(bucket, 5, 60_000)))));
      const after = Date.now();
      expect(tally([first, ...rest]).resets.size).toBe(1);
      expect(first.resetAt).toBeGreaterThanOrEqual(before + 60_000);
      expect(first.resetAt).toBeLessThanOrEqual(after + 60_000);
    });

    it('keeps buckets independent', async () => {
      const store = await backend.make();
      const a = bucketName('a');
      const b = bucketName('b');
      const [ra, rb] = await Promise.all([
        Promise.all(Array.from({ length: 30 }, () => store.hit(a, 10, 60_000))),
        Promise.all(Array.from({ length: 4 }, () => store.hit(b, 10, 60_000))),
      ]);
      expect(tally(ra).allowed).toBe(10);
      expect(tally(rb).allowed).toBe(4);
      expect(tally(rb).remainingOfAllowed).toEqual([9, 8, 7, 6]);
      expect((await store.hit(bucketName('c'), 1, 60_000)).allowed).toBe(true);
    });

    it('rejects a limit or window that makes no sense', async () => {
      const store = await backend.make();
      await expect(store.hit(bucketName('bad'), 0, 1000)).rejects.toThrow(RangeError);
      await expect(store.hit(bucketName('bad'), 10, 0)).rejects.toThrow(RangeError);
      await expect(store.hit(bucketName('bad'), 1.5, 1000)).rejects.toThrow(RangeError);
    });

    it('logs field calls atomically, keeping the newest `max`', async () => {
      const store = await backend.make();
      const key = bucketName('log');
      const now = Date.now();
      const seen = await Promise.all(Array.from({ length: 10 }, (_, i) => store.logCall(key, now + i, 3, 60_000)));
      // Each concurrent call saw a different number of earlier calls: 0, 1, 2, then 3 (capped).
      expect(seen.map((s) => s.length).sort()).toEqual([0, 1, 2, 3, 3, 3, 3, 3, 3, 3]);
      const later = await store.logCall(key, now + 100, 3, 60_000);
      expect(later).toHaveLength(3);
      expect(later).toEqual([...later].sort((x, y) => y - x));
      // Calls older than the window no longer count.
      expect(await store.logCall(key, now + 60_200, 3, 60_000)).toEqual([]);
    });

    it('reads a bucket without counting (peek)', async () => {
      const store = await backend.make();
      const bucket = bucketName('peek');
      const fresh = await store.peek(bucket, 5, 60_000);
      expect(fresh).toMatchObject({ allowed: true, limit: 5, remaining: 5 });
      const first = await store.hit(bucket, 5, 60_000);
      await store.hit(bucket, 5, 60_000);
      for (let i = 0; i < 3; i++) expect(await store.peek(bucket, 5, 60_000)).toEqual({ allowed: true, limit: 5, remaining: 3, resetAt: first.resetAt });
      expect(await store.hit(bucket, 5, 60_000)).toMatchObject({ remaining: 2 });
      await Promise.all(Array.from({ length: 2 }, () => store.hit(bucket, 5, 60_000)));
      expect(await store.peek(bucket, 5, 60_000)).toMatchObject({ allowed: false, remaining: 0 });
    });

    it('charges a cost budget atomically: a full bucket of 100 lets exactly 10 of 30 concurrent charges of 10 through, a refused one takes nothing', async () => {
      const store = await backend.make();
      const bucket = bucketName('budget');
      const before = Date.now();
      // Restored at 1 point per second: the few ms this test takes restore less than a point.
      const taken = await Promise.all(Array.from({ length: 30 }, () => store.take(bucket, 10, 100, 1)));
      const allowed = taken.filter((d) => d.allowed);
      expect(allowed).toHaveLength(10);
      expect(allowed.map((d) => d.remaining).sort((x, y) => y - x)).toEqual([90, 80, 70, 60, 50, 40, 30, 20, 10, 0]);
      for (const d of taken.filter((x) => !x.allowed)) {
        expect(d).toMatchObject({ limit: 100, remaining: 0, restoreRate: 1 });
        // 10 points short at 1 per second, from the charges (not from whenever this line runs).
        expect(d.availableAt - before).toBeGreaterThan(9_000);
      }
      // A charge of nothing is always allowed, and reads the bucket as it stands.
      expect(await store.take(bucket, 0, 100, 1)).toMatchObject({ allowed: true, remaining: 0 });
      await expect(store.take(bucket, Number.NaN, 100, 1)).rejects.toThrow(RangeError);
      await expect(store.take(bucket, 1, 100, 0)).rejects.toThrow(RangeError);
    });

    it('gives points back (a negative charge: the cost refund), atomically, never past the bucket\'s size', async () => {
      const store = await backend.make();
      const bucket = bucketName('refund');
      expect(await store.take(bucket, 100, 100, 1)).toMatchObject({ allowed: true, remaining: 0 });
      // 20 concurrent refunds of 3: every one counted.
      await Promise.all(Array.from({ length: 20 }, () => store.take(bucket, -3, 100, 1)));
      expect((await store.take(bucket, 0, 100, 1)).remaining).toBe(60);
      // More than was ever charged: the bucket is full, not over.
      expect(await store.take(bucket, -500, 100, 1)).toMatchObject({ allowed: true, remaining: 100 });
      expect((await store.take(bucket, 0, 100, 1)).remaining).toBe(100);
      expect(await store.take(bucket, -5, 100, 1)).toMatchObject({ remaining: 100 });
      expect(await store.take(bucket, 101, 100, 1)).toMatchObject({ allowed: false, remaining: 100 });
    });

    it('refills a cost budget continuously at its restore rate, never past its size', async () => {
      const store = await backend.make();
      const bucket = bucketName('refill');
      expect(await store.take(bucket, 100, 100, 1000)).toMatchObject({ allowed: true, remaining: 0 });
      // Waited on the real clock, the one both backends read here: the refill over time is the subject.
      await sleep(60);
      const later = await store.take(bucket, 0, 100, 1000);
      expect(later.remaining).toBeGreaterThanOrEqual(50);
      await sleep(150);
      expect((await store.take(bucket, 0, 100, 1000)).remaining).toBe(100);
    });
  });
}

describe('memory store', () => {
  // Windows end by the store's clock: a manual one here, moved to the millisecond.
  function storeOn(clock: ManualClock): RateLimitStore {
    const store = createRateLimitStore({ now: clock.now });
    opened.push(store);
    return store;
  }

  it('opens a new window at the old window\'s resetAt, and not a millisecond before', async () => {
    const clock = manualClock();
    const store = storeOn(clock);
    const bucket = bucketName('expiry');
    const started = clock.now();
    const first = await Promise.all(Array.from({ length: 5 }, () => store.hit(bucket, 3, 60_000)));
    expect(tally(first).allowed).toBe(3);
    expect(tally(first).resets).toEqual(new Set([started + 60_000]));
    const oldReset = started + 60_000;

    clock.advanceTo(oldReset - 1);
    expect(await store.peek(bucket, 3, 60_000)).toEqual({ allowed: false, limit: 3, remaining: 0, resetAt: oldReset });
    expect(await store.hit(bucket, 3, 60_000)).toEqual({ allowed: false, limit: 3, remaining: 0, resetAt: oldReset });

    clock.advance(1);
    expect(await store.peek(bucket, 3, 60_000)).toEqual({ allowed: true, limit: 3, remaining: 3, resetAt: oldReset + 60_000 });
    const next = await store.hit(bucket, 3, 60_000);
    expect(next).toEqual({ allowed: true, limit: 3, remaining: 2, resetAt: oldReset + 60_000 });
    // The new window counts from its own first hit, whenever within it the rest come.
    clock.advance(59_999);
    const again = await Promise.all(Array.from({ length: 5 }, () => store.hit(bucket, 3, 60_000)));
    expect(tally(again).allowed).toBe(2);
    expect(tally([next, ...again]).resets.size).toBe(1);
  });

  it('sweeps expired buckets and call logs on its own (bounded memory)', async () => {
    // The sweep's timer is vitest's, ticked by hand; the windows are on the manual clock.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const clock = manualClock();
      const store = new MemoryRateLimitStore({ sweepIntervalMs: 50, now: clock.now });
      opened.push(store);
      for (let i = 0; i < 100; i++) await store.hit(`ip:10.0.0.${i}`, 5, 100);
      await store.logCall('field', clock.now(), 3, 100);
      await store.hit('long', 5, 60_000);
      expect(store.size).toBe(102);
      clock.advance(99);
      vi.advanceTimersByTime(50);
      expect(store.size).toBe(102); // swept, but every window is still open
      clock.advance(1);
      expect(store.size).toBe(102); // nothing is dropped between sweeps
      vi.advanceTimersByTime(50);
      expect(store.size).toBe(1); // only the bucket whose window is still open
      await store.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not keep a process alive with its sweep timer', () => {
    // A child process that creates a store and does nothing else must exit by itself.
    const probe = spawnSync(
      process.execPath,
      ['--import', 'tsx', '-e', "import('./src/ratelimit/memory-store.ts').then((m) => { new m.MemoryRateLimitStore(); console.log('created'); })"],
      { cwd: process.cwd(), timeout: 20_000, encoding: 'utf8' },
    );
    expect(probe.stdout.trim()).toBe('created');
    expect(probe.signal).toBeNull(); // not killed by the timeout
    expect(probe.status).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Redis specifics.

describe.skipIf(!REDIS_AVAILABLE)('redis store on a shared Redis', () => {
  let raw: Redis;
  beforeAll(() => {
    raw = new Redis(redisUrl()!, { lazyConnect: false, maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    await raw.quit();
  });

  it('two instances share one bucket exactly (2 × 100 concurrent hits, limit 60 → 60 allowed)', async () => {
    const [a, b] = [await redisStore(), await redisStore()];
    const bucket = bucketName('shared');
    const decisions = (
      await Promise.all([
        Promise.all(Array.from({ length: 100 }, () => a.hit(bucket, 60, 60_000))),
        Promise.all(Array.from({ length: 100 }, () => b.hit(bucket, 60, 60_000))),
      ])
    ).flat();
    const t = tally(decisions);
    expect(t.allowed).toBe(60);
    expect(t.remainingOfAllowed).toEqual(countdown(59));
    expect(t.resets.size).toBe(1);
    expect(a.fallbackHits + b.fallbackHits).toBe(0);
  });

  // Redis' own clock ends a bucket's window (the key's PEXPIRE), so this waits for Redis to drop
  // the key rather than sleeping for the window plus a guessed margin.
  it('opens a new window once Redis has expired the old one', async () => {
    const store = await redisStore();
    const bucket = bucketName('expiry');
    const hitAt = Date.now();
    const first = await Promise.all(Array.from({ length: 5 }, () => store.hit(bucket, 3, 500)));
    expect(tally(first).allowed).toBe(3);
    const oldReset = first[0]!.resetAt;
    // The key lives 500 ms from the hits: it is seen unless this machine took longer to ask.
    const existed = await raw.exists(`rl:${bucket}`);
    if (Date.now() - hitAt < 500) expect(existed).toBe(1);
    for (const deadline = Date.now() + 10_000; (await raw.exists(`rl:${bucket}`)) && Date.now() < deadline; ) await sleep(20);
    expect(await raw.exists(`rl:${bucket}`)).toBe(0);
    // A window's length is set by its first hit: the new one gets a minute, so that nothing below
    // depends on how fast this runs.
    const next = await store.hit(bucket, 3, 60_000);
    expect(next).toMatchObject({ allowed: true, remaining: 2, limit: 3 });
    expect(next.resetAt).toBeGreaterThan(oldReset);
    const again = await Promise.all(Array.from({ length: 5 }, () => store.hit(bucket, 3, 60_000)));
    expect(tally(again).allowed).toBe(2);
    expect(tally([next, ...again]).resets.size).toBe(1);
  });

  it('keeps its keys under rl: with a TTL of one window', async () => {
    const store = await redisStore();
    const bucket = bucketName('ns');
    await store.hit(bucket, 5, 30_000);
    const ttl = await raw.pttl(`rl:${bucket}`);
    expect(ttl).toBeGreaterThan(25_000);
    expect(ttl).toBeLessThanOrEqual(30_000);
  });

  it('repairs a bucket key that lost its TTL instead of limiting it forever', async () => {
    const store = await redisStore();
    const bucket = bucketName('nottl');
    await store.hit(bucket, 5, 30_000);
    await raw.persist(`rl:${bucket}`);
    expect(await raw.pttl(`rl:${bucket}`)).toBe(-1);
    const d = await store.hit(bucket, 5, 30_000);
    expect(d.allowed).toBe(true);
    expect(await raw.pttl(`rl:${bucket}`)).toBeGreaterThan(25_000);
  });

  it('decides a hit on a key Redis refuses (wrong type) in memory, without declaring an outage', async () => {
    const events: RateLimitStoreEvent[] = [];
    const store = await redisStore(redisUrl(), (e) => events.push(e));
    const bucket = bucketName('wrongtype');
    await raw.rpush(`rl:${bucket}`, 'not a bucket');
    await raw.pexpire(`rl:${bucket}`, 60_000);
    expect(await store.hit(bucket, 5, 60_000)).toMatchObject({ allowed: true, remaining: 4 });
    expect(store.redisErrors).toBe(1);
    expect(store.fallbackHits).toBe(1);
    expect(store.usingFallback).toBe(false);
    expect(events.map((e) => e.type)).toEqual(['error']);
    expect(await store.hit(bucketName('fine'), 5, 60_000)).toMatchObject({ allowed: true, remaining: 4 });
    expect(store.fallbackHits).toBe(1);
  });

  // A slow answer is no outage: limits stay shared unless Redis is really unreachable.
  it('keeps counting in Redis through an event loop blocked longer than the command timeout', async () => {
    const store = await redisStore();
    const bucket = bucketName('busy-loop');
    const pending = Promise.all(Array.from({ length: 20 }, () => store.hit(bucket, 10, 60_000)));
    // Redis answers at once, but nothing is read while the loop is busy (as on a loaded machine).
    const until = Date.now() + 1_600;
    while (Date.now() < until) {
      // busy
    }
    const decisions = await pending;
    expect(tally(decisions).allowed).toBe(10);
    expect(store.fallbackHits).toBe(0);
    expect(store.usingFallback).toBe(false);
    expect(await raw.hget(`rl:${bucket}`, 'n')).toBe('20');
  });

  it('keeps counting in Redis when its answers take 600 ms', async () => {
    const target = new URL(redisUrl()!);
    const sockets = new Set<net.Socket>();
    // A slow link: every reply from Redis arrives 600 ms late.
    const slow = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 6379), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => (client.destroy(), upstream.destroy()));
      }
      client.on('data', (d) => upstream.write(d));
      upstream.on('data', (d) => setTimeout(() => client.writable && client.write(d), 600));
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const url = new URL(redisUrl()!);
      url.host = `127.0.0.1:${(slow.address() as net.AddressInfo).port}`;
      const store = await redisStore(url.toString());
      const bucket = bucketName('slow');
      const decisions = await Promise.all(Array.from({ length: 8 }, () => store.hit(bucket, 5, 60_000)));
      expect(tally(decisions).allowed).toBe(5);
      expect(store.fallbackHits).toBe(0);
      expect(store.usingFallback).toBe(false);
      expect(await raw.hget(`rl:${bucket}`, 'n')).toBe('8');
      await store.close();
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => slow.close(resolve));
    }
  });

  it('reloads its script when Redis has lost it (EVALSHA → NOSCRIPT → EVAL)', async () => {
    const store = await redisStore();
    const bucket = bucketName('noscript');
    await store.hit(bucket, 5, 30_000);
    await raw.script('FLUSH');
    const d = await store.hit(bucket, 5, 30_000);
    expect(d).toMatchObject({ allowed: true, remaining: 3 });
    expect(store.redisErrors).toBe(0);
    expect(store.usingFallback).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Redis unavailable: every hit is still decided, quickly, by the in-process fallback.

describe('redis store without a usable Redis', () => {
  it('decides in memory when nothing listens, and says so once', async () => {
    const port = await freePort();
    const events: RateLimitStoreEvent[] = [];
    const store = new RedisRateLimitStore({ redisUrl: `redis://127.0.0.1:${port}`, onEvent: (e) => events.push(e) });
    opened.push(store);
    expect(await store.waitUntilReady(300)).toBe(false);
    // One after the other: had each hit waited for a connect timeout (2 s) this would take 40 s.
    const started = Date.now();
    const decisions: RateLimitDecision[] = [];
    for (let i = 0; i < 20; i++) decisions.push(await store.hit(bucketName('dead'), 5, 60_000));
    const bucket = bucketName('dead-one');
    const one = await Promise.all(Array.from({ length: 8 }, () => store.hit(bucket, 5, 60_000)));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(decisions.every((d) => d.allowed)).toBe(true);
    expect(tally(one).allowed).toBe(5);
    expect(store.usingFallback).toBe(true);
    expect(store.fallbackHits).toBe(28);
    expect(events.filter((e) => e.type === 'fallback')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'recovered')).toHaveLength(0);
  });

  it('does not wait on a Redis that accepts connections but never answers', async () => {
    // A black hole: the TCP connection succeeds, no reply ever comes.
    const sockets = new Set<net.Socket>();
    const hole = net.createServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
    });
    await new Promise<void>((resolve) => hole.listen(0, '127.0.0.1', resolve));
    const { port } = hole.address() as net.AddressInfo;
    try {
      const events: RateLimitStoreEvent[] = [];
      const store = new RedisRateLimitStore({ redisUrl: `redis://127.0.0.1:${port}`, onEvent: (e) => events.push(e) });
      opened.push(store);
      const started = Date.now();
      const decisions: RateLimitDecision[] = [];
      for (let i = 0; i < 10; i++) decisions.push(await store.hit(bucketName('hole'), 5, 60_000));
      expect(Date.now() - started).toBeLessThan(1000); // 10 × the 1 s command timeout would be 10 s
      expect(decisions.every((d) => d.allowed)).toBe(true);
      expect(store.usingFallback).toBe(true);
      expect(events.filter((e) => e.type === 'fallback')).toHaveLength(1);
      await store.close();
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => hole.close(resolve));
    }
  });

  it('never lets a throwing event listener fail a hit', async () => {
    const port = await freePort();
    const store = createRateLimitStore({
      redisUrl: `redis://127.0.0.1:${port}`,
      onEvent: () => {
        throw new Error('listener broke');
      },
    });
    opened.push(store);
    await expect(store.hit(bucketName('listener'), 5, 60_000)).resolves.toMatchObject({ allowed: true });
  });
});

describe.skipIf(!HAS_REDIS_SERVER)('redis store through an outage (own redis-server)', () => {
  let server: RedisServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('falls back when Redis dies, fires `fallback` once, and recovers when it comes back', async () => {
    server = await startRedisServer();
    const port = server.port;
    const events: RateLimitStoreEvent[] = [];
    const store = await redisStore(server.url, (e) => events.push(e));
    const bucket = bucketName('outage');

    expect((await store.hit(bucket, 3, 60_000)).allowed).toBe(true);
    expect(store.usingFallback).toBe(false);

    await server.stop('SIGKILL');
    const during: RateLimitDecision[] = [];
    const started = Date.now();
    for (let i = 0; i < 10; i++) during.push(await store.hit(bucket, 3, 60_000));
    during.push(...(await Promise.all(Array.from({ length: 10 }, () => store.hit(bucketName('outage-other'), 3, 60_000)))));
    expect(Date.now() - started).toBeLessThan(1500); // no hit waits for Redis (10 × 250 ms would be 2.5 s)
    // Decided in memory: the fallback's own bucket lets 3 through, then limits.
    expect(tally(during.slice(0, 10)).allowed).toBe(3);
    expect(store.usingFallback).toBe(true);
    expect(store.fallbackHits).toBe(20);
    expect(events.filter((e) => e.type === 'fallback')).toHaveLength(1);

    // Same port again; the client reconnects by itself (backoff ≤ 2.1 s).
    server = await startRedisServer(port);
    await untilRecovered(store);
    expect(events.map((e) => e.type).filter((t) => t !== 'error')).toEqual(['fallback', 'recovered']);
    // Back on Redis (the restarted server is empty, so this is a new window).
    const fallbackHitsBefore = store.fallbackHits;
    expect(await store.hit(bucket, 3, 60_000)).toMatchObject({ allowed: true, remaining: 2 });
    expect(store.fallbackHits).toBe(fallbackHitsBefore);
  });

  it('falls back within the command timeout when Redis hangs, and recovers when it resumes', async () => {
    server = await startRedisServer();
    const events: RateLimitStoreEvent[] = [];
    const store = await redisStore(server.url, (e) => events.push(e));
    const bucket = bucketName('hang');
    expect((await store.hit(bucket, 5, 60_000)).allowed).toBe(true);

    server.child.kill('SIGSTOP'); // connection stays open, nothing answers
    try {
      const started = Date.now();
      const decisions = await Promise.all(Array.from({ length: 20 }, () => store.hit(bucket, 5, 60_000)));
      const firstWave = Date.now() - started;
      // Then, during the outage, hits do not wait for Redis at all (one probe per interval does).
      const t2 = Date.now();
      for (let i = 0; i < 20; i++) await store.hit(bucketName('hang-other'), 5, 60_000);
      const secondWave = Date.now() - t2;
      // Only the 1 s command timeout can end them (Redis answers nothing until SIGCONT); the rest
      // is room for its timer firing late on a loaded machine.
      expect(firstWave).toBeLessThan(3000);
      expect(secondWave).toBeLessThan(2000); // 20 × the 1 s command timeout would be 20 s
      expect(decisions.every((d) => typeof d.allowed === 'boolean')).toBe(true);
      expect(store.usingFallback).toBe(true);
      expect(store.redisErrors).toBeGreaterThan(0);
    } finally {
      server.child.kill('SIGCONT');
    }
    await untilRecovered(store);
    expect(events.map((e) => e.type).filter((t) => t !== 'error')).toEqual(['fallback', 'recovered']);
  });
});

/** Probes the store until Redis answers again (its client reconnects with a backoff ≤ 2.1 s). */
async function untilRecovered(store: RateLimitStore): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (store.usingFallback && Date.now() < deadline) {
    await store.hit(bucketName('probe'), 100, 60_000);
    await sleep(100);
  }
  expect(store.usingFallback).toBe(false);
}
