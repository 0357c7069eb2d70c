// API keys of accounts: created, listed and revoked (the keys CLI; the demo key of a first start).
// What a key looks like and how a presented one is checked is src/auth/key-check.ts.

import { inTransaction, type CreationStep, type RequestContext } from '../context/context.js';
import type { Plan } from '../context/actor.js';
import { generateApiKey, normaliseOrigin, type KeyKind } from '../auth/key-check.js';
import { PUBLISHABLE_SCOPES, PUBLISHABLE_STOCK_SCOPE, SCOPES, SELF_SERVICE_SCOPES, isScope, type Scope } from '../auth/scopes.js';
import type { PrismaClient } from '../db/prisma.js';
import type { Prisma } from '../generated/prisma/client.js';
import { PLAN_LIMITS } from '../ratelimit/plans.js';
import { AppError, validationError } from '../shared/errors.js';
import { checkEmail, nameProblem as textProblem } from '../shared/text.js';
import { recordByContext } from './security-log.js';

export const ENTERPRISE_LIMIT_MAX = 10_000_000;
export const ENTERPRISE_WINDOW_MAX_SECONDS = 30 * 24 * 3600;

const PLANS: readonly Plan[] = ['BASIC', 'PRO', 'ENTERPRISE'];
const NAME_MAX = 100;
/** Origins one publishable key may list. */
export const ORIGINS_PER_KEY = 20;

/** What makes a key publishable (`pk_`), for the CLI and the dashboard alike. */
export interface PublishableInput {
  /** The origins whose pages may use the key: scheme://host[:port], at least one. */
  origins: readonly string[];
  /** Requests without an Origin header (a server's) are accepted too. */
  allowServer?: boolean;
  /** Stock records, and productChanged events of stock alone, are readable (read:stock). */
  allowStock?: boolean;
}

export interface CreateApiKeyInput {
  /** E-mail of the owning account; the account is created when there is none. */
  owner: string;
  plan: Plan;
  /** Validated at run time (the CLI passes what the user typed), so plain strings are accepted. */
  scopes: readonly string[];
  /** Enterprise only (required there): requests allowed per window. */
  rateLimit?: number;
  /** Enterprise only (required there): window length in seconds. */
  rateWindowSeconds?: number;
  expiresAt?: Date;
  name?: string;
  /** A publishable key: its scopes are the catalogue's (`scopes`, when given, must be among them). */
  publishable?: PublishableInput;
}

/** A key's kind and what a publishable one allows, as stored. */
interface KindColumns {
  kind: KeyKind;
  origins: string[];
  allowServer: boolean;
}

/** createApiKey's input after validation: what will be stored. */
export interface NormalisedKeyInput extends KindColumns {
  owner: string;
  plan: Plan;
  scopes: Scope[];
  rateLimit: number | null;
  rateWindowSeconds: number | null;
  expiresAt: Date | null;
  name: string;
}

/** What may be shown about a key: never the key, never its hash. */
export interface ApiKeyView {
  id: string;
  prefix: string;
  name: string;
  plan: 'basic' | 'pro' | 'enterprise';
  scopes: string[];
  /** secret (`mk_`, for servers) or publishable (`pk_`, for browser code). */
  kind: 'secret' | 'publishable';
  /** A publishable key's origins (empty for a secret key). */
  origins: string[];
  /** A publishable key also accepts requests without an Origin. */
  allowServer: boolean;
  /** The owning account's e-mail. */
  owner: string;
  accountId: string;
  /** Requests per window: the key's own for enterprise, the plan's otherwise. */
  limit: number;
  /** Window length in seconds. */
  window: number;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  createdAt: Date;
}

// The rules of a key's settings, once for both ways a key is made: by the operator (keys CLI:
// any plan, scope and limit) and by an account for itself (dashboard: the self-service scopes and
// expiries). Each names what is wrong with its field, so a refusal lists every broken rule at once.

