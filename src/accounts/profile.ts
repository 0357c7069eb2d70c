// An account's own data as the account sees and edits it: its profile and its saved addresses.
// The dashboard (forms) and the API (`me`) both come through here, so the rules hold for both.
// Every function is scoped to one account: another account's address is exactly as absent as one
// that never existed, and is never read or changed.

import type { CreationStep, RequestContext } from '../context/context.js';
import { z } from 'zod';
import type { PrismaClient } from '../db/prisma.js';
import type { Account, Address, Prisma } from '../generated/prisma/client.js';
import { AppError, formError } from '../shared/errors.js';
import { emailText, nameText } from '../shared/text.js';
import { fieldPath, idParam } from '../shared/validation.js';

export const MAX_ADDRESSES = 50;

// ----- input rules -----

const PHONE_CHARS = /^[0-9+()./\- ]+$/;

/** Trimmed one-line text of `min`–`max` characters (names and address lines alike: shown to others). */
const text = nameText;

/** Optional text: absent stays absent (unchanged), empty or null becomes null (cleared). */
const optional = <S extends z.ZodType<string>>(schema: S) =>
  z.preprocess((v) => (v === null || (typeof v === 'string' && v.trim() === '') ? null : v), schema.nullable()).optional();

const phone = text(1, 40).refine((v) => PHONE_CHARS.test(v) && /\d/.test(v), 'must be a phone number: digits, spaces and + ( ) . / -');
const email = emailText();

/** A profile edit: each field given is set, each left out is kept. */
export const profileInput = z.object({
  name: text(1, 100).optional(),
  companyName: optional(text(1, 200)),
  phone: optional(phone),
});
export type ProfileInput = z.input<typeof profileInput>;

/** An address as a form sends it whole. `isDefault` left out: false for a new one, kept for an edit. */
export const addressInput = z.object({
  label: z.preprocess((v) => v ?? '', text(0, 50)).optional(),
  fullName: text(1, 100),
  companyName: optional(text(1, 200)),
  phone,
  email: optional(email),
  address: text(1, 200),
  city: text(1, 100),
  county: text(1, 100),
  postalCode: text(1, 20),
  isDefault: z.boolean({ error: 'must be true or false' }).optional(),
});
export type AddressInput = z.input<typeof addressInput>;

/** Parses with `schema`, or throws a VALIDATION_ERROR naming each bad field (its first problem). */
function parseForm<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const given = (input ?? {}) as Record<PropertyKey, unknown>;
  const result = schema.safeParse(given);
  if (result.success) return result.data;
  const fields: Record<string, string> = {};
  for (const issue of result.error.issues) {
    const at = fieldPath(issue.path) || 'form';
    const missing = issue.code === 'invalid_type' && issue.path.length === 1 && given[issue.path[0]!] == null;
    fields[at] ??= missing ? 'is required' : issue.message;
  }
  throw formError(fields);
}

// ----- saving only what changes -----

/** The columns of a row type that may hold NULL. */
type NullableColumn<Row> = { [K in keyof Row]-?: null extends Row[K] ? K : never }[keyof Row];

/** Every column a form sets that may hold NULL: used with `satisfies`, the list cannot fall behind the schema. */
type NullableOf<Row, Data> = Record<NullableColumn<Row> & keyof Data, true>;

/**
 * A filter that matches a row only when a column `data` sets holds another value, so that an
 * UPDATE behind it writes nothing for a save that changes nothing: the row's updatedAt stays, and
 * the row's trigger does not bump the data revision (every bump makes each answer the response
 * cache keeps stale, for every caller). SQL's `<>` never matches NULL, so a nullable column also
 * differs when it holds NULL and the value is not. `data` setting nothing matches no row.
 */
function differsFrom<Where>(data: Record<string, unknown>, nullable: Readonly<Record<string, true>>): Where {
  const differs = Object.entries(data)
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => {
      if (value === null) return { [column]: { not: null } };
      const other = { [column]: { not: value } };
      return Object.hasOwn(nullable, column) ? { OR: [other, { [column]: null }] } : other;
    });
  return { OR: differs } as Where;
}

// ----- the profile -----

/** What is shown of an account, in the dashboard and the API alike: never its password hash. */
export const PROFILE_SELECT = {
  id: true,
  email: true,
  name: true,
  companyName: true,
  phone: true,
  plan: true,
  createdAt: true,
} satisfies Prisma.AccountSelect;

export type AccountProfile = Prisma.AccountGetPayload<{ select: typeof PROFILE_SELECT }>;

/** The account's profile, or null when there is no such account. */
export async function accountProfile(ctx: RequestContext, accountId: string): Promise<AccountProfile | null> {
  return ctx.prisma.account.findUnique({ where: { id: accountId }, select: PROFILE_SELECT });
}

/**
 * Changes the fields of the profile that `input` gives (name 1–100; companyName ≤ 200 and phone
 * ≤ 40, empty clears them). Throws VALIDATION_ERROR for bad input; null when there is no such account.
 */
export async function updateProfile(ctx: RequestContext, accountId: string, input: ProfileInput): Promise<AccountProfile | null> {
  const data = parseForm(profileInput, input);
  // Writes only a change; whether the account exists is the read's to tell, as the update's count
  // is 0 for an unchanged profile too.
  await ctx.prisma.account.updateMany({ where: { id: accountId, ...differsFrom<Prisma.AccountWhereInput>(data, PROFILE_NULLABLE) }, data });
  return accountProfile(ctx, accountId);
}

