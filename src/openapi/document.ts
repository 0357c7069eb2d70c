import {
  isInputObjectType,
  isListType,
  isNonNullType,
  Kind,
  typeFromAST,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { z } from 'zod';
import { SCOPES } from '../auth/scopes.js';
import type { Caller } from '../context/actor.js';
import { errorStatus, type ErrorCode } from '../shared/errors.js';
import { cacheControl } from '../rest/caching.js';
import { rateLimitHeaders } from '../ratelimit/policy.js';
import { LIMITS } from '../config/limits.js';
import { API_VERSION } from '../rest/envelope.js';
import type { RestRoute, RestShape } from '../rest/routes.js';
import { deriveRoute, type DerivedRoute } from '../rest/derive.js';
import { declaredRule, restParamForm } from '../shared/validation.js';
import { extractComponents } from './components.js';
import { operationSchemas, sentences, splitNull, type JsonSchema } from './graphql-to-json-schema.js';

// The OpenAPI 3.1 description of the REST API, built from what serves it: the route table
// (src/rest/routes.ts) for paths, methods, scopes and success statuses; each route's zod
// schemas (the ones that validate the request) for parameters and body; each route's GraphQL
// operation, walked against the schema, for the response bodies; the error table
// (src/shared/errors.ts) for error responses; the gate's own header function for the rate-limit
// headers. Nothing here restates a rule, so the document cannot drift from the service.

/** The OpenAPI document, as plain JSON. */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, Response>;
    headers: Record<string, Header>;
    securitySchemes: Record<string, SecurityScheme>;
  };
}

interface Header {
  description: string;
  required?: boolean;
  schema: JsonSchema;
  example?: unknown;
}
type HeaderOrRef = Header | { $ref: string };

interface Response {
  description: string;
  headers?: Record<string, HeaderOrRef>;
  content?: Record<string, { schema: JsonSchema }>;
}
type ResponseOrRef = Response | { $ref: string; description?: string };

interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security: Record<string, string[]>[];
  'x-required-scopes': string[];
  'x-graphql-operation': string;
  parameters: Parameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, ResponseOrRef>;
}

type SecurityScheme =
  | { type: 'apiKey'; in: 'header'; name: string; description: string }
  | { type: 'http'; scheme: 'bearer'; description: string };

const API_KEY = 'ApiKeyAuth';
const BEARER = 'BearerAuth';
const JSON_TYPE = 'application/json';

// ----- headers -----

/** What each header the gate sets means. A header rateLimitHeaders sends that is missing here stops the build. */
const RATE_LIMIT_HEADERS: Record<string, { name: string; description: string; schema: JsonSchema }> = {
  'x-ratelimit-limit': { name: 'X-RateLimit-Limit', description: 'Requests allowed in the current window', schema: { type: 'integer', minimum: 0 } },
  'x-ratelimit-remaining': { name: 'X-RateLimit-Remaining', description: 'Requests left in the current window', schema: { type: 'integer', minimum: 0 } },
  'x-ratelimit-reset': {
    name: 'X-RateLimit-Reset',
    description: 'When the current window resets, as Unix time in milliseconds',
    schema: { type: 'integer', minimum: 0 },
  },
  'ratelimit-policy': {
    name: 'RateLimit-Policy',
    description: 'IETF draft form of the policy: `"<plan>";q=<quota>;w=<window in seconds>`',
    schema: { type: 'string' },
  },
  ratelimit: {
    name: 'RateLimit',
    description: 'IETF draft form of the state: `"<plan>";r=<remaining>;t=<seconds to reset>`',
    schema: { type: 'string' },
  },
};

/** The rate-limit headers as the gate writes them, for a Pro key halfway through its window. */
function rateLimitHeaderComponents(): Record<string, Header> {
  const now = Date.UTC(2026, 0, 1, 12);
  const pro = LIMITS.requests.PRO;
  const sample = rateLimitHeaders(
    {
      policy: { name: 'pro', bucket: 'key:example', limit: pro.max, windowMs: pro.windowMs },
      decision: { allowed: true, limit: pro.max, remaining: 4987, resetAt: now + pro.windowMs / 2 },
    },
    now,
  );
  const headers: Record<string, Header> = {};
  for (const [lower, value] of Object.entries(sample)) {
    const known = RATE_LIMIT_HEADERS[lower];
    if (!known) throw new Error(`The gate sends ${lower}, which the OpenAPI document does not describe`);
    headers[known.name] = {
      description: known.description,
      required: true,
      schema: known.schema,
      example: known.schema.type === 'integer' ? Number(value) : value,
    };
  }
  return headers;
}

