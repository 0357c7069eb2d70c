import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ResponseCache } from '../cache/response-cache.js';
import { useCompiledRestQueries } from '../rest/compiled.js';
import { useGate, type Gate } from './gate.js';
import { useCostBudget, type CostBudgetOptions } from './graphql-cost-budget.js';
import { useContractErrorCodes } from './graphql-errors.js';
import { useGraphqlHttpCaching } from './graphql-http-caching.js';
import { useIncrementalDelivery } from './graphql-incremental.js';
import type { GraphqlHardening } from './graphql-limits.js';
import { useGraphqlResponseCache } from './graphql-response-cache.js';
import { useIdempotentReplayHeader } from './idempotent-replay.js';
import { useObservability, type ObserveDeps } from './observe.js';
import type { ReadRouting } from './read-routing.js';
import type { HttpRoute } from './request-state.js';
import { useRoute, useRouteAnswer } from './route-table.js';

// What happens to a request, stage by stage, in the order the stages run: Yoga is given the
// plugins of this list in this order (requestPipeline), so the list is what runs. What a stage
// tells a later one is a field of the request's state (./request-state.ts), written by that
// stage alone.
//
// A GraphQL request (/graphql) walks every stage; so does each operation sent over a GraphQL
// WebSocket, which src/pipeline/websocket.ts sends through the app as such a request. A REST call
// (/api/*) is answered at `answer` by the REST adapter (src/rest/router.ts), which runs its
// route's operation through Yoga's enveloped pipeline: of the stages after `answer` it meets those
// that act on an operation (the variables' check of document rules, cache headers, cost, execute,
// read routing, response cache) and those that act on the response (envelope's header; the gate's
// and observe's on the way out).
//
// The order is the behaviour. The gate admits before any GraphQL stage runs: a refused document
// is still a counted request, with rate-limit headers. `cache headers` marks a result before
// `cost` adds its report to it (the ETag leaves the report out), and both come before the
// response cache, which may answer instead of executing: a kept answer is marked, charged and
// reported like an executed one. `execute` chooses the executor that `read routing` then wraps,
// and `read routing` counts where a query reads even when the response cache answers it.

/** Everything the stages are made of, built by the app (src/app.ts). */
export interface PipelineParts {
  observe: ObserveDeps;
  routes: readonly HttpRoute[];
  gate: Gate;
  hardening: Pick<GraphqlHardening, 'bodyRules' | 'documentRules'>;
  /** Trusted documents only, or automatic persisted queries (./graphql-persisted.ts). */
  persisted: Plugin;
  schema: GraphQLSchema;
  cost: CostBudgetOptions;
  /** The REST routes' operations, compiled once at start. */
  restDocuments: DocumentNode[];
  /** Absent without read replicas. */
  readRouting?: ReadRouting;
  /** Absent when RESPONSE_CACHE is off. */
  responseCache?: ResponseCache;
}

export interface Stage {
  name: string;
  /** What the stage looks at. */
  reads: string;
  /** What it decides (and which field of the request's state it writes). */
  decides: string;
  /** Its Yoga plugins, made from the app's parts (none for a stage the app does without). */
  plugins(parts: PipelineParts): Plugin[];
}

