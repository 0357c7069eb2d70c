// Dashboard sessions: a random token in a cookie, its SHA-256 in the database.
//
// A session ends after SESSION_IDLE_MS without use, and SESSION_ABSOLUTE_MS after sign-in however
// busy it is. The token is a bearer secret: nothing here logs it or puts it in an error, and only
// its hash is stored, so a copy of the Session table opens no session.

import type { RequestContext } from '../context/context.js';
import crypto from 'node:crypto';
import type { Plan } from '../context/actor.js';
import type { PrismaClient } from '../db/prisma.js';
import type { Prisma } from '../generated/prisma/client.js';
import { hashToken, looksLikeToken, newToken } from '../shared/tokens.js';
import { recordSecurityEvent, securityActorOf } from './security-log.js';

/** A session unused this long has ended. */
export const SESSION_IDLE_MS = 2 * 3600_000;
/** A session ends this long after sign-in, however active. */
export const SESSION_ABSOLUTE_MS = 24 * 3600_000;
/**
 * lastSeenAt is moved forward at most this often: idle expiry needs no finer grain than a
 * minute, and a write per page view would cost more than the read.
 */
export const SESSION_TOUCH_INTERVAL_MS = 60_000;

type Db = PrismaClient | Prisma.TransactionClient;

/** Who a live session belongs to. */
export interface SessionView {
  sessionId: string;
  accountId: string;
  email: string;
  name: string;
  plan: Plan;
}

/**
 * Starts a session for an account that has just proved who it is, and returns its token for the
 * cookie. Always a new token, never one the browser brought along (no session fixation).
 */
export async function createSession(ctx: RequestContext, accountId: string, how: 'password' | 'registered' = 'password'): Promise<{ token: string; expiresAt: Date }> {
  const { token, hash } = newToken();
  const now = ctx.now();
  const expiresAt = new Date(now.getTime() + SESSION_ABSOLUTE_MS);
  await ctx.prisma.$transaction(async (tx) => {
    const { id } = await tx.session.create({ data: { tokenHash: hash, accountId, createdAt: now, lastSeenAt: now, expiresAt }, select: { id: true } });
    // The sign-in is the new session's doing, from the visitor's address and browser.
    await recordSecurityEvent(tx, accountId, 'sign-in', { ...securityActorOf(ctx), kind: 'session', id }, { how }, now);
  });
  return { token, expiresAt };
}

/**
 * The live session a cookie's token stands for, or null: for a malformed token (without a query),
 * an unknown one, and one idle or absolutely expired (which is deleted on the way).
 */
export async function readSession(ctx: RequestContext, token: string): Promise<SessionView | null> {
  if (!looksLikeToken(token)) return null;
  const row = await ctx.prisma.session.findUnique({
    where: { tokenHash: hashToken(token) },
    select: { id: true, accountId: true, lastSeenAt: true, expiresAt: true, account: { select: { email: true, name: true, plan: true } } },
  });
  if (!row) return null;
  const now = ctx.now();
  const at = now.getTime();
  if (row.expiresAt.getTime() <= at || row.lastSeenAt.getTime() + SESSION_IDLE_MS <= at) {
    await ctx.prisma.session.deleteMany({ where: { id: row.id } });
    return null;
  }
  if (at - row.lastSeenAt.getTime() >= SESSION_TOUCH_INTERVAL_MS) {
    // updateMany: a session ended meanwhile (sign-out in another tab) is no error.
    await ctx.prisma.session.updateMany({ where: { id: row.id }, data: { lastSeenAt: now } });
  }
  return { sessionId: row.id, accountId: row.accountId, email: row.account.email, name: row.account.name, plan: row.account.plan };
}

/** Ends the session of this token (sign-out). Unknown or malformed tokens: nothing to do. */
export async function endSession(ctx: RequestContext, token: string): Promise<void> {
  if (!looksLikeToken(token)) return;
  await ctx.prisma.$transaction(async (tx) => {
    const [ended] = await tx.$queryRaw<{ id: string; accountId: string }[]>`
      DELETE FROM "Session" WHERE "tokenHash" = ${hashToken(token)} RETURNING id, "accountId"`;
    if (ended) await recordSecurityEvent(tx, ended.accountId, 'session.ended', { ...securityActorOf(ctx), kind: 'session', id: ended.id }, {}, ctx.now());
  });
}

/** Ends every session of an account (password changed or set); returns how many there were. */
export async function endAllSessions(ctx: RequestContext, accountId: string): Promise<number> {
  return (await ctx.prisma.session.deleteMany({ where: { accountId } })).count;
}

/** Deletes sessions that have ended by either expiry; for a periodic sweep. Returns how many. */
export async function deleteEndedSessions(ctx: RequestContext): Promise<number> {
  const now = ctx.now();
  const idleSince = new Date(now.getTime() - SESSION_IDLE_MS);
  return (await ctx.prisma.session.deleteMany({ where: { OR: [{ expiresAt: { lte: now } }, { lastSeenAt: { lte: idleSince } }] } })).count;
}

// Domain separation: this hash of a token is never the stored one (hashToken), nor any other.
const CSRF_LABEL = 'marketplace dashboard csrf v1\0';

/**
 * The CSRF token of a session (or pre-session) token, for forms: base64url SHA-256 of a fixed
 * label and the token. A page can show it freely: it does not lead back to the token.
 */
export function csrfTokenFor(token: string): string {
  return crypto.createHash('sha256').update(CSRF_LABEL).update(token, 'utf8').digest('base64url');
}

/** Whether a form's `candidate` is the CSRF token of `token`, compared in constant time. */
export function csrfMatches(token: string, candidate: unknown): boolean {
  if (typeof token !== 'string' || token === '' || typeof candidate !== 'string') return false;
  const expected = Buffer.from(csrfTokenFor(token), 'utf8');
  const given = Buffer.from(candidate, 'utf8');
  // timingSafeEqual needs equal lengths; the expected length is public anyway (43).
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}