/** Headers src/pipeline/observe.ts puts on every response. */
const OBSERVE_HEADERS: Record<string, Header> = {
  'X-Request-ID': {
    description: 'The request’s id, as in the service’s logs: the client’s own X-Request-ID when it is 1–128 plain characters, else a new UUID',
    required: true,
    schema: { type: 'string' },
  },
  'X-API-Version': { description: 'The version of this interface', required: true, schema: { type: 'string', const: API_VERSION } },
};

const OTHER_HEADERS: Record<string, Header> = {
  'Retry-After': { description: 'Seconds to wait before retrying', required: true, schema: { type: 'integer', minimum: 1 } },
  Allow: { description: 'The methods the path takes', required: true, schema: { type: 'string' }, example: 'GET, HEAD' },
  'Cache-Control': { description: 'Errors are never stored', required: true, schema: { type: 'string', const: 'no-store' } },
  'Idempotent-Replayed': {
    description: 'Present when the response is the replay of an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
};

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

// ----- caching (src/rest/caching.ts): GET answers carry an ETag and may be revalidated -----

const CACHING_HEADERS: Record<string, Header> = {
  ETag: {
    description: 'Validator of the body; send it back as If-None-Match to get 304 while it is unchanged',
    required: true,
    schema: { type: 'string' },
  },
};

const ANONYMOUS: Caller = { kind: 'anonymous', ip: '192.0.2.1' };
const KEYED: Caller = { kind: 'key', ip: '192.0.2.1', keyId: 'example', accountId: 'example', plan: 'PRO', scopes: [], rateLimit: null, rateWindowSeconds: null };

/** The Cache-Control the router sends for a route, as the caching module decides it for each kind of caller. */
function cacheControlHeader(route: RestRoute): Header {
  if (route.method !== 'GET') return { description: 'Never stored', required: true, schema: { type: 'string', const: 'no-store' } };
  const anonymous = cacheControl(route, ANONYMOUS);
  const keyed = cacheControl(route, KEYED);
  const description = anonymous === keyed ? `\`${anonymous}\`` : `Without a key \`${anonymous}\`; with one \`${keyed}\``;
  return { description, required: true, schema: { type: 'string', enum: [...new Set([anonymous, keyed])] } };
}

// ----- errors -----

/** Component name of each error code's response: NOT_FOUND → NotFound. */
const responseName = (code: ErrorCode) =>
  code
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'A parameter, header or the body is invalid; `details` names each bad one',
  UNAUTHORIZED: 'No API key where one is required, or an unknown, revoked or expired key, or two headers with different keys',
  FORBIDDEN:
    'The key lacks a scope the endpoint needs (`details.requiredScopes` lists the missing ones), or, on a supplier’s endpoint, its account acts for no supplier (`details.requiredMembership`)',
  NOT_FOUND: 'Nothing is found',
  METHOD_NOT_ALLOWED: 'The path does not take this method; `Allow` lists those it takes',
  CONFLICT: 'The request conflicts with the current state',
  PAYLOAD_TOO_LARGE: 'The body is larger than 1 MiB',
  UNSUPPORTED_MEDIA_TYPE: 'The body is not sent as application/json',
  HEADERS_TOO_LARGE: 'The request line and headers are larger than the server accepts; the connection is closed',
  RATE_LIMIT_EXCEEDED: 'Too many requests in the current window; retry after `Retry-After` seconds',
  INTERNAL_ERROR: 'An unexpected failure; the message is generic',
  SERVICE_UNAVAILABLE: 'The database cannot be reached; retry after `Retry-After` seconds',
};

/** `error.details` of each code, as far as it has a fixed form. */
function detailsSchema(code: ErrorCode): JsonSchema | undefined {
  switch (code) {
    case 'VALIDATION_ERROR':
      return {
        type: 'object',
        description: 'Each bad parameter or field, as a client writes it (`page`, `items[1].quantity`) → what is wrong with it',
        additionalProperties: { type: 'string' },
      };
    case 'FORBIDDEN':
      return {
        type: 'object',
        minProperties: 1,
        additionalProperties: false,
        properties: {
          requiredScopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] } },
          requiredMembership: { type: 'string', const: 'supplier' },
        },
      };
    case 'CONFLICT':
      return { type: 'object', description: 'What conflicts, e.g. per short item `{"items[0]": {"productId", "requested", "available"}}`' };
    case 'RATE_LIMIT_EXCEEDED':
      return undefined;
    default:
      return { type: 'object' };
  }
}

