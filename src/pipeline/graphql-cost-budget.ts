import { GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import { rateLimited } from '../shared/errors.js';
import { costBudgetPolicy, rateLimitHeaders, secondsUntil, type CostBudgetPolicy } from '../ratelimit/policy.js';
import type { BudgetDecision, RateLimitStore } from '../ratelimit/store.js';
import { estimateCost, KEPT_ACTUAL_COST, loadedCost, type WithKeptActualCost } from './graphql-cost.js';
import type { ApiContext } from '../context/context.js';
import type { RequestState } from './request-state.js';

// Calculated query costs (docs/api.md): every operation's cost is estimated before it runs
// (./graphql-cost.ts), refused past GRAPHQL_MAX_COST, and charged to the caller's cost budget, a
// token bucket per key (per client address without one) refilled every second by plan
// (LIMITS.costBudgets, src/config/limits.ts) and kept in the rate-limit store, so shared like the
// request limit (Redis, or the cluster's primary). An exhausted budget is a 429 in the GraphQL
// envelope, RATE_LIMIT_EXCEEDED with Retry-After and X-RateLimit-* of the budget, as the request
// limit's. Every /graphql answer of an estimated operation says so in `extensions.cost`, added
// when the answer is sent: a kept answer (the response cache) is kept without it.

/** What the onExecute and onSubscribe hooks both hand: the operation and a way to answer it instead. */
interface AdmitPayload {
  args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; variableValues?: Record<string, unknown> | null; contextValue?: unknown };
  setResultAndStopExecution(result: ExecutionResult): void;
}

/** What `extensions.cost` says. */
export interface CostReport {
  /** The operation's estimated cost (past GRAPHQL_MAX_COST: some value over it, the estimate stops there). */
  requested: number;
  /**
   * The objects the answer really holds, counted as the estimate counts them (./graphql-cost.ts,
   * loadedCost), at most `requested`; the difference was given back. Absent when nothing ran (a
   * refusal) and on an answer in parts, which keeps its estimate.
   */
  actual?: number;
  /** The budget's size. */
  limit: number;
  /** Points left now: after the charge and its refund, or as they stand when nothing was charged. */
  remaining: number;
  /** Points restored per second. */
  restoreRate: number;
}

/** The cost of the execution a result answers, set on the result until it is sent (JSON.stringify and the cache pass it by). */
const COST = Symbol('cost');
type WithCost = ExecutionResult & { [COST]?: CostReport; stringify?: (result: ExecutionResult) => string };

const report = (requested: number, budget: BudgetDecision): CostReport => ({
  requested,
  limit: budget.limit,
  remaining: budget.remaining,
  restoreRate: budget.restoreRate,
});

export interface CostBudgetOptions {
  maxCost: number;
  store: RateLimitStore;
  /** The clock of Retry-After and the headers' reset (the store's own, in tests a manual one). */
  now?: () => number;
  /** An operation refused for its budget, by policy name (cost-anonymous, cost-basic, …). */
  onRejected?: (policy: string) => void;
}

function exhausted(policy: CostBudgetPolicy, requested: number, budget: BudgetDecision, now: number): GraphQLError {
  const retryAfter = secondsUntil(budget.availableAt, now);
  const headers = rateLimitHeaders(
    {
      policy: { name: policy.name, windowMs: Math.ceil(policy.limit / policy.restoreRate) * 1000 },
      decision: { allowed: false, limit: budget.limit, remaining: budget.remaining, resetAt: budget.availableAt },
    },
    now,
  );
  return rateLimited(
    `Query cost budget exceeded: this operation costs ${requested} points and ${budget.remaining} of ${budget.limit} are left ` +
      `(${budget.restoreRate} restored per second); retry after ${retryAfter} s, or ask for less (smaller pages, fewer nested lists)`,
    retryAfter,
    headers,
  );
}

/**
 * Place it after the document rules (a refused document costs nothing) and before the response
 * cache, so that a kept answer is charged and reported like an executed one.
 */
