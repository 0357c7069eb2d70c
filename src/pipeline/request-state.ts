import type { Caller } from '../context/actor.js';
import type { IdempotencyReport } from '../context/context.js';
import type { RateLimitPolicy } from '../ratelimit/policy.js';
import type { RateLimitDecision } from '../ratelimit/store.js';

/**
 * What the HTTP face learns of an API request around its operation. It is kept on the object the
 * server hands each request (Yoga's server context), which Yoga extends with the request's
 * context: one object per request carries all of its state, from arrival to response.
 */
export interface RequestState {
  /** The request id of the logs and of X-Request-ID. */
  requestId?: string;
  /** process.hrtime.bigint() at arrival, for the request's duration. */
  startedAt?: bigint;
  /**
   * The primary's data revision as of this request, with what changed up to it (src/cache/freshness.ts):
   * read at most once per request, by the first stage that needs it (the gate for a kept key, else
   * the response cache).
   */
  revision?: () => Promise<number>;
  /** Who is calling, decided by the gate (src/pipeline/gate.ts). */
  actor?: Caller;
  /** The bucket the request was charged to and what it said, for the rate-limit headers. */
  rateLimit?: { policy: RateLimitPolicy; decision: RateLimitDecision };
  /** A GraphQL GET's validator and caching rule, for its response's headers (src/pipeline/graphql-http-caching.ts). */
  getCaching?: { etag: string; cacheControl: string };
  /** Set by an operation that answered from an Idempotency-Key: the face marks the replay. */
  idempotency?: IdempotencyReport;
}
