// How many requests each API key made, per UTC hour, without a database write per request:
// requests are counted in memory and a periodic flush adds every pending count in one statement
// (the pattern of src/auth/last-used.ts). Adding, never overwriting, is what lets several instances
// flush into the same rows and still sum exactly. The price: the stored counts lag by up to one
// interval, and a crash loses the last interval's counts.

import type { PrismaClient } from '../db/prisma.js';
import { batchedFlush } from '../shared/batched-flush.js';

export interface UsageRecorder {
  /**
   * Counts one request of the key in the current UTC hour; `limited` when it was refused with 429
   * (it counts as a request too). Memory only; never throws. Ignored once stopped.
   */
  count(keyId: string, outcome: { limited: boolean }): void;
  /** Adds everything counted so far to the database, in one statement. Rejects if that fails (the counts are kept for the next flush). */
  flush(): Promise<void>;
  /** Stops the timer and flushes what is left; a failure goes to onError. */
  stop(): Promise<void>;
}

export interface UsageRecorderOptions {
  /** How often the timer flushes (default 10 s). */
  intervalMs?: number;
  /** Told about a failed timed or final flush (they have nobody else to throw to). */
  onError?: (error: unknown) => void;
  /** The clock that decides a request's hour, Unix ms (default Date.now). */
  now?: () => number;
}

export const HOUR_MS = 3_600_000;

/** The start of the UTC hour `time` (Unix ms) falls in. */
export const hourOf = (time: number) => Math.floor(time / HOUR_MS) * HOUR_MS;

interface Pending {
  keyId: string;
  hour: number;
  requests: number;
  limited: number;
}

export function createUsageRecorder(prisma: PrismaClient, opts: UsageRecorderOptions = {}): UsageRecorder {
  const intervalMs = opts.intervalMs ?? 10_000;
  const now = opts.now ?? Date.now;
  const onError = opts.onError ?? ((error: unknown) => process.stderr.write(`Recording API key usage failed: ${String(error)}\n`));
  let pending = new Map<string, Pending>();

  const add = (entries: Map<string, Pending>, keyId: string, hour: number, requests: number, limited: number) => {
    const slot = `${keyId}\u0000${hour}`;
    const known = entries.get(slot);
    if (known) {
      known.requests += requests;
      known.limited += limited;
    } else {
      entries.set(slot, { keyId, hour, requests, limited });
    }
  };

  const writeOnce = async (): Promise<void> => {
    if (pending.size === 0) return;
    const batch = [...pending.values()];
    pending = new Map();
    try {
      // One statement for the whole batch. The join with FOR KEY SHARE drops the rows of a key deleted
      // meanwhile (even one deleted while this runs) instead of failing the batch on the foreign key;
      // the ORDER BY makes every instance lock rows in the same order, so concurrent flushes cannot deadlock.
      await prisma.$executeRaw`
        INSERT INTO "KeyUsage" ("keyId", "hour", "requests", "limited")
        SELECT u.key_id, u.hour, u.requests, u.limited
          FROM unnest(${batch.map((p) => p.keyId)}::text[], ${batch.map((p) => new Date(p.hour).toISOString())}::timestamptz[],
                      ${batch.map((p) => p.requests)}::int[], ${batch.map((p) => p.limited)}::int[]) AS u(key_id, hour, requests, limited)
          JOIN "ApiKey" AS k ON k.id = u.key_id
         ORDER BY u.key_id, u.hour
           FOR KEY SHARE OF k
        ON CONFLICT ("keyId", "hour") DO UPDATE
           SET "requests" = "KeyUsage"."requests" + EXCLUDED."requests",
               "limited" = "KeyUsage"."limited" + EXCLUDED."limited"`;
    } catch (error) {
      // Put the batch back (merged with anything counted meanwhile) so the next flush retries it.
      for (const p of batch) add(pending, p.keyId, p.hour, p.requests, p.limited);
      throw error;
    }
  };

  const loop = batchedFlush({ write: writeOnce, hasPending: () => pending.size > 0, intervalMs, onError });

  return {
    count(keyId, { limited }) {
      const time = now();
      // An invalid time would make the whole batch's statement fail, over and over.
      if (loop.stopped || !Number.isFinite(time)) return;
      add(pending, keyId, hourOf(time), 1, limited ? 1 : 0);
    },
    flush: loop.flush,
    stop: loop.stop,
  };
}
