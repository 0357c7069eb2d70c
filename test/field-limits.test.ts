// Per-field limits (graphql-rate-limit over our stores), through a tiny graphql-js schema, on the
// memory backend and on Redis (REDIS_URL, or a redis-server child process this file starts; with
// neither, the Redis cases are reported as skipped).

import { randomUUID } from 'node:crypto';
import {
  graphql,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  type ExecutionResult,
  type GraphQLResolveInfo,
} from 'graphql';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../src/shared/errors.js';
import { createFieldRateLimiter, retryAfterSeconds, type FieldRateLimiter } from '../src/ratelimit/field-limits.js';
import { createRateLimitStore } from '../src/ratelimit/create-store.js';
import type { RateLimitStore } from '../src/ratelimit/store.js';
import { manualClock, type ManualClock } from './helpers/clock.js';
import { EXTERNAL_REDIS_URL, freePort, HAS_REDIS_SERVER, useTestRedis } from './helpers/redis.js';

const REDIS_AVAILABLE = Boolean(EXTERNAL_REDIS_URL) || HAS_REDIS_SERVER;

interface Ctx {
  limiter: FieldRateLimiter;
  identity: string;
  max: number;
  windowMs: number;
}

// `limited`, `other` and `perId` are limited per caller with the context's max/window; `perId`
// keeps a separate limit per value of its `id` argument.
const limitedField = (identityArgs: readonly string[]) => ({
  type: GraphQLString,
  args: { id: { type: GraphQLString } },
  resolve: async (parent: unknown, args: Record<string, unknown>, ctx: Ctx, info: GraphQLResolveInfo) => {
    await ctx.limiter.check({ identity: ctx.identity, max: ctx.max, windowMs: ctx.windowMs, parent, args, info, identityArgs });
    return 'ok';
  },
});
let capturedInfo: GraphQLResolveInfo | undefined;
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: 'Query',
    fields: {
      limited: limitedField([]),
      perId: limitedField(['id']),
      other: limitedField([]),
      // Hands a real GraphQLResolveInfo to the tests that call check() directly.
      info: {
        type: new GraphQLNonNull(new GraphQLList(GraphQLString)),
        resolve: (_p: unknown, _a: unknown, _c: unknown, info: GraphQLResolveInfo) => {
          capturedInfo = info;
          return [];
        },
      },
    },
  }),
});

async function run(ctx: Ctx, source: string): Promise<ExecutionResult> {
  return graphql({ schema, source, contextValue: ctx });
}

async function realInfo(): Promise<GraphQLResolveInfo> {
  await graphql({ schema, source: '{ info }' });
  if (!capturedInfo) throw new Error('no info captured');
  return capturedInfo;
}

function codes(result: ExecutionResult): unknown[] {
  return (result.errors ?? []).map((e) => e.extensions.code);
}

const redisUrl = useTestRedis();

const opened: RateLimitStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

const backends = [
  { name: 'memory', skip: false, store: async () => createRateLimitStore({}) },
  {
    name: 'redis',
    skip: !REDIS_AVAILABLE,
    store: async () => {
      const store = createRateLimitStore({ redisUrl: redisUrl()! });
      expect(await store.waitUntilReady(5000)).toBe(true);
      return store;
    },
  },
];

