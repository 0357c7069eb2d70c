import { createHash } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { MemoryRateLimitStore, assertBudgetArgs, assertLimitArgs, chargeBudget, decision, peekDecision } from './memory-store.js';
import type { BudgetDecision, RateLimitDecision, RateLimitStore, RateLimitStoreEvent } from './store.js';

/** Every key this store writes starts with this, so the limiter can share a Redis with others. */
export const KEY_PREFIX = 'rl:';
/** Field call logs live under their own prefix: a bucket name can never collide with them. */
export const FIELD_KEY_PREFIX = 'rl:field:';
/** Cost budgets (token buckets) likewise. */
export const BUDGET_KEY_PREFIX = 'rl:cost:';

// One fixed window per bucket, counted and timed in one atomic step. The key is a hash:
//   n  the hits counted in this window
//   r  the window's reset time (Unix ms), fixed at its first hit so that every hit in the window,
//      on every instance, reports the same reset (now + PTTL would drift by a millisecond or two)
// PEXPIRE is set on the first hit, and again on a key found without a TTL (left by a crash of
// an older version or an operator's PERSIST), which would otherwise limit its bucket forever.
const HIT_LUA = `
local count = redis.call('HINCRBY', KEYS[1], 'n', 1)
local ttl = redis.call('PTTL', KEYS[1])
local reset = redis.call('HGET', KEYS[1], 'r')
if count == 1 or ttl < 0 or not reset then
  reset = ARGV[2]
  redis.call('HSET', KEYS[1], 'r', reset)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl, reset}
`;

// Sliding log of one field's calls, newest first, trimmed to the newest `max` (only those can
// decide) and expiring one window after the newest call. Returns the earlier calls still inside
// the window: reading and recording in one step is what keeps concurrent calls exact.
const LOG_LUA = `
local now = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local stored = redis.call('LRANGE', KEYS[1], 0, max - 1)
local earlier = {}
for _, v in ipairs(stored) do
  if tonumber(v) + window > now then earlier[#earlier + 1] = v end
end
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, max - 1)
redis.call('PEXPIRE', KEYS[1], window)
return earlier
`;

// A cost budget (token bucket): t the points held at a (Unix ms of the last charge). Refilled,
// charged and written back in one atomic step, with chargeBudget's sums (memory-store.ts); the key
// expires when the bucket would be full again, being then no different from one never charged.
// Returns the points held before the charge (as text: Lua would truncate a number reply).
const TAKE_LUA = `
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local amount = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 't', 'a')
local held = capacity
if state[1] and state[2] then
  held = math.min(capacity, tonumber(state[1]) + math.max(0, now - tonumber(state[2])) * rate / 1000)
end
local left = held
if amount <= held then left = math.min(capacity, held - amount) end
redis.call('HSET', KEYS[1], 't', string.format('%.17g', left), 'a', ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - left) * 1000 / rate) + 1000)
return string.format('%.17g', held)
`;

interface Script {
  lua: string;
  sha: string;
}

const script = (lua: string): Script => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });
const HIT_SCRIPT = script(HIT_LUA);
const LOG_SCRIPT = script(LOG_LUA);
const TAKE_SCRIPT = script(TAKE_LUA);

/**
 * How long a command may go unanswered before Redis counts as hung and this instance counts in
 * memory. A slow answer is not an outage: on a busy machine an answer can sit unread in the
 * socket while the event loop works, so the bound is generous (a request still ends well within
 * 5 s) and is only declared missed after the loop has read its sockets (see withDeadline).
 */
const DEFAULT_COMMAND_TIMEOUT_MS = 1_000;
/** Opening the connection happens beside the requests (they use memory meanwhile): no need to hurry it. */
const CONNECT_TIMEOUT_MS = 2_000;
/** While Redis is failing but connected (e.g. hung), at most one request per interval tries it. */
const PROBE_INTERVAL_MS = 500;
/** `error` events are reported at most this often (a dead Redis fails every reconnect attempt). */
const ERROR_EVENT_INTERVAL_MS = 10_000;
export interface RedisRateLimitStoreOptions {
  redisUrl: string;
  onEvent?: (e: RateLimitStoreEvent) => void;
  sweepIntervalMs?: number;
  /** Command timeout, ms (default 1000). */
  timeoutMs?: number;
}

/** Exponential reconnect backoff from 100 ms to 2 s, with jitter so instances do not reconnect in step. */
export function reconnectDelay(attempt: number): number {
  return Math.min(2000, 100 * 2 ** Math.min(Math.max(attempt - 1, 0), 5)) + Math.floor(Math.random() * 100);
}

