// Dashboard credentials: registration, sign-in, password changes and one-time set-password links.
// Sessions themselves are src/accounts/sessions.ts; hashing and password rules are passwords.ts.
//
// Errors: a VALIDATION_ERROR naming fields is a mistake of the person filling in a form, with a
// message per field for the page to show beside it; any other AppError (UNAUTHORIZED,
// RATE_LIMIT_EXCEEDED) is shown above the form. None ever contains a password or a token.

import { inTransaction, type RequestContext } from '../context/context.js';
import { LIMITS } from '../config/limits.js';
import crypto from 'node:crypto';
import { z } from 'zod';
import type { PrismaClient } from '../db/prisma.js';
import { Prisma } from '../generated/prisma/client.js';
import { secondsUntil } from '../ratelimit/policy.js';
import type { RateLimitStore } from '../ratelimit/store.js';
import { AppError, rateLimited } from '../shared/errors.js';
import { formError } from '../shared/errors.js';
import { checkEmail, nameText, normaliseEmail } from '../shared/text.js';
import { hashIsOutdated, hashPassword, passwordProblem, verifyNothing, verifyPassword } from './passwords.js';
import { recordByContext } from './security-log.js';
import { endAllSessions } from './sessions.js';
import { hashToken, looksLikeToken, newToken } from '../shared/tokens.js';

const NAME_MAX = 100;
const COMPANY_MAX = 200;

/** The dashboard's throttled forms (LIMITS.forms): which count a form goes to. */
export type FormLimit = keyof typeof LIMITS.forms;

/** Each limit's bucket in the store, and whose forms the refusal says it counted. */
const FORM_BUCKETS: Record<FormLimit, { bucket: string; whose: string }> = {
  perIp: { bucket: 'form:ip:', whose: 'your address' },
  savesPerAccount: { bucket: 'form:account:', whose: 'your account' },
};

/**
 * Counts one form against LIMITS.forms[`limit`] for `sender` (the client IP for perIp, the
 * account id for savesPerAccount); RATE_LIMIT_EXCEEDED (with the wait) past it.
 */
export async function countFormSubmission(store: RateLimitStore, limit: FormLimit, sender: string, now: Date): Promise<void> {
  const { max, windowMs } = LIMITS.forms[limit];
  const { bucket, whose } = FORM_BUCKETS[limit];
  const decision = await store.hit(`${bucket}${sender}`, max, windowMs);
  if (decision.allowed) return;
  const retryAfter = secondsUntil(decision.resetAt, now.getTime());
  throw rateLimited(`Too many forms sent from ${whose}; try again in ${retryAfter} s`, retryAfter);
}

/** How long a set-password link works unless the caller says otherwise. */
export const PASSWORD_LINK_TTL_MS = 7 * 24 * 3600_000;

const UNIQUE_VIOLATION = 'P2002';
const isUniqueViolation = (error: unknown) => error instanceof Prisma.PrismaClientKnownRequestError && error.code === UNIQUE_VIOLATION;

const registration = z.object({
  email: z.string().transform((raw, ctx) => {
    const checked = checkEmail(raw);
    if ('problem' in checked) ctx.addIssue({ code: 'custom', message: checked.problem });
    return 'email' in checked ? checked.email : '';
  }),
  name: nameText(1, NAME_MAX),
  companyName: nameText(0, COMPANY_MAX)
    .optional()
    .transform((value) => (value ? value : null)),
  password: z.string(),
});

export interface RegisterInput {
  email: string;
  password: string;
  name: string;
  companyName?: string | undefined;
}

/**
 * Creates an account that can sign in. Every problem of the form is reported at once as a
 * VALIDATION_ERROR: fields that are invalid, a password that breaks the rules, an e-mail that already
 * has an account (whatever its letter case, including one the keys CLI made).
 */
export async function registerAccount(ctx: RequestContext, input: RegisterInput): Promise<{ id: string; email: string }> {
  const parsed = registration.safeParse(input);
  const fields: Record<string, string> = {};
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = String(issue.path[0] ?? 'form');
      fields[field] ??= field === 'password' ? 'is required' : issue.message;
    }
  }
  const email = parsed.success ? parsed.data.email : (normaliseEmail(String(input.email ?? '')) ?? '');
  const problem = await passwordProblem(String(input.password ?? ''), { email });
  if (problem) fields.password = problem;
  if (email && !fields.email) {
    const taken = await takenMessage(ctx, email);
    if (taken) fields.email = taken;
  }
  if (!parsed.success || Object.keys(fields).length > 0) throw formError(fields);

  const { name, companyName, password } = parsed.data;
  const passwordHash = await hashPassword(password);
  try {
    return await ctx.prisma.account.create({
      data: { email, name, companyName, passwordHash, passwordChangedAt: ctx.now() },
      select: { id: true, email: true },
    });
  } catch (error) {
    // Someone registered (or the CLI created) the address between the check and the insert.
    if (isUniqueViolation(error)) throw formError({ email: (await takenMessage(ctx, email)) ?? ALREADY_REGISTERED });
    throw error;
  }
}

