import type { Caller, KeyCaller, Plan } from '../context/actor.js';
import { LIMITS } from '../config/limits.js';
import { anonymousBucket } from '../shared/client-ip.js';
import { PLAN_LIMITS } from './plans.js';
import type { RateLimitDecision } from './store.js';

/** Which bucket a request is charged to, and that bucket's limit (docs/api.md, Rate limits). */
export interface RateLimitPolicy {
  /** Name used in the RateLimit-Policy header. */
  name: string;
  bucket: string;
  limit: number;
  windowMs: number;
}

export interface PolicyConfig {
  /** Requests per window for callers without a key (ANON_RATE_LIMIT; the window is LIMITS.requests.ANONYMOUS's). */
  anonymousLimit: number;
  /** Requests per window of one visitor with a publishable key (PUBLISHABLE_VISITOR_LIMIT; default and window: LIMITS.publishable.perVisitor). */
  publishableVisitorLimit?: number;
}

/** The name of a publishable key's per-visitor bucket in RateLimit-Policy. */
export const VISITOR_POLICY = 'publishable-visitor';

/**
 * A publishable key's bucket for one visitor (the client's address, an IPv6 client's /64), charged
 * besides the key's own: one visitor cannot spend the whole storefront's plan.
 */
export function visitorRateLimitPolicy(caller: KeyCaller, config: PolicyConfig): RateLimitPolicy {
  const row = LIMITS.publishable.perVisitor;
  return { name: VISITOR_POLICY, bucket: `pkv:${caller.keyId}:${anonymousBucket(caller.ip)}`, limit: config.publishableVisitorLimit ?? row.max, windowMs: row.windowMs };
}

/** The name of the bucket that only failed credentials spend, in RateLimit-Policy. */
export const INVALID_KEYS_POLICY = 'invalid-keys';

/** A client's bucket of requests with failed credentials (LIMITS.invalidKeys): apart from its anonymous one. */
export function invalidKeyRateLimitPolicy(ip: string): RateLimitPolicy {
  const row = LIMITS.invalidKeys.perClient;
  return { name: INVALID_KEYS_POLICY, bucket: `badkey:${anonymousBucket(ip)}`, limit: row.max, windowMs: row.windowMs };
}

export { anonymousBucket };

/** No key, or an invalid one: the client IP's anonymous bucket. A valid key: that key's own bucket. */
export function rateLimitPolicy(caller: Caller, config: PolicyConfig): RateLimitPolicy {
  if (caller.kind === 'anonymous') {
    return { name: 'anonymous', bucket: anonymousBucket(caller.ip), limit: config.anonymousLimit, windowMs: LIMITS.requests.ANONYMOUS.windowMs };
  }
  return keyRateLimitPolicy({ id: caller.keyId, plan: caller.plan, rateLimit: caller.rateLimit, rateWindowSeconds: caller.rateWindowSeconds });
}

/** A caller's GraphQL cost budget: the same bucket key as its request limit, sized by its plan. */
export interface CostBudgetPolicy {
  /** Name used in the RateLimit-Policy header of a refusal: `cost-<plan>`. */
  name: string;
  bucket: string;
  limit: number;
  restoreRate: number;
}

export function costBudgetPolicy(caller: Caller, maxCost: number): CostBudgetPolicy {
  if (caller.kind === 'anonymous') {
    const budget = LIMITS.costBudgets.ANONYMOUS;
    return { name: 'cost-anonymous', bucket: anonymousBucket(caller.ip), limit: budget.burst * maxCost, restoreRate: budget.restoreRate };
  }
  const request = keyRateLimitPolicy({ id: caller.keyId, plan: caller.plan, rateLimit: caller.rateLimit, rateWindowSeconds: caller.rateWindowSeconds });
  const budget = LIMITS.costBudgets[caller.plan];
  // An Enterprise key's own request limit sets its budget too: Pro's times how many more
  // requests per second the key may send than a Pro key (never less than Pro's).
  const pro = PLAN_LIMITS.PRO;
  const scale = caller.plan === 'ENTERPRISE' ? Math.max(1, request.limit / request.windowMs / (pro.limit / (pro.windowSeconds * 1000))) : 1;
  return {
    name: `cost-${request.name}`,
    bucket: request.bucket,
    limit: Math.round(budget.burst * maxCost * scale),
    restoreRate: Math.round(budget.restoreRate * scale),
  };
}

