import type { BudgetDecision, RateLimitDecision, RateLimitStore } from './store.js';

const DEFAULT_SWEEP_INTERVAL_MS = 60_000;

interface Bucket {
  count: number;
  resetAt: number;
}

interface Budget {
  /** Points held at `at` (fractional: refill is continuous). */
  tokens: number;
  at: number;
  /** When the bucket is full again, and so no different from a bucket never seen: swept then. */
  fullAt: number;
}

interface CallLog {
  /** Newest first, at most the field's `max` entries. */
  calls: number[];
  expiresAt: number;
}

/** Throws for a limit or window no store can honour: a programming or configuration error. */
export function assertLimitArgs(limit: number, windowMs: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`Rate limit must be a positive integer, got ${limit}`);
  if (!Number.isSafeInteger(windowMs) || windowMs < 1) {
    throw new RangeError(`Rate-limit window must be a positive integer number of ms, got ${windowMs}`);
  }
}

export function decision(count: number, limit: number, resetAt: number): RateLimitDecision {
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetAt };
}

/** Throws for a charge or budget no store can honour: a programming or configuration error. */
export function assertBudgetArgs(amount: number, capacity: number, restorePerSecond: number): void {
  if (!Number.isFinite(amount)) throw new RangeError(`A cost must be a finite number, got ${amount}`);
  if (!Number.isFinite(capacity) || capacity < 1) throw new RangeError(`A cost budget must be at least 1, got ${capacity}`);
  if (!Number.isFinite(restorePerSecond) || restorePerSecond <= 0) throw new RangeError(`A restore rate must be positive, got ${restorePerSecond}`);
}

/**
 * One token-bucket charge: `tokens` held at `at`, refilled up to `capacity` by `now`, less `amount`
 * when it holds that much. A negative amount gives points back (a refund), never past `capacity`.
 * The one rule of every store (the Redis script does the same sums).
 */
export function chargeBudget(tokens: number, at: number, now: number, amount: number, capacity: number, rate: number): { tokens: number; decision: BudgetDecision } {
  const held = Math.min(capacity, tokens + (Math.max(0, now - at) * rate) / 1000);
  const allowed = amount <= held;
  const left = allowed ? Math.min(capacity, held - amount) : held;
  return {
    tokens: left,
    decision: {
      allowed,
      limit: capacity,
      remaining: Math.floor(left),
      restoreRate: rate,
      availableAt: allowed ? now : now + Math.ceil(((amount - held) * 1000) / rate),
    },
  };
}

/** A bucket read without counting: what is left for the next hit. */
export function peekDecision(count: number, limit: number, resetAt: number): RateLimitDecision {
  return { allowed: count < limit, limit, remaining: Math.max(0, limit - count), resetAt };
}

export interface MemoryRateLimitStoreOptions {
  /** How often expired buckets and call logs are swept (default 60 s). */
  sweepIntervalMs?: number;
  /**
   * The clock every window is computed from, in Unix ms (default Date.now): when a bucket's
   * window starts and ends, and what the sweep drops. Tests pass a manual one.
   */
  now?: () => number;
}

