import type { GraphQLSchema } from 'graphql';
import { webhookPolicyOf, type Config } from './config/config.js';
import type { Logger } from './config/logger.js';
import { createContextFactory, type ContextFactory, type LiveFeed } from './context/context.js';
import type { PrismaClient } from './db/prisma.js';
import { createListTotals } from './domain/products/list-totals.js';
import { createRepresentation } from './domain/representations.js';
import { createOutbox } from './domain/webhooks/outbox.js';
import { cursorSealSource } from './graphql/cursors.js';
import { createFieldLimiter, createFieldRateLimiter } from './ratelimit/field-limits.js';
import type { RateLimitStore } from './ratelimit/store.js';

// The context side of the composition root: the one context factory as this service builds it.
// The whole graph (src/services.ts) builds it with the API's parts; the keys CLI and the first
// start's demo key without them, so they start nothing they do not use (no store, no listener)
// and load no more than they use (the schema comes with the API's parts).

/** What every context is made of. */
export interface ContextBase {
  prisma: PrismaClient;
  logger: Logger;
  config: Config;
  /** Unix ms (default Date.now); tests pass a manual one. */
  now?: () => number;
}

/** What only a process serving the API gives its contexts. */
export interface ApiParts {
  /** The API's schema (src/domain/schema.ts): an event's data is read as the API answers. */
  schema: GraphQLSchema;
  /** Where the per-field limits count. */
  store: RateLimitStore;
  /** What feeds the GraphQL subscriptions; none: they are unavailable. */
  live?: LiveFeed;
}

export interface Contexts {
  contexts: ContextFactory;
  /** Saves what the API's parts hold (the list totals); nothing to do without them. */
  close(): Promise<void>;
}

/** The context factory of every face: with `api`, an API request's contexts carry the API's services. */
export function createContexts({ prisma, logger, config, now }: ContextBase, api?: ApiParts): Contexts {
  const base = { prisma, logger, webhookPolicy: webhookPolicyOf(config), now };
  if (!api) return { contexts: createContextFactory(base), close: async () => undefined };
  const { schema, store, live } = api;
  const listTotals = createListTotals(prisma, (error) => logger.error({ err: error }, 'saving list totals failed'));
  const contexts = createContextFactory(base, {
    // An event's data is its resource's representation, read in the event's transaction as the
    // event's reader would be answered over the API.
    events: (factory) => createOutbox(createRepresentation(schema, factory.forEvent)),
    limitField: createFieldLimiter(createFieldRateLimiter(store, { now }), { createOrder: config.ORDER_CREATE_LIMIT }),
    listTotals,
    cursors: cursorSealSource(config.CURSOR_SECRETS, prisma),
    live,
  });
  return { contexts, close: () => listTotals.close() };
}
