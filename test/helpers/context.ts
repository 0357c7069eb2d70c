import pino from 'pino';
import { createContextFactory, type ContextFactory } from '../../src/context/context.js';
import type { PrismaClient } from '../../src/db/prisma.js';
import { cursorSealSource } from '../../src/graphql/cursors.js';
import { createListTotals } from '../../src/domain/products/list-totals.js';
import { createRepresentation } from '../../src/domain/representations.js';
import { schema } from '../../src/domain/schema.js';
import { createOutbox } from '../../src/domain/webhooks/outbox.js';
import { createRateLimitStore } from '../../src/ratelimit/create-store.js';
import { createFieldLimiter, createFieldRateLimiter } from '../../src/ratelimit/field-limits.js';
import type { RateLimitStore } from '../../src/ratelimit/store.js';

/**
 * The service's own context factory over `prisma`, for tests that call services directly: the
 * same contexts the app's faces make (the CLI's operator, the API's callers), with an in-memory
 * rate-limit store that `close` releases.
 */
export function testContexts(prisma: PrismaClient): { contexts: ContextFactory; store: RateLimitStore; close: () => Promise<void> } {
  const store = createRateLimitStore({});
  const listTotals = createListTotals(prisma);
  const contexts = createContextFactory(
    { prisma, logger: pino({ level: 'silent' }), webhookPolicy: { allowPrivate: true, requireHttps: false } },
    {
      events: (factory) => createOutbox(createRepresentation(schema, factory.forEvent)),
      limitField: createFieldLimiter(createFieldRateLimiter(store), { createOrder: 1000 }),
      listTotals,
      // The app's own: the secret kept in the database.
      cursors: cursorSealSource(undefined, prisma),
    },
  );
  const close = async () => {
    await listTotals.close();
    await store.close();
  };
  return { contexts, store, close };
}

/**
 * The operator's context over `prisma` (the keys CLI's), for tests that call account services
 * directly; its clock stands at `at` when given (the services read the time from the context).
 */
export const asOperator = (prisma: PrismaClient, at?: Date) =>
  createContextFactory({
    prisma,
    logger: pino({ level: 'silent' }),
    webhookPolicy: { allowPrivate: true, requireHttps: false },
    now: at && (() => at.getTime()),
  }).forOperator();
