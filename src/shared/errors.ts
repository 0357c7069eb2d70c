import { GraphQLError } from 'graphql';

/** Every error code the service answers with, and its HTTP status (docs/api.md, Errors). */
export const errorStatus = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** Field or parameter name → what is wrong with it. */
export type ErrorDetails = Record<string, unknown>;

/**
 * An expected failure: its code, message and details are safe to show to the caller.
 * It is a GraphQLError so that GraphQL passes it through unmasked with `extensions.code`,
 * and the REST adapter turns it into the spec's error envelope.
 */
export class AppError extends GraphQLError {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails | undefined;
  /** Seconds until a rate-limited caller may retry: `error.retryAfter` and Retry-After. */
  readonly retryAfter: number | undefined;
  /** Response headers that belong to this error, e.g. the rate-limit headers of the limit it reports. */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails, headers?: Record<string, string>) {
    // The spec puts a rate limit's retryAfter beside code and message, not in details.
    const { retryAfter, ...rest } = details ?? {};
    const wait = code === 'RATE_LIMIT_EXCEEDED' && typeof retryAfter === 'number' ? retryAfter : undefined;
    const shown = wait === undefined ? details : Object.keys(rest).length ? rest : undefined;
    super(message, { extensions: { code, ...(shown ? { details: shown } : {}), ...(wait !== undefined ? { retryAfter: wait } : {}) } });
    this.name = 'AppError';
    this.code = code;
    this.status = errorStatus[code];
    this.details = shown;
    this.retryAfter = wait;
    this.headers = headers;
  }
}

export const rateLimited = (message: string, retryAfter: number, headers?: Record<string, string>) =>
  new AppError('RATE_LIMIT_EXCEEDED', message, { retryAfter }, headers);

export const validationError = (details: ErrorDetails, message = 'Invalid request parameters') =>
  new AppError('VALIDATION_ERROR', message, details);

/** A form's fields refused, each with what is wrong with it: the dashboard shows each beside its field, the CLI prints them. */
export const formError = (fields: Record<string, string>, message = 'Some fields are invalid') => validationError(fields, message);

export const notFound = (what = 'Resource') => new AppError('NOT_FOUND', `${what} not found`);

/** The AppError behind a thrown value, however GraphQL wrapped it; undefined for unexpected errors. */
export function asAppError(error: unknown): AppError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof AppError) return current;
    current = current instanceof GraphQLError || current instanceof Error ? (current as GraphQLError).originalError ?? (current as Error).cause : undefined;
  }
  return undefined;
}

export const INTERNAL_MESSAGE = 'An internal error occurred';

/**
 * 503 SERVICE_UNAVAILABLE: a dependency (the database) cannot serve the request right now. Like a
 * rate limit it says when to try again, as `Retry-After` and `error.retryAfter` (extensions.retryAfter
 * over GraphQL).
 */
export class ServiceUnavailableError extends AppError {
  override readonly retryAfter: number;

  constructor(message: string, retryAfter: number) {
    super('SERVICE_UNAVAILABLE', message);
    this.name = 'ServiceUnavailableError';
    this.retryAfter = retryAfter;
    this.extensions.retryAfter = retryAfter;
  }
}

export const serviceUnavailable = (message: string, retryAfter: number) => new ServiceUnavailableError(message, retryAfter);

/**
 * A client that hung up before its request was read (Node's "aborted" ECONNRESET), however
 * GraphQL wrapped it: no failure of ours, so it is logged at debug, never as an error.
 */
export function isClientAbort(error: unknown): boolean {
  const cause = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  return cause instanceof Error && cause.message === 'aborted';
}

/** Whether `code` is one of the contract's error codes (GraphQL's and Yoga's own are not). */
export const isContractCode = (code: unknown): code is ErrorCode => typeof code === 'string' && Object.hasOwn(errorStatus, code);

/**
 * The contract error an error already masked for clients stands for: ours as it is; a masked
 * failure (INTERNAL_ERROR, SERVICE_UNAVAILABLE) with its code, message and Retry-After; and any
 * other (GraphQL's and Yoga's verdicts on the request) as VALIDATION_ERROR (docs/api.md, Errors).
 */
export function contractError(error: GraphQLError): AppError {
  const own = asAppError(error);
  if (own) return own;
  const { code, retryAfter, details } = error.extensions;
  if (code === 'SERVICE_UNAVAILABLE' && typeof retryAfter === 'number') return serviceUnavailable(error.message, retryAfter);
  const known = isContractCode(code) ? code : 'VALIDATION_ERROR';
  return new AppError(known, error.message, details && typeof details === 'object' ? (details as ErrorDetails) : undefined);
}

/**
 * The cause in a line: the code and the last line of the first driver or Prisma error in the
 * chain (Prisma's message begins with the invocation and its source location; GraphQL's wrappers
 * may quote the caller's input, so they are skipped).
 */
export function causeOf(error: unknown): string {
  const queue: unknown[] = [error];
  for (let seen = 0; queue.length && seen < 10; seen++) {
    const current = queue.shift();
    if (typeof current !== 'object' || current === null) continue;
    const { message, code, originalError, cause, meta } = current as Record<string, unknown>;
    const line = typeof message === 'string' ? (message.split('\n').filter((l) => l.trim()).pop() ?? '').trim() : '';
    if (line && !(current instanceof GraphQLError)) return `${typeof code === 'string' ? `${code}: ` : ''}${line}`.slice(0, 200);
    queue.push(originalError, cause, (meta as Record<string, unknown> | undefined)?.driverAdapterError);
  }
  return 'unknown cause';
}
