import { MemoryRateLimitStore } from './memory-store.js';
import { RedisRateLimitStore } from './redis-store.js';
import type { RateLimitStore, RateLimitStoreEvent } from './store.js';

export interface RateLimitStoreOptions {
  /** Redis to keep the state in (`redis://…`, `rediss://…`); unset: process memory. */
  redisUrl?: string;
  onEvent?: (e: RateLimitStoreEvent) => void;
  /** How often expired memory buckets are swept (default 60 s). */
  sweepIntervalMs?: number;
  /**
   * The clock of the memory store's windows, in Unix ms (default Date.now); tests pass a manual
   * one. The Redis store does not take it: its windows end when Redis expires their keys
   * (PEXPIRE, Redis' own clock), which no clock of this process can move.
   */
  now?: () => number;
}

/** The memory store, or the Redis store (with its memory fallback) when `redisUrl` is set. */
export function createRateLimitStore(opts: RateLimitStoreOptions): RateLimitStore {
  const sweep = opts.sweepIntervalMs === undefined ? {} : { sweepIntervalMs: opts.sweepIntervalMs };
  if (opts.redisUrl) {
    return new RedisRateLimitStore({
      redisUrl: opts.redisUrl,
      ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
      ...sweep,
    });
  }
  return new MemoryRateLimitStore({ ...sweep, now: opts.now });
}