function errorSchema(code: ErrorCode): JsonSchema {
  const details = detailsSchema(code);
  const required = ['code', 'message'];
  if (code === 'RATE_LIMIT_EXCEEDED') required.push('retryAfter');
  if (code === 'FORBIDDEN') required.push('details');
  return {
    type: 'object',
    required: ['success', 'error'],
    additionalProperties: false,
    properties: {
      success: { type: 'boolean', const: false },
      error: {
        type: 'object',
        required,
        additionalProperties: false,
        properties: {
          code: { type: 'string', const: code },
          message: { type: 'string', description: 'For people; never a stack, SQL or secret' },
          ...(details ? { details } : {}),
          ...(code === 'RATE_LIMIT_EXCEEDED' ? { retryAfter: { type: 'integer', minimum: 1, description: 'The same as Retry-After' } } : {}),
        },
      },
    },
  };
}

function errorResponses(commonHeaders: readonly string[]): Record<string, Response> {
  const responses: Record<string, Response> = {};
  for (const code of Object.keys(errorStatus) as ErrorCode[]) {
    const headers: Record<string, HeaderOrRef> = {};
    // Headers too large are refused by the HTTP server before the app: none of the app's headers.
    if (code !== 'HEADERS_TOO_LARGE') for (const name of commonHeaders) headers[name] = headerRef(name);
    headers['Cache-Control'] = headerRef('Cache-Control');
    if (code === 'RATE_LIMIT_EXCEEDED' || code === 'SERVICE_UNAVAILABLE') headers['Retry-After'] = headerRef('Retry-After');
    if (code === 'METHOD_NOT_ALLOWED') headers.Allow = headerRef('Allow');
    responses[responseName(code)] = { description: ERROR_DESCRIPTIONS[code], headers, content: { [JSON_TYPE]: { schema: errorSchema(code) } } };
  }
  return responses;
}

const errorRef = (code: ErrorCode, description?: string): ResponseOrRef => ({
  $ref: `#/components/responses/${responseName(code)}`,
  ...(description ? { description } : {}),
});

// ----- one route -----

/** `/api/products/:slug` → `/api/products/{slug}` */
const openApiPath = (path: string) => path.replace(/:([A-Za-z]+)/g, '{$1}');

const shapesOf = (route: RestRoute): readonly RestShape[] => (typeof route.shape === 'function' ? route.shape.variants : [route.shape]);

/** The JSON Schema zod gives for `schema` as a client sends it, with the REST form of each parameter parser. */
function inputJsonSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      const form = restParamForm.get(zodSchema);
      if (form) {
        for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
        Object.assign(jsonSchema, structuredClone(form));
      }
      // A refinement's rule, beside what zod says of the schema.
      const rule = declaredRule.get(zodSchema);
      if (rule) Object.assign(jsonSchema, structuredClone(rule));
      // zod leaves out the default of a transforming parser in input mode (it is an output
      // value); a REST-form parser's output is what the client would send, so it is kept.
      if (zodSchema instanceof z.ZodDefault && jsonSchema.default === undefined && restParamForm.has(zodSchema.unwrap())) {
        jsonSchema.default = structuredClone(zodSchema.def.defaultValue);
      }
    },
  });
  const { $schema: _dialect, ...rest } = json;
  return rest;
}

/** Each variable's description, from the argument of a top-level field it is passed to. */
function argumentDescriptions(schema: GraphQLSchema, operation: OperationDefinitionNode): Map<string, string> {
  const out = new Map<string, string>();
  const root = schema.getRootType(operation.operation);
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD || !root) continue;
    const field = root.getFields()[selection.name.value];
    for (const arg of selection.arguments ?? []) {
      const description = field?.args.find((a) => a.name === arg.name.value)?.description;
      if (arg.value.kind === Kind.VARIABLE && description && !out.has(arg.value.name.value)) out.set(arg.value.name.value, description);
    }
  }
  return out;
}

