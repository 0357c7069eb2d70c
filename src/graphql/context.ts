import type DataLoader from 'dataloader';
import type { GraphQLResolveInfo } from 'graphql';
import type { FieldRateLimiter } from '../ratelimit/field-limits.js';
import { anonymousBucket } from '../ratelimit/policy.js';
import type { Caller } from '../auth/identity.js';
import type { PrismaClient } from '../db/prisma.js';
import type { ListedCondition } from '../db/catalog-changes.js';

/** Per-request state shared by the GraphQL resolvers and the REST adapter. */
export interface Context {
  prisma: PrismaClient;
  /** The HTTP request, for headers such as Idempotency-Key. */
  request: Request;
  requestId: string;
  caller: Caller;
  /** Per-request DataLoaders by name (src/graphql/loaders.ts). */
  loaders: Map<string, DataLoader<unknown, unknown>>;
  /** Product-list totals, kept and carried across catalogue changes (src/modules/products/list-totals.ts). */
  totals: TotalsOfRequest;
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

export interface ContextDeps {
  prisma: PrismaClient;
  fieldLimiter: FieldRateLimiter;
  fieldLimits: FieldLimits;
  listTotals: { forRequest(): TotalsOfRequest };
}

/** Who a per-field limit counts: the account behind a key (all its keys together), or the client. */
const fieldLimitIdentity = (caller: Caller) => (caller.kind === 'key' ? `account:${caller.accountId}` : anonymousBucket(caller.ip));
/** The same, in the words of the limit's message. */
const fieldLimitPer = (caller: Caller) => (caller.kind === 'key' ? 'account (all of its API keys, REST and GraphQL together)' : 'client address');

/**
 * Builds the context for one request; /graphql and /api both call this, once per request, with
 * the caller the gate (src/http/gate.ts) authenticated.
 */
export function createContextFactory({ prisma, fieldLimiter, fieldLimits, listTotals }: ContextDeps) {
  return (request: Request, caller: Caller, requestId: string): Context => ({
    prisma,
    request,
    requestId,
    caller,
    loaders: new Map(),
    totals: listTotals.forRequest(),
    limitField: ({ parent, args, info }, name) =>
      fieldLimiter.check({ identity: fieldLimitIdentity(caller), per: fieldLimitPer(caller), ...fieldLimits[name], parent, args: { ...args }, info }),
  });
}
