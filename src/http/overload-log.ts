import type { Logger } from '../config/logger.js';
import { causeOf } from '../shared/errors.js';

// The database being down or saturated is expected from time to time and answered 503 with
// Retry-After. Logging each such answer as an error with a stack buried the logs (thousands of
// identical lines per burst). A burst is logged as: one warn line when it starts, with the cause;
// a summary line with counts every SUMMARY_EVERY_MS while it lasts and when it ends (no 503 for
// QUIET_MS).

export interface OverloadLogOptions {
  /** A burst ends after this long without a 503. */
  quietMs?: number;
  /** A long burst is summarised this often. */
  summaryEveryMs?: number;
}

export interface OverloadLog {
  /** One request answered 503 because of `error`. */
  report(error: unknown): void;
  /** Writes the summary of a burst still under way and stops the timer. */
  close(): void;
}

const QUIET_MS = 2_000;
const SUMMARY_EVERY_MS = 30_000;


export function createOverloadLog(logger: Logger, { quietMs = QUIET_MS, summaryEveryMs = SUMMARY_EVERY_MS }: OverloadLogOptions = {}): OverloadLog {
  let burst: { startedAt: number; lastAt: number; summarisedAt: number; total: number; sinceSummary: number; causes: Map<string, number> } | undefined;
  let timer: NodeJS.Timeout | undefined;

  const summarise = (ended: boolean) => {
    if (!burst) return;
    const now = Date.now();
    const fields = {
      unavailable503: burst.sinceSummary,
      totalInBurst: burst.total,
      burstSeconds: Math.round((now - burst.startedAt) / 1000),
      causes: Object.fromEntries(burst.causes),
    };
    logger.warn(fields, ended ? 'database available again: overload burst over' : 'database still unavailable');
    burst.summarisedAt = now;
    burst.sinceSummary = 0;
    burst.causes.clear();
  };

  const tick = () => {
    timer = undefined;
    if (!burst) return;
    const now = Date.now();
    if (now - burst.lastAt >= quietMs) {
      summarise(true);
      burst = undefined;
      return;
    }
    if (now - burst.summarisedAt >= summaryEveryMs) summarise(false);
    schedule(Math.min(burst.lastAt + quietMs, burst.summarisedAt + summaryEveryMs) - now);
  };

  const schedule = (ms: number) => {
    timer = setTimeout(tick, Math.max(1, ms));
    // A pending summary must not keep a process (or a test worker) alive.
    timer.unref();
  };

  return {
    report(error) {
      const now = Date.now();
      const cause = causeOf(error);
      if (!burst) {
        burst = { startedAt: now, lastAt: now, summarisedAt: now, total: 1, sinceSummary: 0, causes: new Map() };
        logger.warn({ cause }, 'database unavailable: answering 503 SERVICE_UNAVAILABLE; further 503s are counted and summarised');
        schedule(quietMs);
        return;
      }
      burst.lastAt = now;
      burst.total++;
      burst.sinceSummary++;
      burst.causes.set(cause, (burst.causes.get(cause) ?? 0) + 1);
    },
    close() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (burst && burst.sinceSummary > 0) summarise(true);
      burst = undefined;
    },
  };
}