/**
 * Buckets in this process's memory: exact for one instance, and the fallback of the Redis store.
 *
 * Atomicity comes from JavaScript itself: `hit` reads, counts and writes a bucket with no `await`
 * in between, so concurrent requests cannot interleave inside that critical section.
 *
 * Hand-written rather than rate-limiter-flexible's RateLimiterMemory, which takes no clock (it
 * reads Date.now()), reports no fixed reset time and was 2.2–2.8× slower per hit when measured
 * (BENCHMARKS.md, "Rate-limit stores").
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly kind = 'memory' as const;
  readonly fallbackHits = 0;
  readonly redisErrors = 0;
  readonly usingFallback = false;

  private readonly buckets = new Map<string, Bucket>();
  private readonly logs = new Map<string, CallLog>();
  private readonly budgets = new Map<string, Budget>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(opts: MemoryRateLimitStoreOptions = {}) {
    this.now = opts.now ?? Date.now;
    // Without a sweep every client IP ever seen would stay in memory. unref: a pending sweep must
    // not keep a process (or a test worker) alive.
    this.sweeper = setInterval(() => this.sweep(), opts.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  /** Synchronous core of `hit`, shared with the Redis store's fallback. */
  hitSync(bucket: string, limit: number, windowMs: number, now = this.now()): RateLimitDecision {
    assertLimitArgs(limit, windowMs);
    let entry = this.buckets.get(bucket);
    if (!entry || entry.resetAt <= now) {
      entry = { count: 0, resetAt: now + windowMs };
      this.buckets.set(bucket, entry);
    }
    entry.count += 1;
    return decision(entry.count, limit, entry.resetAt);
  }

  // async: a bad argument rejects rather than throws, as the interface promises.
  async hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    return this.hitSync(bucket, limit, windowMs);
  }

  /** A bucket as it stands, not counting this look (a window not yet started starts now). */
  peekSync(bucket: string, limit: number, windowMs: number, now = this.now()): RateLimitDecision {
    assertLimitArgs(limit, windowMs);
    const entry = this.buckets.get(bucket);
    if (!entry || entry.resetAt <= now) return peekDecision(0, limit, now + windowMs);
    return peekDecision(entry.count, limit, entry.resetAt);
  }

  async peek(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    return this.peekSync(bucket, limit, windowMs);
  }

  takeSync(bucket: string, amount: number, capacity: number, restorePerSecond: number, now = this.now()): BudgetDecision {
    assertBudgetArgs(amount, capacity, restorePerSecond);
    const entry = this.budgets.get(bucket);
    const { tokens, decision: taken } = chargeBudget(entry?.tokens ?? capacity, entry?.at ?? now, now, amount, capacity, restorePerSecond);
    this.budgets.set(bucket, { tokens, at: now, fullAt: now + ((capacity - tokens) * 1000) / restorePerSecond });
    return taken;
  }

  async take(bucket: string, amount: number, capacity: number, restorePerSecond: number): Promise<BudgetDecision> {
    return this.takeSync(bucket, amount, capacity, restorePerSecond);
  }

  logCallSync(key: string, now: number, max: number, windowMs: number): number[] {
    assertLimitArgs(max, windowMs);
    const entry = this.logs.get(key);
    const earlier = entry ? entry.calls.slice(0, max).filter((t) => t + windowMs > now) : [];
    // Only the newest `max` calls can ever decide: if they are all within the window the limit is
    // reached, whatever older calls there were. So a hammering client costs O(max) memory.
    this.logs.set(key, { calls: [now, ...earlier].slice(0, max), expiresAt: now + windowMs });
    return earlier;
  }

  async logCall(key: string, now: number, max: number, windowMs: number): Promise<number[]> {
    return this.logCallSync(key, now, max, windowMs);
  }

  waitUntilReady(): Promise<boolean> {
    return Promise.resolve(true);
  }

  /** Drops every bucket and call log whose window is over; returns how many were dropped. */
  sweep(now = this.now()): number {
    let dropped = 0;
    for (const [key, entry] of this.buckets) {
      if (entry.resetAt <= now) {
        this.buckets.delete(key);
        dropped++;
      }
    }
    for (const [key, entry] of this.budgets) {
      if (entry.fullAt <= now) {
        this.budgets.delete(key);
        dropped++;
      }
    }
    for (const [key, entry] of this.logs) {
      if (entry.expiresAt <= now) {
        this.logs.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  /** Buckets and call logs currently held (for tests and metrics). */
  get size(): number {
    return this.buckets.size + this.logs.size + this.budgets.size;
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    this.buckets.clear();
    this.logs.clear();
    this.budgets.clear();
    return Promise.resolve();
  }
}