/**
 * Buckets in Redis, shared exactly by every instance that uses the same Redis.
 *
 * Limits stop being shared only while Redis is unreachable: the connection is down (refused,
 * closed, reconnecting: every hit goes to memory at once, commands are never queued), or a
 * command got no answer for 1 s (then one hit per 500 ms tries Redis again while the rest go to
 * memory). Meanwhile an in-process memory store decides, so each instance limits on its own
 * until Redis answers again. An error reply about one key (e.g. WRONGTYPE) sends that one hit to
 * memory without declaring an outage. `onEvent` hears `fallback` once per outage and `recovered`
 * when Redis answers again.
 *
 * Hand-written rather than rate-limiter-flexible's RateLimiterRedis (as fast, measured), which
 * reports no fixed reset time, keeps windows in whole seconds (none at all under 1 s) and whose
 * insurance limiter and timeout wrapper give none of the outage handling above (BENCHMARKS.md,
 * "Rate-limit stores").
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly kind = 'redis' as const;
  fallbackHits = 0;
  redisErrors = 0;
  usingFallback = false;

  // protected, with decide: bench/ratelimit-flexible.ts counts through rate-limiter-flexible
  // inside this same outage handling, to measure it against the script below.
  protected readonly client: Redis;
  protected readonly fallback: MemoryRateLimitStore;
  private readonly onEvent: ((e: RateLimitStoreEvent) => void) | undefined;
  private nextProbeAt = 0;
  private lastErrorEventAt = 0;
  private suppressedErrors = 0;
  private closed = false;
  private readonly commandTimeoutMs: number;

  constructor(opts: RedisRateLimitStoreOptions) {
    this.commandTimeoutMs = opts.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.onEvent = opts.onEvent;
    this.fallback = new MemoryRateLimitStore(opts.sweepIntervalMs === undefined ? {} : { sweepIntervalMs: opts.sweepIntervalMs });
    const options: RedisOptions = {
      // Fail a command at once while disconnected instead of holding the request until reconnect.
      enableOfflineQueue: false,
      // A command lost with its connection is not resent: the fallback has decided that hit.
      maxRetriesPerRequest: 0,
      connectTimeout: CONNECT_TIMEOUT_MS,
      // No commandTimeout: ioredis measures it with a bare timer, which a busy event loop fires
      // late and before reading the answer already waiting; withDeadline does not.
      retryStrategy: reconnectDelay,
      connectionName: 'ratelimit',
    };
    this.client = new Redis(opts.redisUrl, options);
    // Without a listener ioredis prints every connection error to stderr itself.
    this.client.on('error', (err: Error) => this.reportError(`Redis connection error: ${err.message}`));
  }

  // hit, peek and logCall are async so that a bad argument rejects, as the interface promises.
  async hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    assertLimitArgs(limit, windowMs);
    return this.decide(
      async () => {
        const now = Date.now();
        const reply = await this.run(HIT_SCRIPT, KEY_PREFIX + bucket, [windowMs, now + windowMs]);
        const [count, , reset] = parseHitReply(reply);
        return decision(count, limit, reset);
      },
      () => this.fallback.hitSync(bucket, limit, windowMs),
    );
  }

  async peek(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    assertLimitArgs(limit, windowMs);
    return this.decide(
      async () => {
        const now = Date.now();
        const [count, reset] = await this.client.hmget(KEY_PREFIX + bucket, 'n', 'r');
        return peekDecision(count === null ? 0 : toInt(count), limit, reset === null ? now + windowMs : toInt(reset));
      },
      () => this.fallback.peekSync(bucket, limit, windowMs),
    );
  }

  async logCall(key: string, now: number, max: number, windowMs: number): Promise<number[]> {
    assertLimitArgs(max, windowMs);
    return this.decide(
      async () => parseLogReply(await this.run(LOG_SCRIPT, FIELD_KEY_PREFIX + key, [now, max, windowMs])),
      () => this.fallback.logCallSync(key, now, max, windowMs),
    );
  }

  async take(bucket: string, amount: number, capacity: number, restorePerSecond: number): Promise<BudgetDecision> {
    assertBudgetArgs(amount, capacity, restorePerSecond);
    return this.decide(
      async () => {
        const now = Date.now();
        const held = parseBudgetReply(await this.run(TAKE_SCRIPT, BUDGET_KEY_PREFIX + bucket, [capacity, restorePerSecond, now, amount]));
        // The script refilled already: charging what it held from `now` repeats its sums.
        return chargeBudget(held, now, now, amount, capacity, restorePerSecond).decision;
      },
      () => this.fallback.takeSync(bucket, amount, capacity, restorePerSecond),
    );
  }

  waitUntilReady(timeoutMs = 1000): Promise<boolean> {
    if (this.client.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ready: boolean) => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        resolve(ready);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.client.once('ready', onReady);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.fallback.close();
    if (this.client.status === 'end') return;
    if (this.client.status === 'reconnecting') {
      // Between attempts there is no socket: disconnect only cancels the next attempt, and no
      // 'end' event follows.
      this.client.disconnect();
      return;
    }
    const ended = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 1000);
      this.client.once('end', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    // disconnect, not quit: quit would wait for a reply a dead Redis never sends.
    this.client.disconnect();
    await ended;
  }

  /** Asks Redis when it can; otherwise (or when that fails) decides in memory. Never rejects. */
  protected async decide<T>(viaRedis: () => Promise<T>, viaMemory: () => T | Promise<T>): Promise<T> {
    const startedInOutage = this.usingFallback;
    const now = Date.now();
    // Not connected: no point trying (and no offline queue to wait in). During an outage with
    // the connection up (a hung Redis), one probe per interval tries Redis while the rest go to
    // memory at once rather than each waiting out the command timeout.
    if (this.closed) {
      // A request still in flight at shutdown: decide it, but it is no outage to report.
      this.fallbackHits++;
      return viaMemory();
    }
    if (this.client.status !== 'ready' || (startedInOutage && now < this.nextProbeAt)) {
      this.enterFallback(`Redis connection ${this.client.status}`);
      this.fallbackHits++;
      return viaMemory();
    }
    if (startedInOutage) this.nextProbeAt = now + PROBE_INTERVAL_MS;
    try {
      const result = await withDeadline(viaRedis(), this.commandTimeoutMs);
      // Only a call started during the outage proves recovery; one sent just before the outage
      // that happened to succeed does not.
      if (startedInOutage && this.usingFallback) {
        this.usingFallback = false;
        this.emit({ type: 'recovered', message: 'Redis answers again; rate limits are shared across instances again' });
      }
      return result;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.redisErrors++;
      this.reportError(`Redis rate-limit call failed: ${message}`);
      // Redis answered with an error (e.g. WRONGTYPE on a key someone else wrote): Redis is fine,
      // only this key is not; decide this one hit in memory without declaring an outage.
      if (!(err instanceof Error && err.name === 'ReplyError')) this.enterFallback(message);
      this.fallbackHits++;
      return viaMemory();
    }
  }

  private enterFallback(reason: string): void {
    if (this.usingFallback) return;
    this.usingFallback = true;
    this.nextProbeAt = Date.now() + PROBE_INTERVAL_MS;
    this.emit({ type: 'fallback', message: `Redis unavailable (${reason}); rate limits are counted in this process until it is back` });
  }

  private reportError(message: string): void {
    if (this.closed) return;
    const now = Date.now();
    if (now - this.lastErrorEventAt < ERROR_EVENT_INTERVAL_MS) {
      this.suppressedErrors++;
      return;
    }
    const suppressed = this.suppressedErrors ? ` (${this.suppressedErrors} similar errors suppressed)` : '';
    this.lastErrorEventAt = now;
    this.suppressedErrors = 0;
    this.emit({ type: 'error', message: message + suppressed });
  }

  private emit(event: RateLimitStoreEvent): void {
    try {
      this.onEvent?.(event);
    } catch {
      // A failing listener (a logger, a metric) must not turn a decided hit into a 500.
    }
  }

  /** EVALSHA, and EVAL when this Redis has not seen the script yet (or lost it on restart). */
  private async run(s: Script, key: string, args: number[]): Promise<unknown> {
    const argv = args.map(String);
    try {
      return await this.client.evalsha(s.sha, 1, key, ...argv);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('NOSCRIPT')) return this.client.eval(s.lua, 1, key, ...argv);
      throw err;
    }
  }
}

