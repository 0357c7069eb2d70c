import type { Plan } from '../context/actor.js';
import { LIMITS, type WindowLimit } from '../config/limits.js';

/** A plan's requests per window (LIMITS.requests) in an API key row's terms: its rateLimit and rateWindowSeconds when it has none. */
export interface PlanAllowance {
  readonly limit: number;
  readonly windowSeconds: number;
}

const allowanceOf = ({ max, windowMs }: WindowLimit): PlanAllowance => Object.freeze({ limit: max, windowSeconds: windowMs / 1000 });

/** Each plan's allowance, in the order plans are listed (BASIC, PRO, ENTERPRISE). */
export const PLAN_LIMITS: Readonly<Record<Plan, PlanAllowance>> = Object.freeze({
  BASIC: allowanceOf(LIMITS.requests.BASIC),
  PRO: allowanceOf(LIMITS.requests.PRO),
  ENTERPRISE: allowanceOf(LIMITS.requests.ENTERPRISE),
});
