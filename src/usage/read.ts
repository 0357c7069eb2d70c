// Reading a key's usage back: its hourly history (what the recorder flushed) and the state of
// the rate-limit window it is in now (what the gate counts).

import type { RequestContext } from '../context/context.js';
import type { PrismaClient } from '../db/prisma.js';
import { keyRateLimitPolicy, type KeyLimits } from '../ratelimit/policy.js';
import type { RateLimitStore } from '../ratelimit/store.js';
import { hourOf, HOUR_MS } from './recorder.js';

/** The longest history one call reads: a year of hours. */
export const MAX_USAGE_HOURS = 366 * 24;

export interface HourUsage {
  /** Start of the UTC hour. */
  hour: Date;
  /** Requests the key made in that hour, 429s included. */
  requests: number;
  /** Of those, the ones refused with 429. */
  limited: number;
}

/**
 * The key's last `hours` UTC hours (default 168, a week), oldest first and ending with the hour
 * the context's clock is in: exactly `hours` entries, hours without requests as zeros. Counts lag by up to the
 * recorder's flush interval.
 */
export async function hourlyUsage(ctx: RequestContext,
  keyId: string,
  { hours = 168 }: { hours?: number } = {},
): Promise<HourUsage[]> {
  if (!Number.isInteger(hours) || hours < 1 || hours > MAX_USAGE_HOURS) throw new RangeError(`hours must be an integer from 1 to ${MAX_USAGE_HOURS}`);
  const last = hourOf(ctx.now().getTime());
  const first = last - (hours - 1) * HOUR_MS;
  const rows = await ctx.prisma.keyUsage.findMany({
    where: { keyId, hour: { gte: new Date(first), lte: new Date(last) } },
    select: { hour: true, requests: true, limited: true },
  });
  const byHour = new Map(rows.map((r) => [r.hour.getTime(), r]));
  return Array.from({ length: hours }, (_, i) => {
    const hour = first + i * HOUR_MS;
    const row = byHour.get(hour);
    return { hour: new Date(hour), requests: row?.requests ?? 0, limited: row?.limited ?? 0 };
  });
}

export interface WindowState {
  /** Requests counted in the current window (at most `limit`: the store reports no further). */
  used: number;
  limit: number;
  remaining: number;
  /** When the window resets; for a key without requests in a window, when one would reset if it started now. */
  resetAt: Date;
  windowSeconds: number;
}

/**
 * The key's current rate-limit window, read from the store the gate counts in (the same bucket,
 * without counting). Exact for the store's instance, or for every instance with Redis.
 */
export async function currentWindow(store: RateLimitStore, key: KeyLimits): Promise<WindowState> {
  const policy = keyRateLimitPolicy(key);
  const decision = await store.peek(policy.bucket, policy.limit, policy.windowMs);
  return {
    used: decision.limit - decision.remaining,
    limit: decision.limit,
    remaining: decision.remaining,
    resetAt: new Date(decision.resetAt),
    windowSeconds: policy.windowMs / 1000,
  };
}
