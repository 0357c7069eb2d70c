import { LRUCache } from 'lru-cache';
import { hashApiKey } from '../auth/key-check.js';
import { invalidKey, presentedKey } from './presented-key.js';
import type { Caller } from '../context/actor.js';
import type { RequestState } from './request-state.js';
import { DB_RETRY_AFTER_SECONDS } from '../db/prisma.js';
import { asAppError, rateLimited, serviceUnavailable, type AppError } from '../shared/errors.js';
import {
  limitExceededMessage,
  rateLimitHeaders,
  rateLimitPolicy,
  secondsUntil,
  type PolicyConfig,
} from '../ratelimit/policy.js';
import type { RateLimitStore } from '../ratelimit/store.js';
import { errorResponse } from '../rest/envelope.js';
import { graphqlErrorResponse } from './graphql-errors.js';

// The gate every /api and /graphql request passes before anything else: who is calling
// (authentication), which bucket pays (rate limiting), and the headers that say so. Both
// interfaces go through it, so both obey one policy.

export interface GateDeps {
  /**
   * Resolves a presented key to its caller, or null when it is unknown, revoked or expired;
   * `revision` is the request's freshness read (a kept key changed since it was read is read again).
   */
  authenticate: (key: string, ip: string, revision: () => Promise<number>) => Promise<Caller | null>;
  /** Reads the primary's data revision and what changed up to it (src/cache/freshness.ts). */
  revision: () => Promise<number>;
  clientIp: (request: Request, serverContext: unknown) => string;
  store: RateLimitStore;
  policy: PolicyConfig;
  onKeyUsed?: (keyId: string) => void;
  /**
   * A valid key's request was charged to its bucket: `limited` when it was refused for the limit
   * (429). Every such request, unlike onKeyUsed, which only hears the ones let in.
   */
  onKeyCounted?: (keyId: string, limited: boolean) => void;
  /** A request refused for its rate limit, by policy name (anonymous, basic, pro, enterprise). */
  onRejected?: (policy: string) => void;
  /** The key check threw (database unavailable, or anything else): for the logs. */
  onKeyCheckFailed?: (error: unknown, request: Request) => void;
  /** The clock of the store's windows (Unix ms), so that Retry-After and `t=` count on it too. */
  now?: () => number;
}

/** Node's header lines, when the request came through Node's HTTP server. */
function rawHeadersOf(serverContext: unknown): readonly string[] | undefined {
  const req = (serverContext as { req?: { rawHeaders?: unknown } } | undefined)?.req;
  return Array.isArray(req?.rawHeaders) ? (req.rawHeaders as string[]) : undefined;
}

/** How a refused request is answered: in the REST envelope, or as a GraphQL response. */
export type ErrorShape = 'rest' | 'graphql';

const refusal = (shape: ErrorShape, error: AppError, headers: Record<string, string> = {}): Response =>
  shape === 'graphql' ? graphqlErrorResponse(error, headers) : errorResponse(error, headers);

/** A key the database could not check: the caller is unknown, so neither served nor counted. */
const keyUnchecked = () =>
  serviceUnavailable('The API key cannot be checked right now (its store is unavailable); retry later', DB_RETRY_AFTER_SECONDS);

/** Keys remembered by the hash of the key, at most this many of each kind (the least recently used go first). */
const REMEMBERED_KEYS = 10_000;
/** A key found valid this recently has proved itself: its requests are charged to its own bucket alone. */
const PROVEN_MS = 60_000;
/**
 * A key found invalid (unknown, revoked, expired) is refused again without a lookup this long. A
 * key is random: one that was unknown cannot become valid (a new key has a new value), and one
 * revoked or expired never works again; the memory only saves the database from a flood.
 */
const REFUSED_MS = 30_000;

/**
 * The gate: called by the route table (src/pipeline/route-table.ts) for every request to a metered path.
 * What it learns (the caller, the bucket charged) goes on the request's state, which becomes the
 * request's context; nothing else about a request is kept.
 *
 * A key costs a lookup (a query when the key cache does not have it). A key that has not proved
 * itself lately is looked up only while its client's anonymous bucket has room, and an invalid
 * one is charged to that bucket: a flood of made-up keys from one client is limited like
 * anonymous traffic and stops reaching the database at that limit, and keys found invalid are
 * refused from memory for a while.
 */
