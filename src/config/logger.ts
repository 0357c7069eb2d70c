import { createRequire } from 'node:module';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { Config } from './config.js';

export type { Logger };

// Structured JSON logs for whatever collects them; human-readable lines (pino-pretty) only for a
// developer watching a terminal. Anything that could carry a key is redacted by path as a second
// line of defence; code never logs request headers in the first place.
export function createLogger(level: string, environment: Config['NODE_ENV'] = 'production', opts: LogOptions = {}): Logger {
  const options: LoggerOptions = {
    level,
    base: undefined,
    redact: { paths: ['*.headers.authorization', '*.headers["x-api-key"]', 'key', '*.key'], censor: '[redacted]' },
    // Only with tracing on: otherwise a line costs nothing more.
    ...(opts.traceIds ? { mixin: traceIdsOfActiveSpan } : {}),
  };
  if (opts.destination) return pino(options, opts.destination);
  if (environment === 'development' && process.stdout.isTTY === true) {
    // Loaded only here: nothing else pays for it. Synchronous, so the last lines before
    // process.exit() are not lost.
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
    return pino(options, pretty.build({ sync: true, translateTime: 'SYS:HH:MM:ss.l' }));
  }
  return pino(options);
}

export interface LogOptions {
  /** Tracing is on: each line logged within a span (a request's, a delivery's) says which (traceIdsOfActiveSpan). */
  traceIds?: boolean;
  /** Where lines go (default stdout). */
  destination?: DestinationStream;
}

/**
 * The trace and span a line was logged in (the active span's), so that a request's lines and its
 * trace find each other: `traceId` and `spanId`, as W3C trace context writes them.
 */
export function traceIdsOfActiveSpan(): { traceId?: string; spanId?: string } {
  const span = trace.getActiveSpan()?.spanContext();
  return span && isSpanContextValid(span) ? { traceId: span.traceId, spanId: span.spanId } : {};
}

/**
 * Text for a person at the terminal (not a log record), written into the log's own stream so that
 * it comes out after the lines logged before it: pino writes asynchronously, and a direct
 * process.stdout.write could overtake them.
 */
export function writeBesideLogs(logger: Logger, text: string): void {
  (logger as unknown as Record<symbol, { write(chunk: string): void }>)[pino.symbols.streamSym]!.write(text);
}