export const PIPELINE: readonly Stage[] = [
  {
    name: 'observe',
    reads: 'X-Request-ID, the clock; with tracing on, traceparent',
    decides: 'the request’s id and arrival (`requestId`, `startedAt`); on the way out X-Request-ID, X-API-Version, the access log and the request metrics. With tracing on, its span, continuing the caller’s trace, and the spans of GraphQL’s phases (./request-spans.ts)',
    plugins: ({ observe }) => [useObservability(observe)],
  },
  {
    name: 'route',
    reads: 'the path, in the route table (./route-table.ts)',
    decides: 'the route answering it (`route`: its face, graphql or rest, and whether it is metered); any other path is a 404',
    plugins: ({ routes }) => [useRoute(routes)],
  },
  {
    name: 'gate',
    reads: 'a metered route’s API key, the client’s address, the rate-limit store',
    decides: 'its admission (`admission`: the caller, the bucket charged, the revision read once) or its refusal (401, 429, 503); on the way out the bucket’s rate-limit headers',
    plugins: ({ gate, routes }) => [useGate(gate, routes)],
  },
  {
    name: 'answer',
    reads: 'the route',
    decides: 'every path but /graphql is answered by its handler: REST (src/rest/router.ts), the dashboard, probes, metrics, docs; /graphql refuses a method it does not answer (405)',
    plugins: () => [useRouteAnswer()],
  },
  {
    name: 'body limits',
    reads: 'a GraphQL request’s body',
    decides: 'JSON only (415), at most 1 MiB (413), batches only as GRAPHQL_BATCH_LIMIT allows, members a client adds beside the operation’s own ignored (./graphql-limits.ts)',
    plugins: ({ hardening }) => [hardening.bodyRules],
  },
  {
    name: 'persisted documents',
    reads: 'the document id or hash sent',
    decides: 'the document to run: a trusted one (PERSISTED_ONLY), or an automatic persisted query kept or recalled (./graphql-persisted.ts)',
    plugins: ({ persisted }) => [persisted],
  },
  {
    name: 'document rules',
    reads: 'the document and its variables',
    decides: 'parsed within the token limit and validated (depth, aliases, directives, introspection); @defer and @stream in queries only, for a client that accepts multipart/mixed or text/event-stream (./graphql-incremental.ts); variables of well-formed Unicode; no “Did you mean” in production',
    plugins: ({ hardening }) => [...hardening.documentRules, ...useIncrementalDelivery()],
  },
  {
    name: 'cache headers',
    reads: 'a GET’s operation and caller',
    decides: 'its caching rule (public for a minute: a catalogue query without a key; else private), and as it is sent its ETag, or 304; an answer sent in parts (multipart/mixed, text/event-stream) none of these, no-store (`getCaching`)',
    plugins: ({ schema }) => [useGraphqlHttpCaching(schema)],
  },
  {
    name: 'cost',
    reads: 'the operation, the caller’s cost budget',
    decides: 'its estimated cost, refused past GRAPHQL_MAX_COST; over /graphql charged to the budget (429 when spent) and reported in extensions.cost',
    plugins: ({ cost }) => [useCostBudget(cost)],
  },
  {
    name: 'execute',
    reads: 'the document',
    decides: 'the executor: a REST route’s query compiled at start (graphql-jit), any other graphql-js; as each field resolves, its rules (scopes once per request, then input)',
    plugins: ({ schema, restDocuments }) => [useCompiledRestQueries(schema, restDocuments)],
  },
  {
    name: 'read routing',
    reads: 'the operation, the caller, the replicas’ health',
    decides: 'where its reads go (`replica`): a catalogue query to a replica, the primary again if it fails; a key’s write announced, for read-your-writes',
    plugins: ({ readRouting }) => (readRouting ? [readRouting.plugin] : []),
  },
  {
    name: 'response cache',
    reads: 'a /graphql query, the caller’s view, the revision where its reads go',
    decides: 'the kept answer instead of executing, while nothing it read has changed; an answer without errors kept',
    plugins: ({ responseCache, schema, readRouting }) => (responseCache ? [useGraphqlResponseCache(responseCache, schema, readRouting?.revisionOf)] : []),
  },
  {
    name: 'envelope',
    reads: 'the result, the idempotency report',
    decides: 'the contract’s error codes and statuses (in each part of an incremental answer too), a single result JSON whatever the Accept header; Idempotent-Replayed on a replayed answer',
    plugins: () => [useContractErrorCodes(), useIdempotentReplayHeader()],
  },
];

/** The Yoga plugins of the request's stages, in PIPELINE's order. */
export const requestPipeline = (parts: PipelineParts): Plugin[] => PIPELINE.flatMap((stage) => stage.plugins(parts));
