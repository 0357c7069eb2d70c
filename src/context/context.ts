import crypto from 'node:crypto';
import type DataLoader from 'dataloader';
import type { GraphQLResolveInfo } from 'graphql';
import type { Actor, Caller, KeyCaller } from './actor.js';
import type { PrismaClient } from '../db/prisma.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { ListedCondition } from '../db/catalog-changes.js';
import type { Logger } from '../config/logger.js';
import type { FieldLimitName } from '../config/limits.js';

// One request context for every face. A face (GraphQL, REST, the dashboard, the keys CLI, the
// webhook worker) reads its request (headers, form, arguments), asks the one factory below for a
// context, calls services with it first, and renders what they return. Services know no HTTP:
// what they need of the request (the Idempotency-Key, the client's address) reaches them here or
// as an argument, already read by the face.

/** What every face's context holds: who asks, the database, the request's loaders, logger and clock. */
export interface RequestContext {
  actor: Actor;
  /**
   * The database: the primary, except in an API request whose operation only reads the catalogue,
   * which src/pipeline/read-routing.ts points at a read replica before it executes (src/db/replicas.ts
   * decides which, once for every face).
   */
  prisma: PrismaClient;
  /** The request's DataLoaders by name (src/context/loaders.ts); the supplier membership is one. */
  loaders: Map<string, DataLoader<unknown, unknown>>;
  logger: Logger;
  /** The request id of the logs and of X-Request-ID (a fresh one for the CLI and the worker). */
  requestId: string;
  /** The request's clock (tests pass a manual one). */
  now(): Date;
  /** Where webhooks may be sent (config WEBHOOK_ALLOW_PRIVATE, and https in production). */
  webhookPolicy: WebhookPolicy;
  /** The client's User-Agent, where the security log wants it (the dashboard's requests). */
  userAgent?: string;
}

/** How an operation used its Idempotency-Key: the transport says so (REST keeps its own bytes). */
export interface IdempotencyReport {
  accountId: string;
  key: string;
  /** True when the answer is the stored outcome of an earlier request with the key. */
  replayed: boolean;
}

/** The context of an API request (GraphQL or REST): the caller, and what the API's services use. */
export interface ApiContext extends RequestContext {
  actor: Caller;
  /**
   * How the request's operation used its Idempotency-Key: written by reportUse
   * (src/domain/orders/idempotency.ts) alone, as the order services answer; the faces report it
   * (REST its kept bytes, both the Idempotent-Replayed header).
   */
  idempotency?: IdempotencyReport;
  /** The Idempotency-Key header as sent (null: none), read by the face; the order services check it. */
  idempotencyKey: string | null;
  /** Product-list totals, kept and carried across catalogue changes (src/domain/products/list-totals.ts). */
  totals: TotalsOfRequest;
  /** What a change tells webhook subscribers, in the change's own transaction (src/domain/webhooks/outbox.ts). */
  events: EventsOfChange;
  /**
   * Counts one call of the resolving field against a per-field limit for this caller (the
   * account for a key, else the client) and throws RATE_LIMIT_EXCEEDED when over.
   */
  limitField(resolver: Parameters<FieldLimiter>[1], limit: FieldLimitName): Promise<void>;
  /** Signs the connection cursors the API hands out and opens the ones it is given (src/graphql/cursors.ts). */
  cursors: CursorSealSource;
  /**
   * Points the request's reads (`prisma`, and the list totals it reads) at `client`: a read
   * replica's for a read-only catalogue operation, the primary's again if that replica fails, then
   * `afresh`, without what its loaders read there. The read-routing stage (src/pipeline/read-routing.ts)
   * alone calls it, on the context the operation executes with: the one writer of `prisma` and `loaders`.
   */
  readFrom(client: PrismaClient, options?: { afresh: true }): void;
  /**
   * The scopes the request's key was found to carry: written by requireScopesOnce
   * (src/auth/scopes.ts) alone, so that a scope checked once for the request (REST's route, before
   * its input is read) is not checked again by the fields it runs. Absent until a check passed.
   */
  checkedScopes?: ReadonlySet<string>;
  /** The process's subscriptions feed (src/background/live-hub.ts), when it serves them. */
  live?: LiveFeed;
}

