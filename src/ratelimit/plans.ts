import type { Plan } from '../context/actor.js';

/**
 * Requests per window of each plan (docs/api.md, Rate limits); the rate limiter reads the same
 * table. Enterprise keys carry their own limit and window (createApiKey requires them), so its
 * row only serves a key row that somehow lacks them: it then gets Pro's allowance, not unlimited.
 */
export const PLAN_LIMITS: Readonly<Record<Plan, { readonly limit: number; readonly windowSeconds: number }>> = Object.freeze({
  BASIC: Object.freeze({ limit: 1000, windowSeconds: 3600 }),
  PRO: Object.freeze({ limit: 5000, windowSeconds: 3600 }),
  ENTERPRISE: Object.freeze({ limit: 5000, windowSeconds: 3600 }),
});

/**
 * GraphQL cost budgets (docs/api.md, Calculated query costs): a token bucket per caller, charged
 * each operation's estimated cost, holding `burst` times GRAPHQL_MAX_COST (so even the dearest
 * operation allowed fits a full one) and restoring `restoreRate` points per second. Callers
 * without a key have one per client address, as their request limit. An Enterprise key's is
 * scaled by its own request limit (costBudgetPolicy, ./policy.ts).
 */
export const COST_BUDGETS: Readonly<Record<Plan | 'ANONYMOUS', { readonly burst: number; readonly restoreRate: number }>> = Object.freeze({
  ANONYMOUS: Object.freeze({ burst: 1, restoreRate: 50 }),
  BASIC: Object.freeze({ burst: 2, restoreRate: 100 }),
  PRO: Object.freeze({ burst: 5, restoreRate: 500 }),
  ENTERPRISE: Object.freeze({ burst: 5, restoreRate: 500 }),
});
