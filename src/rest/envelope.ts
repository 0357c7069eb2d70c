import { AppError, INTERNAL_MESSAGE, type ErrorCode, type ErrorDetails } from '../shared/errors.js';
import type { PaginationMeta } from '../shared/pagination.js';
import { Response } from '../shared/fetch-api.js';

/** The version of the published contract this service implements (X-API-Version, the OpenAPI document). */
export const API_VERSION = '1.0.0';

// The spec's envelopes: { success: true, data, meta? } and
// { success: false, error: { code, message, details?, retryAfter? } }.

export interface SuccessBody {
  success: true;
  data: unknown;
  meta?: PaginationMeta;
}

export interface ErrorBody {
  success: false;
  error: { code: ErrorCode; message: string; details?: ErrorDetails; retryAfter?: number };
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

/** An envelope already serialised, e.g. the bytes of a first response replayed. */
export function jsonTextResponse(status: number, text: string, headers?: Record<string, string>): Response {
  return new Response(text, { status, headers: { ...JSON_HEADERS, ...headers } });
}

export function errorBody(error: AppError): ErrorBody {
  return {
    success: false,
    error: {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
      ...(error.retryAfter !== undefined ? { retryAfter: error.retryAfter } : {}),
    },
  };
}

/** The status and headers an error answers with; a rate limit also says when to retry. */
export function errorResponseInit(error: AppError, headers?: Record<string, string>) {
  return {
    status: error.status,
    headers: {
      ...JSON_HEADERS,
      // An error is about this request at this moment: never worth keeping.
      'cache-control': 'no-store',
      ...error.headers,
      ...headers,
      ...(error.retryAfter !== undefined ? { 'retry-after': String(error.retryAfter) } : {}),
    },
  };
}

export const errorResponse = (error: AppError, headers?: Record<string, string>) =>
  new Response(JSON.stringify(errorBody(error)), errorResponseInit(error, headers));

export const internalErrorResponse = () => errorResponse(new AppError('INTERNAL_ERROR', INTERNAL_MESSAGE));
