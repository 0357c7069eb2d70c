import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import type { Caller } from '../../src/context/actor.js';
import { createContexts } from '../../src/contexts.js';
import { createPrisma } from '../../src/db/prisma.js';
import { schema } from '../../src/domain/schema.js';
import { MemoryRateLimitStore } from '../../src/ratelimit/memory-store.js';

// The composition root's context side (src/contexts.ts): the keys CLI's contexts start nothing
// (this tier refuses any connection), and the API's carry the API's parts. Nothing here queries:
// the client below never connects.

const prisma = createPrisma({ url: 'postgresql://nobody@localhost:1/none', poolMax: 1 });
const logger = pino({ level: 'silent' });
const caller: Caller = { kind: 'key', ip: '127.0.0.1', keyId: 'k', accountId: 'a', plan: 'PRO', scopes: [], rateLimit: null, rateWindowSeconds: null };

describe('contexts of the composition root', () => {
  it('without the API: the operator and the system act, an API request has no services to use', async () => {
    const { contexts, close } = createContexts({ prisma, logger, config: loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'true' }) });
    const operator = contexts.forOperator();
    expect(operator.actor).toEqual({ kind: 'operator' });
    expect(operator.webhookPolicy).toEqual({ allowPrivate: true, requireHttps: false });
    expect(contexts.forSystem('demo data').actor).toEqual({ kind: 'system', name: 'demo data' });
    expect(() => contexts.forApi({ actor: caller, anonymous: () => caller, idempotencyKey: null })).toThrow(/serves no API/);
    await close();
  });

  it('with the API: a request’s context carries its services, on the settings’ webhook policy', async () => {
    const store = new MemoryRateLimitStore();
    const { contexts, close } = createContexts({ prisma, logger, config: loadConfig({ NODE_ENV: 'production' }) }, { schema, store });
    const ctx = contexts.forApi({ actor: caller, anonymous: () => caller, idempotencyKey: 'once' });
    expect(ctx).toMatchObject({ actor: caller, idempotencyKey: 'once', webhookPolicy: { allowPrivate: false, requireHttps: true }, live: undefined });
    expect(ctx.events).toBeDefined();
    expect(ctx.totals).toBeDefined();
    await close();
    await store.close();
  });
});
