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
  /** Resolves a presented key to its caller, or null when it is unknown, revoked or expired. */
  authenticate: (key: string, ip: string) => Promise<Caller | null>;
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

/**
 * Who a request is: a caller (anonymous, or a valid key's), a caller refused with 401 (invalid or
 * conflicting keys: charged to the IP, so guessing keys is limited like anonymous traffic), or
 * unknown because the key could not be checked.
 */
type Identity = { caller: Caller; refusal?: AppError } | { unchecked: AppError };

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

/**
 * The gate: called by the route table (src/http/routes.ts) for every request to a metered path.
 * What it learns (the caller, the bucket charged) goes on the request's state, which becomes the
 * GraphQL context; nothing is kept anywhere else.
 */
export function createGate(deps: GateDeps) {
  const now = deps.now ?? Date.now;
  const identify = async (request: Request, serverContext: unknown): Promise<Identity> => {
    const anonymous: Caller = { kind: 'anonymous', ip: deps.clientIp(request, serverContext) };
    let key: string | null;
    try {
      key = presentedKey(request.headers, rawHeadersOf(serverContext));
    } catch (error) {
      const refused = asAppError(error);
      if (!refused) throw error;
      return { caller: anonymous, refusal: refused };
    }
    if (key === null) return { caller: anonymous };
    try {
      const found = await deps.authenticate(key, anonymous.ip);
      return found ? { caller: found } : { caller: anonymous, refusal: invalidKey() };
    } catch (error) {
      // Whatever broke (pool exhausted, statement timeout, connection refused, a bug), the key is
      // neither valid nor invalid: 503 with Retry-After, never anonymous treatment.
      deps.onKeyCheckFailed?.(error, request);
      return { unchecked: keyUnchecked() };
    }
  };

  const policyOf = (caller: Caller) => rateLimitPolicy(caller, deps.policy);

  return {
    /** Lets the request in (undefined), or the response refusing it. */
    async admit(request: Request, state: RequestState, shape: ErrorShape): Promise<Response | undefined> {
      const identity = await identify(request, state);
      if ('unchecked' in identity) {
        // No rate-limit headers: nothing was counted, and the key's bucket is unknown. Numbers of
        // the anonymous bucket would tell the caller its limit had changed.
        return refusal(shape, identity.unchecked);
      }
      const policy = policyOf(identity.caller);
      state.rateLimit = { policy, decision: await deps.store.hit(policy.bucket, policy.limit, policy.windowMs) };
      const headers = rateLimitHeaders(state.rateLimit, now());
      // A refused identity (an invalid key) is anonymous here: only a valid key's requests are its usage.
      if (identity.caller.kind === 'key') deps.onKeyCounted?.(identity.caller.keyId, !state.rateLimit.decision.allowed);
      if (!state.rateLimit.decision.allowed) {
        const retryAfter = secondsUntil(state.rateLimit.decision.resetAt, now());
        deps.onRejected?.(policy.name);
        return refusal(shape, rateLimited(limitExceededMessage(policy, retryAfter), retryAfter), headers);
      }
      if (identity.refusal) return refusal(shape, identity.refusal, headers);
      if (identity.caller.kind === 'key') deps.onKeyUsed?.(identity.caller.keyId);
      state.actor = identity.caller;
      return undefined;
    },

    /**
     * The rate-limit headers of the bucket the request was charged to. A CORS preflight (OPTIONS)
     * is never charged: it gets the headers of the bucket the same request with another method
     * would be charged to, read as it stands.
     */
    async decorate(request: Request, response: Response, state: RequestState): Promise<void> {
      let outcome = state.rateLimit;
      if (!outcome && request.method === 'OPTIONS') {
        const identity = await identify(request, state);
        if ('unchecked' in identity) return;
        const policy = policyOf(identity.caller);
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
