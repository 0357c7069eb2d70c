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
