import type { Caller, KeyCaller } from '../context/actor.js';
import { AppError } from '../shared/errors.js';

/** Every scope a key can carry (spec, Authentication). */
export const SCOPES = [
  'read:products',
  'read:categories',
  'read:suppliers',
  'read:orders',
  'read:reviews',
  'read:stock',
  'read:prices',
  'write:orders',
  'write:products',
  'admin:all',
] as const;

export type Scope = (typeof SCOPES)[number];

/** What an account may give its own keys in the dashboard (and the demo key has): every read scope and write:orders, never admin:all or write:products. */
export const SELF_SERVICE_SCOPES: readonly Scope[] = SCOPES.filter((s) => s.startsWith('read:') || s === 'write:orders');

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** admin:all grants every scope. */
export function hasScope(granted: readonly string[], needed: Scope): boolean {
  return granted.includes('admin:all') || granted.includes(needed);
}

/**
 * Why the caller may not use what needs `needed`, or undefined when it may: no key → 401; a key
 * without a scope → 403 naming what is missing.
 */
export function scopeError(caller: Caller, needed: readonly Scope[]): AppError | undefined {
  if (caller.kind !== 'key') return new AppError('UNAUTHORIZED', 'An API key is required: send X-API-Key or Authorization: Bearer');
  const missing = needed.filter((scope) => !hasScope(caller.scopes, scope));
  if (!missing.length) return undefined;
  return new AppError('FORBIDDEN', `This API key lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`, {
    requiredScopes: missing,
  });
}

/**
 * The caller's key, if it carries every scope in `needed`: the one gate in front of orders,
 * stock and prices, whichever interface asked (GraphQL's fields through the builder's scope
 * rules, src/graphql/auth-scopes.ts; REST's routes through the router). Throws scopeError's error.
 */
export function requireScopes(caller: Caller, ...needed: Scope[]): KeyCaller {
  const error = scopeError(caller, needed);
  if (error) throw error;
  return caller as KeyCaller;
}