/** A connection cursor sealed for clients, and opened back to the raw one plugin-prisma pages with. */
export interface CursorSeal {
  sign(raw: string): string;
  /** The raw cursor, or undefined when `sealed` was not signed with one of the service's secrets. */
  open(sealed: string): string | undefined;
}

/** The seal itself when its secrets are known; a promise of it while they are being read. */
export type CursorSealSource = () => CursorSeal | Promise<CursorSeal>;

/** Counts one call of a field against a per-field limit (LIMITS.fields, src/config/limits.ts) for `caller`; throws RATE_LIMIT_EXCEEDED when over. */
export type FieldLimiter = (caller: Caller, resolver: { parent: unknown; args: object; info: GraphQLResolveInfo }, limit: FieldLimitName) => Promise<void>;

/** Exact product-list totals for this request (kept across requests by src/domain/products/list-totals.ts). */
export interface TotalsOfRequest {
  /**
   * The number of products matching every condition (none: every product, active or not).
   * Requests that need the same total at the same revision share one computation.
   */
  products(conditions: ListedCondition[]): Promise<number>;
}

/** Where webhooks may be sent (src/domain/webhooks/targets.ts applies it). */
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
 * exactly when its change does: the transactional outbox, delivered by src/background/webhook-worker.ts.
 */
export interface EventsOfChange {
  orderCreated(tx: Prisma.TransactionClient, orderId: string): Promise<void>;
  orderStatusChanged(tx: Prisma.TransactionClient, orderId: string, change: StatusChange): Promise<void>;
  stockChanged(tx: Prisma.TransactionClient, supplierId: string, changes: readonly StockChange[]): Promise<void>;
}

/** The order events a subscriber hears, in the order of an order's life. */
export const ORDER_EVENT_TYPES = ['CREATED', 'STATUS_CHANGED', 'CANCELLED'] as const;

/** A change to an order a subscriber sees, and as whose (buyer's or supplier's) it is read. */
export interface OrderSignal {
  type: (typeof ORDER_EVENT_TYPES)[number];
  orderId: string;
  owner: { buyerId: string } | { supplierId: string };
}

/** The last item of a stream whose API key stopped working (revoked, expired) or changed its scopes. */
export interface KeyEnded {
  keyEnded: true;
}

/**
 * What feeds GraphQL subscriptions, with ids only (src/background/live-hub.ts); the resolvers read
 * the rows. Each stream takes one of its key's places (SUBSCRIPTIONS_PER_KEY, across every
 * instance) before it is given, so the promise rejects with the refusal (RATE_LIMIT_EXCEEDED,
 * UNAUTHORIZED for a key revoked or expired meanwhile, SERVICE_UNAVAILABLE while stopping).
 * `gone`, when given, ends the stream and gives its place back as it aborts (the subscriber left),
 * whether or not the stream was ever read.
 */
export interface LiveFeed {
  /** The changes of the orders the key's account sees, as buyer or as a member of the order's supplier. */
  orders(key: KeyCaller, gone?: AbortSignal): Promise<AsyncIterable<OrderSignal | KeyEnded>>;
  /** A product's id each time its price, stock or active state changes. */
  product(key: KeyCaller, productId: string, gone?: AbortSignal): Promise<AsyncIterable<string | KeyEnded>>;
}

/** What every context is made of. */
export interface ContextDeps {
  prisma: PrismaClient;
  logger: Logger;
  webhookPolicy: WebhookPolicy;
  /** Unix ms (default Date.now). */
  now?: () => number;
}

/** What only the API's contexts carry; a process without the API (the CLI) has none. */
export interface ApiDeps {
  /** Made from the factory itself: an event's data is read in a context of the factory's (forEvent). */
  events: (factory: ContextFactory) => EventsOfChange;
  limitField: FieldLimiter;
  /** `reader`: the client the request reads with at the time (a replica's, or the primary's). */
  listTotals: { forRequest(reader: () => PrismaClient): TotalsOfRequest };
  cursors: CursorSealSource;
  /** What feeds this process's GraphQL subscriptions (src/background/live-hub.ts); none: subscriptions are unavailable. */
  live?: LiveFeed;
}

export type ContextFactory = ReturnType<typeof createContextFactory>;

/**
 * The one context factory: each face asks it for its context. `api` is given by a process that
 * serves the API (the app); the CLI makes its contexts without it. Both build it through
 * src/contexts.ts.
 */