function queryParameters(route: DerivedRoute, descriptions: Map<string, string>): Parameter[] {
  const json = inputJsonSchema(route.querySchema);
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description: formDescription, ...schema } = typeof property === 'boolean' ? {} : property;
    const description = sentences([descriptions.get(name), formDescription]);
    return { name, in: 'query' as const, required: required.has(name), ...(description ? { description } : {}), schema };
  });
}

function pathParameters(route: DerivedRoute): Parameter[] {
  return [...route.path.matchAll(/:([A-Za-z]+)/g)].map(([, name = '']) => {
    const zodSchema = route.pathSchemas[name];
    return {
      name,
      in: 'path' as const,
      required: true,
      ...(zodSchema ? { description: 'Anything else matches nothing: 404' } : {}),
      schema: zodSchema ? inputJsonSchema(zodSchema) : { type: 'string' },
    };
  });
}

/** Adds the GraphQL input type's field descriptions to a body schema that zod produced. */
function describeInput(json: JsonSchema, type: GraphQLInputType): void {
  if (isNonNullType(type)) return describeInput(json, type.ofType);
  const alternative = json.anyOf?.find((s) => s.type !== 'null');
  if (alternative) return describeInput(alternative, type);
  if (isListType(type)) {
    if (json.items && typeof json.items === 'object' && !Array.isArray(json.items)) describeInput(json.items, type.ofType);
    return;
  }
  if (!isInputObjectType(type) || !json.properties) return;
  const fields = type.getFields();
  for (const [name, property] of Object.entries(json.properties)) {
    const field = fields[name];
    if (!field || typeof property === 'boolean') continue;
    if (field.description && property.description === undefined) property.description = field.description;
    describeInput(property, field.type);
  }
}

/** parseInput treats a top-level null as absent: each optional field of the body also takes null. */
function optionalTopLevelTakeNull(json: JsonSchema): void {
  const required = new Set(json.required ?? []);
  for (const [name, property] of Object.entries(json.properties ?? {})) {
    if (required.has(name) || typeof property === 'boolean') continue;
    const { nullable } = splitNull(property);
    if (nullable) continue;
    if (typeof property.type === 'string') {
      property.type = [property.type, 'null'];
    } else {
      const copy = { ...property };
      for (const key of Object.keys(property)) delete property[key];
      property.anyOf = [copy, { type: 'null' }];
    }
  }
}

function requestBody(route: DerivedRoute, schema: GraphQLSchema) {
  if (!route.body) return undefined;
  const json = inputJsonSchema(route.body.schema);
  optionalTopLevelTakeNull(json);
  const definition = route.definition.variableDefinitions?.find((d) => d.variable.name.value === route.body?.variable);
  const type = definition ? typeFromAST(schema, definition.type) : undefined;
  if (type) describeInput(json, type as GraphQLInputType);
  return { required: !route.body.optional, content: { [JSON_TYPE]: { schema: json } } };
}

/** The success envelope of one shape: `data` (and `meta` for a paginated list). */
function envelope(shape: RestShape, fields: Map<string, JsonSchema>): JsonSchema {
  const field = fields.get(shape.field);
  if (!field) throw new Error(`The operation does not select ${shape.field}`);
  const value = splitNull(field).schema;
  const properties: Record<string, JsonSchema> = { success: { type: 'boolean', const: true } };
  const required = ['success', 'data'];
  if (shape.kind === 'one') {
    // A null record is answered 404, so `data` is never null.
    properties.data = value;
  } else {
    const items = value.properties?.items;
    const meta = value.properties?.meta;
    if (!items || typeof items === 'boolean') throw new Error(`${shape.field} has no items`);
    properties.data = items;
    if (meta && typeof meta !== 'boolean') {
      const { schema: metaSchema, nullable } = splitNull(meta);
      // The router leaves meta out when the operation answers null (a list not paginated).
      properties.meta = nullable ? { description: 'Present when the list is paginated', allOf: [metaSchema] } : metaSchema;
      if (!nullable && value.required?.includes('meta')) required.push('meta');
    }
  }
  return { type: 'object', required, additionalProperties: false, properties };
}

function operationId(route: RestRoute, operationName: string): string {
  const name = operationName.replace(/^Rest(?=[A-Z])/, '');
  if (route.method !== 'GET') return name.charAt(0).toLowerCase() + name.slice(1);
  return `${shapesOf(route).every((s) => s.kind === 'list') ? 'list' : 'get'}${name}`;
}

