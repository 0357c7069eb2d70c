import { GraphQLError, Kind, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { requireMembership } from '../auth/membership.js';
import { requireScopesOnce } from '../auth/scopes.js';
import type { Caller } from '../context/actor.js';
import type { ApiContext } from '../context/context.js';
import { AppError, asAppError, contractError, notFound, validationError } from '../shared/errors.js';
import { ILL_FORMED_MESSAGE, illFormedStringAt } from '../shared/validation.js';
import { readLimited } from '../shared/request-body.js';
import type { PaginationMeta } from '../shared/pagination.js';
import type { Lookup, ResponseCache } from '../cache/response-cache.js';
import type { RevisionSource } from '../cache/freshness.js';
import { dependenciesOf, tagsOf, type OperationDependencies } from '../cache/dependencies.js';
import { cacheControl, conditionalJson } from './caching.js';
import { pathPattern, withoutTrailingSlash } from '../shared/paths.js';
import { errorResponse, jsonTextResponse, type SuccessBody } from './envelope.js';
import { keepRestBody, keptRestBody } from './replay.js';
import type { RestMethod, RestRoute, RestShape } from './routes.js';
import { deriveRoute, type DerivedRoute } from './derive.js';

interface CompiledRoute extends DerivedRoute {
  pattern: RegExp;
  paramNames: string[];
  /** What a kept answer of the route depends on (cacheable routes only). */
  dependencies?: OperationDependencies;
}

export interface RestRouterDeps {
  schema: GraphQLSchema;
  routes: RestRoute[];
  /** Yoga's maskError: what a client may see of an unexpected failure (logged there, once). */
  maskError: (error: unknown) => Error;
  /** Keeps and answers again the GETs of cacheable routes; absent: every request runs. */
  responseCache?: ResponseCache;
  /** Where a GET's data revision is read: the read replica its reads go to (src/pipeline/read-routing.ts); default the primary's, read once per request. */
  revisionFor?: (request: RestRequestState, caller: Caller | undefined, document: DocumentNode) => RevisionSource | undefined;
}

/** What the adapter reads of the request's state (src/pipeline/request-state.ts): the gate's admission. */
interface RestRequestState {
  admission?: { actor?: Caller; revision: () => Promise<number> };
}

function compile(route: RestRoute, schema: GraphQLSchema): CompiledRoute {
  const derived = deriveRoute(route, schema);
  const operation = derived.operation.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  const dependencies = derived.cacheable && operation ? dependenciesOf(schema, derived.operation, operation) : null;
  if (derived.cacheable && !dependencies) throw new Error(`${route.method} ${route.path}: the response cache cannot tell what it reads`);
  return { ...derived, ...pathPattern(route.path), ...(dependencies ? { dependencies } : {}) };
}

/**
 * Query string → plain object; a parameter given twice is an error, not a silent pick. Names are
 * the client's (`__proto__`, `toString`): collected in Maps, they become own properties of the
 * result, never a prototype or an inherited member, and the schema then refuses them by name.
 */
function queryObject(url: URL): Record<string, string> {
  const raw = new Map<string, string>();
  const repeated = new Map<string, string>();
  for (const [key, value] of url.searchParams) {
    if (raw.has(key)) repeated.set(key, 'must be given only once');
    raw.set(key, value);
  }
  if (repeated.size) throw validationError(Object.fromEntries(repeated));
  return Object.fromEntries(raw);
}

function pathParams(route: CompiledRoute, match: RegExpExecArray): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [i, name] of route.paramNames.entries()) {
    try {
      params[name] = decodeURIComponent(match[i + 1] ?? '');
    } catch {
      throw validationError({ [name]: 'is not a valid URL-encoded value' }, 'Malformed path');
    }
  }
  return params;
}

/** The methods a path answers, for 405's Allow header: HEAD wherever GET is. */
function allowHeader(methods: RestMethod[]): string {
  const all = new Set<string>(methods);
  if (all.has('GET')) all.add('HEAD');
  return [...all].sort().join(', ');
}