/** A key's name: optional for the operator, required in the dashboard. */
function nameProblem(name: string, required: boolean): string | null {
  if (name === '') return required ? 'is required, so that you can tell the key from your others' : null;
  return name.length > NAME_MAX ? `must be at most ${NAME_MAX} characters` : textProblem(name);
}

/** The scopes asked for, each once in SCOPES order, and what is wrong with them (unknown or not offered; none). */
function scopesOf(raw: readonly string[], offered: readonly Scope[]): { scopes: Scope[]; problem: string | null } {
  const asked = [...new Set(raw.map((s) => s.trim()).filter(Boolean))];
  const refused = asked.filter((s) => !(offered as readonly string[]).includes(s));
  const scopes = SCOPES.filter((s) => asked.includes(s) && offered.includes(s));
  const valid = `valid scopes: ${offered.join(', ')}`;
  if (refused.length) return { scopes, problem: `has the unknown scope${refused.length > 1 ? 's' : ''} ${refused.map((s) => JSON.stringify(s)).join(', ')}; ${valid}` };
  return { scopes, problem: scopes.length ? null : `must include at least one scope; ${valid}` };
}

/** An expiry must be a real date in the future. */
function expiryProblem(expiresAt: Date, now: Date): string | null {
  if (!(expiresAt instanceof Date) || Number.isNaN(expiresAt.getTime())) return 'is not a valid date';
  return expiresAt.getTime() <= now.getTime() ? `must be in the future, got ${expiresAt.toISOString()}` : null;
}

/**
 * A publishable key's scopes, origins and options, into `details` for what is wrong: its scopes
 * are PUBLISHABLE_SCOPES (read:stock only when stock is allowed), or those asked for among them.
 */
function publishableSettings(input: PublishableInput, asked: readonly string[], details: Record<string, string>): KindColumns & { scopes: Scope[] } {
  const allowStock = input.allowStock === true;
  const offered = PUBLISHABLE_SCOPES.filter((s) => allowStock || s !== PUBLISHABLE_STOCK_SCOPE);
  const wanted = asked.map((s) => s.trim()).filter(Boolean);
  let scopes: Scope[] = [...offered];
  if (wanted.length) {
    const refused = [...new Set(wanted.filter((s) => !(offered as readonly string[]).includes(s)))];
    if (refused.length) {
      const stockOnly = refused.length === 1 && refused[0] === PUBLISHABLE_STOCK_SCOPE;
      details.scopes = stockOnly
        ? `has ${PUBLISHABLE_STOCK_SCOPE}, which a publishable key carries only when its owner allows stock (--allow-stock)`
        : `a publishable key reads the catalogue only: ${refused.map((s) => JSON.stringify(s)).join(', ')} ${refused.length > 1 ? 'are' : 'is'} not for browser code (publishable scopes: ${offered.join(', ')}); use a secret key for anything else`;
    }
    scopes = SCOPES.filter((s) => wanted.includes(s) && (offered as readonly string[]).includes(s));
  }
  const origins: string[] = [];
  const problems: string[] = [];
  for (const text of input.origins.map((o) => o.trim()).filter(Boolean)) {
    const checked = normaliseOrigin(text);
    if ('problem' in checked) problems.push(checked.problem);
    else if (!origins.includes(checked.origin)) origins.push(checked.origin);
  }
  if (problems.length) details.origins = problems.join('; ');
  else if (origins.length === 0) details.origins = 'a publishable key needs at least one origin its pages are served from (https://shop.example)';
  else if (origins.length > ORIGINS_PER_KEY) details.origins = `must list at most ${ORIGINS_PER_KEY} origins, got ${origins.length}`;
  return { kind: 'PUBLISHABLE', scopes, origins, allowServer: input.allowServer === true };
}

const SECRET: KindColumns = { kind: 'SECRET', origins: [], allowServer: false };

const INVALID_KEY = 'Invalid key settings';