/**
 * One answer for every taken address, whether it has a password or was made for API keys (by the
 * keys CLI): the form tells a stranger no more than that the address cannot be registered.
 */
const ALREADY_REGISTERED = 'is already registered: sign in, or, if the account has no password yet, ask the operator for a link to set one';

async function takenMessage(ctx: RequestContext, email: string): Promise<string | null> {
  const account = await ctx.prisma.account.findUnique({ where: { email }, select: { id: true } });
  return account ? ALREADY_REGISTERED : null;
}

export interface SignInInput {
  email: string;
  password: string;
  /** The client's address, as the gate resolved it (src/shared/client-ip.ts). */
  ip: string;
}

/**
 * The account whose e-mail and password these are. Refusals are one AppError whatever the cause
 * (unknown address, account without a password, wrong password), and each costs one argon2
 * verification, so neither message nor timing tells which addresses have accounts. Too many
 * attempts from one IP or for one address: RATE_LIMIT_EXCEEDED with retryAfter, before any
 * password is checked.
 */
export async function signIn(ctx: RequestContext, store: RateLimitStore, input: SignInInput): Promise<{ accountId: string }> {
  const email = String(input.email ?? '').trim().toLowerCase();
  const password = String(input.password ?? '');
  await countSignInAttempt(ctx, store, email, input.ip);

  const account = normaliseEmail(email)
    ? await ctx.prisma.account.findUnique({ where: { email }, select: { id: true, passwordHash: true } })
    : null;
  const stored = account?.passwordHash ?? null;
  const matches = stored ? await verifyPassword(stored, password) : await verifyNothing(password);
  // A wrong password for an account is in its security log (an address without an account has no
  // log to be in), written beside the answer rather than before it: a write only for addresses
  // with an account would time what the single message hides.
  if (account && stored && !matches) {
    void recordByContext(ctx, account.id, 'sign-in.failed').catch((error: unknown) => ctx.logger.warn({ err: error }, 'security log: a failed sign-in could not be recorded'));
  }
  if (!account || !stored || !matches) throw new AppError('UNAUTHORIZED', 'Wrong e-mail or password');

  // Hashes made with older parameters are upgraded while the password is at hand.
  if (hashIsOutdated(stored)) {
    await ctx.prisma.account.updateMany({
      where: { id: account.id, passwordHash: stored },
      data: { passwordHash: await hashPassword(password) },
    });
  }
  return { accountId: account.id };
}

/** Counts an attempt in both sign-in limits; the context's clock only computes the retry time (the store counts by its own). */
async function countSignInAttempt(ctx: RequestContext, store: RateLimitStore, email: string, ip: string): Promise<void> {
  const now = ctx.now().getTime();
  const { perIp, perAccount } = LIMITS.signIn;
  // Both buckets count every attempt, refused ones too. The address is hashed into the bucket
  // name: the store (possibly a shared Redis) needs no list of e-mail addresses, and an
  // absurdly long one makes no absurdly long key.
  const emailKey = crypto.createHash('sha256').update(email).digest('base64url');
  const decisions = await Promise.all([
    store.hit(`signin:ip:${ip}`, perIp.max, perIp.windowMs),
    store.hit(`signin:account:${emailKey}`, perAccount.max, perAccount.windowMs),
  ]);
  const refused = decisions.filter((d) => !d.allowed);
  if (refused.length === 0) return;
  const retryAfter = Math.max(...refused.map((d) => secondsUntil(d.resetAt, now)));
  throw rateLimited(`Too many sign-in attempts; try again in ${retryAfter} s`, retryAfter);
}

/**
 * Replaces the password of a signed-in account. The current password must be right (a VALIDATION_ERROR
 * on `current` otherwise: a borrowed, unlocked browser is not enough) and the new one must meet
 * the rules (VALIDATION_ERROR on `next`). Each try is a guess at the password, so it counts against the
 * sign-in limits of the account and the address (RATE_LIMIT_EXCEEDED past them). Ends every
 * session of the account, this one included: the caller signs the user in anew, so whoever else
 * held a session is out.
 */
export async function changePassword(ctx: RequestContext,
  store: RateLimitStore,
  accountId: string,
  input: { current: string; next: string; ip: string },
): Promise<void> {
  const account = await ctx.prisma.account.findUnique({ where: { id: accountId }, select: { email: true, passwordHash: true } });
  if (!account) throw new AppError('UNAUTHORIZED', 'The account no longer exists');
  await countSignInAttempt(ctx, store, account.email, input.ip);
  const current = String(input.current ?? '');
  const next = String(input.next ?? '');
  const matches = account.passwordHash ? await verifyPassword(account.passwordHash, current) : await verifyNothing(current);
  if (!matches) throw formError({ current: 'is not your current password' });
  if (next === current) throw formError({ next: 'must differ from the current password' });
  const problem = await passwordProblem(next, { email: account.email });
  if (problem) throw formError({ next: problem });

  const passwordHash = await hashPassword(next);
  await ctx.prisma.$transaction((tx) => storePassword(inTransaction(ctx, tx), accountId, passwordHash, ctx.now(), 'password.changed'));
}