/**
 * A JSON request body: Content-Type application/json, at most 1 MiB, well-formed UTF-8 JSON. An
 * `optional` body may be left out (no Content-Type and nothing sent, or JSON's content empty): `{}`.
 */
async function jsonBody(request: Request, optional: boolean): Promise<unknown> {
  const type = request.headers.get('content-type') ?? '';
  if (optional && !type.trim() && !(await readLimited(request)).length) return {};
  if (!/^application\/json\s*(;|$)/i.test(type.trim())) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be JSON, sent with Content-Type: application/json');
  }
  const bytes = await readLimited(request);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw validationError({ body: 'is not valid UTF-8' }, 'Malformed JSON body');
  }
  if (!text.trim()) {
    if (optional) return {};
    throw validationError({ body: 'is required' }, 'Missing JSON body');
  }
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    throw validationError({ body: 'is not valid JSON' }, 'Malformed JSON body');
  }
  // JSON's \u escapes can spell a lone surrogate, which no field can mean: refused by its path.
  const illFormed = illFormedStringAt(body);
  if (illFormed !== null) throw validationError({ [illFormed || 'body']: ILL_FORMED_MESSAGE }, 'Malformed JSON body');
  return body;
}

/** Yoga's enveloped pipeline for one request (yoga.getEnveloped): its context, and execute with every plugin. */
export type GetEnveloped = (initialContext: object) => {
  schema: GraphQLSchema;
  contextFactory: () => unknown;
  execute: (args: ExecutionArgs) => unknown;
};

/**
 * The REST adapter: finds the route, validates its parameters and body, runs its operation
 * through Yoga's own pipeline (the context Yoga builds, execute with every plugin, errors masked
 * as over /graphql) and wraps the outcome in the spec's envelope. It holds no business rule and
 * maps no error of its own: an error is the contract error /graphql would answer (contractError).
 */
/** A GET's parameters as one text: its path, then its query sorted (the same request spelt in another order is the same). */
function requestText(url: URL): string {
  const query = [...url.searchParams].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([withoutTrailingSlash(url.pathname), query]);
}

