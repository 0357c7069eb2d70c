import { createRequire } from 'node:module';
import pino, { type Logger, type LoggerOptions } from 'pino';
import type { Config } from './config.js';

export type { Logger };

// Structured JSON logs for whatever collects them; human-readable lines (pino-pretty) only for a
// developer watching a terminal. Anything that could carry a key is redacted by path as a second
// line of defence; code never logs request headers in the first place.
export function createLogger(level: string, environment: Config['NODE_ENV'] = 'production'): Logger {
  const options: LoggerOptions = {
    level,
    base: undefined,
    redact: { paths: ['*.headers.authorization', '*.headers["x-api-key"]', 'key', '*.key'], censor: '[redacted]' },
  };
  if (environment === 'development' && process.stdout.isTTY === true) {
    // Loaded only here: nothing else pays for it. Synchronous, so the last lines before
    // process.exit() are not lost.
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
    return pino(options, pretty.build({ sync: true, translateTime: 'SYS:HH:MM:ss.l' }));
  }
  return pino(options);
}

/**
 * Text for a person at the terminal (not a log record), written into the log's own stream so that
 * it comes out after the lines logged before it: pino writes asynchronously, and a direct
 * process.stdout.write could overtake them.
 */
export function writeBesideLogs(logger: Logger, text: string): void {
  (logger as unknown as Record<symbol, { write(chunk: string): void }>)[pino.symbols.streamSym]!.write(text);
}
