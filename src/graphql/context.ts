import crypto from 'node:crypto';
import type DataLoader from 'dataloader';
import type { GraphQLResolveInfo } from 'graphql';
import type { FieldRateLimiter } from '../ratelimit/field-limits.js';
import { anonymousBucket, type RateLimitPolicy } from '../ratelimit/policy.js';
import type { RateLimitDecision } from '../ratelimit/store.js';
import type { Caller } from '../auth/identity.js';
import type { PrismaClient } from '../db/prisma.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { ListedCondition } from '../db/catalog-changes.js';

/**
 * What the HTTP layer learns of a request before GraphQL runs. It is kept on the object the
 * server hands each request (Yoga's server context), which is also the base of the request's
 * GraphQL context: one object per request carries all of its state, from arrival to response.
 */
export interface RequestState {
  /** The request id of the logs and of X-Request-ID. */
  requestId?: string;
  /** process.hrtime.bigint() at arrival, for the request's duration. */
  startedAt?: bigint;
  /** Who is calling, decided by the gate (src/http/gate.ts). */
  caller?: Caller;
  /** The bucket the request was charged to and what it said, for the rate-limit headers. */
  rateLimit?: { policy: RateLimitPolicy; decision: RateLimitDecision };
  /** Set by an operation that answered from an Idempotency-Key (src/modules/orders/idempotency.ts). */
  idempotency?: IdempotencyReport;
}

/** How an operation used its Idempotency-Key: the transport says so (REST keeps its own bytes). */
export interface IdempotencyReport {
  accountId: string;
  key: string;
  /** True when the answer is the stored outcome of an earlier request with the key. */
  replayed: boolean;
}

/** Per-request state shared by the GraphQL resolvers and the REST adapter. */
export interface Context extends RequestState {
  prisma: PrismaClient;
  /** The HTTP request, for headers such as Idempotency-Key. */
  request: Request;
  requestId: string;
  caller: Caller;
  /** Per-request DataLoaders by name (src/graphql/loaders.ts). */
  loaders: Map<string, DataLoader<unknown, unknown>>;
  /** Product-list totals, kept and carried across catalogue changes (src/modules/products/list-totals.ts). */
  totals: TotalsOfRequest;
  /** What a change tells webhook subscribers, in the change's own transaction (src/modules/webhooks/outbox.ts). */
  events: EventsOfChange;
  /** Where webhooks may be sent (config WEBHOOK_ALLOW_PRIVATE, and https in production). */
  webhookPolicy: WebhookPolicy;
  /**
   * Counts one call of the resolving field against a per-field limit for this caller (the
   * account for a key, else the client) and throws RATE_LIMIT_EXCEEDED when over.
   */
  limitField(resolver: { parent: unknown; args: object; info: GraphQLResolveInfo }, limit: FieldLimitName): Promise<void>;
}

/** Per-field limits on top of the request limits, by name; their numbers come from config. */
export type FieldLimitName = 'createOrder';
/** `unit`: what the limit counts, in the plural, for its message and RateLimit-Policy ("orders"). */
export type FieldLimits = Record<FieldLimitName, { max: number; windowMs: number; unit: string }>;

/** Exact product-list totals for this request (kept across requests by modules/products/list-totals.ts). */
export interface TotalsOfRequest {
  /**
   * The number of products matching every condition (none: every product, active or not).
   * Requests that need the same total at the same revision share one computation.
   */
  products(conditions: ListedCondition[]): Promise<number>;
}

/** Where webhooks may be sent (src/modules/webhooks/targets.ts applies it). */
export interface WebhookPolicy {
  /** WEBHOOK_ALLOW_PRIVATE=true: loopback, private and link-local targets allowed (development, tests). */
  allowPrivate: boolean;
  /** NODE_ENV=production: https URLs only. */
  requireHttps: boolean;
}

/** A status change as its event tells it. */
export interface StatusChange {
  from: string;
  to: string;
  actor: 'buyer' | 'supplier';
}

/** A product's stock as one change left it, for the low-stock rule. */
export interface StockChange {
  productId: string;
  before: number;
  after: number;
  lowStockThreshold: number;
  trackInventory: boolean;
}

/**
 * The events of a change, written with `tx` (the change's transaction) so that an event exists
 * exactly when its change does: the transactional outbox, delivered by src/modules/webhooks/worker.ts.
 */
export interface EventsOfChange {
  orderCreated(tx: Prisma.TransactionClient, orderId: string): Promise<void>;
  orderStatusChanged(tx: Prisma.TransactionClient, orderId: string, change: StatusChange): Promise<void>;
  stockChanged(tx: Prisma.TransactionClient, supplierId: string, changes: readonly StockChange[]): Promise<void>;
}

export interface ContextDeps {
  prisma: PrismaClient;
  events: EventsOfChange;
  webhookPolicy: WebhookPolicy;
  fieldLimiter: FieldRateLimiter;
  fieldLimits: FieldLimits;
  listTotals: { forRequest(): TotalsOfRequest };
}

/** Who a per-field limit counts: the account behind a key (all its keys together), or the client. */
const fieldLimitIdentity = (caller: Caller) => (caller.kind === 'key' ? `account:${caller.accountId}` : anonymousBucket(caller.ip));
/** The same, in the words of the limit's message. */
const fieldLimitPer = (caller: Caller) => (caller.kind === 'key' ? 'account (all of its API keys, REST and GraphQL together)' : 'client address');

/**
 * Yoga's context factory: what a request's context adds to its state. /graphql and /api both
 * come through it, once per request, after the gate (src/http/gate.ts) has set the caller.
 * `anonymous` names the client of a request the gate did not see (none does today).
 */
export function createContextFactory({ prisma, events, webhookPolicy, fieldLimiter, fieldLimits, listTotals }: ContextDeps) {
  return (state: RequestState & { request: Request }, anonymous: () => Caller): Context => {
    const caller = state.caller ?? anonymous();
    return {
      ...state,
      prisma,
      requestId: state.requestId ?? crypto.randomUUID(),
      caller,
      loaders: new Map(),
      totals: listTotals.forRequest(),
      events,
      webhookPolicy,
      limitField: ({ parent, args, info }, name) =>
        fieldLimiter.check({ identity: fieldLimitIdentity(caller), per: fieldLimitPer(caller), ...fieldLimits[name], parent, args: { ...args }, info }),
    };
  };
}
