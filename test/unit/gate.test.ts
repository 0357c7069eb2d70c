import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import type { KeyCaller } from '../../src/context/actor.js';
import { createGate, type GateDeps } from '../../src/pipeline/gate.js';
import type { Face, RequestState } from '../../src/pipeline/request-state.js';
import { MemoryRateLimitStore } from '../../src/ratelimit/memory-store.js';
import { manualClock } from '../helpers/clock.js';

// The gate (src/pipeline/gate.ts) with its dependencies faked: a table of keys instead of the
// database, a memory store on a manual clock, a fixed client address. Who a request is, which
// bucket pays, and how a refusal is answered on each face.

const GOOD = 'mk_good-key';
const BUSY = 'mk_busy-key';
const ANON_LIMIT = 30;

function keyCaller(keyId: string, over: Partial<KeyCaller> = {}): KeyCaller {
  return { kind: 'key', ip: '', keyId, accountId: `acc-${keyId}`, plan: 'BASIC', scopes: [], rateLimit: null, rateWindowSeconds: null, ...over };
}

function gateWith(over: Partial<GateDeps> = {}) {
  const clock = manualClock(1_700_000_000_000);
  const store = new MemoryRateLimitStore({ now: clock.now });
  const keys = new Map<string, KeyCaller>([
    [GOOD, keyCaller('k-good')],
    [BUSY, keyCaller('k-busy', { plan: 'ENTERPRISE', rateLimit: 2, rateWindowSeconds: 60 })],
  ]);
  const seen = { lookups: [] as string[], revisionReads: 0, used: [] as string[], counted: [] as [string, boolean][], rejected: [] as string[], failures: 0 };
  const gate = createGate({
    authenticate: async (key, ip) => {
      seen.lookups.push(key);
      const found = keys.get(key);
      return found ? { ...found, ip } : null;
    },
    revision: async () => ++seen.revisionReads,
    clientIp: () => '203.0.113.5',
    store,
    policy: { anonymousLimit: ANON_LIMIT },
    onKeyUsed: (id) => void seen.used.push(id),
    onKeyCounted: (id, limited) => void seen.counted.push([id, limited]),
    onRejected: (policy) => void seen.rejected.push(policy),
    onKeyCheckFailed: () => void seen.failures++,
    now: clock.now,
    ...over,
  });
  /** Asks the gate about a request with `headers`; `state` is what the gate decided of it (its admission). */
  async function admit(headers: Record<string, string> = {}, face: Face = 'rest', serverContext: RequestState = {}) {
    const { admission: state, refused } = await gate.admit(new Request('http://unit.test/api/products', { headers }), serverContext, face);
    return { refused, state, body: refused ? await refused.clone().json() : undefined };
  }
  return { gate, admit, seen, clock, store };
}

/** Uses up the client's anonymous bucket. */
async function exhaustAnonymous(admit: ReturnType<typeof gateWith>['admit']) {
  for (let i = 0; i < ANON_LIMIT; i++) expect((await admit()).refused).toBeUndefined();
}

