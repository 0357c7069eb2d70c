import type { Plugin } from 'graphql-yoga';
import { invalidKey, presentedKey } from '../auth/authenticate.js';
import type { Caller } from '../context.js';
import { databaseUnavailable } from '../db/prisma.js';
import { asAppError, rateLimited, type AppError } from '../errors.js';
import { rateLimitPolicy, type PolicyConfig, type RateLimitPolicy } from '../ratelimit/policy.js';
import type { RateLimitDecision, RateLimitStore } from '../ratelimit/store.js';
import { errorResponse, errorResponseInit } from '../rest/envelope.js';

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
}

interface GateOutcome {
  policy: RateLimitPolicy;
  decision: RateLimitDecision;
}

/** /api/openapi.json, /api/docs and its assets. */
export const DOCS_PATHS = /^\/api\/(openapi\.json|docs)(\/|$)/;

/** Paths that are metered; GraphiQL's page, the docs and anything outside the API are not. */
function isMetered(request: Request, url: URL): boolean {
  if (request.method === 'OPTIONS') return false;
  // The API's own documentation is free to read, like health and metrics.
  if (DOCS_PATHS.test(url.pathname)) return false;
  if (url.pathname === '/api' || url.pathname.startsWith('/api/')) return true;
  if (url.pathname !== '/graphql') return false;
  const wantsGraphiQL =
    request.method === 'GET' && !url.searchParams.has('query') && (request.headers.get('accept') ?? '').includes('text/html');
  return !wantsGraphiQL;
}

export function rateLimitHeaders({ policy, decision }: GateOutcome, now = Date.now()): Record<string, string> {
  const resetSeconds = Math.max(0, Math.ceil((decision.resetAt - now) / 1000));
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetAt),
    // IETF draft-ietf-httpapi-ratelimit-headers (structured fields).
    'ratelimit-policy': `"${policy.name}";q=${decision.limit};w=${Math.round(policy.windowMs / 1000)}`,
    ratelimit: `"${policy.name}";r=${decision.remaining};t=${resetSeconds}`,
  };
}

/** An error in the shape the path's clients read: the REST envelope, or a GraphQL response. */
function gateErrorResponse(url: URL, error: AppError, headers: Record<string, string>): Response {
  if (url.pathname !== '/graphql') return errorResponse(error, headers);
  const body = { errors: [{ message: error.message, extensions: error.extensions }] };
  return new Response(JSON.stringify(body), errorResponseInit(error, headers));
}

export function useGate(deps: GateDeps, callers: WeakMap<Request, Caller>): Plugin {
  const outcomes = new WeakMap<Request, GateOutcome>();

  const charge = async (caller: Caller): Promise<GateOutcome> => {
    const policy = rateLimitPolicy(caller, deps.policy);
    return { policy, decision: await deps.store.hit(policy.bucket, policy.limit, policy.windowMs) };
  };

  return {
    async onRequest({ request, url, serverContext, endResponse }) {
      if (!isMetered(request, url)) return;
      const ip = deps.clientIp(request, serverContext);
      const anonymous: Caller = { kind: 'anonymous', ip };
      let caller: Caller = anonymous;
      let authError: AppError | undefined;
      try {
        const key = presentedKey(request.headers);
        if (key !== null) {
          const found = await deps.authenticate(key, ip);
          if (found) caller = found;
          else authError = invalidKey();
        }
      } catch (error) {
        // The key cannot be checked while the database is down: 503, not 500 (nor anonymous).
        const appError = asAppError(error) ?? databaseUnavailable(error);
        if (!appError) throw error;
        authError = appError;
      }
      // A request with a bad key is charged to its IP's anonymous bucket, so guessing keys is
      // rate limited like any anonymous traffic.
      const outcome = await charge(authError ? anonymous : caller);
      outcomes.set(request, outcome);
      const headers = rateLimitHeaders(outcome);
      if (!outcome.decision.allowed) {
        const retryAfter = Math.max(1, Math.ceil((outcome.decision.resetAt - Date.now()) / 1000));
        const window = Math.round(outcome.policy.windowMs / 1000);
        const error = rateLimited(
          `Rate limit exceeded: ${outcome.decision.limit} requests per ${window} s; retry after ${retryAfter} s`,
          retryAfter,
        );
        deps.onRejected?.(outcome.policy.name);
        endResponse(gateErrorResponse(url, error, headers));
        return;
      }
      if (authError) {
        endResponse(gateErrorResponse(url, authError, headers));
        return;
      }
      if (caller.kind === 'key') deps.onKeyUsed?.(caller.keyId);
      callers.set(request, caller);
    },
    onResponse({ request, response }) {
      const outcome = outcomes.get(request);
      if (!outcome) return;
      for (const [name, value] of Object.entries(rateLimitHeaders(outcome))) {
        if (!response.headers.has(name)) response.headers.set(name, value);
      }
    },
  };
}