export function createContextFactory(deps: ContextDeps, api?: ApiDeps) {
  const clock = deps.now ?? Date.now;
  const common = (actor: Actor, requestId: string, prisma: PrismaClient = deps.prisma): RequestContext => ({
    actor,
    prisma,
    loaders: new Map(),
    logger: deps.logger,
    requestId,
    now: () => new Date(clock()),
    webhookPolicy: deps.webhookPolicy,
  });
  const apiDeps = (): ApiDeps => {
    if (!api) throw new Error('This process serves no API: its contexts have no API services');
    return api;
  };
  let events: EventsOfChange | undefined;

  const factory = {
    /**
     * An API request's context (GraphQL or REST, once per request, after the gate has decided
     * the caller). What the face read of the request: `actor` (absent for a request the gate did
     * not see: none does today), its request id, and the Idempotency-Key header.
     */
    forApi(request: { actor?: Caller; anonymous: () => Caller; requestId?: string; idempotencyKey: string | null }): ApiContext {
      const { limitField, listTotals, cursors, events: eventsFrom, live } = apiDeps();
      events ??= eventsFrom(factory);
      const actor = request.actor ?? request.anonymous();
      // The client the request reads with: the primary unless readFrom says otherwise. Kept here,
      // not only on the context, because the context a face executes with may be a copy of this one.
      let reads = deps.prisma;
      return {
        ...common(actor, request.requestId ?? crypto.randomUUID()),
        actor,
        idempotencyKey: request.idempotencyKey,
        totals: listTotals.forRequest(() => reads),
        events,
        limitField: (resolver, name) => limitField(actor, resolver, name),
        cursors,
        live,
        readFrom(this: ApiContext, client: PrismaClient, options?: { afresh: true }) {
          reads = client;
          this.prisma = client;
          if (options?.afresh) this.loaders = new Map();
        },
      };
    },

    /**
     * The context an event's data is read in: the API's view of `reader` (the account the event
     * is for), reading with `tx`, the change's own transaction, so the data is the committed state.
     */
    forEvent(tx: Prisma.TransactionClient, reader: KeyCaller): ApiContext {
      return inTransaction(factory.forApi({ actor: reader, anonymous: () => reader, idempotencyKey: null }), tx);
    },

    /**
     * A dashboard page's: the signed-in owner of an account, or a visitor (anonymous) before sign-in.
     * The dashboard logs through its context, so its logger names the request (X-Request-ID).
     */
    forDashboard(visit: { requestId: string; ip: string; accountId: string | null; sessionId?: string; userAgent?: string }): RequestContext {
      const actor: Actor =
        visit.accountId === null ? { kind: 'anonymous', ip: visit.ip } : { kind: 'session', accountId: visit.accountId, ip: visit.ip, ...(visit.sessionId ? { sessionId: visit.sessionId } : {}) };
      return { ...common(actor, visit.requestId), logger: deps.logger.child({ requestId: visit.requestId }), ...(visit.userAgent ? { userAgent: visit.userAgent } : {}) };
    },

    /** A keys CLI command's: the operator. */
    forOperator(): RequestContext {
      return common({ kind: 'operator' }, crypto.randomUUID());
    },

    /** The service's own work (`name`: the webhook worker), on a pool of its own when given one. */
    forSystem(name: string, prisma?: PrismaClient): RequestContext {
      return common({ kind: 'system', name }, crypto.randomUUID(), prisma);
    },
  };
  return factory;
}

/** The same context, reading and writing with `tx`: a transaction's client has every delegate the services use. */
export const inTransaction = <C extends RequestContext>(ctx: C, tx: Prisma.TransactionClient): C => ({ ...ctx, prisma: tx as PrismaClient });

/**
 * A caller's part of a service's creating transaction, so that both commit or neither does (the
 * dashboard's one-time form token: src/accounts/form-claims.ts). `before` runs first in the
 * transaction, before any lock or limit of the service's, and must lock nothing the service then
 * locks (not even through a foreign key); `after` runs last, with the new row's id. Whatever
 * either throws undoes the creation and reaches the caller as thrown.
 */
export interface CreationStep {
  before(tx: Prisma.TransactionClient): Promise<void>;
  after(tx: Prisma.TransactionClient, createdId: string): Promise<void>;
}
