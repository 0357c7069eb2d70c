import { endpointDetails, pruneSecurityLog, recordSecurityEvent } from '../accounts/security-log.js';
import { SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import type { PrismaClient } from '../db/prisma.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { RequestContext } from '../context/context.js';
import type { Logger } from '../config/logger.js';
import { causeOf } from '../shared/errors.js';
import { hostOf } from '../shared/paths.js';
import { confirmHearing, DeafListenerError, isProbe, listenerConnection } from '../db/listen-check.js';
import { endpointKeyAllows, OUTBOX_CHANNEL } from '../domain/webhooks/outbox.js';
import { sendWebhook, type AttemptOutcome, type SendResult } from '../domain/webhooks/send.js';
import { continuedFromText, inSpan, traceHeaders } from '../tracing/spans.js';

// Delivers the outbox, at least once. Every instance runs one worker; they share the work through
// the database alone. A worker claims due deliveries with FOR UPDATE SKIP LOCKED (two workers
// never claim the same row) and, in the same statement, moves each one's due time past the
// attempt's longest possible run: the claim is a lease. An attempt that finishes records its
// outcome; one that never does (the process was killed) leaves the lease to run out, and the
// delivery is due again for whichever worker comes first. A worker wakes on the outbox's NOTIFY
// (sent as an event's transaction commits), when a retry falls due, and every POLL_MS regardless.

/** Deliveries one worker sends at once, to as many endpoints (one at a time to each). */
const CONCURRENCY = 8;
/**
 * Of those, at most this many for one account: however many receivers an account has, and however
 * they hang, the other slots stay free for everyone else's events.
 */
const ACCOUNT_CONCURRENCY = 2;
/**
 * The circuit breaker: an endpoint whose attempts time out this many times in a row is paused,
 * first for BREAKER_FIRST_PAUSE_MS, doubling with each further timeout up to BREAKER_MAX_PAUSE_MS.
 * Its deliveries wait (they lose no attempt); any answer from it closes the breaker.
 */
const BREAKER_THRESHOLD = 3;
const BREAKER_FIRST_PAUSE_MS = 30_000;
const BREAKER_MAX_PAUSE_MS = 3_600_000;
/** The longest a worker sleeps without looking at the outbox (a NOTIFY missed while reconnecting). */
const POLL_MS = 2000;
/** A lease outlasts the attempt's timeout by this much: its outcome is written before the lease ends. */
const LEASE_MARGIN_MS = 5000;
/** Delays are spread over ±20% so that retries of many deliveries failing together do not come back together. */
const JITTER = 0.2;
const RECONNECT_MS = 5000;
/** A due delivery another worker is claiming right now cannot be claimed: look again a little later. */
const IDLE_MIN_MS = 50;
/** Why a delivery failed unsent: its endpoint's key stopped working. */
const KEY_ENDED = 'the API key that registered this endpoint was revoked or has expired';
/** Delivered and failed events are kept this long for the delivery log, then deleted. */
const OUTBOX_RETENTION_DAYS = 30;
const PRUNE_EVERY_MS = 60 * 60_000;

export interface WorkerMetrics {
  attempt(outcome: AttemptOutcome): void;
  finished(outcome: 'delivered' | 'failed'): void;
}

export interface WebhookWorkerOptions {
  /** The system's context (its database handle is the worker's own pool): the worker acts for nobody. */
  ctx: RequestContext;
  /** A session connection (DATABASE_DIRECT_URL) to LISTEN on: through a transaction pooler nothing is heard. */
  databaseUrl: string;
  metrics: WorkerMetrics;
  /** Seconds before each retry (config WEBHOOK_RETRY_SCHEDULE): attempts = its length + 1. */
  retrySchedule: readonly number[];
  timeoutMs: number;
  /** How long opening the listening connection may take (a database that accepts and never answers). */
  connectMs: number;
}

interface Claimed {
  id: string;
  eventId: string;
  endpointId: string;
  accountId: string;
  attempts: number;
  attemptId: string;
  /** The attempt's start by the database's clock, as every other time of the outbox. */
  startedAt: Date;
  type: string;
  payload: string;
  url: string;
  secret: string;
  /** The trace the event was written in (src/domain/webhooks/outbox.ts), if tracing was on. */
  traceparent: string | null;
  tracestate: string | null;
}

export interface WebhookWorker {
  /** Settles once the worker first tried to listen for new events (never rejects): until then it only polls. */
  readonly ready: Promise<void>;
  stop(): Promise<void>;
}

/** The delay before retry `n` (1-based) with jitter; null when the schedule has no retry `n`. */
function retryDelayMs(schedule: readonly number[], n: number): number | null {
  const seconds = schedule[n - 1];
  if (seconds === undefined) return null;
  return Math.round(seconds * 1000 * (1 - JITTER + 2 * JITTER * Math.random()));
}

/** Only the host of an endpoint is logged: its path or query may hold a token of the receiver's. */
const hostOfEndpoint = (url: string) => hostOf(url) ?? 'invalid';

/** The endpoint as a span names it: host and port, nothing of its path or query (as hostOfEndpoint). */
function targetAttributes(url: string): Attributes {
  try {
    const { hostname, port, protocol } = new URL(url);
    return { [ATTR_SERVER_ADDRESS]: hostname, [ATTR_SERVER_PORT]: Number(port) || (protocol === 'https:' ? 443 : 80) };
  } catch {
    return {};
  }
}

export function startWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { metrics, retrySchedule, timeoutMs } = options;
  const { prisma, logger, webhookPolicy: policy } = options.ctx;
  const leaseMs = timeoutMs + LEASE_MARGIN_MS;
  const inFlight = new Set<Promise<void>>();
  /** Endpoints this worker has an attempt under way to. */
  const busy = new Set<string>();
  /** Attempts under way by account; an account at ACCOUNT_CONCURRENCY gets no more until one ends. */
  const perAccount = new Map<string, number>();
  const fullAccounts = () => [...perAccount].filter(([, n]) => n >= ACCOUNT_CONCURRENCY).map(([id]) => id);
  let stopped = false;
  let wake: (() => void) | undefined;
  const nudge = () => wake?.();

  const listener = listen(options.databaseUrl, options.connectMs, nudge, logger, () => stopped);

  /**
   * Claims up to `n` due deliveries, each with its attempt row, in one statement, fairly: the
   * earliest due of each endpoint this worker is not already sending to, at most one more per
   * account (of those with room under ACCOUNT_CONCURRENCY), never one of a paused endpoint. So one
   * slow, hanging or flooded receiver holds one slot of a worker and one account at most
   * ACCOUNT_CONCURRENCY, never all of them; an endpoint's events tend to go in order. What waits for
   * an endpoint whose key was revoked or expired fails in the same statement, unsent.
   */
  async function claim(n: number): Promise<Claimed[]> {
    return prisma.$queryRaw<Claimed[]>`
      WITH silenced AS (
        UPDATE "WebhookDelivery" d SET status = 'FAILED', "nextAttemptAt" = NULL, "lastError" = ${KEY_ENDED}
        FROM "WebhookEndpoint" e
        WHERE d."endpointId" = e.id AND d.status = 'PENDING' AND e."keyId" IS NOT NULL AND NOT ${endpointKeyAllows([])}
      ), candidates AS (
        SELECT d.id, d."nextAttemptAt", e."accountId",
               row_number() OVER (PARTITION BY d."endpointId" ORDER BY d."nextAttemptAt", d.id) AS place
        FROM "WebhookDelivery" d JOIN "WebhookEndpoint" e ON e.id = d."endpointId"
        WHERE d.status = 'PENDING' AND d."nextAttemptAt" <= now() AND d."endpointId" <> ALL(${[...busy]}::text[])
          AND e."accountId" <> ALL(${fullAccounts()}::text[]) AND (e."pausedUntil" IS NULL OR e."pausedUntil" <= now())
          AND ${endpointKeyAllows([])}
      ), turns AS (
        SELECT id, "nextAttemptAt", row_number() OVER (PARTITION BY "accountId" ORDER BY "nextAttemptAt", id) AS turn
        FROM candidates WHERE place = 1
      ), due AS (
        SELECT d.id FROM "WebhookDelivery" d JOIN turns t ON t.id = d.id
        WHERE t.turn = 1 AND d.status = 'PENDING' AND d."nextAttemptAt" <= now()
        ORDER BY t."nextAttemptAt"
        LIMIT ${n}::int
        FOR UPDATE OF d SKIP LOCKED
      ), claimed AS (
        UPDATE "WebhookDelivery" d
        SET attempts = d.attempts + 1, "nextAttemptAt" = now() + make_interval(secs => ${leaseMs / 1000}::float8)
        FROM due WHERE d.id = due.id
        RETURNING d.id, d."eventId", d."endpointId", d.attempts
      ), attempt AS (
        INSERT INTO "WebhookAttempt" (id, "deliveryId", number)
        SELECT gen_random_uuid()::text, id, attempts FROM claimed
        RETURNING id, "deliveryId", "startedAt"
      )
      SELECT c.id, c."eventId", c."endpointId", e."accountId", c.attempts, a.id AS "attemptId", a."startedAt", ev.type, ev.payload, ev.traceparent, ev.tracestate, e.url, e.secret
      FROM claimed c
      JOIN attempt a ON a."deliveryId" = c.id
      JOIN "WebhookEvent" ev ON ev.id = c."eventId"
      JOIN "WebhookEndpoint" e ON e.id = c."endpointId"`;
  }

  /**
   * One attempt, in a client span of its own that continues the trace the event was written in
   * (the request that made it), and whose context the receiver is sent (traceparent, tracestate).
   * The span names the endpoint by its host alone, as the log does.
   */
  function attempt(d: Claimed): Promise<SendResult> {
    const parent = continuedFromText({ traceparent: d.traceparent ?? undefined, tracestate: d.tracestate ?? undefined });
    const attributes = { ...targetAttributes(d.url), [ATTR_HTTP_REQUEST_METHOD]: 'POST', 'webhook.event.type': d.type, 'webhook.endpoint.id': d.endpointId, 'webhook.attempt': d.attempts };
    return inSpan('webhook delivery', { kind: SpanKind.CLIENT, parent, attributes }, async (span) => {
      const sentAt = new Date();
      const signature = new Webhook(d.secret).sign(d.eventId, sentAt, d.payload);
      const headers = { ...traceHeaders(), 'webhook-id': d.eventId, 'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)), 'webhook-signature': signature };
      const result = await sendWebhook(d.url, d.payload, headers, { timeoutMs, policy });
      span.setAttribute('webhook.outcome', result.outcome);
      if (result.statusCode !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.statusCode);
      if (result.outcome !== 'success') span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute(ATTR_ERROR_TYPE, result.outcome);
      return result;
    });
  }

  async function deliver(d: Claimed): Promise<void> {
    const result = await attempt(d);
    metrics.attempt(result.outcome);
    const finished = await record(d, result);
    if (finished) metrics.finished(finished);
    if (result.outcome !== 'success') {
      logger.warn(
        {
          webhook: { endpointId: d.endpointId, host: hostOfEndpoint(d.url), deliveryId: d.id, eventId: d.eventId, type: d.type, attempt: d.attempts },
          outcome: result.outcome,
          status: result.statusCode,
          error: result.error,
          final: finished === 'failed',
        },
        'webhook delivery attempt failed',
      );
    }
  }

  /**
   * Writes an attempt's outcome, in one transaction. The delivery is changed only while the
   * attempt is still its latest (a worker whose lease ran out while it waited must not overwrite
   * the attempt that followed). Answers how the delivery ended, if it did.
   */
  async function record(d: Claimed, result: SendResult): Promise<'delivered' | 'failed' | null> {
    const ok = result.outcome === 'success';
    const delay = ok ? null : retryDelayMs(retrySchedule, d.attempts);
    return prisma.$transaction(async (tx) => {
      // The endpoint's row first, as deleting it locks it first and then its deliveries and their
      // attempts: the same order, so a delete racing this record waits instead of deadlocking.
      await tx.$executeRaw`SELECT 1 FROM "WebhookEndpoint" WHERE id = ${d.endpointId} FOR NO KEY UPDATE`;
      // updateMany: the endpoint (and with it this attempt) may have been deleted meanwhile.
      await tx.webhookAttempt.updateMany({
        where: { id: d.attemptId },
        data: {
          finishedAt: new Date(),
          outcome: result.outcome,
          statusCode: result.statusCode,
          error: result.error,
          responseBody: result.responseBody,
          durationMs: Math.round(result.durationMs),
        },
      });
      const current = { id: d.id, status: 'PENDING' as const, attempts: d.attempts };
      await tripOrCloseBreaker(tx, d.endpointId, result.outcome === 'timeout');
      if (ok) {
        const { count } = await tx.webhookDelivery.updateMany({
          where: current,
          data: { status: 'DELIVERED', deliveredAt: new Date(), nextAttemptAt: null, lastStatus: result.statusCode, lastError: null },
        });
        await tx.webhookEndpoint.updateMany({ where: { id: d.endpointId, failingSince: { not: null } }, data: { failingSince: null } });
        return count ? 'delivered' : null;
      }
      const { count } = await tx.webhookDelivery.updateMany({
        where: current,
        data:
          delay === null
            ? { status: 'FAILED', nextAttemptAt: null, lastStatus: result.statusCode, lastError: result.error }
            : { nextAttemptAt: new Date(Date.now() + delay), lastStatus: result.statusCode, lastError: result.error },
      });
      await tx.webhookEndpoint.updateMany({ where: { id: d.endpointId, failingSince: null }, data: { failingSince: d.startedAt } });
      if (!count || delay !== null) return null;
      // The delivery failed for its whole schedule. If the endpoint has not succeeded since this
      // delivery's first attempt, it is down, not merely refusing one event: it is disabled, and
      // what waits for it fails with it.
      const first = await tx.webhookAttempt.findFirst({ where: { deliveryId: d.id }, orderBy: { number: 'asc' }, select: { startedAt: true } });
      const { count: disabled } = await tx.webhookEndpoint.updateMany({
        where: { id: d.endpointId, disabledAt: null, failingSince: { lte: first?.startedAt ?? d.startedAt } },
        data: { disabledAt: new Date() },
      });
      if (disabled) {
        const { accountId } = await tx.webhookEndpoint.findUniqueOrThrow({ where: { id: d.endpointId }, select: { accountId: true } });
        await recordSecurityEvent(tx, accountId, 'webhook.disabled', { kind: 'service', id: 'webhook worker' }, endpointDetails({ id: d.endpointId, url: d.url }));
        await tx.webhookDelivery.updateMany({
          where: { endpointId: d.endpointId, status: 'PENDING' },
          data: { status: 'FAILED', nextAttemptAt: null, lastError: 'endpoint disabled' },
        });
        logger.warn({ webhook: { endpointId: d.endpointId, host: hostOfEndpoint(d.url) } }, 'webhook endpoint disabled: it failed for the whole retry schedule');
      }
      return 'failed';
    });
  }

  /**
   * When the next delivery this worker may claim falls due, in ms from now (capped at POLL_MS),
   * a paused endpoint's when its pause ends; one for an endpoint it is sending to, or of an account
   * at its share, waits for an attempt to end, which wakes the loop.
   */
  async function untilNextDue(): Promise<number> {
    const [row] = await prisma.$queryRaw<{ ms: number | null }[]>`
      SELECT (EXTRACT(EPOCH FROM min(GREATEST(d."nextAttemptAt", e."pausedUntil")) - now()) * 1000)::float8 AS ms
      FROM "WebhookDelivery" d JOIN "WebhookEndpoint" e ON e.id = d."endpointId"
      WHERE d.status = 'PENDING' AND d."endpointId" <> ALL(${[...busy]}::text[]) AND e."accountId" <> ALL(${fullAccounts()}::text[])
        AND ${endpointKeyAllows([])}`;
    return Math.min(POLL_MS, Math.max(0, row?.ms ?? POLL_MS));
  }

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  }

  let prunedAt = 0;
  let outboxDown = false;

  async function loop() {
    while (!stopped) {
      try {
        if (Date.now() - prunedAt > PRUNE_EVERY_MS) {
          prunedAt = Date.now();
          await pruneOutbox(prisma);
          await pruneSecurityLog(prisma);
        }
        const free = CONCURRENCY - inFlight.size;
        const claimed = free > 0 ? await claim(free) : [];
        for (const d of claimed) {
          busy.add(d.endpointId);
          perAccount.set(d.accountId, (perAccount.get(d.accountId) ?? 0) + 1);
          const running: Promise<void> = deliver(d)
            // Its lease runs out and it is attempted again: at least once still holds.
            .catch((error: unknown) =>
              logger.warn({ cause: causeOf(error), webhook: { deliveryId: d.id } }, 'webhook attempt could not be recorded; it is made again once its lease ends'),
            )
            .finally(() => {
              busy.delete(d.endpointId);
              const left = (perAccount.get(d.accountId) ?? 1) - 1;
              if (left > 0) perAccount.set(d.accountId, left);
              else perAccount.delete(d.accountId);
              inFlight.delete(running);
              nudge();
            });
          inFlight.add(running);
        }
        if (outboxDown) {
          outboxDown = false;
          logger.info('webhook worker: the outbox can be read again');
        }
        if (stopped) break;
        if (claimed.length && claimed.length === free) continue;
        await sleep(inFlight.size >= CONCURRENCY ? POLL_MS : Math.max(claimed.length ? 0 : IDLE_MIN_MS, await untilNextDue()));
      } catch (error) {
        if (stopped) break;
        // An unavailable database is expected now and then: one line when it starts, none per poll.
        if (!outboxDown) logger.warn({ cause: causeOf(error) }, `webhook worker: the outbox cannot be read; trying again every ${POLL_MS / 1000} s`);
        outboxDown = true;
        await sleep(POLL_MS);
      }
    }
  }

  const running = loop();
  return {
    ready: listener.ready,
    async stop() {
      stopped = true;
      nudge();
      await running;
      // Attempts under way finish (each within its timeout): their outcome is recorded, not left to a lease.
      await Promise.all(inFlight);
      await listener.close();
    },
  };
}