/**
 * `promise`, or a rejection once `ms` have passed without an answer. A timer on a busy event loop
 * fires late, maybe with the answer already in the socket: sockets are read in the loop's poll
 * phase, after timers and before setImmediate callbacks, so the deadline is only declared missed
 * from a setImmediate, once the loop has read what arrived.
 */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(new Error(`Redis did not answer within ${ms} ms`));
      });
    }, ms);
    promise.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function toInt(value: unknown): number {
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new Error(`Unexpected Redis reply element: ${String(value)}`);
  return n;
}

/** [count, ttl ms, reset Unix ms] from HIT_LUA; throws (→ fallback) on anything else. */
function parseHitReply(reply: unknown): [number, number, number] {
  if (!Array.isArray(reply) || reply.length !== 3) throw new Error('Unexpected Redis reply to the rate-limit script');
  return [toInt(reply[0]), toInt(reply[1]), toInt(reply[2])];
}

function parseBudgetReply(reply: unknown): number {
  const n = typeof reply === 'string' ? Number(reply) : NaN;
  if (!Number.isFinite(n)) throw new Error('Unexpected Redis reply to the cost-budget script');
  return n;
}

function parseLogReply(reply: unknown): number[] {
  if (!Array.isArray(reply)) throw new Error('Unexpected Redis reply to the field-limit script');
  return reply.map(toInt);
}
