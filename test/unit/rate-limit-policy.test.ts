import { describe, expect, it } from 'vitest';
import type { Caller, KeyCaller } from '../../src/context/actor.js';
import { retryAfterSeconds } from '../../src/ratelimit/field-limits.js';
import { assertLimitArgs, chargeBudget } from '../../src/ratelimit/memory-store.js';
import { LIMITS } from '../../src/config/limits.js';
import { PLAN_LIMITS } from '../../src/ratelimit/plans.js';
import {
  anonymousBucket,
  costBudgetPolicy,
  describeWindow,
  keyRateLimitPolicy,
  limitExceededMessage,
  rateLimitHeaders,
  rateLimitPolicy,
  secondsUntil,
} from '../../src/ratelimit/policy.js';

// The rate-limit rules (src/ratelimit/plans.ts, policy.ts): which bucket a request is charged to,
// its limit and window, what the headers and the refusal say, and the cost budgets' token bucket.

const anonymous = (ip: string): Caller => ({ kind: 'anonymous', ip });
const key = (over: Partial<KeyCaller> = {}): KeyCaller => ({ kind: 'key', ip: '', keyId: 'k1', accountId: 'a', plan: 'BASIC', scopes: [], rateLimit: null, rateWindowSeconds: null, ...over });
const CONFIG = { anonymousLimit: 60 };

describe('plans', () => {
  it('allow Basic 1000 and Pro 5000 requests an hour; Enterprise falls back to Pro’s, never to unlimited', () => {
    expect(PLAN_LIMITS).toEqual({
      BASIC: { limit: 1000, windowSeconds: 3600 },
      PRO: { limit: 5000, windowSeconds: 3600 },
      ENTERPRISE: { limit: 5000, windowSeconds: 3600 },
    });
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(PLAN_LIMITS)).toBe(true);
    expect(Object.isFrozen(PLAN_LIMITS.BASIC)).toBe(true);
    expect(Object.isFrozen(LIMITS.costBudgets.PRO)).toBe(true);
  });

  it('give a bigger plan a bigger cost budget, and a caller without a key the smallest', () => {
    const size = (plan: keyof typeof LIMITS.costBudgets) => LIMITS.costBudgets[plan].burst * LIMITS.costBudgets[plan].restoreRate;
    expect(size('ANONYMOUS')).toBeLessThan(size('BASIC'));
    expect(size('BASIC')).toBeLessThan(size('PRO'));
    expect(LIMITS.costBudgets.ENTERPRISE).toEqual(LIMITS.costBudgets.PRO);
  });
});