function security(route: DerivedRoute) {
  const scopes = [...route.scopes];
  // OpenAPI 3.1 lets a non-OAuth requirement list the roles it needs: here, the key's scopes.
  const requirements = [{ [API_KEY]: scopes }, { [BEARER]: scopes }];
  return route.keyRequired ? requirements : [{}, ...requirements];
}

function scopeNote(route: DerivedRoute): string | undefined {
  const { scopes } = route;
  if (!route.keyRequired) return 'Works with or without an API key.';
  if (!scopes.length) return 'Requires an API key, of any scopes.';
  return `Requires an API key with the scope${scopes.length > 1 ? 's' : ''} ${scopes.map((s) => `\`${s}\``).join(', ')} (\`admin:all\` grants every scope).`;
}

interface BuiltOperation {
  path: string;
  method: string;
  operation: Operation;
}

function buildOperation(declared: RestRoute, schema: GraphQLSchema, commonHeaders: readonly string[], successSchemas: JsonSchema[]): BuiltOperation & { origins: ReturnType<typeof operationSchemas>['origins'] } {
  const route = deriveRoute(declared, schema);
  const operation = route.definition;
  if (!operation.name) throw new Error(`${route.method} ${route.path}: its operation needs a name`);
  const { fields, origins } = operationSchemas(schema, route.operation);

  const shapes = shapesOf(route);
  const envelopes = shapes.map((shape) => envelope(shape, fields));
  let body: JsonSchema;
  if (envelopes.length === 1 && envelopes[0]) {
    body = envelopes[0];
  } else {
    body = {
      oneOf: envelopes.map((e, i) => ({
        description: shapes[i]?.kind === 'one' ? 'One record' : 'A page of records, with meta',
        ...e,
      })),
    };
  }
  successSchemas.push(body);

  const status = route.status ?? 200;
  const successHeaders: Record<string, HeaderOrRef> = {};
  for (const name of commonHeaders) successHeaders[name] = headerRef(name);
  successHeaders['Cache-Control'] = cacheControlHeader(route);
  if (route.method === 'GET') successHeaders.ETag = headerRef('ETag');
  if (route.idempotent) successHeaders['Idempotent-Replayed'] = headerRef('Idempotent-Replayed');

  const responses: Record<string, ResponseOrRef> = {
    [String(status)]: {
      description: status === 201 ? 'Created' : 'OK',
      headers: successHeaders,
      content: { [JSON_TYPE]: { schema: body } },
    },
    ...(route.method === 'GET'
      ? { 304: { description: 'Not Modified: If-None-Match names the current ETag; no body', headers: { ...successHeaders } } }
      : {}),
    400: errorRef('VALIDATION_ERROR'),
    401: errorRef('UNAUTHORIZED'),
  };
  if (route.scopes.length) {
    responses[403] = route.member
      ? errorRef('FORBIDDEN', 'The key lacks a scope (`details.requiredScopes`), or its account acts for no supplier (`details.requiredMembership`)')
      : errorRef('FORBIDDEN', 'The key lacks a scope the endpoint needs; `details.requiredScopes` lists the missing ones');
  }
  // The router answers 404 when a lookup's field is null.
  const notFound = shapes.flatMap((s) => (s.notFound ? [`${s.notFound} not found`] : []));
  if (notFound.length) responses[404] = errorRef('NOT_FOUND', notFound.join('; '));
  responses[405] = errorRef('METHOD_NOT_ALLOWED');
  if (route.docs.conflict) responses[409] = errorRef('CONFLICT', route.docs.conflict);
  if (route.body) {
    responses[413] = errorRef('PAYLOAD_TOO_LARGE');
    responses[415] = errorRef('UNSUPPORTED_MEDIA_TYPE');
  }
  responses[429] = errorRef('RATE_LIMIT_EXCEEDED');
  responses[500] = errorRef('INTERNAL_ERROR');
  responses[503] = errorRef('SERVICE_UNAVAILABLE');

  const descriptions = argumentDescriptions(schema, operation);
  const parameters = [...pathParameters(route), ...queryParameters(route, descriptions)];
  if (route.method === 'GET') {
    parameters.push({
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description: 'An ETag of an earlier answer: 304 without a body while the answer is unchanged',
      schema: { type: 'string' },
    });
  }
  if (route.idempotent) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: 'Makes retries safe: the same key and body from the same account within 24 hours answer the first response again',
      // The check in src/domain/orders/idempotency.ts (idempotencyKey).
      schema: { type: 'string', pattern: '^[\\x20-\\x7e]{1,255}$' },
    });
  }
  const requestBodyObject = requestBody(route, schema);
  const description = [route.docs.description, scopeNote(route)].filter(Boolean).join('\n\n');

  return {
    path: openApiPath(route.path),
    method: route.method.toLowerCase(),
    origins,
    operation: {
      operationId: operationId(route, operation.name.value),
      summary: route.docs.summary,
      description,
      tags: [route.docs.tag],
      security: security(route),
      'x-required-scopes': [...route.scopes],
      'x-graphql-operation': operation.name.value,
      parameters,
      ...(requestBodyObject ? { requestBody: requestBodyObject } : {}),
      responses,
    },
  };
}

