import { Writable } from 'node:stream';
import { GraphQLError } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createMaskError, graphqlErrorBody, graphqlErrorResponse, graphqlMethodNotAllowed, useContractErrorCodes } from '../../src/pipeline/graphql-errors.js';
import { errorBody, errorResponse, internalErrorResponse } from '../../src/rest/envelope.js';
import {
  AppError,
  asAppError,
  causeOf,
  contractError,
  errorStatus,
  isContractCode,
  notFound,
  rateLimited,
  serviceUnavailable,
  validationError,
} from '../../src/shared/errors.js';

// What a client sees of an error (docs/api.md, Errors): the REST envelope, the GraphQL error
// shape, one code and status table for both, and masking of anything unexpected.

describe('the code table', () => {
  it('gives each contract code its HTTP status (docs/api.md, Errors)', () => {
    const table = Object.entries(errorStatus).map(([code, status]) => `${status} ${code}`);
    expect(table.sort().join(', ')).toBe(
      '400 VALIDATION_ERROR, 401 UNAUTHORIZED, 403 FORBIDDEN, 404 NOT_FOUND, 405 METHOD_NOT_ALLOWED, 409 CONFLICT, 413 PAYLOAD_TOO_LARGE, ' +
        '415 UNSUPPORTED_MEDIA_TYPE, 429 RATE_LIMIT_EXCEEDED, 431 HEADERS_TOO_LARGE, 500 INTERNAL_ERROR, 503 SERVICE_UNAVAILABLE',
    );
  });

  it('knows only its own codes: not GraphQL’s, not Yoga’s, not an object’s members', () => {
    expect(isContractCode('CONFLICT')).toBe(true);
    for (const other of ['GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'toString', 'constructor', 404, undefined]) expect(isContractCode(other)).toBe(false);
  });
});

describe('the REST envelope', () => {
  it('carries code and message, and details only when there are some', () => {
    expect(errorBody(notFound('Product'))).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'Product not found' } });
    expect(errorBody(validationError({ limit: 'must be an integer between 1 and 100' }))).toEqual({
      success: false,
      error: { code: 'VALIDATION_ERROR', message: 'Invalid request parameters', details: { limit: 'must be an integer between 1 and 100' } },
    });
  });

  it('puts a rate limit’s retryAfter beside the code, not in details, and in Retry-After', async () => {
    const error = rateLimited('Slow down', 7, { 'x-ratelimit-limit': '60' });
    expect(errorBody(error)).toEqual({ success: false, error: { code: 'RATE_LIMIT_EXCEEDED', message: 'Slow down', retryAfter: 7 } });
    const response = errorResponse(error);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(response.headers.get('x-ratelimit-limit')).toBe('60');
  });

  it('keeps other details of a rate limit, and keeps retryAfter in details for any other code', () => {
    expect(new AppError('RATE_LIMIT_EXCEEDED', 'm', { retryAfter: 3, limit: 'orders' }).details).toEqual({ limit: 'orders' });
    expect(new AppError('CONFLICT', 'm', { retryAfter: 3 }).details).toEqual({ retryAfter: 3 });
    expect(new AppError('CONFLICT', 'm', { retryAfter: 3 }).retryAfter).toBeUndefined();
  });

  it('answers with the code’s status as JSON that no cache keeps', async () => {
    const response = errorResponse(new AppError('FORBIDDEN', 'No'), { 'x-extra': '1' });
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-extra')).toBe('1');
    expect(await response.json()).toEqual({ success: false, error: { code: 'FORBIDDEN', message: 'No' } });
  });

  it('says nothing of an internal error but that it happened', async () => {
    const response = internalErrorResponse();
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ success: false, error: { code: 'INTERNAL_ERROR', message: 'An internal error occurred' } });
  });

  it('tells a client of an unavailable database when to retry', async () => {
    const response = errorResponse(serviceUnavailable('The database is temporarily unavailable; retry later', 5));
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect((await response.json()).error).toEqual({ code: 'SERVICE_UNAVAILABLE', message: 'The database is temporarily unavailable; retry later', retryAfter: 5 });
  });
});