export function useCostBudget({ maxCost, store, now = Date.now, onRejected }: CostBudgetOptions): Plugin {
  /** Refuses what is too dear or over the caller's budget; else charges it and answers its cost and budget (undefined when uncharged). */
  const admit = async ({ args, setResultAndStopExecution }: AdmitPayload): Promise<{ cost: CostReport; policy: CostBudgetPolicy } | undefined> => {
    const requested = estimateCost({ schema: args.schema, document: args.document, operationName: args.operationName, variables: args.variableValues }, maxCost);
    const tooDear = requested > maxCost;
    const context = args.contextValue as RequestState & Partial<ApiContext>;
    const caller = context.actor;
    // Operations asked of /graphql: REST's routes execute through the same stages, uncharged (their sizes are bounded per route).
    const charged = caller && context.route?.face === 'graphql' && (caller.kind === 'anonymous' || caller.kind === 'key');
    if (!charged) {
      if (tooDear) setResultAndStopExecution({ errors: [overMaxCost(maxCost)] });
      return undefined;
    }
    const policy = costBudgetPolicy(caller, maxCost);
    // Too dear to run at all: nothing is charged, the budget is reported as it stands.
    const budget = await store.take(policy.bucket, tooDear ? 0 : requested, policy.limit, policy.restoreRate);
    const cost = report(requested, budget);
    if (tooDear || !budget.allowed) {
      if (!tooDear) onRejected?.(policy.name);
      const refusal: WithCost = { errors: [tooDear ? overMaxCost(maxCost) : exhausted(policy, requested, budget, now())] };
      refusal[COST] = cost;
      setResultAndStopExecution(refusal);
      return undefined;
    }
    return { cost, policy };
  };
  return {
    async onExecute(payload) {
      const admitted = await admit(payload);
      if (!admitted) return;
      const { cost, policy } = admitted;
      const { document, operationName } = payload.args;
      return {
        async onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result)) {
            // An answer in parts keeps its estimate (what is loaded is known only after the last
            // part): the first part says so, added to the text when sent (onResultProcess).
            let first = true;
            return {
              onNext({ result: part, setResult: setPart }) {
                if (!first) return;
                first = false;
                setPart(Object.assign(part, { [COST]: cost }));
              },
            };
          }
          // What the answer holds, given back after it ran, as Shopify's actualQueryCost: a page
          // asked for 50 that holds 3 costs 3. Not for an answer with errors: an error nulls its
          // field, and everything under it that was loaded (a list of 100 nulled by one item), so
          // what is left says nothing of the work done; such an answer costs its estimate.
          const loaded = result.errors?.length
            ? cost.requested
            : ((result as WithKeptActualCost)[KEPT_ACTUAL_COST] ?? loadedCost(document, operationName, result.data));
          const actual = Math.min(cost.requested, loaded);
          const refund = cost.requested - actual;
          const after = refund > 0 ? await store.take(policy.bucket, -refund, policy.limit, policy.restoreRate) : undefined;
          const { requested, limit, restoreRate } = cost;
          setResult(Object.assign(result, { [COST]: { requested, actual, limit, remaining: after?.remaining ?? cost.remaining, restoreRate } }));
        },
      };
    },
    // A subscription is estimated, refused and charged as it starts, like an operation (its events are not charged).
    async onSubscribe(payload) {
      await admit(payload);
    },
    onResultProcess({ result, setResult }) {
      if (isAsyncIterable(result)) setResult(mapAsyncIterator(result, (part) => withCostExtension(part as WithCost)));
      else if (Array.isArray(result)) setResult(result.map((one: WithCost) => withCostExtension(one)));
      else setResult(withCostExtension(result as WithCost));
    },
  };
}

function overMaxCost(maxCost: number): GraphQLError {
  return new GraphQLError(
    `Query cost limit of ${maxCost} exceeded: the query may load more than ${maxCost} objects; ask for smaller pages (limit, first, last) or fewer nested lists`,
    { extensions: { code: 'VALIDATION_ERROR', http: { status: 400, spec: true } } },
  );
}

/**
 * The result with `extensions.cost`. A kept answer is text (`stringify`), always an object without
 * extensions (the response cache keeps no other kind): the member is added at its end.
 */
function withCostExtension(result: WithCost): WithCost {
  const cost = result[COST];
  if (!cost) return result;
  const stringify = result.stringify;
  if (stringify) {
    return { ...result, stringify: (r) => `${stringify(r).slice(0, -1)},"extensions":${JSON.stringify({ cost })}}` };
  }
  return { ...result, extensions: { ...result.extensions, cost } };
}

