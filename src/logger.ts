import pino, { type Logger } from 'pino';

export type { Logger };

// Structured JSON logs. Anything that could carry a key is redacted by path as a second line of
// defence; code never logs request headers in the first place.
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    redact: { paths: ['*.headers.authorization', '*.headers["x-api-key"]', 'key', '*.key'], censor: '[redacted]' },
  });
}