describe('who is calling', () => {
  it('lets a request without a key in as anonymous, charged to its address’s bucket', async () => {
    const { admit } = gateWith();
    const { refused, state } = await admit();
    expect(refused).toBeUndefined();
    expect(state.actor).toEqual({ kind: 'anonymous', ip: '203.0.113.5' });
    expect(state.rateLimit?.policy).toMatchObject({ name: 'anonymous', bucket: 'ip:203.0.113.5', limit: ANON_LIMIT });
  });

  it('lets a valid key in as its caller, charged to the key’s own bucket, and reports its use', async () => {
    const { admit, seen } = gateWith();
    const { refused, state } = await admit({ 'x-api-key': GOOD });
    expect(refused).toBeUndefined();
    expect(state.actor).toMatchObject({ kind: 'key', keyId: 'k-good', ip: '203.0.113.5' });
    expect(state.rateLimit?.policy).toMatchObject({ name: 'basic', bucket: 'key:k-good', limit: 1000, windowMs: 3_600_000 });
    expect(seen.used).toEqual(['k-good']);
    expect(seen.counted).toEqual([['k-good', false]]);
  });

  it('refuses an unknown key with 401 and charges the client’s anonymous bucket, never letting it in as anonymous', async () => {
    const { admit } = gateWith();
    const { refused, state, body } = await admit({ authorization: 'Bearer mk_made-up' });
    expect(refused?.status).toBe(401);
    expect(body).toEqual({ success: false, error: { code: 'UNAUTHORIZED', message: 'Invalid API key: unknown, revoked or expired' } });
    expect(state.actor).toBeUndefined();
    expect(state.rateLimit?.policy.name).toBe('invalid-keys');
    expect(refused?.headers.get('x-ratelimit-remaining')).toBe(String(ANON_LIMIT - 1));
  });

  it('refuses a key found invalid again from memory, without another lookup', async () => {
    const { admit, seen } = gateWith();
    await admit({ 'x-api-key': 'mk_made-up' });
    const again = await admit({ 'x-api-key': 'mk_made-up' });
    expect(again.refused?.status).toBe(401);
    expect(seen.lookups).toEqual(['mk_made-up']);
  });

  it('refuses conflicting keys with 401, charged like an invalid key', async () => {
    const { admit, seen } = gateWith();
    const { refused, body, state } = await admit({ 'x-api-key': GOOD, authorization: 'Bearer mk_other' });
    expect(refused?.status).toBe(401);
    expect(body.error.message).toMatch(/^Conflicting credentials/);
    expect(state.rateLimit?.policy.name).toBe('invalid-keys');
    expect(seen.lookups).toEqual([]);
  });

  it('sees a second key in Node’s raw header lines, which the parsed headers drop', async () => {
    const { admit } = gateWith();
    const state = { req: { rawHeaders: ['Authorization', `Bearer ${GOOD}`, 'Authorization', 'Bearer mk_other'] } } as RequestState;
    const { refused, body } = await admit({ authorization: `Bearer ${GOOD}` }, 'rest', state);
    expect(refused?.status).toBe(401);
    expect(body.error.message).toMatch(/^Conflicting credentials/);
  });
});

describe('when the key cannot be checked', () => {
  it('answers 503 with Retry-After, without rate-limit headers, counting nothing', async () => {
    const { admit, seen, store } = gateWith({
      authenticate: async () => {
        throw new Error('pool exhausted');
      },
    });
    const { refused, body, state } = await admit({ 'x-api-key': GOOD });
    expect(refused?.status).toBe(503);
    expect(refused?.headers.get('retry-after')).toBe('5');
    expect(refused?.headers.get('x-ratelimit-limit')).toBeNull();
    expect(body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryAfter: 5 });
    expect(state.actor).toBeUndefined();
    expect(seen.failures).toBe(1);
    expect((await store.peek('ip:203.0.113.5', ANON_LIMIT, 60_000)).remaining).toBe(ANON_LIMIT);
  });
});

describe('rate limits', () => {
  it('refuses a client without a key past its limit with 429, Retry-After and a hint to get a key', async () => {
    const { admit, seen, clock } = gateWith();
    await exhaustAnonymous(admit);
    clock.advance(20_000);
    const { refused, body } = await admit();
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get('retry-after')).toBe('40');
    expect(refused?.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: 40 });
    expect(body.error.message).toMatch(/at most 30 requests per minute per client address without an API key.*An API key raises the limit/);
    expect(seen.rejected).toEqual(['anonymous']);
  });

  it('opens the anonymous bucket again when its window ends', async () => {
    const { admit, clock } = gateWith();
    await exhaustAnonymous(admit);
    expect((await admit()).refused?.status).toBe(429);
    clock.advance(60_000);
    expect((await admit()).refused).toBeUndefined();
  });

  it('refuses a key past its own limit with 429 naming its plan, and counts the refused request as the key’s', async () => {
    const { admit, seen } = gateWith();
    for (let i = 0; i < 2; i++) expect((await admit({ 'x-api-key': BUSY })).refused).toBeUndefined();
    const { refused, body } = await admit({ 'x-api-key': BUSY });
    expect(refused?.status).toBe(429);
    expect(body.error.message).toMatch(/at most 2 requests per minute for this API key \(enterprise plan\)/);
    expect(seen.counted).toEqual([
      ['k-busy', false],
      ['k-busy', false],
      ['k-busy', true],
    ]);
    expect(seen.used).toEqual(['k-busy', 'k-busy']);
    expect(seen.rejected).toEqual(['enterprise']);
  });

  it('looks up a key it has not seen lately even when the client’s anonymous bucket is empty: anonymous traffic never refuses a valid key', async () => {
    const { admit, seen } = gateWith();
    await exhaustAnonymous(admit);
    expect((await admit()).refused?.status).toBe(429);
    const { refused, state } = await admit({ 'x-api-key': GOOD });
    expect(refused).toBeUndefined();
    expect(state.actor).toMatchObject({ kind: 'key' });
    expect(seen.lookups).toEqual([GOOD]);
  });

  it('does not look up a key it has not seen lately once the client’s invalid-key bucket is empty', async () => {
    const { admit, seen } = gateWith();
    for (let i = 0; i < LIMITS.invalidKeys.perClient.max; i++) expect((await admit({ 'x-api-key': `mk_made-up-${i}` })).refused?.status).toBe(401);
    seen.lookups.length = 0;
    const { refused } = await admit({ 'x-api-key': GOOD });
    expect(refused?.status).toBe(429);
    expect(seen.lookups).toEqual([]);
    // Without a key the client is still served: its anonymous bucket is its own.
    expect((await admit()).refused).toBeUndefined();
  });

  it('lets a key that proved itself lately through even when its client’s anonymous bucket is empty', async () => {
    const { admit } = gateWith();
    expect((await admit({ 'x-api-key': GOOD })).refused).toBeUndefined();
    await exhaustAnonymous(admit);
    const { refused, state } = await admit({ 'x-api-key': GOOD });
    expect(refused).toBeUndefined();
    expect(state.rateLimit?.policy.bucket).toBe('key:k-good');
  });

  it('does not charge a valid key’s request to the anonymous bucket', async () => {
    const { admit, store } = gateWith();
    for (let i = 0; i < 5; i++) await admit({ 'x-api-key': GOOD });
    expect((await store.peek('ip:203.0.113.5', ANON_LIMIT, 60_000)).remaining).toBe(ANON_LIMIT);
  });
});

