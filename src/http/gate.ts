import type { Plugin } from 'graphql-yoga';
import { invalidKey, presentedKey } from '../auth/authenticate.js';
import type { Caller } from '../auth/identity.js';
import { DB_RETRY_AFTER_SECONDS } from '../db/prisma.js';
import { asAppError, rateLimited, serviceUnavailable, type AppError } from '../shared/errors.js';
import {
  limitExceededMessage,
  rateLimitHeaders,
  rateLimitPolicy,
  secondsUntil,
  type PolicyConfig,
  type RateLimitPolicy,
} from '../ratelimit/policy.js';
import type { RateLimitDecision, RateLimitStore } from '../ratelimit/store.js';
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
  /** A request refused for its rate limit, by policy name (anonymous, basic, pro, enterprise). */
  onRejected?: (policy: string) => void;
  /** The key check threw (database unavailable, or anything else): for the logs. */
  onKeyCheckFailed?: (error: unknown, request: Request) => void;
}

interface GateOutcome {
  policy: RateLimitPolicy;
  decision: RateLimitDecision;
}

/**
 * Who a request is: a caller (anonymous, or a valid key's), a caller refused with 401 (invalid or
 * conflicting keys: charged to the IP, so guessing keys is limited like anonymous traffic), or
 * unknown because the key could not be checked.
 */
type Identity = { caller: Caller; refusal?: AppError } | { unchecked: AppError };

// The OpenAPI document describes the headers from a sample of them.
export { rateLimitHeaders };

/** /api/openapi.json, /api/docs and its assets. */
export const DOCS_PATHS = /^\/api\/(openapi\.json|docs)(\/|$)/;

/**
 * Paths whose answers carry rate-limit headers; GraphiQL's page, the docs and anything outside
 * the API carry none. All requests to them are charged but OPTIONS (see useGate).
 */
function isMetered(request: Request, url: URL): boolean {
  // The API's own documentation is free to read, like health and metrics.
  if (DOCS_PATHS.test(url.pathname)) return false;
  if (url.pathname === '/api' || url.pathname.startsWith('/api/')) return true;
  if (url.pathname !== '/graphql') return false;
  const wantsGraphiQL =
    request.method === 'GET' && !url.searchParams.has('query') && (request.headers.get('accept') ?? '').includes('text/html');
  return !wantsGraphiQL;
}

/** Node's header lines, when the request came through Node's HTTP server. */
function rawHeadersOf(serverContext: unknown): readonly string[] | undefined {
  const req = (serverContext as { req?: { rawHeaders?: unknown } } | undefined)?.req;
  return Array.isArray(req?.rawHeaders) ? (req.rawHeaders as string[]) : undefined;
}

/** An error in the shape the path's clients read: the REST envelope, or a GraphQL response. */
function gateErrorResponse(url: URL, error: AppError, headers: Record<string, string> = {}): Response {
  return url.pathname === '/graphql' ? graphqlErrorResponse(error, headers) : errorResponse(error, headers);
}

/** A key the database could not check: the caller is unknown, so neither served nor counted. */
const keyUnchecked = () =>
  serviceUnavailable('The API key cannot be checked right now (its store is unavailable); retry later', DB_RETRY_AFTER_SECONDS);

export function useGate(deps: GateDeps, callers: WeakMap<Request, Caller>): Plugin {
  const outcomes = new WeakMap<Request, GateOutcome>();

  const identify = async (request: Request, serverContext: unknown): Promise<Identity> => {
    const anonymous: Caller = { kind: 'anonymous', ip: deps.clientIp(request, serverContext) };
    let key: string | null;
    try {
      key = presentedKey(request.headers, rawHeadersOf(serverContext));
    } catch (error) {
      const refusal = asAppError(error);
      if (!refusal) throw error;
      return { caller: anonymous, refusal };
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
    async onRequest({ request, url, serverContext, endResponse }) {
      // OPTIONS (CORS preflights above all: a browser sends one before its cross-origin calls) is
      // not charged; onResponse gives it the headers without counting.
      if (request.method === 'OPTIONS' || !isMetered(request, url)) return;
      const identity = await identify(request, serverContext);
      if ('unchecked' in identity) {
        // No rate-limit headers: nothing was counted, and the key's bucket is unknown. Numbers of
        // the anonymous bucket would tell the caller its limit had changed.
        endResponse(gateErrorResponse(url, identity.unchecked));
        return;
      }
      const policy = policyOf(identity.caller);
      const outcome = { policy, decision: await deps.store.hit(policy.bucket, policy.limit, policy.windowMs) };
      outcomes.set(request, outcome);
      const headers = rateLimitHeaders(outcome);
      if (!outcome.decision.allowed) {
        const retryAfter = secondsUntil(outcome.decision.resetAt);
        deps.onRejected?.(policy.name);
        endResponse(gateErrorResponse(url, rateLimited(limitExceededMessage(policy, retryAfter), retryAfter), headers));
        return;
      }
      if (identity.refusal) {
        endResponse(gateErrorResponse(url, identity.refusal, headers));
        return;
      }
      const { caller } = identity;
      if (caller.kind === 'key') deps.onKeyUsed?.(caller.keyId);
      callers.set(request, caller);
    },
    async onResponse({ request, response, serverContext }) {
      let outcome = outcomes.get(request);
      if (!outcome && request.method === 'OPTIONS' && isMetered(request, new URL(request.url))) {
        // The bucket the same request with another method would be charged to, read as it stands.
        const identity = await identify(request, serverContext);
        if ('unchecked' in identity) return;
        const policy = policyOf(identity.caller);
        outcome = { policy, decision: await deps.store.peek(policy.bucket, policy.limit, policy.windowMs) };
      }
      if (!outcome) return;
      // A response may carry a limit of its own (the order limit's 429): that one stands.
      if (response.headers.has('x-ratelimit-limit')) return;
      for (const [name, value] of Object.entries(rateLimitHeaders(outcome))) response.headers.set(name, value);
    },
  };
}
