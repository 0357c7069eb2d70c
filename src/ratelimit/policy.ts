import ipaddr from 'ipaddr.js';
import type { Caller } from '../context.js';
import { PLAN_LIMITS } from '../auth/keys.js';

/** Which bucket a request is charged to, and that bucket's limit (docs/api.md, Rate limits). */
export interface RateLimitPolicy {
  /** Name used in the RateLimit-Policy header. */
  name: string;
  bucket: string;
  limit: number;
  windowMs: number;
}

export interface PolicyConfig {
  /** Requests per minute for callers without a key (30–60). */
  anonymousLimit: number;
}

const ANONYMOUS_WINDOW_MS = 60_000;

/**
 * The anonymous bucket of an address. An IPv6 client usually holds a whole /64, so the /64 is
 * the client; one bucket per address would let it pick a fresh one for every request.
 */
export function anonymousBucket(ip: string): string {
  if (!ipaddr.IPv6.isValid(ip) || ipaddr.IPv4.isValid(ip)) return `ip:${ip}`;
  const parts = ipaddr.IPv6.parse(ip).parts.slice(0, 4);
  return `ip6:${parts.map((p) => p.toString(16)).join(':')}::/64`;
}

/** No key, or an invalid one: the client IP's anonymous bucket. A valid key: that key's own bucket. */
export function rateLimitPolicy(caller: Caller, config: PolicyConfig): RateLimitPolicy {
  if (caller.kind === 'anonymous') {
    return { name: 'anonymous', bucket: anonymousBucket(caller.ip), limit: config.anonymousLimit, windowMs: ANONYMOUS_WINDOW_MS };
  }
  const plan = PLAN_LIMITS[caller.plan];
  return {
    name: caller.plan.toLowerCase(),
    bucket: `key:${caller.keyId}`,
    limit: caller.rateLimit ?? plan.limit,
    windowMs: (caller.rateWindowSeconds ?? plan.windowSeconds) * 1000,
  };
}