export function createRestRouter({ schema, routes, maskError, responseCache, revisionFor }: RestRouterDeps) {
  const compiled = routes.map((r) => compile(r, schema));
  let getEnveloped: GetEnveloped | undefined;

  async function run(
    route: CompiledRoute,
    match: RegExpExecArray,
    request: Request,
    url: URL,
    ctx: ApiContext,
    pipeline: ReturnType<GetEnveloped>,
    keep?: Lookup['keep'],
  ) {
    // The fields' scopes first, kept on the context so that the fields do not check them again:
    // a caller who may not use the route learns nothing about its input.
    if (route.keyRequired) requireScopesOnce(ctx, ...route.scopes);
    if (route.member) await requireMembership(ctx);
    const params = pathParams(route, match);
    const query = route.parseQuery(queryObject(url));
    const body = route.body ? await route.body.parse(await jsonBody(request, route.body.optional), ctx) : undefined;
    const result = (await pipeline.execute({
      schema: pipeline.schema,
      document: route.operation,
      variableValues: route.variables(query, params, body),
      contextValue: ctx,
    })) as ExecutionResult;
    if (result.errors?.length) throw result.errors[0];

    // A replayed answer is marked Idempotent-Replayed by useIdempotentReplayHeader, as over /graphql.
    const report = ctx.idempotency;
    const status = route.status ?? 200;
    if (report?.replayed) {
      const kept = await keptRestBody(ctx, report);
      if (kept !== null) return jsonTextResponse(status, kept, { 'cache-control': 'no-store' });
    }

    const shape: RestShape = typeof route.shape === 'function' ? route.shape(query) : route.shape;
    const value = (result.data as Record<string, unknown> | null | undefined)?.[shape.field];
    if ((value === null || value === undefined) && shape.notFound) throw notFound(shape.notFound);
    let envelope: SuccessBody;
    if (shape.kind === 'one') {
      if (value === null || value === undefined) throw notFound();
      envelope = { success: true, data: value };
    } else {
      const { items, meta } = value as { items: unknown[]; meta: PaginationMeta | null };
      envelope = meta ? { success: true, data: items, meta } : { success: true, data: items };
    }
    const text = JSON.stringify(envelope);
    if (report && !report.replayed) {
      // The order exists whatever happens here: failing to keep its exact bytes only means a
      // replay renders the order afresh, so it must not turn this 201 into a 500 (logged by maskError).
      await keepRestBody(ctx, report, text).catch(maskError);
    }
    if (route.method !== 'GET') return jsonTextResponse(status, text, { 'cache-control': 'no-store' });
    const response = conditionalJson(request, status, text, cacheControl(route, ctx.actor));
    if (keep && route.dependencies) keep({ status, body: text, etag: response.headers.get('etag')! }, tagsOf(route.dependencies, result.data, ctx.actor));
    return response;
  }

  return {
    /** Every route's operation: the documents this router executes. */
    documents: compiled.map((r) => r.operation),
    /**
     * Takes Yoga's enveloped pipeline, once, as the app is built (src/app.ts): each route's operation
     * then runs through the same plugins as /graphql's (masking, cost report, read routing, …).
     */
    runThrough(pipeline: GetEnveloped) {
      if (getEnveloped) throw new Error('The REST router already runs through a pipeline');
      getEnveloped = pipeline;
    },
    /** Answers a request under /api; `state` is the request's server context, which becomes its GraphQL context. */
    async handle(request: Request, url: URL, state: RestRequestState): Promise<Response> {
      const path = withoutTrailingSlash(url.pathname);
      try {
        const candidates = compiled.flatMap((route) => {
          const match = route.pattern.exec(path);
          return match ? [{ route, match }] : [];
        });
        if (!candidates.length) throw new AppError('NOT_FOUND', `No endpoint at ${request.method} ${url.pathname.slice(0, 200)}`);
        const method = request.method === 'HEAD' ? 'GET' : request.method;
        const found = candidates.find((c) => c.route.method === method);
        if (!found) {
          return errorResponse(new AppError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${url.pathname.slice(0, 200)}`), {
            allow: allowHeader(candidates.map((c) => c.route.method)),
          });
        }
        if (!getEnveloped) throw new Error('The REST router was used before it was given its pipeline (runThrough)');
        // A kept answer is the one this caller got for this request, while nothing it read has
        // changed since: nothing runs (the gate has already admitted and charged the request).
        const actor = state.admission?.actor;
        const lookup =
          found.route.cacheable && responseCache
            ? await responseCache.lookup({
                face: 'rest',
                operation: found.route.path,
                variables: requestText(url),
                caller: actor,
                revision: revisionFor?.(state, actor, found.route.operation)?.current ?? state.admission?.revision,
              })
            : null;
        if (lookup?.hit) return conditionalJson(request, lookup.hit.status, lookup.hit.body, cacheControl(found.route, actor), lookup.hit.etag);
        // As Yoga does for /graphql: the request joins its state, which becomes the context.
        const pipeline = getEnveloped(Object.assign(state, { request }));
        const ctx = (await pipeline.contextFactory()) as ApiContext;
        return await run(found.route, found.match, request, url, ctx, pipeline, lookup?.keep);
      } catch (error) {
        const appError = asAppError(error) ?? contractError(error instanceof GraphQLError ? error : (maskError(error) as GraphQLError));
        // The rest of an oversized body is never read: the connection cannot serve another request.
        return errorResponse(appError, appError.code === 'PAYLOAD_TOO_LARGE' ? { connection: 'close' } : undefined);
      }
    },
  };
}
