// Accounts acting for a supplier (keys CLI `member`): who may, with their API keys, read and move
// the supplier's orders and write its stock and prices. What a membership allows per request is
// src/auth/membership.ts; this module only makes, ends and lists memberships.

import { inTransaction, type RequestContext } from '../context/context.js';
import type { PrismaClient } from '../db/prisma.js';
import type { Prisma } from '../generated/prisma/client.js';
import { normaliseOwner } from './api-keys.js';
import { recordByContext } from './security-log.js';
import { AppError } from '../shared/errors.js';

/** One membership as shown (list rows, and the subject of add/remove). */
export interface MembershipView {
  /** The member account's e-mail. */
  email: string;
  accountId: string;
  supplierId: string;
  /** The supplier's company name. */
  supplierName: string;
  /** When the account became a member. */
  since: Date;
}

export interface AddMemberResult extends MembershipView {
  /** False when the account already acted for this supplier: nothing changed. */
  added: boolean;
  /** True when no account had the e-mail and one was made for it. */
  accountCreated: boolean;
}

export interface RemoveMemberResult {
  email: string;
  accountId: string;
  /** The membership that ended, or null when the account acted for no supplier (nothing changed). */
  removed: MembershipView | null;
}

const memberSelect = {
  accountId: true,
  supplierId: true,
  createdAt: true,
  account: { select: { email: true } },
  supplier: { select: { companyName: true } },
} as const satisfies Prisma.SupplierMemberSelect;

type MemberRow = Prisma.SupplierMemberGetPayload<{ select: typeof memberSelect }>;

function toView(row: MemberRow): MembershipView {
  return { email: row.account.email, accountId: row.accountId, supplierId: row.supplierId, supplierName: row.supplier.companyName, since: row.createdAt };
}

const describeSupplier = (id: string, name: string) => `${id} (${name})`;

/**
 * Makes the account with this e-mail (created if there is none, as `keys create` does) a member of
 * the supplier. Refused (NOT_FOUND, CONFLICT), changing nothing (no account is created either): an
 * unknown or inactive supplier, or an account already acting for another supplier. Already a
 * member of this one: nothing changes (`added: false`).
 */
export async function addMember(ctx: RequestContext, owner: string, supplierId: string): Promise<AddMemberResult> {
  const email = normaliseOwner(owner);
  return ctx.prisma.$transaction(async (tx) => {
    // FOR SHARE: the supplier can be neither deleted nor deactivated until this commits, so what
    // was checked is what the membership is made for.
    const [supplier] = await tx.$queryRaw<Array<{ companyName: string; isActive: boolean }>>`
      SELECT "companyName", "isActive" FROM "Supplier" WHERE "id" = ${supplierId} FOR SHARE`;
    if (!supplier) throw new AppError('NOT_FOUND', `No supplier has the id ${JSON.stringify(supplierId)}`);
    if (!supplier.isActive) {
      // An inactive supplier is hidden from the catalogue and takes no orders: nothing for a
      // member to run. Members it had before it was deactivated are kept (`member remove` ends them).
      throw new AppError('CONFLICT', `The supplier ${describeSupplier(supplierId, supplier.companyName)} is inactive (hidden from the catalogue): it takes no new members`);
    }
    // INSERT … ON CONFLICT DO NOTHING, then read (as createApiKey does): concurrent commands agree
    // on one account, and on one membership, since the second insert waits for the first to commit.
    const { count: accountsMade } = await tx.account.createMany({ data: [{ email }], skipDuplicates: true });
    const account = await tx.account.findUniqueOrThrow({ where: { email }, select: { id: true } });
    const { count: membersMade } = await tx.supplierMember.createMany({ data: [{ accountId: account.id, supplierId }], skipDuplicates: true });
    const member = await tx.supplierMember.findUniqueOrThrow({ where: { accountId: account.id }, select: memberSelect });
    if (member.supplierId !== supplierId) {
      // Throwing rolls the transaction back: no account is left behind by a refused command.
      throw new AppError(
        'CONFLICT',
        `${email} already acts for the supplier ${describeSupplier(member.supplierId, member.supplier.companyName)}, and an account acts for one supplier at most: ` +
          `end that first with \`keys member remove --owner ${email}\``,
      );
    }
    if (membersMade === 1) await recordByContext(inTransaction(ctx, tx), account.id, 'member.added', { supplierId, supplier: supplier.companyName });
    return { ...toView(member), added: membersMade === 1, accountCreated: accountsMade === 1 };
  });
}

/**
 * Ends the membership of the account with this e-mail; its keys lose the supplier's orders, stock
 * and prices from the next request on. An account that is no member: nothing changes
 * (`removed: null`). An unknown e-mail is NOT_FOUND, so a typo does not pass for success.
 */
export async function removeMember(ctx: RequestContext, owner: string): Promise<RemoveMemberResult> {
  const email = normaliseOwner(owner);
  return ctx.prisma.$transaction(async (tx) => {
    const account = await tx.account.findUnique({ where: { email }, select: { id: true } });
    if (!account) throw new AppError('NOT_FOUND', `No account has the e-mail ${JSON.stringify(email)}`);
    const member = await tx.supplierMember.findUnique({ where: { accountId: account.id }, select: memberSelect });
    // Conditional on the supplier read: a concurrent remove-then-add is not undone unseen.
    const { count } = member ? await tx.supplierMember.deleteMany({ where: { accountId: account.id, supplierId: member.supplierId } }) : { count: 0 };
    if (member && count === 1) {
      await recordByContext(inTransaction(ctx, tx), account.id, 'member.removed', { supplierId: member.supplierId, supplier: member.supplier.companyName });
    }
    return { email, accountId: account.id, removed: member && count === 1 ? toView(member) : null };
  });
}

/** Memberships (of one supplier, or all), by supplier (company name, then id), then e-mail. */
export async function listMembers(ctx: RequestContext, opts: { supplierId?: string } = {}): Promise<MembershipView[]> {
  const rows = await ctx.prisma.supplierMember.findMany({
    where: opts.supplierId === undefined ? {} : { supplierId: opts.supplierId },
    select: memberSelect,
    orderBy: [{ supplier: { companyName: 'asc' } }, { supplierId: 'asc' }, { account: { email: 'asc' } }],
  });
  return rows.map(toView);
}
