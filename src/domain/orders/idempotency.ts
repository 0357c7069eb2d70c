import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiContext } from '../../context/context.js';
import { AppError, asAppError, errorStatus, validationError, type ErrorCode, type ErrorDetails } from '../../shared/errors.js';
import type { Prisma } from '../../generated/prisma/client.js';

// The Idempotency-Key protocol of the operations that change orders (docs/api.md, "Idempotency"):
// placing one, cancelling one, moving one on as its supplier. A key belongs to an
// account and lives 24 h. The first request with a key claims it with a row of its own, in a
// statement of its own, before doing anything; whoever else comes with the key either gets the
// stored outcome (same body) or a conflict (another body), and waits while the first is still
// working. So one key yields at most one order, whatever the concurrency.

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const TTL = "interval '24 hours'";
/** A claim still unanswered after this long belongs to a request that died: it may be taken over. */
const ABANDONED = "interval '60 seconds'";
/** How long a request waits for a concurrent one with the same key before giving up with 409. */
// Under the 5 s within which every request is answered (README, Faults).
const WAIT_MS = 4_000;
/** Waiting polls back off from the first to the last interval, so waiters do not crowd the pool. */
const POLL_MS = { first: 25, max: 250 };

/** What was stored for a key: the order created or changed, or the 4xx error answered. */
export type StoredOutcome = { orderId: string } | { error: { code: ErrorCode; message: string; details?: ErrorDetails } };

/** The request's Idempotency-Key (as the face read it from the header), or null without one; a malformed key is a 400. */
export function idempotencyKey(ctx: ApiContext): string | null {
  const key = ctx.idempotencyKey;
  if (key === null) return null;
  if (!/^[\x20-\x7e]{1,255}$/.test(key)) {
    throw validationError({ [IDEMPOTENCY_HEADER]: 'must be 1–255 printable ASCII characters' }, 'Invalid Idempotency-Key header');
  }
  return key;
}

/**
 * A request's canonical form: JSON with object keys sorted at every level, and members that are
 * null or absent left out at every level (for every field these operations take, null means "not
 * given": docs/api.md), so equal requests hash equally however they are spelt.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && v !== null)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export const requestHash = (body: unknown) => createHash('sha256').update(canonicalJson(body)).digest('hex');

export type Claim = { kind: 'claimed'; id: string } | { kind: 'replay'; stored: StoredOutcome };

interface RecordRow {
  requestHash: string;
  responseStatus: number | null;
  responseBody: Prisma.JsonValue;
  expiresAt: Date;
}

/**
 * Claims `key` for this account and body, or returns the stored outcome of the request that did.
 * Same key, another body → 409. A claim still in progress is waited for (bounded).
 */
export async function claimKey(ctx: ApiContext, accountId: string, key: string, hash: string): Promise<Claim> {
  const deadline = Date.now() + WAIT_MS;
  let pollMs = POLL_MS.first;
  for (;;) {
    const id = randomUUID();
    // One statement: insert, or take over an expired or abandoned record, or do nothing. A record
    // taken over is new in every column, the transport's copy of a first answer (restBody) included.
    const claimed = await ctx.prisma.$queryRawUnsafe<{ id: string }[]>(
      `INSERT INTO "IdempotencyRecord" (id, "accountId", key, "requestHash", "createdAt", "expiresAt")
       VALUES ($1, $2, $3, $4, now(), now() + ${TTL})
       ON CONFLICT ("accountId", key) DO UPDATE
         SET id = EXCLUDED.id, "requestHash" = EXCLUDED."requestHash", "responseStatus" = NULL,
             "responseBody" = NULL, "restBody" = NULL, "createdAt" = EXCLUDED."createdAt", "expiresAt" = EXCLUDED."expiresAt"
         WHERE "IdempotencyRecord"."expiresAt" <= now()
            OR ("IdempotencyRecord"."responseStatus" IS NULL AND "IdempotencyRecord"."createdAt" < now() - ${ABANDONED})
       RETURNING id`,
      id,
      accountId,
      key,
      hash,
    );
    if (claimed.length) return { kind: 'claimed', id };

    const record: RecordRow | null = await ctx.prisma.idempotencyRecord.findUnique({
      where: { accountId_key: { accountId, key } },
      select: { requestHash: true, responseStatus: true, responseBody: true, expiresAt: true },
    });
    // Gone (released after a failure) or just expired: claim it afresh.
    if (!record || record.expiresAt.getTime() <= Date.now()) continue;
    if (record.requestHash !== hash) {
      throw new AppError('CONFLICT', 'This Idempotency-Key was already used with a different request body', {
        [IDEMPOTENCY_HEADER]: 'was used with another body in the last 24 hours',
      });
    }
    if (record.responseStatus !== null && record.responseBody !== null) {
      return { kind: 'replay', stored: record.responseBody as unknown as StoredOutcome };
    }
    if (Date.now() >= deadline) {
      throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still being processed; retry later');
    }
    await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())));
    pollMs = Math.min(pollMs * 2, POLL_MS.max);
  }
}

