import type { GraphQLResolveInfo } from 'graphql';
// Only getGraphQLRateLimiter: the package's createRateLimitDirective needs the @graphql-tools/utils 7
// that package.json's overrides replace (README, Quick start).
import { getGraphQLRateLimiter, type Identity, type Store } from 'graphql-rate-limit';
import { rateLimited } from '../shared/errors.js';
import { assertLimitArgs } from './memory-store.js';
import type { FieldLimiter } from '../context/context.js';
import { LIMITS, type FieldLimitName } from '../config/limits.js';
import { anonymousBucket, describeWindow, rateLimitHeaders, secondsUntil } from './policy.js';
import type { RateLimitStore } from './store.js';

export interface FieldLimitCheck {
  /** Who is calling: the account id for keyed callers, the client IP otherwise. */
  identity: string;
  /** Calls allowed per window (≥ 1). */
  max: number;
  /** Window length in ms (a sliding window: the last `windowMs` before each call). */
  windowMs: number;
  /** The resolver's own arguments. */
  parent: unknown;
  args: Record<string, unknown>;
  info: GraphQLResolveInfo;
  /** Name the limit is kept under; default `ParentType.fieldName`, so equal field names on two types are separate. */
  field?: string;
  /** Argument paths whose values get limits of their own (graphql-rate-limit's `identityArgs`). */
  identityArgs?: readonly string[];
  /** What is counted, in the plural ("orders"); default "calls to <field>". Also names the limit in RateLimit-Policy. */
  unit?: string;
  /** Whose calls are counted together, in words ("account", "client address"); default "caller". */
  per?: string;
}

export interface FieldRateLimiter {
  /**
   * Counts one call of a field for `identity` and throws AppError('RATE_LIMIT_EXCEEDED', …,
   * { retryAfter }) when it is over the limit, `retryAfter` being the whole seconds (≥ 1) until a
   * call would be allowed again. Rejected calls count too, as for the request buckets.
   */
  check(call: FieldLimitCheck): Promise<void>;
}

export interface FieldRateLimiterOptions {
  /**
   * The clock calls are logged and windows measured by, in Unix ms (default Date.now); tests pass
   * a manual one. It decides on either backend: the memory and Redis logs keep the timestamps
   * given to them and compare them with this clock's time of the call. Real time only bounds how
   * long a log is kept at all (a Redis log expires one window after its newest call by Redis'
   * clock), and graphql-rate-limit drops timestamps older than a window by Date.now() once more:
   * neither matters unless this clock is more than a window behind real time.
   */
  now?: () => number;
}

/**
 * Per-field limits through graphql-rate-limit's `getGraphQLRateLimiter`, kept in the same backend
 * as the request buckets (`store`: process memory, or the shared Redis with its memory fallback).
 *
 * graphql-rate-limit reads a field's call timestamps, decides, then writes them back: two
 * concurrent calls (two aliases of one field in one query run in parallel, or two instances)
 * would both read the same list and both pass. So the Store given to it records the call in the
 * same atomic step as the read (`RateLimitStore.logCall`) and its `setForIdentity` writes nothing.
 * The library still builds the field identity, filters the window, decides and words the error.
 */
export function createFieldRateLimiter(store: RateLimitStore, opts: FieldRateLimiterOptions = {}): FieldRateLimiter {
  const now = opts.now ?? Date.now;
  return {
    async check(call) {
      assertLimitArgs(call.max, call.windowMs);
      const field = call.field ?? `${call.info.parentType.name}.${call.info.fieldName}`;
      let recordedAt = 0;
      let earlier: number[] = [];

      // One Store (and limiter) per check: a few object allocations, and the only way to learn
      // which timestamps this very call saw, which the retry time is computed from.
      const recordingStore: Store = {
        async getForIdentity(identity: Identity) {
          recordedAt = now();
          earlier = await store.logCall(storeKey(identity), recordedAt, call.max, call.windowMs);
          return earlier;
        },
        setForIdentity() {
          // Already recorded by getForIdentity, atomically with the read.
        },
      };
      const unit = call.unit ?? `calls to ${field}`;
      const limiter = getGraphQLRateLimiter({
        store: recordingStore,
        identifyContext: () => call.identity,
        formatError: ({ max, window }) => `Too many ${unit}: at most ${max} ${unit} per ${describeWindow(window)} per ${call.per ?? 'caller'}`,
      });

      const message = await limiter(
        // The library names the limit after info.fieldName; give it the qualified name.
        { parent: call.parent, args: call.args, context: call, info: { ...call.info, fieldName: field } },
        {
          max: call.max,
          // graphql-rate-limit parses `window` with `ms`, which reads a bare number as milliseconds.
          window: String(call.windowMs),
          identityArgs: call.identityArgs ?? [],
        },
      );
      if (message === undefined) return;
      const answeredAt = now();
      const resetAt = nextAllowedAt(recordedAt, earlier, call.max, call.windowMs, answeredAt);
      const counted = Math.min(call.max, earlier.length + 1);
      // The limit this answer is about, in the same headers the request limits use.
      const headers = rateLimitHeaders(
        {
          policy: { name: call.unit ?? field, windowMs: call.windowMs },
          decision: { allowed: false, limit: call.max, remaining: call.max - counted, resetAt },
        },
        answeredAt,
      );
      throw rateLimited(message, secondsUntil(resetAt, answeredAt), headers);
    },
  };
}

/**
 * Whole seconds (≥ 1) until a call is allowed again: the log now holds this call and the newest
 * earlier ones, `max` in all; one more call fits once the oldest of those leaves the window.
 */
export function retryAfterSeconds(recordedAt: number, earlier: readonly number[], max: number, windowMs: number, now = Date.now()): number {
  return secondsUntil(nextAllowedAt(recordedAt, earlier, max, windowMs, now), now);
}

/** Unix ms from which one more call fits (now, when the log is not full). */
function nextAllowedAt(recordedAt: number, earlier: readonly number[], max: number, windowMs: number, now = Date.now()): number {
  const kept = [recordedAt, ...earlier].slice(0, max);
  return kept.length < max ? now : Math.min(...kept) + windowMs;
}

/** Each part URI-encoded, so an IPv6 identity's colons cannot make two identities collide. */
function storeKey(identity: Identity): string {
  return `${encodeURIComponent(identity.contextIdentity)}:${encodeURIComponent(identity.fieldIdentity)}`;
}

/** Each per-field limit's `max`: its setting's value (ORDER_CREATE_LIMIT), or a test's own. */
export type FieldLimitMaxes = Record<FieldLimitName, number>;

/**
 * The API's per-field limiter: counts the account behind a key (all its keys, REST and GraphQL
 * together), or the client's address without one, over each limit's window (LIMITS.fields).
 */
export function createFieldLimiter(limiter: FieldRateLimiter, maxes: FieldLimitMaxes): FieldLimiter {
  return (caller, { parent, args, info }, name) =>
    limiter.check({
      identity: caller.kind === 'key' ? `account:${caller.accountId}` : anonymousBucket(caller.ip),
      per: caller.kind === 'key' ? 'account (all of its API keys, REST and GraphQL together)' : 'client address',
      max: maxes[name],
      windowMs: LIMITS.fields[name].windowMs,
      unit: LIMITS.fields[name].counts,
      parent,
      args: { ...args },
      info,
    });
}