describe('the request’s revision', () => {
  it('is read at most once per request, by whichever stage asks first, and handed to the key check', async () => {
    let handed: (() => Promise<number>) | undefined;
    const { admit, seen } = gateWith({
      authenticate: async (_key, ip, revision) => {
        handed = revision;
        await revision();
        return { ...keyCaller('k'), ip };
      },
    });
    const { state } = await admit({ 'x-api-key': GOOD });
    expect(handed).toBe(state.revision);
    await state.revision!();
    expect(seen.revisionReads).toBe(1);
  });

  it('is not read at all for a request that nobody asks it of', async () => {
    const { admit, seen } = gateWith();
    await admit();
    expect(seen.revisionReads).toBe(0);
  });
});

describe('refusals on each face', () => {
  it('answers GraphQL in its own error shape, with the same code and headers', async () => {
    const { admit } = gateWith();
    const { refused, body } = await admit({ 'x-api-key': 'mk_nope' }, 'graphql');
    expect(refused?.status).toBe(401);
    expect(body).toEqual({ errors: [{ message: 'Invalid API key: unknown, revoked or expired', extensions: { code: 'UNAUTHORIZED' } }] });
    expect(refused?.headers.get('ratelimit-policy')).toBe('"invalid-keys";q=30;w=60');
  });
});

describe('decorating the response', () => {
  it('puts the charged bucket’s headers on the answer', async () => {
    const { gate, admit } = gateWith();
    const { state } = await admit({ 'x-api-key': GOOD });
    const response = new Response('{}');
    await gate.decorate(new Request('http://unit.test/api/products'), response, state);
    expect(response.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(response.headers.get('x-ratelimit-remaining')).toBe('999');
    expect(response.headers.get('ratelimit')).toBe('"basic";r=999;t=3600');
  });

  it('leaves the headers of a limit the response carries itself (an order limit’s 429)', async () => {
    const { gate, admit } = gateWith();
    const { state } = await admit({ 'x-api-key': GOOD });
    const response = new Response('{}', { headers: { 'x-ratelimit-limit': '20' } });
    await gate.decorate(new Request('http://unit.test/api/orders'), response, state);
    expect(response.headers.get('x-ratelimit-limit')).toBe('20');
    expect(response.headers.get('ratelimit')).toBeNull();
  });

  it('gives a CORS preflight its client’s anonymous bucket as it stands, without charging it', async () => {
    const { gate, admit } = gateWith();
    await admit();
    const preflight = new Request('http://unit.test/api/products', { method: 'OPTIONS' });
    for (let i = 0; i < 3; i++) {
      const response = new Response(null, { status: 204 });
      await gate.decorate(preflight, response, {});
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(ANON_LIMIT - 1));
    }
  });

  it('adds nothing to a request that was never charged (not metered, not a preflight)', async () => {
    const { gate } = gateWith();
    const response = new Response('{}');
    await gate.decorate(new Request('http://unit.test/health'), response, {});
    expect([...response.headers.keys()].filter((h) => h.includes('ratelimit'))).toEqual([]);
  });
});