/**
 * The circuit breaker's step after an attempt: a timeout lengthens the endpoint's streak and, from
 * BREAKER_THRESHOLD on, pauses it (doubling each time, by the database's clock, as every due time
 * of the outbox); any answer, even an error status, ends the streak and the pause.
 */
async function tripOrCloseBreaker(tx: Prisma.TransactionClient, endpointId: string, timedOut: boolean): Promise<void> {
  if (!timedOut) {
    await tx.webhookEndpoint.updateMany({ where: { id: endpointId, OR: [{ timeoutStreak: { gt: 0 } }, { pausedUntil: { not: null } }] }, data: { timeoutStreak: 0, pausedUntil: null } });
    return;
  }
  await tx.$executeRaw`
    UPDATE "WebhookEndpoint" SET "timeoutStreak" = "timeoutStreak" + 1,
      "pausedUntil" = CASE WHEN "timeoutStreak" + 1 >= ${BREAKER_THRESHOLD}
        THEN now() + make_interval(secs => LEAST(${BREAKER_FIRST_PAUSE_MS / 1000}::float8 * power(2, LEAST("timeoutStreak" + 1 - ${BREAKER_THRESHOLD}, 20)), ${BREAKER_MAX_PAUSE_MS / 1000}::float8))
        ELSE "pausedUntil" END
    WHERE id = ${endpointId}`;
}

