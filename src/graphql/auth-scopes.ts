import { AuthScopeFailureType, type AuthFailure, type AuthScopeFailure } from '@pothos/plugin-scope-auth';
import { memberSupplierId, notAMember } from '../auth/membership.js';
import { hasScope, scopeError, type Scope } from '../auth/scopes.js';
import type { ApiContext } from '../context/context.js';
import { AppError } from '../shared/errors.js';

// Who may call a field, as the scope-auth plugin checks it before anything else of the field runs
// (its arguments' rules included), declared on the field as `authScopes`:
// - `apiKey: [scopes]`: the API key must carry them (401 without a key, 403 naming what is
//   missing); `[]` asks for a valid key of any scopes (the caller's own data: `me`).
// - `member: true` (with apiKey): the key's account must act for a supplier (403 otherwise),
//   looked up only once the key passed (the map is checked in order, all of it required).
// The REST routes read the same declaration back from the built schema (src/graphql/field-rules.ts,
// fieldRulesOf), so a rule is written once for both interfaces.

/** The scopes a field can ask for, and the parameter each takes. */
export interface ApiAuthScopes {
  apiKey: readonly Scope[];
  member: boolean;
}

/** What a field declares: the key's scopes, and whether its account must act for a supplier. */
export interface FieldAuthScopes {
  apiKey: readonly Scope[];
  member?: true;
}

const scopeFailures = (failure: AuthFailure): AuthScopeFailure[] =>
  failure.kind === AuthScopeFailureType.AuthScope
    ? [failure]
    : failure.kind === AuthScopeFailureType.AllAuthScopes || failure.kind === AuthScopeFailureType.AnyAuthScopes
      ? failure.failures.flatMap(scopeFailures)
      : [];

/** The error a refused field answers with: the key's first (401, or 403 naming the missing scopes), else the membership's. */
function refusal(ctx: ApiContext, failure: AuthFailure): AppError {
  const failed = scopeFailures(failure);
  const key = failed.find((f) => f.scope === 'apiKey');
  const keyError = key && scopeError(ctx.actor, key.parameter as readonly Scope[]);
  if (keyError) return keyError;
  if (failed.some((f) => f.scope === 'member')) return notAMember();
  return new AppError('FORBIDDEN', 'This API key may not use this field');
}

/** The builder's `scopeAuth` options. */
export const scopeAuthOptions = {
  // Every scope a field names is required, checked in the order written (apiKey before member).
  defaultStrategy: 'all' as const,
  authScopes: (ctx: ApiContext) => {
    const caller = ctx.actor;
    return {
      apiKey: (needed: readonly Scope[]) => caller.kind === 'key' && needed.every((scope) => hasScope(caller.scopes, scope)),
      member: async () => (await memberSupplierId(ctx)) !== null,
    };
  },
  unauthorizedError: (_parent: unknown, ctx: ApiContext, _info: unknown, { failure }: { failure: AuthFailure }) => refusal(ctx, failure),
};