/**
 * Sets the password hash, and ends every session and unused link of the account, all at `now` (a
 * link's claim is the same instant), with the security event `kind` saying so.
 */
async function storePassword(ctx: RequestContext, accountId: string, passwordHash: string, now: Date, kind: 'password.changed' | 'password.set'): Promise<void> {
  await ctx.prisma.account.update({ where: { id: accountId }, data: { passwordHash, passwordChangedAt: now } });
  const sessionsEnded = await endAllSessions(ctx, accountId);
  await recordByContext(ctx, accountId, kind, { sessionsEnded });
  // A link sent before the change must not undo it.
  await ctx.prisma.passwordToken.updateMany({ where: { accountId, usedAt: null }, data: { usedAt: now } });
}

/**
 * A one-time link token to set the password of the account with `email`, which is created (with
 * no password and the default plan) if there is none. Only the token's SHA-256 is stored; the
 * token exists once, in the return value. An address that is no e-mail is a VALIDATION_ERROR on `email`.
 */
export async function createPasswordLink(ctx: RequestContext,
  email: string,
  { ttlMs = PASSWORD_LINK_TTL_MS }: { ttlMs?: number } = {},
): Promise<{ token: string; accountId: string; expiresAt: Date }> {
  const checked = checkEmail(email);
  if ('problem' in checked) throw formError({ email: checked.problem });
  const address = checked.email;
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) throw new RangeError(`A link's lifetime must be a positive whole number of ms, got ${ttlMs}`);
  const { token, hash } = newToken();
  const expiresAt = new Date(ctx.now().getTime() + ttlMs);
  const accountId = await ctx.prisma.$transaction(async (tx) => {
    // ON CONFLICT DO NOTHING, then read: see createApiKey.
    await tx.account.createMany({ data: [{ email: address }], skipDuplicates: true });
    const { id } = await tx.account.findUniqueOrThrow({ where: { email: address }, select: { id: true } });
    await tx.passwordToken.create({ data: { tokenHash: hash, accountId: id, expiresAt } });
    return id;
  });
  return { token, accountId, expiresAt };
}

const LINK_UNKNOWN = 'This link is not valid: ask for a new one';
const LINK_EXPIRED = 'This link has expired: ask for a new one';
const LINK_USED = 'This link has already been used: sign in, or ask for a new one';

/**
 * Sets the password with a token from createPasswordLink, once. A token that is malformed,
 * unknown, expired or used is an AppError (UNAUTHORIZED, a message saying which); a password
 * breaking the rules is a VALIDATION_ERROR on `password` and leaves the token usable, so the person can
 * try again. Ends every session of the account.
 */
export async function setPasswordWithToken(ctx: RequestContext, token: string, password: string): Promise<{ accountId: string }> {
  if (!looksLikeToken(token)) throw new AppError('UNAUTHORIZED', LINK_UNKNOWN);
  const tokenHash = hashToken(token);
  const row = await ctx.prisma.passwordToken.findUnique({
    where: { tokenHash },
    select: { id: true, accountId: true, expiresAt: true, usedAt: true, account: { select: { email: true } } },
  });
  const linkError = (r: { expiresAt: Date; usedAt: Date | null } | null, now: Date) =>
    !r ? LINK_UNKNOWN : r.usedAt ? LINK_USED : r.expiresAt <= now ? LINK_EXPIRED : null;
  const before = linkError(row, ctx.now());
  if (before || !row) throw new AppError('UNAUTHORIZED', before ?? LINK_UNKNOWN);

  const problem = await passwordProblem(String(password ?? ''), { email: row.account.email });
  if (problem) throw formError({ password: problem });
  const passwordHash = await hashPassword(password);

  await ctx.prisma.$transaction(async (tx) => {
    const now = ctx.now();
    // The claim and the check are one statement, so of two concurrent uses exactly one wins.
    const { count } = await tx.passwordToken.updateMany({ where: { id: row.id, usedAt: null, expiresAt: { gt: now } }, data: { usedAt: now } });
    if (count === 0) {
      const current = await tx.passwordToken.findUnique({ where: { id: row.id }, select: { expiresAt: true, usedAt: true } });
      throw new AppError('UNAUTHORIZED', linkError(current, now) ?? LINK_USED);
    }
    await storePassword(inTransaction(ctx, tx), row.accountId, passwordHash, now, 'password.set');
  });
  return { accountId: row.accountId };
}