for (const backend of backends) {
  describe.skipIf(backend.skip)(`field limits on the ${backend.name} backend`, () => {
    async function limiter(clock?: ManualClock): Promise<{ limiter: FieldRateLimiter; store: RateLimitStore }> {
      const store = await backend.store();
      opened.push(store);
      return { limiter: createFieldRateLimiter(store, { now: clock?.now }), store };
    }
    const who = () => `acct-${randomUUID()}`;

    it('refuses the (max+1)-th call within the window with RATE_LIMIT_EXCEEDED and retryAfter', async () => {
      const { limiter: l, store } = await limiter(manualClock());
      const ctx: Ctx = { limiter: l, identity: who(), max: 3, windowMs: 60_000 };
      for (let i = 0; i < 3; i++) expect(await run(ctx, '{ limited }')).toEqual({ data: { limited: 'ok' } });
      const refused = await run(ctx, '{ limited }');
      expect(refused.data).toEqual({ limited: null });
      expect(codes(refused)).toEqual(['RATE_LIMIT_EXCEEDED']);
      const err = refused.errors![0]!;
      expect(err.originalError).toBeInstanceOf(AppError);
      expect(err.message).toBe('Too many calls to Query.limited: at most 3 calls to Query.limited per minute per caller');
      // The spec's place for it: error.retryAfter (REST) / extensions.retryAfter (GraphQL).
      const retryAfter = err.extensions.retryAfter as number;
      expect(err.extensions.details).toBeUndefined();
      // Every call at one instant of the manual clock: the window ends a whole minute later.
      expect(retryAfter).toBe(60);
      // Refused calls count too: still refused.
      expect(codes(await run(ctx, '{ limited }'))).toEqual(['RATE_LIMIT_EXCEEDED']);
      expect(store.fallbackHits).toBe(0);
    });

    it('keeps identities, fields and (with identityArgs) argument values apart', async () => {
      const { limiter: l } = await limiter();
      const a: Ctx = { limiter: l, identity: who(), max: 1, windowMs: 60_000 };
      const b: Ctx = { ...a, identity: who() };
      expect(codes(await run(a, '{ limited }'))).toEqual([]);
      expect(codes(await run(a, '{ limited }'))).toEqual(['RATE_LIMIT_EXCEEDED']);
      expect(codes(await run(b, '{ limited }'))).toEqual([]);
      expect(codes(await run(a, '{ other }'))).toEqual([]);
      expect(codes(await run(a, '{ perId(id: "x") }'))).toEqual([]);
      expect(codes(await run(a, '{ perId(id: "y") }'))).toEqual([]);
      expect(codes(await run(a, '{ perId(id: "x") }'))).toEqual(['RATE_LIMIT_EXCEEDED']);
    });

    it('is exact for concurrent calls: 10 aliases of a 3-per-window field in one query → 3 answered', async () => {
      const { limiter: l } = await limiter();
      const ctx: Ctx = { limiter: l, identity: who(), max: 3, windowMs: 60_000 };
      const aliases = Array.from({ length: 10 }, (_, i) => `a${i}: limited`).join(' ');
      const result = await run(ctx, `{ ${aliases} }`);
      expect(Object.values(result.data ?? {}).filter((v) => v === 'ok')).toHaveLength(3);
      expect(codes(result)).toEqual(Array(7).fill('RATE_LIMIT_EXCEEDED'));
    });

    it('is exact for 50 concurrent direct calls (max 5)', async () => {
      const { limiter: l } = await limiter();
      const info = await realInfo();
      const identity = who();
      const outcomes = await Promise.allSettled(
        Array.from({ length: 50 }, () => l.check({ identity, max: 5, windowMs: 60_000, parent: null, args: {}, info })),
      );
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
      for (const o of outcomes) {
        if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', status: 429 });
      }
    });

    // The window is measured by the limiter's clock, on either backend (the log keeps the times it is given).
    it('lets calls through again once the window has passed, not a millisecond before, with retryAfter at least 1', async () => {
      const clock = manualClock();
      const { limiter: l } = await limiter(clock);
      const ctx: Ctx = { limiter: l, identity: who(), max: 2, windowMs: 60_000 };
      const started = clock.now();
      expect(codes(await run(ctx, '{ limited }'))).toEqual([]);
      clock.advance(1_000);
      expect(codes(await run(ctx, '{ limited }'))).toEqual([]);
      const refused = await run(ctx, '{ limited }');
      // Refused calls count too, and the log keeps the newest 2: the second call and this one, both
      // at started + 1 s. One more call fits once they leave the window, at started + 61 s.
      expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: 60 });

      clock.advanceTo(started + 60_999);
      const stillRefused = await run(ctx, '{ limited }');
      expect(stillRefused.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: 1 });
      clock.advance(1);
      expect(codes(await run(ctx, '{ limited }'))).toEqual([]);
    });

    it('rejects a nonsensical limit as a programming error, not a rate-limit answer', async () => {
      const { limiter: l } = await limiter();
      const info = await realInfo();
      await expect(l.check({ identity: who(), max: 0, windowMs: 1000, parent: null, args: {}, info })).rejects.toThrow(RangeError);
    });
  });
}

describe('field limits without a usable Redis', () => {
  it('are still enforced, by the in-process fallback', async () => {
    const port = await freePort();
    const store = createRateLimitStore({ redisUrl: `redis://127.0.0.1:${port}` });
    opened.push(store);
    const ctx: Ctx = { limiter: createFieldRateLimiter(store), identity: 'acct-fallback', max: 2, windowMs: 60_000 };
    const result = await run(ctx, '{ a: limited b: limited c: limited }');
    expect(codes(result)).toEqual(['RATE_LIMIT_EXCEEDED']);
    expect(store.usingFallback).toBe(true);
    expect(store.fallbackHits).toBe(3);
  });
});

describe('retryAfterSeconds', () => {
  it('waits for the oldest of the newest `max` calls to leave the window, at least 1 s', () => {
    // max 3, window 10 s: calls at 0, 1 s, 2 s; refused at 2.5 s → the log keeps 2.5, 2, 1 → free at 11 s.
    expect(retryAfterSeconds(2500, [2000, 1000, 0], 3, 10_000, 2500)).toBe(9);
    expect(retryAfterSeconds(2500, [2000, 1000, 0], 3, 10_000, 10_999)).toBe(1);
    expect(retryAfterSeconds(2500, [2000, 1000, 0], 3, 10_000, 11_000)).toBe(1);
    expect(retryAfterSeconds(100, [], 1, 60_000, 100)).toBe(60);
    expect(retryAfterSeconds(100, [50], 5, 60_000, 100)).toBe(1);
  });
});