describe('the GraphQL error shape', () => {
  it('carries the same code, details and retryAfter in extensions', () => {
    expect(graphqlErrorBody(rateLimited('Slow down', 7))).toEqual({ errors: [{ message: 'Slow down', extensions: { code: 'RATE_LIMIT_EXCEEDED', retryAfter: 7 } }] });
    expect(graphqlErrorBody(validationError({ first: 'x' }))).toEqual({ errors: [{ message: 'Invalid request parameters', extensions: { code: 'VALIDATION_ERROR', details: { first: 'x' } } }] });
    expect(graphqlErrorBody(serviceUnavailable('Later', 5)).errors[0]!.extensions).toEqual({ code: 'SERVICE_UNAVAILABLE', retryAfter: 5 });
  });

  it('answers a refusal before GraphQL runs with the code’s status and headers', async () => {
    const response = graphqlErrorResponse(new AppError('UNAUTHORIZED', 'Who?'), { 'x-ratelimit-limit': '60' });
    expect(response.status).toBe(401);
    expect(response.headers.get('x-ratelimit-limit')).toBe('60');
    expect(await response.json()).toEqual({ errors: [{ message: 'Who?', extensions: { code: 'UNAUTHORIZED' } }] });
  });

  it('answers a method /graphql does not take with 405 and Allow', async () => {
    for (const method of ['GET', 'POST', 'OPTIONS']) expect(graphqlMethodNotAllowed(new Request('http://unit.test/graphql', { method }))).toBeUndefined();
    const response = graphqlMethodNotAllowed(new Request('http://unit.test/graphql', { method: 'DELETE' }))!;
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST, OPTIONS');
    expect((await response.json()).errors[0]).toEqual({ message: 'DELETE is not allowed on /graphql: use GET or POST', extensions: { code: 'METHOD_NOT_ALLOWED' } });
  });
});

describe('finding our error in what was thrown', () => {
  it('finds an AppError however GraphQL or a cause wrapped it', () => {
    const ours = notFound();
    expect(asAppError(ours)).toBe(ours);
    expect(asAppError(new GraphQLError('wrapped', { originalError: ours }))).toBe(ours);
    expect(asAppError(new Error('outer', { cause: new Error('middle', { cause: ours }) }))).toBe(ours);
  });

  it('finds nothing in an unexpected error, nor below five wrappers', () => {
    expect(asAppError(new TypeError('bug'))).toBeUndefined();
    expect(asAppError('a string')).toBeUndefined();
    let deep: Error = notFound();
    for (let i = 0; i < 5; i++) deep = new Error(`wrapper ${i}`, { cause: deep });
    expect(asAppError(deep)).toBeUndefined();
  });

  it('reads any GraphQL error as a contract error: ours as it is, a masked 503 with its wait, the rest as VALIDATION_ERROR', () => {
    const ours = new AppError('CONFLICT', 'Taken');
    expect(contractError(new GraphQLError('x', { originalError: ours }))).toBe(ours);
    const masked = contractError(new GraphQLError('Later', { extensions: { code: 'SERVICE_UNAVAILABLE', retryAfter: 5 } }));
    expect(masked).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryAfter: 5, status: 503 });
    expect(contractError(new GraphQLError('Unknown field', { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }))).toMatchObject({ code: 'VALIDATION_ERROR', status: 400 });
    expect(contractError(new GraphQLError('Gone', { extensions: { code: 'INTERNAL_ERROR' } }))).toMatchObject({ code: 'INTERNAL_ERROR', status: 500 });
  });

  it('sums a failure’s cause up in one line: the driver’s code and last line, never a GraphQL wrapper’s message', () => {
    const driver = Object.assign(new Error('Invalid `prisma.product.findMany()` invocation:\n\n\nconnect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(causeOf(new GraphQLError('{"secret":"input"}', { originalError: driver }))).toBe('ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432');
    expect(causeOf({ message: 'x'.repeat(500) })).toHaveLength(200);
    expect(causeOf(null)).toBe('unknown cause');
  });
});