const PROFILE_NULLABLE = { companyName: true, phone: true } satisfies NullableOf<Account, z.output<typeof profileInput>>;

// ----- addresses -----

const ADDRESS_SELECT = {
  id: true,
  label: true,
  fullName: true,
  companyName: true,
  phone: true,
  email: true,
  address: true,
  city: true,
  county: true,
  postalCode: true,
  isDefault: true,
  createdAt: true,
} satisfies Prisma.AddressSelect;

/** A saved address as the dashboard and the API read it: the columns of ADDRESS_SELECT. */
export type SavedAddress = Prisma.AddressGetPayload<{ select: typeof ADDRESS_SELECT }>;

/** How an account's addresses are listed, wherever they are: the default first, then oldest first. */
export const ADDRESS_ORDER = [{ isDefault: 'desc' }, { createdAt: 'asc' }, { id: 'asc' }] satisfies Prisma.AddressOrderByWithRelationInput[];

export async function listAddresses(ctx: RequestContext, accountId: string): Promise<SavedAddress[]> {
  return ctx.prisma.address.findMany({ where: { accountId }, orderBy: ADDRESS_ORDER, select: ADDRESS_SELECT });
}

/** One of the account's addresses; null for another account's, or an id that names nothing. */
export async function addressOf(ctx: RequestContext, accountId: string, id: string): Promise<SavedAddress | null> {
  if (!idParam.safeParse(id).success) return null;
  return ctx.prisma.address.findFirst({ where: { id, accountId }, select: ADDRESS_SELECT });
}

type Tx = Prisma.TransactionClient;

/**
 * Runs `write` in a transaction holding the account's row, so that the account's address writes
 * happen one at a time: the count limit and "one default" then hold under concurrent requests.
 * NO KEY UPDATE leaves the row's key free: orders and keys referencing the account are not held up.
 * A creation's `step` begins before the lock, as in the other creating services.
 */
async function withAccountLocked<T>(ctx: RequestContext, accountId: string, write: (tx: Tx) => Promise<T>, step?: CreationStep): Promise<T> {
  return ctx.prisma.$transaction(async (tx) => {
    await step?.before(tx);
    const rows = await tx.$queryRaw<unknown[]>`SELECT 1 FROM "Account" WHERE id = ${accountId} FOR NO KEY UPDATE`;
    if (rows.length === 0) throw new Error(`No account ${accountId}`);
    return write(tx);
  });
}

/** Making one address the default makes every other address of the account not the default. */
const clearOtherDefaults = (tx: Tx, accountId: string, keep: string) =>
  tx.address.updateMany({ where: { accountId, isDefault: true, id: { not: keep } }, data: { isDefault: false } });

/**
 * Saves a new address (at most MAX_ADDRESSES per account). Throws VALIDATION_ERROR for bad input or a
 * full book. `step`: the caller's part of the transaction (CreationStep).
 */
export async function createAddress(ctx: RequestContext, accountId: string, input: AddressInput, step?: CreationStep): Promise<SavedAddress> {
  const data = parseForm(addressInput, input);
  return withAccountLocked(ctx, accountId, async (tx) => {
    if ((await tx.address.count({ where: { accountId } })) >= MAX_ADDRESSES) {
      throw new AppError('VALIDATION_ERROR', `An account can save at most ${MAX_ADDRESSES} addresses: delete one first`, { limit: MAX_ADDRESSES });
    }
    const created = await tx.address.create({ data: { ...data, isDefault: data.isDefault ?? false, accountId }, select: ADDRESS_SELECT });
    if (created.isDefault) await clearOtherDefaults(tx, accountId, created.id);
    await step?.after(tx, created.id);
    return created;
  }, step);
}

/** Replaces one of the account's addresses with `input`; null (nothing changed) when it is not the account's. */
export async function updateAddress(ctx: RequestContext, accountId: string, id: string, input: AddressInput): Promise<SavedAddress | null> {
  const data = parseForm(addressInput, input);
  if (!idParam.safeParse(id).success) return null;
  return withAccountLocked(ctx, accountId, async (tx) => {
    // Writes only a change (differsFrom): the read tells an unchanged address from another account's.
    await tx.address.updateMany({ where: { id, accountId, ...differsFrom<Prisma.AddressWhereInput>(data, ADDRESS_NULLABLE) }, data });
    const saved = await tx.address.findFirst({ where: { id, accountId }, select: ADDRESS_SELECT });
    if (!saved) return null;
    if (data.isDefault) await clearOtherDefaults(tx, accountId, id);
    return saved;
  });
}

const ADDRESS_NULLABLE = { companyName: true, email: true } satisfies NullableOf<Address, z.output<typeof addressInput>>;

/** Deletes one of the account's addresses: false (nothing deleted) when it is not the account's. */
export async function deleteAddress(ctx: RequestContext, accountId: string, id: string): Promise<boolean> {
  if (!idParam.safeParse(id).success) return false;
  const { count } = await ctx.prisma.address.deleteMany({ where: { id, accountId } });
  return count > 0;
}
