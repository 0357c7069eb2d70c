import type { RequestContext } from '../context/context.js';
import type { Actor } from '../context/actor.js';
import type { PrismaClient } from '../db/prisma.js';
import type { Prisma } from '../generated/prisma/client.js';
import { hostOf } from '../shared/paths.js';

// The account's security log: what changed who can get in, and who changed it. Each event is
// written with the client (the same statement's transaction, or the transaction client) that
// makes the change it records, so a change that rolls back leaves no event and no event stands
// for a change that did not happen. The dashboard shows an account its own (/dashboard/security).

/** Every kind of event, with the words the log page shows. */
export const SECURITY_EVENTS = {
  'sign-in': 'Signed in',
  'sign-in.failed': 'Sign-in refused: wrong password',
  'session.ended': 'Signed out',
  'password.changed': 'Password changed',
  'password.set': 'Password set from a one-time link',
  'key.created': 'API key created',
  'key.revoked': 'API key revoked',
  'key.expired': 'API key expired',
  'plan.changed': 'Plan changed',
  'webhook.created': 'Webhook endpoint created',
  'webhook.deleted': 'Webhook endpoint deleted',
  'webhook.disabled': 'Webhook endpoint disabled: it failed for its whole retry schedule',
  'webhook.enabled': 'Webhook endpoint enabled again',
  'member.added': 'Made a member of a supplier',
  'member.removed': 'No longer a member of a supplier',
} as const;

export type SecurityEventKind = keyof typeof SECURITY_EVENTS;

/** Events older than this are not shown, and are deleted within the hour (pruneSecurityLog, run by the webhook worker's hourly sweep). */
export const SECURITY_LOG_KEEP_DAYS = 90;
/** Events a page of the log shows. */
export const SECURITY_LOG_PAGE = 50;
/** A user agent is kept to this many characters: enough to tell browsers apart, no more. */
const USER_AGENT_MAX = 300;

/** Who did it, as the log says: a session or a key by id, the CLI, the service, or a visitor (a sign-in's). */
export interface SecurityActor {
  kind: 'session' | 'key' | 'cli' | 'service' | 'visitor';
  id?: string | null;
  ip?: string | null;
  userAgent?: string | null;
}

/** The actor of a request's context, as the log names it. */
export function securityActorOf(ctx: Pick<RequestContext, 'actor' | 'userAgent'>): SecurityActor {
  const actor: Actor = ctx.actor;
  const userAgent = ctx.userAgent ?? null;
  switch (actor.kind) {
    case 'session':
      return { kind: 'session', id: actor.sessionId ?? null, ip: actor.ip, userAgent };
    case 'key':
      return { kind: 'key', id: actor.keyId, ip: actor.ip, userAgent };
    case 'anonymous':
      return { kind: 'visitor', ip: actor.ip, userAgent };
    case 'operator':
      return { kind: 'cli' };
    case 'system':
      return { kind: 'service', id: actor.name };
  }
}

type Db = PrismaClient | Prisma.TransactionClient;

/** Details of an event: ids, names and addresses it concerned, never a secret. */
export type SecurityDetails = Record<string, string | number | boolean | null>;

/** Records an event of `accountId` with `db`: the transaction of the change it records. */
export async function recordSecurityEvent(
  db: Db,
  accountId: string,
  kind: SecurityEventKind,
  by: SecurityActor,
  details: SecurityDetails = {},
  now: Date = new Date(),
): Promise<void> {
  await db.securityEvent.create({
    data: {
      accountId,
      kind,
      actorKind: by.kind,
      actorId: by.id ?? null,
      ip: by.ip ?? null,
      userAgent: by.userAgent ? by.userAgent.slice(0, USER_AGENT_MAX) : null,
      details,
      createdAt: now,
    },
  });
}

/** Deletes every account's events past SECURITY_LOG_KEEP_DAYS; how many. */
export async function pruneSecurityLog(db: Db, now: Date = new Date()): Promise<number> {
  const before = new Date(now.getTime() - SECURITY_LOG_KEEP_DAYS * 86_400_000);
  return (await db.securityEvent.deleteMany({ where: { createdAt: { lt: before } } })).count;
}

/** A webhook endpoint as the log names it: its host, never its path or query (they may hold the receiver's token). */
export function endpointDetails(endpoint: { id: string; url: string }): SecurityDetails {
  return { endpointId: endpoint.id, host: hostOf(endpoint.url) ?? 'invalid' };
}

/** `recordSecurityEvent` by the context's actor, at the context's time, with its database client. */
export function recordByContext(ctx: RequestContext, accountId: string, kind: SecurityEventKind, details: SecurityDetails = {}): Promise<void> {
  return recordSecurityEvent(ctx.prisma, accountId, kind, securityActorOf(ctx), details, ctx.now());
}

export interface SecurityEventView {
  id: string;
  kind: SecurityEventKind;
  /** The kind in words. */
  what: string;
  actorKind: SecurityActor['kind'];
  actorId: string | null;
  ip: string | null;
  userAgent: string | null;
  details: SecurityDetails;
  createdAt: Date;
}

/**
 * The account's events, newest first, a page at a time (`page` from 1); `more` when an older page
 * exists. A key's expiry is no change anybody makes, so it is not written: it is read from the key
 * itself (its expiresAt, once passed), exact to the millisecond and never missed or doubled.
 */
export async function listSecurityEvents(ctx: RequestContext, accountId: string, page: number): Promise<{ events: SecurityEventView[]; more: boolean }> {
  const now = ctx.now();
  const since = new Date(now.getTime() - SECURITY_LOG_KEEP_DAYS * 86_400_000);
  const rows = await ctx.prisma.$queryRaw<Array<Omit<SecurityEventView, 'what' | 'kind' | 'actorKind'> & { kind: string; actorKind: string }>>`
    SELECT id, kind, "actorKind", "actorId", ip, "userAgent", details, "createdAt"
    FROM "SecurityEvent" WHERE "accountId" = ${accountId} AND "createdAt" > ${since}
    UNION ALL
    SELECT 'expired-' || id, 'key.expired', 'service', NULL, NULL, NULL,
      jsonb_build_object('keyId', id, 'prefix', prefix, 'name', name), "expiresAt"
    FROM "ApiKey" WHERE "accountId" = ${accountId} AND "expiresAt" <= ${now} AND "expiresAt" > ${since}
      AND ("revokedAt" IS NULL OR "revokedAt" > "expiresAt")
    ORDER BY "createdAt" DESC, id DESC
    OFFSET ${(page - 1) * SECURITY_LOG_PAGE} LIMIT ${SECURITY_LOG_PAGE + 1}`;
  const events = rows.slice(0, SECURITY_LOG_PAGE).map((row) => {
    const kind = row.kind as SecurityEventKind;
    return {
      ...row,
      kind,
      // A kind this version does not know (written by a newer one) is shown as it is stored.
      what: SECURITY_EVENTS[kind] ?? row.kind,
      actorKind: row.actorKind as SecurityActor['kind'],
      details: (row.details ?? {}) as SecurityDetails,
    };
  });
  return { events, more: rows.length > SECURITY_LOG_PAGE };
}
