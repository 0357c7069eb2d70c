// When each key was last used, without a database write per request: requests only note the
// time in memory, and a periodic flush writes every noted key in one statement. The price is
// that lastUsedAt lags by up to one interval (and loses the last interval on a crash), which is
// fine for a "last used" column shown to people.

import type { PrismaClient } from '../db/prisma.js';
import { batchedFlush } from '../shared/batched-flush.js';

export interface LastUsedRecorder {
  /** Notes that the key was used at `at` (default now). Memory only; never throws. */
  touch(keyId: string, at?: Date): void;
  /** Writes everything noted so far in one statement. Rejects if that fails (the entries are kept for the next flush). */
  flush(): Promise<void>;
  /** Stops the timer and flushes what is left; failures go to onError. Later touches are ignored. */
  stop(): Promise<void>;
}

export interface LastUsedOptions {
  /** How often the timer flushes. */
  intervalMs?: number;
  /** Told about a failed timed or final flush (they have nobody else to throw to). */
  onError?: (error: unknown) => void;
}

export function createLastUsedRecorder(prisma: PrismaClient, opts: LastUsedOptions = {}): LastUsedRecorder {
  const intervalMs = opts.intervalMs ?? 30_000;
  const onError = opts.onError ?? ((error: unknown) => process.stderr.write(`Recording API key last use failed: ${String(error)}\n`));
  let pending = new Map<string, number>();

  const note = (entries: Map<string, number>, keyId: string, time: number) => {
    const known = entries.get(keyId);
    if (known === undefined || time > known) entries.set(keyId, time);
  };

  const writeOnce = async (): Promise<void> => {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    const ids = [...batch.keys()];
    const times = ids.map((id) => new Date(batch.get(id)!).toISOString());
    try {
      // One statement for the whole batch. The condition keeps lastUsedAt from moving backwards
      // when another instance (or an earlier, delayed flush) already wrote a later time.
      await prisma.$executeRaw`
        UPDATE "ApiKey" AS k
           SET "lastUsedAt" = u.at
          FROM unnest(${ids}::text[], ${times}::timestamptz[]) AS u(id, at)
         WHERE k.id = u.id AND (k."lastUsedAt" IS NULL OR k."lastUsedAt" < u.at)`;
    } catch (error) {
      // Put the batch back (merged with anything noted meanwhile) so the next flush retries it.
      for (const [id, time] of batch) note(pending, id, time);
      throw error;
    }
  };

  const loop = batchedFlush({ write: writeOnce, hasPending: () => pending.size > 0, intervalMs, onError });

  return {
    touch(keyId, at = new Date()) {
      const time = at.getTime();
      // An invalid date would make the whole batch's statement fail, over and over.
      if (loop.stopped || !Number.isFinite(time)) return;
      note(pending, keyId, time);
    },
    flush: loop.flush,
    stop: loop.stop,
  };
}
