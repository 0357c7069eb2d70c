import { execute, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { Context } from '../context.js';
import { AppError, asAppError, notFound, validationError } from '../errors.js';
import type { PaginationMeta } from '../pagination.js';
import { errorResponse, internalErrorResponse, jsonResponse } from './envelope.js';
import type { RestRoute } from './routes.js';

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

const ALLOWED_METHODS = 'GET, HEAD';

function compile(route: RestRoute, schema: GraphQLSchema): CompiledRoute {
  const paramNames: string[] = [];
  const source = route.path.replace(/:([a-zA-Z]+)/g, (_m, name: string) => {
    paramNames.push(name);
    return '([^/]+)';
  });
  const operation = parse(route.document);
  // A route whose operation does not fit the schema is a programming error: fail at start-up.
  const errors = validate(schema, operation);
  if (errors.length) throw new Error(`REST route ${route.path}: ${errors.map((e) => e.message).join('; ')}`);
  return { ...route, pattern: new RegExp(`^${source}$`), paramNames, operation };
}

/** Query string → plain object; a parameter given twice is an error, not a silent pick. */
function queryObject(url: URL): Record<string, string> {
  const raw: Record<string, string> = {};
  const repeated: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    if (key in raw) repeated[key] = 'must be given only once';
    raw[key] = value;
  }
  if (Object.keys(repeated).length) throw validationError(repeated);
  return raw;
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

/**
 * The REST adapter: finds the route, validates its parameters, runs its operation on the
 * shared schema with the shared context, and wraps the outcome in the spec's envelope.
 * It holds no business rule.
 */
export function createRestRouter({ schema, routes, onUnexpectedError }: RestRouterDeps) {
  const compiled = routes.map((r) => compile(r, schema));

  async function run(route: CompiledRoute, match: RegExpExecArray, url: URL, context: () => Context): Promise<Response> {
    const params = pathParams(route, match);
    const query = route.parseQuery(queryObject(url));
    const result = await execute({
      schema,
      document: route.operation,
      variableValues: route.variables(query, params),
      contextValue: context(),
    });
    if (result.errors?.length) throw result.errors[0];
    const value = (result.data as Record<string, unknown> | null | undefined)?.[route.shape.field];
    if (route.shape.kind === 'one') {
      if (value === null || value === undefined) throw notFound(route.shape.notFound);
      return jsonResponse(200, { success: true, data: value });
    }
    const { items, meta } = value as { items: unknown[]; meta: PaginationMeta | null };
    return jsonResponse(200, meta ? { success: true, data: items, meta } : { success: true, data: items });
  }

  /** `context` is the request's shared context, the same one /graphql would get. */
  return async function handle(request: Request, url: URL, context: () => Context): Promise<Response> {
    // One trailing slash is tolerated: /api/products/ is /api/products.
    const path = url.pathname.length > 1 && url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
    try {
      const candidates = compiled.flatMap((route) => {
        const match = route.pattern.exec(path);
        return match ? [{ route, match }] : [];
      });
      const first = candidates[0];
      if (!first) throw new AppError('NOT_FOUND', `No endpoint at ${request.method} ${url.pathname.slice(0, 200)}`);
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return errorResponse(new AppError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${url.pathname.slice(0, 200)}`), {
          allow: ALLOWED_METHODS,
        });
      }
      return await run(first.route, first.match, url, context);
    } catch (error) {
      const appError = asAppError(error);
      if (appError) return errorResponse(appError);
      onUnexpectedError(error, request);
      return internalErrorResponse();
    }
  };
}