/**
 * Stores the created order on the claim, inside the order's own transaction: the order and its
 * record commit together. A claim taken over meanwhile (see ABANDONED) fails the transaction,
 * so the key still yields a single order.
 */
export async function completeClaim(tx: Prisma.TransactionClient, claimId: string, orderId: string, status: number) {
  const stored: StoredOutcome = { orderId };
  const { count } = await tx.idempotencyRecord.updateMany({
    where: { id: claimId, responseStatus: null },
    data: { responseStatus: status, responseBody: stored as unknown as Prisma.InputJsonValue },
  });
  if (count !== 1) throw new Error('Idempotency claim lost before the order was committed');
}

/** A rejected request (4xx) is answered the same way to every retry with its key. */
export async function storeError(ctx: ApiContext, claimId: string, error: AppError) {
  const stored: StoredOutcome = {
    error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
  };
  await ctx.prisma.idempotencyRecord.updateMany({
    where: { id: claimId, responseStatus: null },
    data: { responseStatus: error.status, responseBody: stored as unknown as Prisma.InputJsonValue },
  });
}

/** After an unexpected failure the key is freed, so that the client's retry runs for real. */
export async function releaseClaim(ctx: ApiContext, claimId: string) {
  await ctx.prisma.idempotencyRecord.deleteMany({ where: { id: claimId, responseStatus: null } });
}

const unrecorded = new WeakSet<AppError>();

/**
 * Marks a refusal of the body itself that can only be judged once the order is read (the tracking
 * a shipment needs): like a malformed body refused before the key is claimed, it is not recorded,
 * so a corrected retry may use the same key.
 */
export function notRecorded(error: AppError): AppError {
  unrecorded.add(error);
  return error;
}

/**
 * Runs `act` at most once per Idempotency-Key of the account (every time without a key) and
 * returns the id of the order it made or changed. `body` is what a retry must repeat to be
 * answered the same. `act` receives the claim, to complete with completeClaim in its own
 * transaction; answering null (nothing found, nothing done) frees the key, so a retry looks again.
 * A 4xx is stored and answered again to every retry (unless notRecorded); anything else frees the key.
 */
export async function onceForKey(
  ctx: ApiContext,
  accountId: string,
  body: unknown,
  act: (claimId: string | null) => Promise<string | null>,
): Promise<string | null> {
  const key = idempotencyKey(ctx);
  if (key === null) return act(null);
  const claim = await claimKey(ctx, accountId, key, requestHash(body));
  if (claim.kind === 'replay') {
    const { stored } = claim;
    reportUse(ctx, accountId, key, true);
    if ('error' in stored) throw storedError(stored);
    return stored.orderId;
  }
  let orderId: string | null;
  try {
    orderId = await act(claim.id);
  } catch (error) {
    const appError = asAppError(error);
    if (appError && appError.status < 500 && !unrecorded.has(appError)) await storeError(ctx, claim.id, appError);
    else await releaseClaim(ctx, claim.id);
    throw error;
  }
  if (orderId === null) {
    await releaseClaim(ctx, claim.id);
    return null;
  }
  reportUse(ctx, accountId, key, false);
  return orderId;
}

/** Tells the transport how this request used its key (src/context/context.ts, IdempotencyReport): the one writer of `ctx.idempotency`. */
export function reportUse(ctx: ApiContext, accountId: string, key: string, replayed: boolean) {
  ctx.idempotency = { accountId, key, replayed };
}

/** The stored error of a replayed rejection, as the same AppError. */
export function storedError(stored: Extract<StoredOutcome, { error: unknown }>): AppError {
  const { code, message, details } = stored.error;
  // Only codes we know are replayed; anything else would be a corrupted record.
  if (!Object.hasOwn(errorStatus, code)) throw new Error(`Unknown stored error code ${String(code)}`);
  return new AppError(code, message, details);
}
