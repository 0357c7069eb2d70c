/** The outcome of one counted hit. */
export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** max(0, limit − hits counted in this window, this one included). */
  remaining: number;
  /** Unix ms when the window resets; the same for every hit within one window. */
  resetAt: number;
}

/** The outcome of one charge against a cost budget (a token bucket: full at `limit`, refilled at `restoreRate` per second). */
export interface BudgetDecision {
  allowed: boolean;
  /** The bucket's size: what a full budget holds. */
  limit: number;
  /** Points left after this charge (or, when refused, before it: a refused charge takes nothing), rounded down. */
  remaining: number;
  /** Points restored per second. */
  restoreRate: number;
  /** Unix ms when the charge asked for is (or was) available: now when allowed. */
  availableAt: number;
}

/** Something worth logging about the backend: Redis lost (`fallback`), back (`recovered`), or failing. */
export interface RateLimitStoreEvent {
  type: 'fallback' | 'recovered' | 'error';
  message: string;
}

/**
 * Where rate-limit state lives: process memory, or Redis shared by every instance.
 * Both implementations count atomically, so N concurrent hits against a bucket with R left
 * allow exactly R.
 */
export interface RateLimitStore {
  readonly kind: 'memory' | 'redis';
  /**
   * Counts one hit against `bucket` (a fixed window that starts at the bucket's first hit) and
   * decides. Denied hits count too, so a client that keeps hammering stays limited.
   * Never rejects: a Redis store that cannot reach Redis decides in process memory instead.
   */
  hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision>;
  /**
   * Reads a bucket without counting (for answers that are not charged, such as CORS preflights):
   * `remaining` is what is left for the next hit. Never rejects, like `hit`.
   */
  peek(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision>;
  /**
   * Sliding log for per-field limits (src/ratelimit/field-limits.ts): atomically records a call
   * at `now` under `key`, keeping only the newest `max` calls, and returns the calls recorded
   * before this one that are still within `windowMs` of `now` (newest first, at most `max`).
   * "Record and read in one step" is what makes concurrent calls exact.
   */
  logCall(key: string, now: number, max: number, windowMs: number): Promise<number[]>;
  /**
   * Charges `amount` points to the token bucket `bucket` (created full at `capacity`, refilled at
   * `restorePerSecond`) when it holds that many, atomically like `hit`; a refused charge takes
   * nothing. A negative amount is a refund: the points go back, never past `capacity`. Never
   * rejects: the Redis store decides in memory when Redis fails.
   */
  take(bucket: string, amount: number, capacity: number, restorePerSecond: number): Promise<BudgetDecision>;
  /**
   * Resolves true once the backend can answer (at once for memory), false after `timeoutMs`.
   * The server may await it at start so its first requests are not decided by the fallback.
   */
  waitUntilReady(timeoutMs?: number): Promise<boolean>;
  /** Hits and field calls decided by the in-process fallback because Redis failed (0 for memory). */
  readonly fallbackHits: number;
  /** Redis calls that failed (timeouts, connection loss, replies of the wrong shape). */
  readonly redisErrors: number;
  /** True while Redis is unreachable and the fallback decides. */
  readonly usingFallback: boolean;
  close(): Promise<void>;
}
