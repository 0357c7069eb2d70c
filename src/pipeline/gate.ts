import type { Attributes } from '@opentelemetry/api';
import { LRUCache } from 'lru-cache';
import { hashApiKey, publishableOriginRefusal } from '../auth/key-check.js';
import { invalidKey, presentedKey } from './presented-key.js';
import type { Plugin } from 'graphql-yoga';
import type { Caller } from '../context/actor.js';
import type { Admission, Face, HttpRoute, RateLimitOutcome, RequestState } from './request-state.js';
import { isMetered, routeFor } from './route-table.js';
import { DB_RETRY_AFTER_SECONDS } from '../db/prisma.js';
import { asAppError, rateLimited, serviceUnavailable, type AppError } from '../shared/errors.js';
import {
  invalidKeyRateLimitPolicy,
  limitExceededMessage,
  rateLimitHeaders,
  rateLimitPolicy,
  secondsUntil,
  visitorRateLimitPolicy,
  type PolicyConfig,
  type RateLimitPolicy,
} from '../ratelimit/policy.js';
import type { RateLimitStore } from '../ratelimit/store.js';
import { errorResponse } from '../rest/envelope.js';
import { graphqlErrorResponse } from './graphql-errors.js';
import { inSpan } from '../tracing/spans.js';

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

const refusal = (face: Face, error: AppError, headers: Record<string, string> = {}): Response =>
  face === 'graphql' ? graphqlErrorResponse(error, headers) : errorResponse(error, headers);

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

/** What is left of a bucket, as a share of its limit: the smaller, the nearer its limit. */
const share = ({ decision }: RateLimitOutcome) => decision.remaining / Math.max(1, decision.limit);

/** The gate's verdict: the request's admission, and the response refusing it, if it is refused. */
export interface GateVerdict {
  admission: Admission;
  refused?: Response;
}

/**
 * The gate: the gate stage (useGate below) asks it of every request to a metered path. It returns
 * what it learnt (the caller, the bucket charged, the revision read), which the stage keeps on the
 * request's state; nothing else about a request is kept.
 *
 * A key costs a lookup (a query when the key cache does not have it). A key that has not proved
 * itself lately is looked up only while its client's invalid-key bucket has room, and an invalid
 * one is charged to that bucket: a flood of made-up keys from one client stops reaching the
 * database at that limit, and keys found invalid are refused from memory for a while. The
 * client's anonymous traffic never refuses a valid key (an office behind one address shares it).
 */