/**
 * LISTENs for the outbox's NOTIFY on a connection of its own, reconnecting after a failure. A
 * connection that accepts LISTEN but hears nothing (a transaction pooler) is said once, as an
 * error, and tried again like a lost one; meanwhile the worker polls every POLL_MS.
 */
function listen(databaseUrl: string, connectMs: number, onNotify: () => void, logger: Logger, stopped: () => boolean) {
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let saidUnheard = false;
  async function connect() {
    retry = undefined;
    if (stopped()) return;
    const connection = listenerConnection(databaseUrl, connectMs);
    client = connection;
    const again = () => {
      if (client !== connection) return;
      client = undefined;
      connection.end().catch(() => undefined);
      // Polling goes on meanwhile: a lost listener only delays deliveries by up to POLL_MS.
      if (!stopped()) retry = setTimeout(() => void connect(), RECONNECT_MS);
    };
    connection.on('error', again);
    connection.on('end', again);
    connection.on('notification', (n) => {
      if (!isProbe(n.payload)) onNotify();
    });
    try {
      await connection.connect();
      await connection.query(`LISTEN ${OUTBOX_CHANNEL}`);
      await confirmHearing(connection, databaseUrl, OUTBOX_CHANNEL, { connectMs });
      saidUnheard = false;
    } catch (error) {
      if (error instanceof DeafListenerError && !saidUnheard) {
        saidUnheard = true;
        logger.error(`webhook worker: ${error.message}; deliveries wait for the next poll (up to ${POLL_MS / 1000} s) until it hears`);
      } else {
        logger.debug({ err: error }, 'webhook worker: not listening for new events; polling');
      }
      again();
    }
  }
  const ready = connect();
  return {
    ready,
    async close() {
      if (retry) clearTimeout(retry);
      const connection = client;
      client = undefined;
      await connection?.end().catch(() => undefined);
    },
  };
}

/** The outbox's backlog for /metrics: deliveries not yet made, and the oldest one's wait. */
export async function outboxBacklog(prisma: PrismaClient): Promise<{ pending: number; oldestSeconds: number }> {
  const [row] = await prisma.$queryRaw<{ pending: number; oldest: number | null }[]>`
    SELECT count(*)::int AS pending, EXTRACT(EPOCH FROM now() - min("createdAt"))::float8 AS oldest
    FROM "WebhookDelivery" WHERE status = 'PENDING'`;
  return { pending: row?.pending ?? 0, oldestSeconds: Math.max(0, row?.oldest ?? 0) };
}

/** Deletes the events older than the retention whose every delivery is done (their log goes with them). */
export async function pruneOutbox(prisma: PrismaClient, days = OUTBOX_RETENTION_DAYS): Promise<number> {
  return prisma.$executeRaw`
    DELETE FROM "WebhookEvent" e
    WHERE e."createdAt" < now() - make_interval(days => ${days}::int)
      AND NOT EXISTS (SELECT 1 FROM "WebhookDelivery" d WHERE d."eventId" = e.id AND d.status = 'PENDING')`;
}
