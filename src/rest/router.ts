import { execute, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { requireScopes } from '../auth/scopes.js';
import type { Context } from '../graphql/context.js';
import { databaseUnavailable } from '../db/prisma.js';
import { AppError, asAppError, notFound, validationError } from '../shared/errors.js';
import { readLimited } from './body.js';
import type { PaginationMeta } from '../shared/pagination.js';
import { cacheControl, conditionalJson } from './caching.js';
import { pathPattern, withoutTrailingSlash } from './paths.js';
import { errorResponse, internalErrorResponse, jsonTextResponse, type SuccessBody } from './envelope.js';
import { REPLAYED_HEADER } from '../modules/orders/idempotency.js';
import type { RestMethod, RestRoute, RestShape } from './routes.js';

interface CompiledRoute extends RestRoute {
  pattern: RegExp;
  paramNames: string[];
  operation: DocumentNode;
}

export interface RestRouterDeps {
  schema: GraphQLSchema;
  routes: RestRoute[];
  onUnexpectedError: (error: unknown, request: Request) => void;
}

function compile(route: RestRoute, schema: GraphQLSchema): CompiledRoute {
  const { pattern, paramNames } = pathPattern(route.path);
  const operation = parse(route.document);
  // A route whose operation does not fit the schema is a programming error: fail at start-up.
  const errors = validate(schema, operation);
  if (errors.length) throw new Error(`REST route ${route.method} ${route.path}: ${errors.map((e) => e.message).join('; ')}`);
  return { ...route, pattern, paramNames, operation };
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

/** A JSON request body: Content-Type application/json, at most 1 MiB, well-formed UTF-8 JSON. */
async function jsonBody(request: Request): Promise<unknown> {
  const type = request.headers.get('content-type') ?? '';
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
  if (!text.trim()) throw validationError({ body: 'is required' }, 'Missing JSON body');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw validationError({ body: 'is not valid JSON' }, 'Malformed JSON body');
  }
}

/**
 * The REST adapter: finds the route, validates its parameters and body, runs its operation on
 * the shared schema with the shared context, and wraps the outcome in the spec's envelope.
 * It holds no business rule.
 */
export function createRestRouter({ schema, routes, onUnexpectedError }: RestRouterDeps) {
  const compiled = routes.map((r) => compile(r, schema));

  async function run(route: CompiledRoute, match: RegExpExecArray, request: Request, url: URL, ctx: Context): Promise<Response> {
    // The route's scopes first: a caller who may not use it learns nothing about its input.
    if (route.scopes?.length) requireScopes(ctx.caller, ...route.scopes);
    const params = pathParams(route, match);
    const query = route.parseQuery(queryObject(url));
    const body = route.parseBody ? route.parseBody(await jsonBody(request)) : undefined;
    const result = await execute({
      schema,
      document: route.operation,
      variableValues: route.variables(query, params, body),
      contextValue: ctx,
    });
    if (result.errors?.length) throw result.errors[0];

    const replay = route.idempotency?.outcome(ctx);
    const headers: Record<string, string> = replay?.replayed ? { [REPLAYED_HEADER]: 'true' } : {};
    if (replay?.rest) return jsonTextResponse(replay.rest.status, replay.rest.body, { ...headers, 'cache-control': 'no-store' });

    const shape: RestShape = typeof route.shape === 'function' ? route.shape(query) : route.shape;
    const value = (result.data as Record<string, unknown> | null | undefined)?.[shape.field];
    let envelope: SuccessBody;
    if (shape.kind === 'one') {
      if (value === null || value === undefined) throw notFound(shape.notFound);
      envelope = { success: true, data: value };
    } else {
      const { items, meta } = value as { items: unknown[]; meta: PaginationMeta | null };
      envelope = meta ? { success: true, data: items, meta } : { success: true, data: items };
    }
    const status = route.status ?? 200;
    const text = JSON.stringify(envelope);
    if (route.idempotency && replay && !replay.replayed) {
      // The order exists whatever happens here: failing to keep its exact bytes only means a
      // replay renders the order afresh, so it must not turn this 201 into a 500.
      await route.idempotency.remember(ctx, text).catch((error: unknown) => onUnexpectedError(error, request));
    }
    if (route.method !== 'GET') return jsonTextResponse(status, text, { ...headers, 'cache-control': 'no-store' });
    return conditionalJson(request, status, text, headers, cacheControl(route.path, ctx.caller));
  }

  /** `context` is the request's shared context, the same one /graphql would get. */
  return async function handle(request: Request, url: URL, context: () => Context): Promise<Response> {
    const path = withoutTrailingSlash(url.pathname);
    let chosen: CompiledRoute | undefined;
    let ctx: Context | undefined;
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
      chosen = found.route;
      ctx = context();
      return await run(found.route, found.match, request, url, ctx);
    } catch (error) {
      const unavailable = asAppError(error) ? undefined : databaseUnavailable(error);
      // Answered 503 with Retry-After: the database is down or too slow (onUnexpectedError counts it).
      if (unavailable) onUnexpectedError(error, request);
      const appError = asAppError(error) ?? unavailable;
      // A rejection replayed from an Idempotency-Key says so, like a replayed success.
      const replayed = chosen?.idempotency && ctx && chosen.idempotency.outcome(ctx)?.replayed;
      if (appError) {
        const headers: Record<string, string> = replayed ? { [REPLAYED_HEADER]: 'true' } : {};
        // The rest of an oversized body is never read: the connection cannot serve another request.
        if (appError.code === 'PAYLOAD_TOO_LARGE') headers.connection = 'close';
        return errorResponse(appError, headers);
      }
      onUnexpectedError(error, request);
      return internalErrorResponse();
    }
  };
}