describe('masking', () => {
  const sink = () => {
    const lines: { level: number; msg: string }[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const logger = pino({ level: 'trace' }, stream);
    const reported: unknown[] = [];
    const mask = createMaskError(logger, { report: (error) => void reported.push(error), close: () => undefined });
    return { mask, lines, reported };
  };

  it('passes our errors and GraphQL’s own verdicts on the request through as they are', () => {
    const { mask, lines } = sink();
    const ours = notFound();
    expect(mask(ours)).toBe(ours);
    const verdict = new GraphQLError('Cannot query field "x" on type "Query".');
    expect(mask(verdict)).toBe(verdict);
    expect(lines).toEqual([]);
  });

  it('hides an unexpected failure behind INTERNAL_ERROR, keeping its path, and logs it', () => {
    const { mask, lines } = sink();
    const masked = mask(new GraphQLError('column "secret" does not exist', { path: ['products'], originalError: new Error('column "secret" does not exist') })) as GraphQLError;
    expect(masked.message).toBe('An internal error occurred');
    expect(masked.extensions).toEqual({ code: 'INTERNAL_ERROR' });
    expect(masked.path).toEqual(['products']);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([[50, 'unexpected error']]);
  });

  it('answers a database that is away as SERVICE_UNAVAILABLE with Retry-After, counted in the overload log rather than logged', () => {
    const { mask, lines, reported } = sink();
    const away = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const masked = mask(new GraphQLError('x', { originalError: away })) as GraphQLError;
    expect(masked.extensions).toEqual({ code: 'SERVICE_UNAVAILABLE', retryAfter: 5 });
    expect(reported).toHaveLength(1);
    expect(lines).toEqual([]);
  });

  it('logs a client that hung up at debug, not as an error', () => {
    const { mask, lines } = sink();
    mask(new GraphQLError('x', { originalError: new Error('aborted') }));
    expect(lines.map((l) => l.level)).toEqual([20]);
  });

  it('reports a variable of the wrong type as the caller’s mistake', () => {
    const { mask } = sink();
    const coercion = new GraphQLError('Variable "$n" got invalid value "x"', { originalError: new GraphQLError('Int cannot represent "x"') });
    expect((mask(coercion) as GraphQLError).extensions).toEqual({ code: 'VALIDATION_ERROR' });
  });
});

describe('GraphQL responses with errors', () => {
  const typeDefs = `type Query { a: String b: String }`;
  const yogaOf = (resolvers: Record<string, () => unknown>) =>
    createYoga({ schema: createSchema({ typeDefs, resolvers: { Query: resolvers } }), logging: false, maskedErrors: false, plugins: [useContractErrorCodes()] });
  const run = async (yoga: ReturnType<typeof yogaOf>, query: string, accept = 'application/json') => {
    const response = await yoga.fetch('http://unit.test/graphql', { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify({ query }) });
    return { status: response.status, headers: response.headers, body: await response.json() };
  };
  const away = () => {
    throw serviceUnavailable('Later', 5);
  };

  it('is a 503 with Retry-After when the database being away left nothing to answer', async () => {
    const { status, headers, body } = await run(yogaOf({ a: away, b: away }), '{ a b }');
    expect(status).toBe(503);
    expect(headers.get('retry-after')).toBe('5');
    expect(body.errors[0].extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryAfter: 5 });
  });

  it('stays 200 when part of the answer came through, with Retry-After still sent', async () => {
    const { status, headers, body } = await run(yogaOf({ a: away, b: () => 'fine' }), '{ a b }');
    expect(status).toBe(200);
    expect(headers.get('retry-after')).toBe('5');
    expect(body.data).toEqual({ a: null, b: 'fine' });
  });

  it('is a 500, not a 200, when a plugin fails before anything ran; a failed field still answers 200 with its data', async () => {
    const mask = createMaskError(pino({ level: 'silent' }), { report: () => undefined, close: () => undefined });
    const failing: Plugin = {
      onParams: ({ params }) => {
        if (params.query?.includes('b')) throw new Error('a store failed');
      },
    };
    const yoga = createYoga({
      schema: createSchema({ typeDefs, resolvers: { Query: { a: () => { throw new Error('a field failed'); }, b: () => 'b' } } }),
      logging: false,
      maskedErrors: { maskError: mask },
      plugins: [failing, useContractErrorCodes()],
    });
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      const before = await run(yoga as unknown as ReturnType<typeof yogaOf>, '{ b }', accept);
      expect(before.status).toBe(500);
      expect(before.body).toEqual({ errors: [{ message: 'An internal error occurred', extensions: { code: 'INTERNAL_ERROR' } }] });
      const field = await run(yoga as unknown as ReturnType<typeof yogaOf>, '{ a }', accept);
      expect(field.status).toBe(200);
      expect(field.body.data).toEqual({ a: null });
      expect(field.body.errors[0].extensions.code).toBe('INTERNAL_ERROR');
    }
  });

  it('gives GraphQL’s own verdicts the contract’s VALIDATION_ERROR', async () => {
    const { body } = await run(yogaOf({ a: () => 'x' }), '{ nope }');
    expect(body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });

  it('answers JSON to an Accept header that names nothing GraphQL answers with', async () => {
    const { status, headers } = await run(yogaOf({ a: () => 'x' }), '{ a }', 'image/png');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/^application\/json/);
  });
});