/** What an API key's own rules (its row) make of its bucket: the one the gate charges for it. */
export interface KeyLimits {
  id: string;
  plan: Plan;
  /** Enterprise keys: the key's own limit and window; null means the plan's default. */
  rateLimit: number | null;
  rateWindowSeconds: number | null;
}

/** A key's bucket and limit, read by the gate (through rateLimitPolicy) and by whoever shows a key's usage. */
export function keyRateLimitPolicy(key: KeyLimits): RateLimitPolicy {
  const plan = PLAN_LIMITS[key.plan];
  return {
    name: key.plan.toLowerCase(),
    bucket: `key:${key.id}`,
    limit: key.rateLimit ?? plan.limit,
    windowMs: (key.rateWindowSeconds ?? plan.windowSeconds) * 1000,
  };
}

/** A window in words: "minute", "hour", "2 hours", "90 seconds". */
export function describeWindow(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  for (const [size, unit] of units) {
    if (ms % size === 0) return ms === size ? unit : `${ms / size} ${unit}s`;
  }
  return `${ms} ms`;
}

/**
 * The rate-limit headers of a decision: X-RateLimit-* (Reset in Unix ms) and the IETF draft's
 * RateLimit-Policy / RateLimit (draft-ietf-httpapi-ratelimit-headers, structured fields).
 */
export function rateLimitHeaders(
  { policy, decision }: { policy: Pick<RateLimitPolicy, 'name' | 'windowMs'> & Partial<RateLimitPolicy>; decision: RateLimitDecision },
  now = Date.now(),
): Record<string, string> {
  const resetSeconds = Math.max(0, Math.ceil((decision.resetAt - now) / 1000));
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetAt),
    'ratelimit-policy': `"${policy.name}";q=${decision.limit};w=${Math.round(policy.windowMs / 1000)}`,
    ratelimit: `"${policy.name}";r=${decision.remaining};t=${resetSeconds}`,
  };
}

/** Whole seconds (≥ 1) until `resetAt`: a refused caller's Retry-After. */
export const secondsUntil = (resetAt: number, now = Date.now()) => Math.max(1, Math.ceil((resetAt - now) / 1000));

/**
 * What a refused request is told: the rule it hit, in words, and for a caller without a key that
 * a key raises the limit and where keys come from.
 */
export function limitExceededMessage(policy: RateLimitPolicy, retryAfter: number): string {
  const rule = `at most ${policy.limit} requests per ${describeWindow(policy.windowMs)}`;
  if (policy.name === VISITOR_POLICY) {
    return `Rate limit exceeded: ${rule} per visitor (client address) for this publishable key; retry after ${retryAfter} s. The key's plan total is shared by every visitor and this one has used its part`;
  }
  if (policy.name === INVALID_KEYS_POLICY) {
    return `Too many requests with an invalid API key from your address: ${rule}; retry after ${retryAfter} s. Requests without a key, and with a valid key, are not affected by this limit`;
  }
  if (policy.name !== 'anonymous') return `Rate limit exceeded: ${rule} for this API key (${policy.name} plan); retry after ${retryAfter} s`;
  const basic = PLAN_LIMITS.BASIC;
  return (
    `Rate limit exceeded: ${rule} per client address without an API key; retry after ${retryAfter} s. ` +
    `An API key raises the limit (${basic.limit} requests per ${describeWindow(basic.windowSeconds * 1000)} and more): ` +
    'register and create one in the developer dashboard at /dashboard'
  );
}