export function createGate(deps: GateDeps) {
  const now = deps.now ?? Date.now;
  // Kept while in use (a lookup renews it), so a busy client's key stays proved through an outage.
  const proven = new LRUCache<string, true>({ max: REMEMBERED_KEYS, ttl: PROVEN_MS, updateAgeOnHas: true });
  const refused = new LRUCache<string, true>({ max: REMEMBERED_KEYS, ttl: REFUSED_MS });
  const policyOf = (caller: Caller) => rateLimitPolicy(caller, deps.policy);
  const headersOf = (state: RequestState) => (state.rateLimit ? rateLimitHeaders(state.rateLimit, now()) : {});

  /** Charges `caller`'s bucket; the refusal when it is over its limit. */
  async function charge(caller: Caller, state: RequestState, shape: ErrorShape): Promise<Response | undefined> {
    const policy = policyOf(caller);
    state.rateLimit = { policy, decision: await deps.store.hit(policy.bucket, policy.limit, policy.windowMs) };
    // Only a valid key's requests are its usage.
    if (caller.kind === 'key') deps.onKeyCounted?.(caller.keyId, !state.rateLimit.decision.allowed);
    if (state.rateLimit.decision.allowed) return undefined;
    const retryAfter = secondsUntil(state.rateLimit.decision.resetAt, now());
    deps.onRejected?.(policy.name);
    return refusal(shape, rateLimited(limitExceededMessage(policy, retryAfter), retryAfter), headersOf(state));
  }

  return {
    /** Lets the request in (undefined), or the response refusing it. */
    async admit(request: Request, state: RequestState, shape: ErrorShape): Promise<Response | undefined> {
      // Read at most once per request, by whichever stage first needs it: a kept key's check here,
      // or the response cache's lookup later.
      let read: Promise<number> | undefined;
      state.revision = () => (read ??= deps.revision());
      const anonymous: Caller = { kind: 'anonymous', ip: deps.clientIp(request, state) };
      let key: string | null;
      try {
        key = presentedKey(request.headers, rawHeadersOf(state));
      } catch (error) {
        // Conflicting or empty credentials: charged to the client, like any invalid key.
        const conflict = asAppError(error);
        if (!conflict) throw error;
        return (await charge(anonymous, state, shape)) ?? refusal(shape, conflict, headersOf(state));
      }
      if (key === null) {
        const over = await charge(anonymous, state, shape);
        if (over) return over;
        state.actor = anonymous;
        return undefined;
      }

      const hash = hashApiKey(key);
      // A key that has not proved itself lately may be made up: its client's anonymous bucket
      // must have room before the key costs a lookup, and a key refused lately is refused again
      // from memory. The bucket is charged when the key turns out invalid, not before: a key the
      // database cannot check right now (503) costs its client nothing.
      if (!proven.has(hash)) {
        const policy = policyOf(anonymous);
        const room = await deps.store.peek(policy.bucket, policy.limit, policy.windowMs);
        if (!room.allowed || refused.has(hash)) return (await charge(anonymous, state, shape)) ?? refusal(shape, invalidKey(), headersOf(state));
      }
      let found: Caller | null;
      try {
        found = await deps.authenticate(key, anonymous.ip, state.revision);
      } catch (error) {
        // Whatever broke (pool exhausted, statement timeout, connection refused, a bug), the key is
        // neither valid nor invalid: 503 with Retry-After, never anonymous treatment, and no
        // rate-limit headers (nothing was counted, and the key's bucket is unknown).
        deps.onKeyCheckFailed?.(error, request);
        return refusal(shape, keyUnchecked());
      }
      if (!found) {
        proven.delete(hash);
        refused.set(hash, true);
        return (await charge(anonymous, state, shape)) ?? refusal(shape, invalidKey(), headersOf(state));
      }
      proven.set(hash, true);
      const over = await charge(found, state, shape);
      if (over) return over;
      if (found.kind === 'key') deps.onKeyUsed?.(found.keyId);
      state.actor = found;
      return undefined;
    },

    /**
     * The rate-limit headers of the bucket the request was charged to. A CORS preflight (OPTIONS)
     * is never charged and never looks at keys: it gets the headers of the client's anonymous
     * bucket, read as it stands (a browser's preflight carries no key anyway).
     */
    async decorate(request: Request, response: Response, state: RequestState): Promise<void> {
      let outcome = state.rateLimit;
      if (!outcome && request.method === 'OPTIONS') {
        const policy = policyOf({ kind: 'anonymous', ip: deps.clientIp(request, state) });
        outcome = { policy, decision: await deps.store.peek(policy.bucket, policy.limit, policy.windowMs) };
      }
      if (!outcome) return;
      // A response may carry a limit of its own (the order limit's 429): that one stands.
      if (response.headers.has('x-ratelimit-limit')) return;
      for (const [name, value] of Object.entries(rateLimitHeaders(outcome, now()))) response.headers.set(name, value);
    },
  };
}

export type Gate = ReturnType<typeof createGate>;