// ----- the document -----

const DESCRIPTION = `The marketplace's public REST API: products, categories, suppliers, orders, stock and prices, and the caller's own account.

Every response is a JSON envelope: \`{"success": true, "data": …, "meta"?: {page, limit, total, totalPages}}\` or
\`{"success": false, "error": {"code", "message", "details"?, "retryAfter"?}}\`.

**Authentication.** Send an API key as \`X-API-Key: <key>\` or \`Authorization: Bearer <key>\`. The catalogue works
without one; orders, stock and prices need a key with the scope each operation names; the caller's account (\`/api/me\`)
needs a key of any scopes. An invalid key is a 401 everywhere, never anonymous access.

**Rate limits.** Every response carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\`, \`X-RateLimit-Reset\`
(Unix time in milliseconds), \`RateLimit-Policy\` and \`RateLimit\`; over the limit the answer is 429 with
\`Retry-After\`.

**Parameters** are validated, never clamped: a bad or unknown parameter, or one given twice, is a 400 naming
each. \`HEAD\` works wherever \`GET\` does, and one trailing slash is tolerated.

The same data is served as GraphQL at \`/graphql\`.`;

export interface OpenApiDeps {
  schema: GraphQLSchema;
  routes: readonly RestRoute[];
}

/** The OpenAPI 3.1 document of `routes` served on `schema`. Throws if a route cannot be described. */
export function buildOpenApiDocument({ schema, routes }: OpenApiDeps): OpenApiDocument {
  const rateLimit = rateLimitHeaderComponents();
  // Every answer of /api carries these, errors included.
  const commonHeaders = [...Object.keys(rateLimit), ...Object.keys(OBSERVE_HEADERS)];
  const successSchemas: JsonSchema[] = [];
  const built = routes.map((route) => buildOperation(route, schema, commonHeaders, successSchemas));

  // Origins from every operation, so selections repeated across routes share one component.
  const origins = new Map(built.flatMap((b) => [...b.origins]));
  const components = extractComponents(successSchemas, origins);

  const paths: Record<string, Record<string, Operation>> = {};
  const ids = new Set<string>();
  const tags: string[] = [];
  for (const { path, method, operation } of built) {
    if (ids.has(operation.operationId)) throw new Error(`Two operations are called ${operation.operationId}`);
    ids.add(operation.operationId);
    for (const tag of operation.tags) if (!tags.includes(tag)) tags.push(tag);
    for (const response of Object.values(operation.responses)) {
      const content = 'content' in response ? response.content?.[JSON_TYPE] : undefined;
      if (content) content.schema = components.refer(content.schema);
    }
    paths[path] = { ...paths[path], [method]: operation };
  }

  return {
    openapi: '3.1.0',
    info: { title: 'Marketplace API', version: API_VERSION, description: DESCRIPTION },
    servers: [{ url: '/', description: 'This server' }],
    tags: tags.map((name) => ({ name })),
    paths,
    components: {
      schemas: components.schemas,
      responses: errorResponses(commonHeaders),
      headers: { ...rateLimit, ...OBSERVE_HEADERS, ...CACHING_HEADERS, ...OTHER_HEADERS },
      securitySchemes: {
        [API_KEY]: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key: secret (`mk_…`), or publishable (`pk_…`: the catalogue only, from the origins it lists)' },
        [BEARER]: { type: 'http', scheme: 'bearer', description: 'The same API key as a bearer token' },
      },
    },
  };
}