/**
 * Checks and normalises a key request without touching the database, so the CLI can refuse bad
 * arguments before it starts a database server. createApiKey calls it too. A VALIDATION_ERROR
 * names every field that is wrong.
 */
export function normaliseKeyInput(input: CreateApiKeyInput, now: Date = new Date()): NormalisedKeyInput {
  const details: Record<string, string> = {};
  const checkedOwner = checkEmail(input.owner);
  const owner = 'email' in checkedOwner ? checkedOwner.email : null;
  if ('problem' in checkedOwner) details.owner = `${checkedOwner.problem}, got ${JSON.stringify(input.owner)}`;
  const plan = input.plan;
  if (!PLANS.includes(plan)) details.plan = `must be basic, pro or enterprise, got ${JSON.stringify(plan)}`;
  let scopes: Scope[];
  let kind = SECRET;
  if (input.publishable) {
    ({ scopes, ...kind } = publishableSettings(input.publishable, input.scopes, details));
  } else {
    const checked = scopesOf(input.scopes, SCOPES);
    scopes = checked.scopes;
    if (checked.problem) details.scopes = checked.problem;
  }

  let rateLimit: number | null = null;
  let rateWindowSeconds: number | null = null;
  if (plan === 'ENTERPRISE') {
    if (input.rateLimit === undefined || input.rateWindowSeconds === undefined) {
      details.limit = 'an enterprise key needs its own rate limit and window (--limit N --window 60s|15m|1h|1d)';
    } else {
      if (!Number.isInteger(input.rateLimit) || input.rateLimit < 1 || input.rateLimit > ENTERPRISE_LIMIT_MAX) {
        details.limit = `must be a whole number of requests from 1 to ${ENTERPRISE_LIMIT_MAX}, got ${input.rateLimit}`;
      }
      if (!Number.isInteger(input.rateWindowSeconds) || input.rateWindowSeconds < 1 || input.rateWindowSeconds > ENTERPRISE_WINDOW_MAX_SECONDS) {
        details.window = `must be a whole number of seconds from 1 s to 30 days, got ${input.rateWindowSeconds}`;
      }
      rateLimit = input.rateLimit;
      rateWindowSeconds = input.rateWindowSeconds;
    }
  } else if (PLANS.includes(plan) && (input.rateLimit !== undefined || input.rateWindowSeconds !== undefined)) {
    const { limit, windowSeconds } = PLAN_LIMITS[plan];
    details.limit = `only enterprise keys take a custom rate limit or window; the ${plan.toLowerCase()} plan allows ${limit} requests per ${windowSeconds / 3600} h`;
  }

  const expiresAt = input.expiresAt ?? null;
  const expiry = expiresAt && expiryProblem(expiresAt, now);
  if (expiry) details.expires = expiry;
  const name = (input.name ?? '').normalize('NFC').trim();
  const badName = nameProblem(name, false);
  if (badName) details.name = badName;

  if (Object.keys(details).length || owner === null) throw validationError(details, INVALID_KEY);
  return { owner, plan, scopes, rateLimit, rateWindowSeconds, expiresAt, name, ...kind };
}

/** The owner's e-mail as stored (see checkEmail); VALIDATION_ERROR on `owner`, saying why, otherwise. */
export function normaliseOwner(owner: string): string {
  const checked = checkEmail(owner);
  if ('problem' in checked) throw validationError({ owner: `${checked.problem}, got ${JSON.stringify(owner)}` }, 'The owner must be an e-mail address');
  return checked.email;
}

const viewSelect = {
  id: true,
  prefix: true,
  name: true,
  plan: true,
  scopes: true,
  kind: true,
  origins: true,
  allowServer: true,
  accountId: true,
  rateLimit: true,
  rateWindowSeconds: true,
  expiresAt: true,
  revokedAt: true,
  lastUsedAt: true,
  createdAt: true,
  account: { select: { email: true } },
} as const satisfies Prisma.ApiKeySelect;

