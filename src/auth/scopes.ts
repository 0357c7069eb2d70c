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
  'write:webhooks',
  'admin:all',
] as const;

export type Scope = (typeof SCOPES)[number];

/**
 * What each scope lets a key do, as the dashboard's key form says it (one place: the form and its
 * test read this). A scope no endpoint requires says so.
 */
export const SCOPE_USES: Readonly<Record<Scope, string>> = {
  'read:products': 'the productChanged subscription (products themselves need no scope)',
  'read:categories': 'nothing yet: categories are open to every caller',
  'read:suppliers': 'nothing yet: suppliers are open to every caller',
  'read:orders': 'your orders, a supplier’s orders when you act for one, and the orderEvents subscription',
  'read:reviews': 'nothing yet: reviews are open to every caller',
  'read:stock': 'stock records (GET /api/v1/stock), and stock in product changes',
  'read:prices': 'price records (GET /api/v1/prices), and prices in product changes',
  'write:orders': 'placing and cancelling your orders; moving a supplier’s orders when you act for one',
  'write:products': 'changing stock and prices, acting for a supplier',
  'write:webhooks': 'your webhook endpoints (/api/webhooks)',
  'admin:all': 'every scope',
};

/** The scope that grants every other. */
export const EVERY_SCOPE = 'admin:all' satisfies Scope;

/**
 * What an account may give its own keys in the dashboard (and the demo key has): every read scope,
 * write:orders and write:webhooks (its own endpoints), never admin:all or write:products.
 */
export const SELF_SERVICE_SCOPES: readonly Scope[] = SCOPES.filter((s) => s.startsWith('read:') || s === 'write:orders' || s === 'write:webhooks');

/**
 * Everything a publishable key (`pk_`, for browser code) can carry: the catalogue's read scopes.
 * Its scopes are derived from this list, never asked for beyond it, and a field that needs any
 * other scope, or a key of any scopes (the caller's own data), refuses it (requireScopes): no
 * orders, account data, webhooks or writes, whatever its row says.
 */
export const PUBLISHABLE_SCOPES = ['read:products', 'read:categories', 'read:suppliers', 'read:reviews', 'read:prices', 'read:stock'] as const satisfies readonly Scope[];

/** The one publishable scope its owner must allow explicitly: stock records and stock-only product changes. */
export const PUBLISHABLE_STOCK_SCOPE = 'read:stock' satisfies (typeof PUBLISHABLE_SCOPES)[number];

const isPublishableScope = (scope: string) => (PUBLISHABLE_SCOPES as readonly string[]).includes(scope);

/** A publishable key's scopes as checked: its row's, kept to PUBLISHABLE_SCOPES (read:stock only when allowed). */
export function publishableScopes(stored: readonly string[]): string[] {
  return stored.filter(isPublishableScope);
}

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** admin:all grants every scope; no scope implies another. */
export function hasScope(granted: readonly string[], needed: Scope): boolean {
  return granted.includes(EVERY_SCOPE) || granted.includes(needed);
}

/**
 * The caller's key, if it carries every scope in `needed`: the one gate in front of orders,
 * stock and prices, whichever interface asked. No key → 401; a key without a scope → 403 naming
 * what is missing.
 */
export function requireScopes(caller: Caller, ...needed: Scope[]): KeyCaller {
  if (caller.kind !== 'key') throw new AppError('UNAUTHORIZED', 'An API key is required: send X-API-Key or Authorization: Bearer');
  if (caller.publishable && (needed.length === 0 || !needed.every(isPublishableScope))) {
    throw new AppError('FORBIDDEN', `A publishable key reads the catalogue only (${PUBLISHABLE_SCOPES.join(', ')}): use a secret key from a server for this`, {
      requiredScopes: needed,
    });
  }
  const missing = needed.filter((scope) => !hasScope(caller.scopes, scope));
  if (missing.length) {
    throw new AppError('FORBIDDEN', `This API key lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`, {
      requiredScopes: missing,
    });
  }
  return caller;
}

/** What requireScopesOnce reads and keeps of a request: its caller, and the scopes found on its key (ApiContext). */
export interface ScopeChecks {
  actor: Caller;
  checkedScopes?: ReadonlySet<string>;
}

/**
 * requireScopes, once per request and scope: the scopes found on the key are kept on the request's
 * context, so that REST's check of a route before its input is read, and the fields the route then
 * runs, check each scope once. A refusal is never kept: asked again, it is thrown again.
 */
export function requireScopesOnce(ctx: ScopeChecks, ...needed: Scope[]): KeyCaller {
  const checked = ctx.checkedScopes;
  // Kept scopes were found on a key: the context's caller, which never changes. None needed (any
  // key) is checked each time: a publishable key is refused there.
  if (checked && needed.length > 0 && needed.every((scope) => checked.has(scope))) return ctx.actor as KeyCaller;
  const key = requireScopes(ctx.actor, ...needed);
  ctx.checkedScopes = new Set([...(checked ?? []), ...needed]);
  return key;
}
