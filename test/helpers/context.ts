import pino from 'pino';
import { loadConfig } from '../../src/config/config.js';
import type { ContextFactory } from '../../src/context/context.js';
import { createContexts } from '../../src/contexts.js';
import type { PrismaClient } from '../../src/db/prisma.js';
import { schema } from '../../src/domain/schema.js';
import { createRateLimitStore } from '../../src/ratelimit/create-store.js';
import type { RateLimitStore } from '../../src/ratelimit/store.js';

/**
 * The settings of the tests that call services directly: webhooks may go to this machine, and an
 * account may create far more orders a minute than the suite does. No CURSOR_SECRETS: the app's
 * own default, the secret kept in the database.
 */
const config = loadConfig({ NODE_ENV: 'test', WEBHOOK_ALLOW_PRIVATE: 'true', ORDER_CREATE_LIMIT: '1000' });
const logger = pino({ level: 'silent' });

/**
 * The service's own context factory over `prisma`, for tests that call services directly: the
 * same contexts the app's faces make (the CLI's operator, the API's callers), with an in-memory
 * rate-limit store that `close` releases.
 */
export function testContexts(prisma: PrismaClient): { contexts: ContextFactory; store: RateLimitStore; close: () => Promise<void> } {
  const store = createRateLimitStore({});
  const made = createContexts({ prisma, logger, config }, { schema, store });
  const close = async () => {
    await made.close();
    await store.close();
  };
  return { contexts: made.contexts, store, close };
}

/**
 * The operator's context over `prisma` (the keys CLI's), for tests that call account services
 * directly; its clock stands at `at` when given (the services read the time from the context).
 */
export const asOperator = (prisma: PrismaClient, at?: Date) =>
  createContexts({ prisma, logger, config, now: at && (() => at.getTime()) }).contexts.forOperator();