export function createGate(deps: GateDeps) {
  const now = deps.now ?? Date.now;
  // Kept while in use (a lookup renews it), so a busy client's key stays proved through an outage.
  const proven = new LRUCache<string, true>({ max: REMEMBERED_KEYS, ttl: PROVEN_MS, updateAgeOnHas: true });
  const refused = new LRUCache<string, true>({ max: REMEMBERED_KEYS, ttl: REFUSED_MS });
  const policyOf = (caller: Caller) => rateLimitPolicy(caller, deps.policy);

  const hit = async (policy: RateLimitPolicy): Promise<RateLimitOutcome> => ({ policy, decision: await deps.store.hit(policy.bucket, policy.limit, policy.windowMs) });

  /** The 429 of a bucket over its limit (counted as a rejection by its policy's name). */
  function overLimit(rateLimit: RateLimitOutcome, face: Face): Response {
    const { policy } = rateLimit;
    const retryAfter = secondsUntil(rateLimit.decision.resetAt, now());
    deps.onRejected?.(policy.name);
    return refusal(face, rateLimited(limitExceededMessage(policy, retryAfter), retryAfter), rateLimitHeaders(rateLimit, now()));
  }

  /**
   * Charges `caller`'s bucket: what it said, and the refusal when it is over its limit. A
   * publishable key's visitor bucket is charged first, and a visitor over it is refused without
   * spending the key's own; the outcome named is the refusing bucket, else the one nearer its limit.
   */
  async function charge(caller: Caller, face: Face): Promise<{ rateLimit: RateLimitOutcome; over?: Response }> {
    const visitor = caller.kind === 'key' && caller.publishable ? await hit(visitorRateLimitPolicy(caller, deps.policy)) : undefined;
    let rateLimit = visitor?.decision.allowed === false ? visitor : await hit(policyOf(caller));
    if (visitor && rateLimit !== visitor && rateLimit.decision.allowed && share(visitor) < share(rateLimit)) rateLimit = visitor;
    // Only a valid key's requests are its usage.
    if (caller.kind === 'key') deps.onKeyCounted?.(caller.keyId, !rateLimit.decision.allowed);
    return rateLimit.decision.allowed ? { rateLimit } : { rateLimit, over: overLimit(rateLimit, face) };
  }

  return {
    /** Lets the request in (its admission names the caller), or refuses it. */
    async admit(request: Request, serverContext: unknown, face: Face): Promise<GateVerdict> {
      // Read at most once per request, by whichever stage first needs it: a kept key's check here,
      // or the response cache's lookup later.
      let read: Promise<number> | undefined;
      const revision = () => (read ??= deps.revision());
      const anonymous: Caller = { kind: 'anonymous', ip: deps.clientIp(request, serverContext) };
      /** `caller` let in once its bucket is charged, unless that bucket is over its limit. */
      const letIn = async (caller: Caller): Promise<GateVerdict> => {
        const { rateLimit, over } = await charge(caller, face);
        if (over) return { admission: { rateLimit, revision }, refused: over };
        if (caller.kind === 'key') deps.onKeyUsed?.(caller.keyId);
        return { admission: { actor: caller, rateLimit, revision } };
      };
      const invalidKeys = invalidKeyRateLimitPolicy(anonymous.ip);
      /** Refused with `error`, charged to the client's invalid-key bucket (its own 429 when that is over). */
      const refuseCharged = async (error: AppError): Promise<GateVerdict> => {
        const rateLimit = await hit(invalidKeys);
        const refused = rateLimit.decision.allowed ? refusal(face, error, rateLimitHeaders(rateLimit, now())) : overLimit(rateLimit, face);
        return { admission: { rateLimit, revision }, refused };
      };
      let key: string | null;
      try {
        key = presentedKey(request.headers, rawHeadersOf(serverContext));
      } catch (error) {
        // Conflicting or empty credentials: charged to the client, like any invalid key.
        const conflict = asAppError(error);
        if (!conflict) throw error;
        return refuseCharged(conflict);
      }
      if (key === null) return letIn(anonymous);

      const hash = hashApiKey(key);
      // A key that has not proved itself lately may be made up: its client's invalid-key bucket
      // (which only failed credentials spend, never its anonymous traffic) must have room before
      // the key costs a lookup, and a key refused lately is refused again from memory. The bucket
      // is charged when the key turns out invalid, not before: a key the database cannot check
      // right now (503) costs its client nothing.
      if (!proven.has(hash)) {
        const room = await deps.store.peek(invalidKeys.bucket, invalidKeys.limit, invalidKeys.windowMs);
        if (!room.allowed || refused.has(hash)) return refuseCharged(invalidKey());
      }
      let found: Caller | null;
      try {
        found = await deps.authenticate(key, anonymous.ip, revision);
      } catch (error) {
        // Whatever broke (pool exhausted, statement timeout, connection refused, a bug), the key is
        // neither valid nor invalid: 503 with Retry-After, never anonymous treatment, and no
        // rate-limit headers (nothing was counted, and the key's bucket is unknown).
        deps.onKeyCheckFailed?.(error, request);
        return { admission: { revision }, refused: refusal(face, keyUnchecked()) };
      }
      if (!found) {
        proven.delete(hash);
        refused.set(hash, true);
        return refuseCharged(invalidKey());
      }
      proven.set(hash, true);
      if (found.kind === 'key' && found.publishable) {
        // Bound to its origins, on every face (the WebSocket handshake's Origin comes here too).
        const origin = request.headers.get('origin');
        const wrongOrigin = publishableOriginRefusal(found.publishable, origin);
        if (wrongOrigin) {
          const verdict = await refuseCharged(wrongOrigin);
          return { ...verdict, admission: { ...verdict.admission, corsOrigin: null } };
        }
        const verdict = await letIn(found);
        return origin === null ? verdict : { ...verdict, admission: { ...verdict.admission, corsOrigin: origin } };
      }
      return letIn(found);
    },

    /**
     * The rate-limit headers of the bucket the request was charged to. A CORS preflight (OPTIONS)
     * is never charged and never looks at keys: it gets the headers of the client's anonymous
     * bucket, read as it stands (a browser's preflight carries no key anyway).
     */
    async decorate(request: Request, response: Response, admission: Pick<Admission, 'rateLimit'> | undefined, serverContext?: unknown): Promise<void> {
      let outcome = admission?.rateLimit;
      if (!outcome && request.method === 'OPTIONS') {
        const policy = policyOf({ kind: 'anonymous', ip: deps.clientIp(request, serverContext) });
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

/** What a trace shows of the gate's verdict: who called, the bucket charged, the refusal; never the key. */
const verdictAttributes = ({ admission, refused }: GateVerdict): Attributes => ({
  'gate.caller.kind': admission.actor?.kind ?? 'refused',
  ...(admission.rateLimit && {
    'gate.ratelimit.policy': admission.rateLimit.policy.name,
    'gate.ratelimit.bucket': admission.rateLimit.policy.bucket,
    'gate.ratelimit.allowed': admission.rateLimit.decision.allowed,
  }),
  ...(refused && { 'gate.refused.status': refused.status }),
});

/**
 * A publishable key's response is readable from an origin both CORS_ORIGINS and the key allow
 * (this runs after Yoga's CORS stage, which set the configured headers): its own origin when
 * listed and configured, no Access-Control-Allow-Origin otherwise, a refusal for its origin
 * included. A preflight carries no key, so it stays as configured.
 */
function publishableCors(response: Response, admission: Admission | undefined): void {
  if (admission?.corsOrigin === undefined) return;
  const configured = response.headers.get('access-control-allow-origin');
  if (admission.corsOrigin === null || (configured !== '*' && configured !== admission.corsOrigin)) {
    response.headers.delete('access-control-allow-origin');
    return;
  }
  response.headers.set('access-control-allow-origin', admission.corsOrigin);
  const vary = response.headers.get('vary');
  if (!vary?.split(',').some((v) => v.trim().toLowerCase() === 'origin')) response.headers.set('vary', vary ? `${vary}, Origin` : 'Origin');
}

/**
 * The gate stage: a request to a metered route is admitted (its admission kept on its state, the
 * one place it is written) or refused; every answer of a metered route gets its bucket's headers.
 */
export function useGate(gate: Gate, table: readonly HttpRoute[]): Plugin {
  return {
    async onRequest({ request, url, serverContext, endResponse }) {
      const state = serverContext as RequestState;
      if (!state.route || !isMetered(state.route, request, url)) return;
      const face = state.route.face;
      const { admission, refused } = await inSpan('gate admit', {}, async (span) => {
        const verdict = await gate.admit(request, state, face);
        span.setAttributes(verdictAttributes(verdict));
        return verdict;
      });
      state.admission = admission;
      if (refused) endResponse(refused);
    },
    async onResponse({ request, response, serverContext }) {
      const state = serverContext as RequestState;
      const url = new URL(request.url);
      // Yoga answers a CORS preflight before the route stage: it gets the headers of the request
      // it announces (the gate peeks, never charges).
      const route = state.route ?? (request.method === 'OPTIONS' ? routeFor(table, url.pathname) : undefined);
      if (route && isMetered(route, request, url)) await gate.decorate(request, response, state.admission, state);
      publishableCors(response, state.admission);
    },
  };
}
