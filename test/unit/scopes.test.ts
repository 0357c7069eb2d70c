import { describe, expect, it } from 'vitest';
import { hasScope, isScope, requireScopes, requireScopesOnce, SCOPES, SELF_SERVICE_SCOPES, type ScopeChecks } from '../../src/auth/scopes.js';
import type { KeyCaller } from '../../src/context/actor.js';
import { AppError } from '../../src/shared/errors.js';

// Scopes (src/auth/scopes.ts): what a key may do, checked once in front of orders, stock, prices
// and webhooks, whichever face asks.

const caller = (scopes: string[]): KeyCaller => ({ kind: 'key', ip: '', keyId: 'k', accountId: 'a', plan: 'BASIC', scopes, rateLimit: null, rateWindowSeconds: null });

function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('allowed');
}

describe('scopes', () => {
  it('admin:all grants every scope; no other scope implies another', () => {
    for (const scope of SCOPES) expect(hasScope(['admin:all'], scope)).toBe(true);
    expect(hasScope(['write:orders'], 'read:orders')).toBe(false);
    expect(hasScope(['read:orders'], 'write:orders')).toBe(false);
    expect(hasScope([], 'read:products')).toBe(false);
  });

  it('knows only the scopes of the list, spelt exactly', () => {
    expect(isScope('read:stock')).toBe(true);
    expect(isScope('READ:STOCK')).toBe(false);
    expect(isScope('read:*')).toBe(false);
    expect(isScope('toString')).toBe(false);
  });

  it('lets an account give its own keys every read scope and its own write scopes, never admin:all or write:products', () => {
    expect(SELF_SERVICE_SCOPES).toEqual(SCOPES.filter((s) => s.startsWith('read:')).concat(['write:orders', 'write:webhooks']));
    expect(SELF_SERVICE_SCOPES).not.toContain('admin:all');
    expect(SELF_SERVICE_SCOPES).not.toContain('write:products');
  });

  it('hands back the key of a caller that has every scope asked for', () => {
    const key = caller(['read:orders', 'write:orders']);
    expect(requireScopes(key, 'read:orders', 'write:orders')).toBe(key);
    expect(requireScopes(caller(['admin:all']), 'write:products')).toMatchObject({ kind: 'key' });
  });

  it('asks a caller without a key for one: 401', () => {
    const error = refusal(() => requireScopes({ kind: 'anonymous', ip: '192.0.2.1' }, 'read:orders'));
    expect(error.code).toBe('UNAUTHORIZED');
    expect(error.status).toBe(401);
    expect(error.message).toBe('An API key is required: send X-API-Key or Authorization: Bearer');
  });

  it('tells a key without a scope which ones it lacks: 403', () => {
    const one = refusal(() => requireScopes(caller(['read:orders']), 'read:orders', 'write:orders'));
    expect(one).toMatchObject({ code: 'FORBIDDEN', status: 403, message: 'This API key lacks the scope write:orders', details: { requiredScopes: ['write:orders'] } });
    const two = refusal(() => requireScopes(caller([]), 'read:stock', 'read:prices'));
    expect(two.message).toBe('This API key lacks the scopes read:stock, read:prices');
    expect(two.details).toEqual({ requiredScopes: ['read:stock', 'read:prices'] });
  });

  it('asks nothing more than a valid key when no scope is named (the caller’s own data)', () => {
    expect(requireScopes(caller([]))).toMatchObject({ kind: 'key' });
  });
});

describe('scopes checked once per request', () => {
  /** A request's context as the check sees it, counting how often its key's scopes are read. */
  function request(scopes: string[]) {
    let reads = 0;
    const key = caller([]);
    Object.defineProperty(key, 'scopes', { get: () => (reads++, scopes) });
    const ctx: ScopeChecks = { actor: key };
    return { ctx, key, reads: () => reads };
  }

  it('checks a scope the first time it is asked for and keeps it: REST’s route, then its fields', () => {
    const { ctx, key, reads } = request(['read:orders', 'read:products']);
    expect(requireScopesOnce(ctx, 'read:orders')).toBe(key);
    const first = reads();
    expect(requireScopesOnce(ctx, 'read:orders')).toBe(key);
    expect(requireScopesOnce(ctx)).toBe(key);
    expect(reads()).toBe(first);
    expect(ctx.checkedScopes).toEqual(new Set(['read:orders']));
  });

  it('checks a scope not yet checked, and keeps both', () => {
    const { ctx, reads } = request(['read:orders', 'read:products']);
    requireScopesOnce(ctx, 'read:orders');
    const first = reads();
    requireScopesOnce(ctx, 'read:orders', 'read:products');
    expect(reads()).toBeGreaterThan(first);
    expect(ctx.checkedScopes).toEqual(new Set(['read:orders', 'read:products']));
  });

  it('keeps no refusal: asked again, it is refused again, the same way', () => {
    const { ctx } = request(['read:orders']);
    const once = refusal(() => requireScopesOnce(ctx, 'write:orders'));
    const twice = refusal(() => requireScopesOnce(ctx, 'write:orders'));
    expect(twice).toMatchObject({ code: once.code, message: once.message, details: once.details });
    expect(ctx.checkedScopes).toBeUndefined();
    const anonymous: ScopeChecks = { actor: { kind: 'anonymous', ip: '192.0.2.1' } };
    expect(refusal(() => requireScopesOnce(anonymous)).code).toBe('UNAUTHORIZED');
    expect(refusal(() => requireScopesOnce(anonymous)).code).toBe('UNAUTHORIZED');
  });
});