describe('which bucket pays', () => {
  it('charges a client without a key to its address', () => {
    expect(rateLimitPolicy(anonymous('203.0.113.5'), CONFIG)).toEqual({ name: 'anonymous', bucket: 'ip:203.0.113.5', limit: 60, windowMs: 60_000 });
  });

  it('charges an IPv6 client to its whole /64, which it can pick addresses from at will', () => {
    expect(anonymousBucket('2001:db8:1:2:aaaa::1')).toBe('ip6:2001:db8:1:2::/64');
    expect(anonymousBucket('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(anonymousBucket('2001:db8:1:2::9'));
    expect(anonymousBucket('2001:db8:1:3::1')).not.toBe(anonymousBucket('2001:db8:1:2::1'));
  });

  it('keeps IPv4 addresses, and anything that is no address, as they are', () => {
    expect(anonymousBucket('198.51.100.7')).toBe('ip:198.51.100.7');
    expect(anonymousBucket('unknown')).toBe('ip:unknown');
  });

  it('charges a key to its own bucket, at its plan’s limit', () => {
    expect(rateLimitPolicy(key({ plan: 'PRO' }), CONFIG)).toEqual({ name: 'pro', bucket: 'key:k1', limit: 5000, windowMs: 3_600_000 });
  });

  it('gives an enterprise key its own limit and window, and the plan’s where it has none', () => {
    expect(keyRateLimitPolicy({ id: 'e', plan: 'ENTERPRISE', rateLimit: 100, rateWindowSeconds: 10 })).toEqual({ name: 'enterprise', bucket: 'key:e', limit: 100, windowMs: 10_000 });
    expect(keyRateLimitPolicy({ id: 'e', plan: 'ENTERPRISE', rateLimit: null, rateWindowSeconds: null })).toMatchObject({ limit: 5000, windowMs: 3_600_000 });
  });
});

describe('what a client is told', () => {
  it('names a window in words', () => {
    expect(describeWindow(60_000)).toBe('minute');
    expect(describeWindow(3_600_000)).toBe('hour');
    expect(describeWindow(7_200_000)).toBe('2 hours');
    expect(describeWindow(90_000)).toBe('90 seconds');
    expect(describeWindow(86_400_000)).toBe('day');
    expect(describeWindow(1500)).toBe('1500 ms');
  });

  it('sends X-RateLimit-* and the IETF draft’s RateLimit-Policy and RateLimit headers', () => {
    const headers = rateLimitHeaders({ policy: { name: 'pro', windowMs: 3_600_000 }, decision: { allowed: true, limit: 5000, remaining: 4999, resetAt: 1_000_000 } }, 1_000_000 - 1_500);
    expect(headers).toEqual({
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': '4999',
      'x-ratelimit-reset': '1000000',
      'ratelimit-policy': '"pro";q=5000;w=3600',
      ratelimit: '"pro";r=4999;t=2',
    });
  });

  it('never says a window resets in less than 0 seconds', () => {
    const headers = rateLimitHeaders({ policy: { name: 'basic', windowMs: 60_000 }, decision: { allowed: false, limit: 1, remaining: 0, resetAt: 1000 } }, 5000);
    expect(headers.ratelimit).toBe('"basic";r=0;t=0');
  });

  it('tells a refused caller to retry after at least a second, rounding up', () => {
    expect(secondsUntil(10_000, 9_999)).toBe(1);
    expect(secondsUntil(10_000, 10_000)).toBe(1);
    expect(secondsUntil(10_000, 20_000)).toBe(1);
    expect(secondsUntil(10_000, 7_001)).toBe(3);
  });

  it('tells a caller without a key that a key raises the limit, and where to get one', () => {
    const message = limitExceededMessage(rateLimitPolicy(anonymous('192.0.2.1'), CONFIG), 12);
    expect(message).toBe(
      'Rate limit exceeded: at most 60 requests per minute per client address without an API key; retry after 12 s. ' +
        'An API key raises the limit (1000 requests per hour and more): register and create one in the developer dashboard at /dashboard',
    );
  });

  it('tells a key which plan’s limit it hit', () => {
    expect(limitExceededMessage(keyRateLimitPolicy({ id: 'k', plan: 'BASIC', rateLimit: null, rateWindowSeconds: null }), 5)).toBe(
      'Rate limit exceeded: at most 1000 requests per hour for this API key (basic plan); retry after 5 s',
    );
  });
});

describe('cost budgets', () => {
  it('hold burst times the largest operation’s cost, in the bucket of the caller’s request limit', () => {
    expect(costBudgetPolicy(anonymous('192.0.2.1'), 10_000)).toEqual({ name: 'cost-anonymous', bucket: 'ip:192.0.2.1', limit: 10_000, restoreRate: 50 });
    expect(costBudgetPolicy(key({ plan: 'PRO' }), 10_000)).toEqual({ name: 'cost-pro', bucket: 'key:k1', limit: 50_000, restoreRate: 500 });
  });

  it('scale an enterprise key’s budget by how much faster than Pro it may send, never below Pro’s', () => {
    // Ten times Pro's rate (50,000 an hour): ten times its budget.
    expect(costBudgetPolicy(key({ plan: 'ENTERPRISE', rateLimit: 50_000, rateWindowSeconds: 3600 }), 10_000)).toMatchObject({ limit: 500_000, restoreRate: 5000 });
    expect(costBudgetPolicy(key({ plan: 'ENTERPRISE', rateLimit: 10, rateWindowSeconds: 3600 }), 10_000)).toMatchObject({ limit: 50_000, restoreRate: 500 });
  });

  it('charge a full bucket, and refuse a charge it cannot cover without taking anything', () => {
    const first = chargeBudget(100, 0, 0, 60, 100, 10);
    expect(first.decision).toEqual({ allowed: true, limit: 100, remaining: 40, restoreRate: 10, availableAt: 0 });
    const refused = chargeBudget(first.tokens, 0, 0, 60, 100, 10);
    expect(refused.tokens).toBe(40);
    expect(refused.decision).toMatchObject({ allowed: false, remaining: 40, availableAt: 2000 });
  });

  it('refill continuously at the restore rate, never past the bucket’s size', () => {
    expect(chargeBudget(0, 0, 1500, 0, 100, 10).tokens).toBe(15);
    expect(chargeBudget(0, 0, 3_600_000, 0, 100, 10).tokens).toBe(100);
    // A clock that went back refills nothing.
    expect(chargeBudget(20, 5000, 1000, 0, 100, 10).tokens).toBe(20);
  });

  it('report what is left rounded down', () => {
    expect(chargeBudget(10, 0, 150, 0, 100, 1).decision.remaining).toBe(10);
    expect(chargeBudget(10.9, 0, 0, 0, 100, 1).decision.remaining).toBe(10);
  });
});

describe('limits no store can honour', () => {
  it.each([
    [0, 1000],
    [1.5, 1000],
    [10, 0],
    [10, Number.POSITIVE_INFINITY],
  ])('refuses a limit of %s per %s ms', (limit, windowMs) => {
    expect(() => assertLimitArgs(limit, windowMs)).toThrow(RangeError);
  });
});

describe('per-field limits', () => {
  it('lets the next call through once the oldest of the last max calls leaves the window', () => {
    // 3 calls a minute: calls at 0 s, 10 s and now (20 s); the one at 0 s leaves at 60 s.
    expect(retryAfterSeconds(20_000, [10_000, 0], 3, 60_000, 20_000)).toBe(40);
  });

  it('says at least a second even when the log is not full', () => {
    expect(retryAfterSeconds(20_000, [10_000], 3, 60_000, 20_000)).toBe(1);
  });
});
