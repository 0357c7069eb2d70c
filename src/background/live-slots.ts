import crypto from 'node:crypto';
import type { KeyCaller } from '../context/actor.js';
import { isDatabaseUnavailable, type PrismaClient } from '../db/prisma.js';
import type { Logger } from '../config/logger.js';
import { anonymousBucket } from '../shared/client-ip.js';
import { AppError, causeOf } from '../shared/errors.js';

// The places of a key's open subscription streams, counted across every instance
// (SUBSCRIPTIONS_PER_KEY): one row of "LiveStream" per open stream, whichever instance holds it.
//
// Why PostgreSQL, with or without REDIS_URL: every instance has it (Redis is optional), a claim
// must read the key's row anyway (revoked? when does it expire?) and does both in one transaction,
// and one implementation is one behaviour to test. Redis would only spare a transaction per
// stream opened (rare next to the events a stream carries), would need the same leases (a
// counter there leaks with the instance that held it), and would be one more thing whose outage
// stops subscriptions.
//
// - A race of parallel opens cannot pass the bound: a claim takes a transaction-level advisory
//   lock on its key before counting, so the claims of one key, on any instance, count and insert
//   one after another. The lock is the transaction's own (pg_advisory_xact_lock), so it works
//   through PgBouncer in transaction mode, where a session's lock would stay on a server
//   connection that other clients then use.
// - No place leaks. A stream that closes (its client left, its socket dropped, the server is
//   stopping) deletes its row at once. A row is also held by a lease: its instance renews the
//   leases of its open streams every RENEW_MS, and a row whose lease has run out (LEASE_MS after
//   its last renewal: a killed instance, or a delete that failed) counts no more and is deleted by
//   the next claim of its key or renewal of any instance. So a killed instance's places come back
//   at most LEASE_MS after it died.
// - A stream whose lease ran out on an instance that is still alive (the database was
//   unreachable for longer than LEASE_MS) has lost its place, which another stream may have
//   taken meanwhile: it ends (onLost), at the next renewal or, while the database stays away,
//   once the lease runs out by this instance's clock.

/** How long a place is held without renewal: a killed instance's places come back after this at most. */
const LEASE_MS = 20_000;
/** How often an instance renews its places' leases: three renewals may fail before a lease runs out. */
const RENEW_MS = 5_000;
/** The class of the advisory locks a claim takes (the key's id hashed is the other half): ASCII 'live'. */
const LOCK_CLASS = 0x6c697665;

/**
 * How the subscriptions' background work says it failed. The database being away is an outage,
 * said once by what answers requests 503: a warning with its cause, no stack.
 */
export const failureLog = (logger: Logger) => (what: string) => (error: unknown) =>
  isDatabaseUnavailable(error)
    ? logger.warn({ cause: causeOf(error) }, `subscriptions: ${what} failed; the database is unavailable`)
    : logger.error({ err: error }, `subscriptions: ${what} failed`);

/**
 * Whose places a stream takes: a secret key's own, and for a publishable key each visitor's (the
 * client's address, an IPv6 client's /64), as its requests are limited per visitor: a storefront's
 * visitors do not share SUBSCRIPTIONS_PER_KEY places.
 */
export const streamHolder = (key: KeyCaller) => (key.publishable ? `${key.keyId} ${anonymousBucket(key.ip)}` : key.keyId);

/** The refusal of a stream asked for while the server stops. */
export const shuttingDown = () => new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down: subscribe again in a moment (to another instance)');

export interface LiveSlotsOptions {
  prisma: PrismaClient;
  /** Open streams one API key may have across every instance (SUBSCRIPTIONS_PER_KEY). */
  perKey: number;
  logger: Logger;
}

/** A place held by one open stream. */
export interface Slot {
  /** When the key expires (unix ms), as the claim read it; null: never. */
  expiresAt: number | null;
  /** Gives the place back (idempotent). */
  release(): void;
}

export interface LiveSlots {
  /**
   * Takes one of the key's places, or refuses: UNAUTHORIZED for a key revoked, expired or deleted
   * since the request was let in, RATE_LIMIT_EXCEEDED when its places are all taken. `onLost` is
   * called if the place is lost while held (its lease ran out).
   */
  claim(key: KeyCaller, onLost: () => void): Promise<Slot>;
  /** Stops renewing and gives back every place this instance holds. */
  close(): Promise<void>;
}

interface Held {
  /** By this instance's clock, the lease's end as last renewed (counted from before the statement). */
  until: number;
  onLost(): void;
}