type ViewRow = Prisma.ApiKeyGetPayload<{ select: typeof viewSelect }>;

function toView(row: ViewRow): ApiKeyView {
  const plan = PLAN_LIMITS[row.plan];
  return {
    id: row.id,
    prefix: row.prefix,
    name: row.name,
    plan: lowerPlan(row.plan),
    scopes: row.scopes,
    kind: row.kind === 'PUBLISHABLE' ? 'publishable' : 'secret',
    origins: row.origins,
    allowServer: row.allowServer,
    owner: row.account.email,
    accountId: row.accountId,
    limit: row.rateLimit ?? plan.limit,
    window: row.rateWindowSeconds ?? plan.windowSeconds,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
    lastUsedAt: row.lastUsedAt,
    createdAt: row.createdAt,
  };
}

function lowerPlan(plan: Plan): ApiKeyView['plan'] {
  return plan === 'BASIC' ? 'basic' : plan === 'PRO' ? 'pro' : 'enterprise';
}

/**
 * Creates a key, and its owner's account if there is none, in one transaction: a failure leaves
 * neither. Returns the key (the only time it exists outside the caller's hands) and its view.
 */
export async function createApiKey(ctx: RequestContext, input: CreateApiKeyInput): Promise<{ key: string; record: ApiKeyView }> {
  const data = normaliseKeyInput(input, ctx.now());
  const generated = generateApiKey(data.kind);
  const row = await ctx.prisma.$transaction(async (tx) => {
    // INSERT … ON CONFLICT DO NOTHING, then read: two concurrent first keys of one owner share one
    // account (the second insert waits for the first to commit, then skips). Prisma's upsert is
    // a SELECT then an INSERT here, which fails the loser on the unique e-mail.
    await tx.account.createMany({ data: [{ email: data.owner }], skipDuplicates: true });
    const account = await tx.account.findUniqueOrThrow({ where: { email: data.owner }, select: { id: true } });
    const created = await tx.apiKey.create({
      data: {
        accountId: account.id,
        name: data.name,
        hash: generated.hash,
        prefix: generated.prefix,
        plan: data.plan,
        scopes: data.scopes,
        rateLimit: data.rateLimit,
        rateWindowSeconds: data.rateWindowSeconds,
        expiresAt: data.expiresAt,
        kind: data.kind,
        origins: data.origins,
        allowServer: data.allowServer,
      },
      select: viewSelect,
    });
    await recordByContext(inTransaction(ctx, tx), account.id, 'key.created', keyDetails(created));
    return created;
  });
  return { key: generated.key, record: toView(row) };
}

/** What the security log says of a key: which one, never the key. */
const keyDetails = (key: { id: string; prefix: string; name: string | null; kind?: string }) => ({ keyId: key.id, prefix: key.prefix, name: key.name ?? null, ...(key.kind ? { kind: key.kind } : {}) });

/** Revokes `where`'s key if it still works, with its security event in the same transaction; the key as it is now. */
async function revokeWhere(ctx: RequestContext, where: Prisma.ApiKeyWhereInput): Promise<{ id: string; accountId: string } | null> {
  return ctx.prisma.$transaction(async (tx) => {
    const key = await tx.apiKey.findFirst({ where, select: { id: true, accountId: true, prefix: true, name: true } });
    if (!key) return null;
    const { count } = await tx.apiKey.updateMany({ where: { id: key.id, revokedAt: null }, data: { revokedAt: ctx.now() } });
    if (count) await recordByContext(inTransaction(ctx, tx), key.accountId, 'key.revoked', keyDetails(key));
    return key;
  });
}

