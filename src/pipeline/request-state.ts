import type { Caller } from '../context/actor.js';
import type { Replica } from '../db/replicas.js';
import type { RateLimitPolicy } from '../ratelimit/policy.js';
import type { RateLimitDecision } from '../ratelimit/store.js';

// What a stage of the request pipeline (./pipeline.ts) tells the stages after it. It is kept on the
// object the server hands each request (Yoga's server context), which Yoga then extends with the
// request's context (src/context/context.ts, ApiContext): one object per request carries all of
// its state, from arrival to response. Each field below is written by one stage, once, and only
// read after it.

/** The API's two faces: the shape a path's answers (and refusals) take, and how an operation is charged. */
export type Face = 'graphql' | 'rest';

/** A path the process answers: one entry of the route table (./route-table.ts). */
export interface HttpRoute {
  /** An exact path, or a prefix when it ends in `/*` (`/api/*` matches /api and below). */
  path: string;
  /** Charged to a rate-limit bucket, and answered with its headers. */
  metered: boolean | ((request: Request, url: URL) => boolean);
  /** The face whose shape this path's answers take: a GraphQL response (/graphql), or the REST envelope (every other path). */
  face: Face;
  handle(request: Request, url: URL, state: RequestState): Promise<Response | null | undefined> | Response | null | undefined;
}

/** The bucket a request was charged to and what it said, for the rate-limit headers. */
export interface RateLimitOutcome {
  policy: RateLimitPolicy;
  decision: RateLimitDecision;
}

/** What the gate (./gate.ts) decided of a metered request. */
export interface Admission {
  /** Who is calling; absent when the request was refused. */
  actor?: Caller;
  /** The bucket charged; absent when nothing was (a key the database could not check). */
  rateLimit?: RateLimitOutcome;
  /**
   * The primary's data revision as of this request, with what changed up to it (src/cache/freshness.ts):
   * read at most once per request, by the first stage that needs it (the gate for a kept key, else
   * the response cache).
   */
  revision: () => Promise<number>;
  /**
   * A publishable key's request: the origin its response may be read from (its Origin, listed by
   * the key), or null when none may (refused for its origin). Absent for any other request, whose
   * CORS headers are the configured ones.
   */
  corsOrigin?: string | null;
}

export interface RequestState {
  /**
   * Set by the WebSocket face (src/pipeline/websocket.ts) on an operation it sends through the app as
   * a request: it came over a GraphQL WebSocket connection. Absent for a request made over HTTP.
   */
  transport?: 'websocket';
  /** Written by observe: the request id of the logs and of X-Request-ID. */
  requestId?: string;
  /** Written by observe: process.hrtime.bigint() at arrival, for the request's duration. */
  startedAt?: bigint;
  /** Written by route: the route answering the path. Its face tells the stages after it which face asks. */
  route?: HttpRoute;
  /** Written by gate, for a metered route: the request's admission (or what was charged for its refusal). */
  admission?: Admission;
  /**
   * Written by read routing (./read-routing.ts), the first time a stage asks: the read replica the
   * request's operation reads from, null for the primary. The response cache reads the revision there.
   */
  replica?: Replica | null;
  /**
   * Written by cache headers (./graphql-http-caching.ts): a GraphQL GET's validator and caching rule,
   * for its response's headers; no validator for an answer sent in parts (multipart/mixed, text/event-stream).
   */
  getCaching?: { etag?: string; cacheControl: string };
}