export function createLiveSlots({ prisma, perKey, logger }: LiveSlotsOptions): LiveSlots {
  const instance = crypto.randomUUID();
  const held = new Map<string, Held>();
  const releasing = new Set<Promise<unknown>>();
  let closed = false;

  const failed = failureLog(logger);

  function lose(ids: string[]) {
    const lost = ids.filter((id) => held.has(id));
    if (!lost.length) return;
    logger.warn({ streams: lost.length }, 'subscriptions: streams lost their place in the per-key count (their lease ran out, the database unreachable meanwhile): they end');
    for (const id of lost) {
      const h = held.get(id)!;
      held.delete(id);
      h.onLost();
    }
  }

  async function renew() {
    if (!held.size) return;
    const ids = [...held.keys()];
    const startedAt = Date.now();
    try {
      const rows = await prisma.$queryRaw<{ id: string }[]>`
        WITH lapsed AS (DELETE FROM "LiveStream" WHERE "leaseUntil" <= now()),
        renewed AS (
          UPDATE "LiveStream" SET "leaseUntil" = now() + ${LEASE_MS}::int * interval '1 millisecond'
          WHERE id = ANY(${ids}::text[]) AND "leaseUntil" > now() RETURNING id)
        SELECT id FROM renewed`;
      const renewed = new Set(rows.map((r) => r.id));
      for (const id of renewed) {
        const h = held.get(id);
        if (h) h.until = startedAt + LEASE_MS;
      }
      lose(ids.filter((id) => !renewed.has(id)));
    } catch (error) {
      failed('renewing the places of open streams')(error);
      lose(ids.filter((id) => (held.get(id)?.until ?? Infinity) <= Date.now()));
    }
  }
  let renewing: Promise<void> | undefined;
  const timer = setInterval(() => {
    renewing ??= renew().finally(() => (renewing = undefined));
  }, RENEW_MS).unref();

  return {
    async claim(key, onLost) {
      const id = crypto.randomUUID();
      const holder = streamHolder(key);
      const startedAt = Date.now();
      // Two statements: under READ COMMITTED the count must see the rows committed by the claim
      // that held the lock before, so it is read by a statement that starts once the lock is ours.
      const [, [claim]] = await prisma.$transaction([
        prisma.$executeRaw`SELECT pg_advisory_xact_lock(${LOCK_CLASS}::int, hashtext(${holder}))`,
        prisma.$queryRaw<{ valid: boolean; expiresAt: Date | null; open: number; taken: boolean }[]>`
          WITH k AS (
            SELECT "expiresAt" FROM "ApiKey"
            WHERE id = ${key.keyId} AND "revokedAt" IS NULL AND ("expiresAt" IS NULL OR "expiresAt" > ${new Date(startedAt)}::timestamptz)),
          lapsed AS (DELETE FROM "LiveStream" WHERE holder = ${holder} AND "leaseUntil" <= now()),
          open AS (SELECT count(*)::int AS n FROM "LiveStream" WHERE holder = ${holder} AND "leaseUntil" > now()),
          taken AS (
            INSERT INTO "LiveStream" (id, "keyId", holder, instance, "leaseUntil")
            SELECT ${id}, ${key.keyId}, ${holder}, ${instance}, now() + ${LEASE_MS}::int * interval '1 millisecond' FROM k, open WHERE open.n < ${perKey}
            RETURNING id)
          SELECT EXISTS (SELECT FROM k) AS valid, (SELECT "expiresAt" FROM k) AS "expiresAt", open.n AS open, EXISTS (SELECT FROM taken) AS taken FROM open`,
      ]);
      if (!claim!.valid) {
        throw new AppError('UNAUTHORIZED', 'The API key was revoked or has expired: the subscription was not opened');
      }
      if (!claim!.taken) {
        throw new AppError(
          'RATE_LIMIT_EXCEEDED',
          `${key.publishable ? 'This publishable key already has, from your address,' : 'This API key already has'} ${claim!.open} open subscriptions across all instances of the service, the most it may have (SUBSCRIPTIONS_PER_KEY = ${perKey}): close one before opening another`,
          { openSubscriptions: claim!.open, limit: perKey },
        );
      }
      if (closed) {
        await prisma.$executeRaw`DELETE FROM "LiveStream" WHERE id = ${id}`.catch(failed('giving back the place of a stream opened as the server stopped'));
        throw shuttingDown();
      }
      held.set(id, { until: startedAt + LEASE_MS, onLost });
      let released = false;
      return {
        expiresAt: claim!.expiresAt?.getTime() ?? null,
        release() {
          if (released) return;
          released = true;
          held.delete(id);
          // After close, its delete of every row of this instance has done it.
          if (closed) return;
          const deleting = prisma.$executeRaw`DELETE FROM "LiveStream" WHERE id = ${id}`
            .catch(failed('giving back the place of a closed stream (its lease runs out instead)'))
            .finally(() => releasing.delete(deleting));
          releasing.add(deleting);
        },
      };
    },
    async close() {
      closed = true;
      clearInterval(timer);
      held.clear();
      await Promise.all([renewing, ...releasing]);
      await prisma.$executeRaw`DELETE FROM "LiveStream" WHERE instance = ${instance}`.catch(failed('giving back the places of open streams (their leases run out instead)'));
    },
  };
}