/** Every key (or one owner's), newest first. Never includes the key or its hash. */
export async function listApiKeys(ctx: RequestContext, opts: { owner?: string } = {}): Promise<ApiKeyView[]> {
  const where: Prisma.ApiKeyWhereInput = opts.owner === undefined ? {} : { account: { email: normaliseOwner(opts.owner) } };
  const rows = await ctx.prisma.apiKey.findMany({ where, select: viewSelect, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  return rows.map(toView);
}

/**
 * Revokes a key from now on. Revoking a revoked key changes nothing (the first revocation time
 * stays, so an audit sees when access really ended); an unknown id is an error.
 */
export async function revokeApiKey(ctx: RequestContext, id: string): Promise<ApiKeyView> {
  await revokeWhere(ctx, { id });
  const row = await ctx.prisma.apiKey.findUnique({ where: { id }, select: viewSelect });
  if (!row) throw new AppError('NOT_FOUND', `No API key has the id ${JSON.stringify(id)} (see \`keys list\`)`);
  return toView(row);
}


// Keys an account makes for itself in the developer dashboard. The operator's path above takes
// any plan, scope and limit; here the plan is the account's, the scopes are the self-service set,
// and an account holds at most ACTIVE_KEYS_PER_ACCOUNT keys that still work.

export const ACTIVE_KEYS_PER_ACCOUNT = 20;
/** The expiries the dashboard offers, in days (none: the key never expires). */
export const SELF_SERVICE_EXPIRY_DAYS = [7, 30, 90, 365] as const;

export interface OwnKeyInput {
  name: string;
  scopes: readonly string[];
  /** One of SELF_SERVICE_EXPIRY_DAYS, or null for no expiry. */
  expiresInDays: number | null;
  /** A publishable key: `scopes` are then ignored, its own are the catalogue's. */
  publishable?: PublishableInput;
}

export type KeyStatus = 'active' | 'revoked' | 'expired';

export function keyStatus(key: Pick<ApiKeyView, 'revokedAt' | 'expiresAt'>, now: Date = new Date()): KeyStatus {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

/** A key's settings from the dashboard's form, checked by the same rules: VALIDATION_ERROR names each field that is wrong. */
function ownKeySettings(input: OwnKeyInput, now: Date): KindColumns & { name: string; scopes: Scope[]; expiresAt: Date | null } {
  const details: Record<string, string> = {};
  const name = input.name.normalize('NFC').trim();
  const badName = nameProblem(name, true);
  if (badName) details.name = badName;
  let scopes: Scope[];
  let kind = SECRET;
  if (input.publishable) {
    ({ scopes, ...kind } = publishableSettings(input.publishable, [], details));
  } else {
    const checked = scopesOf(input.scopes, SELF_SERVICE_SCOPES);
    scopes = checked.scopes;
    if (checked.problem) details.scopes = checked.problem;
  }
  const days = input.expiresInDays;
  if (days !== null && !(SELF_SERVICE_EXPIRY_DAYS as readonly number[]).includes(days)) {
    details.expires = `must be never or in ${SELF_SERVICE_EXPIRY_DAYS.join(', ')} days`;
  }
  if (Object.keys(details).length) throw validationError(details, INVALID_KEY);
  return { name, scopes, expiresAt: days === null ? null : new Date(now.getTime() + days * 86_400_000), ...kind };
}

/**
 * Creates a key for the account with the account's plan. The account's row is locked while its
 * working keys are counted, so concurrent requests cannot together pass the limit. `step`: the
 * caller's part of the transaction (CreationStep).
 */
export async function createOwnKey(ctx: RequestContext, accountId: string, input: OwnKeyInput, step?: CreationStep): Promise<{ key: string; record: ApiKeyView }> {
  const now = ctx.now();
  const settings = ownKeySettings(input, now);
  const generated = generateApiKey(settings.kind);
  const row = await ctx.prisma.$transaction(async (tx) => {
    await step?.before(tx);
    const [account] = await tx.$queryRaw<Array<{ plan: Plan }>>`SELECT "plan" FROM "Account" WHERE "id" = ${accountId} FOR UPDATE`;
    if (!account) throw new Error(`createOwnKey: no account ${accountId}`);
    const working = await tx.apiKey.count({ where: { accountId, ...workingAt(now) } });
    if (working >= ACTIVE_KEYS_PER_ACCOUNT) {
      throw new AppError('VALIDATION_ERROR', `An account can have at most ${ACTIVE_KEYS_PER_ACCOUNT} active keys: revoke one you no longer use first`, { limit: ACTIVE_KEYS_PER_ACCOUNT });
    }
    const created = await tx.apiKey.create({
      data: {
        accountId,
        name: settings.name,
        hash: generated.hash,
        prefix: generated.prefix,
        plan: account.plan,
        scopes: settings.scopes,
        expiresAt: settings.expiresAt,
        kind: settings.kind,
        origins: settings.origins,
        allowServer: settings.allowServer,
      },
      select: viewSelect,
    });
    await step?.after(tx, created.id);
    await recordByContext(inTransaction(ctx, tx), accountId, 'key.created', keyDetails(created));
    return created;
  });
  return { key: generated.key, record: toView(row) };
}

/** Keys that still work at `now`: neither revoked nor expired. */
const workingAt = (now: Date) => ({ revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] }) satisfies Prisma.ApiKeyWhereInput;

/** The account's keys, newest first. */
export async function listOwnKeys(ctx: RequestContext, accountId: string): Promise<ApiKeyView[]> {
  const rows = await ctx.prisma.apiKey.findMany({ where: { accountId }, select: viewSelect, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  return rows.map(toView);
}

/** One of the account's keys; another account's key is null, as if it did not exist. */
export async function ownKey(ctx: RequestContext, accountId: string, keyId: string): Promise<ApiKeyView | null> {
  const row = await ctx.prisma.apiKey.findFirst({ where: { id: keyId, accountId }, select: viewSelect });
  return row ? toView(row) : null;
}

/** Revokes one of the account's keys (again: no change); another account's key is null, untouched. */
export async function revokeOwnKey(ctx: RequestContext, accountId: string, keyId: string): Promise<ApiKeyView | null> {
  await revokeWhere(ctx, { id: keyId, accountId });
  return ownKey(ctx, accountId, keyId);
}

/** The plans an account may have for the keys it creates itself in the dashboard. */
export type SelfServicePlan = Exclude<Plan, 'ENTERPRISE'>;

/**
 * Sets the plan of the keys an account creates in the dashboard from now on; keys it already has
 * keep theirs. Enterprise is refused: its limits are per key, so enterprise keys are made by an
 * operator (`keys create --plan enterprise`). An unknown e-mail is NOT_FOUND.
 */
export async function setAccountPlan(ctx: RequestContext,
  owner: string,
  plan: Plan,
): Promise<{ email: string; plan: ApiKeyView['plan']; previousPlan: ApiKeyView['plan'] }> {
  const email = normaliseOwner(owner);
  if (plan === 'ENTERPRISE') {
    throw validationError({ plan: 'has per-key limits, so it is not a dashboard plan' }, 'The enterprise plan has per-key limits, so it is not a dashboard plan: create enterprise keys with `keys create --plan enterprise --limit N --window W`');
  }
  if (!PLANS.includes(plan)) throw validationError({ plan: 'must be basic or pro' }, `Unknown plan ${JSON.stringify(plan)}: use basic or pro`);
  const before = await ctx.prisma.account.findUnique({ where: { email }, select: { id: true, plan: true } });
  if (!before) throw new AppError('NOT_FOUND', `No account has the e-mail ${JSON.stringify(email)}`);
  await ctx.prisma.$transaction(async (tx) => {
    await tx.account.update({ where: { email }, data: { plan } });
    if (before.plan !== plan) await recordByContext(inTransaction(ctx, tx), before.id, 'plan.changed', { from: lowerPlan(before.plan), to: lowerPlan(plan) });
  });
  return { email, plan: lowerPlan(plan), previousPlan: lowerPlan(before.plan) };
}
