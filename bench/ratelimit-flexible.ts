// The RateLimitStore interface with its buckets counted by rate-limiter-flexible (RateLimiterMemory,
// RateLimiterRedis over the same ioredis client) instead of the hand-written code in
// src/ratelimit: what bench/ratelimit-stores.ts measures the hand-written stores against. It was
// tried as their replacement and not adopted (BENCHMARKS.md, "Rate-limit stores"): with it the
// rate-limit tests fail on exactness, namely
//   - resetAt: the library reports only the time left (msBeforeNext), so now + msBeforeNext
//     differs by a millisecond or more between hits of one window and between instances;
//   - the memory store's clock: RateLimiterMemory reads Date.now() and ends windows with a
//     setTimeout per bucket, so no clock can be given to it (the window tests move a manual one);
//   - windows that are not whole seconds: RateLimiterRedis sets its TTL in whole seconds
//     (EX floor(ms / 1000)), and a window under a second gets no TTL at all, so its bucket never
//     resets;
// and its Redis keys are plain counters where the hand-written store keeps a hash (n, r), so the
// two could not share a Redis during a rolling deploy.
//
// What the library does not cover stays hand-written here too: the field call logs (logCall: the
// library has no sliding log) and what happens while Redis is unreachable (RedisRateLimitStore's
// outage handling, which this class inherits; the library's insuranceLimiter and RLWrapperTimeouts
// are measured against it by bench/ratelimit-stores.ts).
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { MemoryRateLimitStore, assertLimitArgs, decision, peekDecision } from '../src/ratelimit/memory-store.js';
import { RedisRateLimitStore, type RedisRateLimitStoreOptions } from '../src/ratelimit/redis-store.js';
import type { RateLimitDecision } from '../src/ratelimit/store.js';

// One limiter for every bucket: the bucket's window comes with each call (customDuration), and the
// decision is made here from the count, so a bucket's count does not depend on its limit
// (penalty() counts without deciding; consume() would need one limiter, and store, per limit).
const UNLIMITED = Number.MAX_SAFE_INTEGER;

export class FlexibleMemoryStore extends MemoryRateLimitStore {
  private readonly limiter = new RateLimiterMemory({ points: UNLIMITED, duration: 1, keyPrefix: '' });

  override async hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    assertLimitArgs(limit, windowMs);
    const res = await this.limiter.penalty(bucket, 1, { customDuration: windowMs / 1000 });
    return decision(res.consumedPoints, limit, Date.now() + res.msBeforeNext);
  }

  override async peek(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    assertLimitArgs(limit, windowMs);
    const res = await this.limiter.get(bucket);
    const now = Date.now();
    if (!res || res.msBeforeNext <= 0) return peekDecision(0, limit, now + windowMs);
    return peekDecision(res.consumedPoints, limit, now + res.msBeforeNext);
  }

  // The library has no close: each bucket holds a timer (unref'd) until its window ends, and the
  // timers keep the buckets alive. Deleting them clears the timers too.
  override async close(): Promise<void> {
    await Promise.all(this.limiter.dump().storage.map((entry: { key: string | number }) => this.limiter.delete(entry.key)));
    await super.close();
  }
}

export class FlexibleRedisStore extends RedisRateLimitStore {
  private readonly limiter: RateLimiterRedis;
  private readonly memory: FlexibleMemoryStore;

  constructor(opts: RedisRateLimitStoreOptions) {
    super(opts);
    // keyPrefix 'rl' → keys rl:<bucket>, as before (but a string counter, not a hash).
    this.limiter = new RateLimiterRedis({ storeClient: this.client, keyPrefix: 'rl', points: UNLIMITED, duration: 1 });
    this.memory = new FlexibleMemoryStore(opts.sweepIntervalMs === undefined ? {} : { sweepIntervalMs: opts.sweepIntervalMs });
  }

  override async hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    assertLimitArgs(limit, windowMs);
    return this.decide(
      async () => {
        const res = await this.limiter.penalty(bucket, 1, { customDuration: windowMs / 1000 });
        return decision(res.consumedPoints, limit, Date.now() + res.msBeforeNext);
      },
      () => this.memory.hit(bucket, limit, windowMs),
    );
  }

  override async peek(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    assertLimitArgs(limit, windowMs);
    return this.decide(
      async () => {
        const res = await this.limiter.get(bucket);
        const now = Date.now();
        if (!res || res.msBeforeNext <= 0) return peekDecision(0, limit, now + windowMs);
        return peekDecision(res.consumedPoints, limit, now + res.msBeforeNext);
      },
      () => this.memory.peek(bucket, limit, windowMs),
    );
  }

  override async close(): Promise<void> {
    await this.memory.close();
    await super.close();
  }
}
