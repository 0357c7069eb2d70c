import { GraphQLError, type ExecutionResult } from 'graphql';
import { isAsyncIterable, mapAsyncIterator, processRegularResult, type Plugin } from 'graphql-yoga';
import { databaseUnavailable } from '../db/prisma.js';
import { AppError, asAppError, errorStatus, INTERNAL_MESSAGE, isClientAbort, isContractCode } from '../shared/errors.js';
import type { Logger } from '../config/logger.js';
import { errorResponseInit } from '../rest/envelope.js';
import type { OverloadLog } from '../http/overload-log.js';
import { Response } from '../shared/fetch-api.js';
import type { IncrementalPart } from './graphql-incremental.js';

// What a GraphQL client sees of an error: ours (AppError) as they are, GraphQL's verdicts on the
// request with code VALIDATION_ERROR, and anything unexpected masked as INTERNAL_ERROR.

/** An error refusing a request before GraphQL runs, in the shape GraphQL clients read. */
export const graphqlErrorBody = (error: AppError) => ({ errors: [{ message: error.message, extensions: error.extensions }] });

export function graphqlErrorResponse(error: AppError, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(graphqlErrorBody(error)), errorResponseInit(error, headers));
}

/** The methods /graphql answers: GraphQL over HTTP's GET and POST, and CORS preflights. */
export const GRAPHQL_METHODS = ['GET', 'POST', 'OPTIONS'] as const;

/** PUT, DELETE, PATCH, HEAD, … on /graphql: 405 with Allow (Yoga's own answer is a 400). */
export function graphqlMethodNotAllowed(request: Request): Response | undefined {
  if ((GRAPHQL_METHODS as readonly string[]).includes(request.method)) return undefined;
  const error = new AppError('METHOD_NOT_ALLOWED', `${request.method.slice(0, 20)} is not allowed on /graphql: use GET or POST`);
  return graphqlErrorResponse(error, { allow: GRAPHQL_METHODS.join(', ') });
}

export function createMaskError(logger: Logger, overload: OverloadLog) {
  return (error: unknown): Error => {
    if (asAppError(error)) return error as Error;
    // GraphQL's and Yoga's own errors (syntax, unknown field, bad body) are the caller's to
    // see; useContractErrorCodes gives them the contract's code.
    if (error instanceof GraphQLError && !error.originalError) return error;
    // A variable of the wrong type arrives wrapped once more by the executor: still the
    // caller's mistake, not ours.
    if (error instanceof GraphQLError && error.originalError instanceof GraphQLError && !error.originalError.originalError) {
      return new GraphQLError(error.message, { nodes: error.nodes, path: error.path, extensions: { code: 'VALIDATION_ERROR' } });
    }
    // The database being down, restarting or too slow is not a bug: SERVICE_UNAVAILABLE, with
    // when to retry, counted in the overload log rather than logged as an error each time.
    // useContractErrorCodes gives the response its 503 when nothing else came back.
    const unavailable = databaseUnavailable(error);
    if (unavailable) overload.report(error);
    else if (isClientAbort(error)) logger.debug('client aborted the request');
    else logger.error({ err: error instanceof GraphQLError ? (error.originalError ?? error) : error }, 'unexpected error');
    if (unavailable) {
      return new GraphQLError(unavailable.message, {
        path: error instanceof GraphQLError ? error.path : undefined,
        extensions: unavailable.extensions,
      });
    }
    return new GraphQLError(INTERNAL_MESSAGE, {
      path: error instanceof GraphQLError ? error.path : undefined,
      extensions: { code: 'INTERNAL_ERROR' },
    });
  };
}

// GraphQL's and Yoga's own error codes (GRAPHQL_PARSE_FAILED, GRAPHQL_VALIDATION_FAILED,
// BAD_USER_INPUT, BAD_REQUEST, OPERATION_RESOLUTION_FAILURE, …) mean "your request is invalid":
// docs/api.md (Errors) names that VALIDATION_ERROR. Ours and masked failures already carry a contract code.

export function useContractErrorCodes(): Plugin {
  const recode = (result: ExecutionResult) => {
    // Nothing could be answered (data null, or every requested root field null) because the
    // database is unavailable or a limit was reached: the whole response is 503 or 429, as over
    // REST. With partial data it stays 200 (GraphQL over HTTP). The error's Retry-After and its
    // own headers (an order limit's X-RateLimit-*) are sent either way.
    const noData = result.data == null || Object.values(result.data).every((value) => value === null);
    for (const code of ['SERVICE_UNAVAILABLE', 'RATE_LIMIT_EXCEEDED'] as const) {
      const decisive = result.errors?.find((e) => e.extensions?.code === code);
      if (!decisive) continue;
      const retryAfter = decisive.extensions.retryAfter;
      const headers = { ...asAppError(decisive)?.headers, ...(typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {}) };
      (decisive.extensions as Record<string, unknown>).http = {
        ...(noData ? { status: errorStatus[code] } : {}),
        ...(Object.keys(headers).length ? { headers } : {}),
      };
      break;
    }
    for (const error of result.errors ?? []) {
      const extensions = error.extensions as Record<string, unknown>;
      if (extensions.code === 'BAD_REQUEST') {
        if ((extensions.http as { status?: number } | undefined)?.status === 405) {
          // A mutation sent with GET (Yoga's check, which sets Allow: POST): GraphQL over HTTP
          // asks for 405, and the contract's code for it is METHOD_NOT_ALLOWED.
          extensions.code = 'METHOD_NOT_ALLOWED';
        } else {
          // A body Yoga could not read at all (bad JSON, no query): 400 whatever the Accept
          // header, and without the parser's exception, which Yoga would otherwise attach.
          extensions.http = { status: 400 };
        }
        delete extensions.originalError;
      }
      // Codeless errors left at this point are GraphQL's own verdicts on the request (e.g. a
      // missing variable): ours carry a code and unexpected ones were masked as INTERNAL_ERROR.
      if (!isContractCode(extensions.code)) extensions.code = 'VALIDATION_ERROR';
      // A failure before anything executed (no data entry at all: a plugin's, before or after
      // execution) is the server's: 500, never a 200 that a client would read as an answer.
      if (extensions.code === 'INTERNAL_ERROR' && !('data' in result) && !extensions.http) extensions.http = { status: 500 };
    }
  };
  return {
    onResultProcess({ result, setResult, resultProcessor, setResultProcessor }) {
      if (Array.isArray(result)) result.forEach(recode);
      else if (isAsyncIterable(result)) {
        // An incremental answer (@defer, @stream): each part's errors, and each increment's, as it is sent.
        setResult(
          mapAsyncIterator(result, (part) => {
            recode(part);
            for (const increment of (part as IncrementalPart).incremental ?? []) recode(increment as ExecutionResult);
            return part;
          }),
        );
      } else if (result && typeof result === 'object' && 'errors' in result) recode(result as ExecutionResult);
      // An Accept header naming nothing GraphQL answers with (text/plain, image/png, garbage) gets
      // JSON, as REST does, rather than Yoga's bodiless 406: the GraphQL over HTTP spec allows
      // disregarding Accept and answering application/json.
      if (!resultProcessor && !(Symbol.asyncIterator in result)) setResultProcessor(processRegularResult, 'application/json');
    },
  };
}

