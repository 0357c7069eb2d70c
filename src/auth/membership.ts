import { accountOf } from '../context/actor.js';
import type { RequestContext } from '../context/context.js';
import { requestLoader } from '../context/loaders.js';
import { AppError } from '../shared/errors.js';

// Acting for a supplier (keys CLI `member`): the supplier a key's account (or the signed-in
// owner's) is a member of is what its supplier-side operations may see and change (its orders,
// its products' stock and prices). Read once per request, through the request's loader, on its
// first need, and never kept longer: a membership removed by the CLI holds for the very next
// request on every instance.

export interface Membership {
  supplierId: string;
  companyName: string;
}

/** The supplier the actor's account acts for, or null (no account, or not a member). */
export function membershipOf(ctx: RequestContext): Promise<Membership | null> {
  const accountId = accountOf(ctx.actor);
  if (accountId === null) return Promise.resolve(null);
  return requestLoader<string, Membership | null>(ctx, 'membership', async (accountIds) => {
    const rows = await ctx.prisma.supplierMember.findMany({
      where: { accountId: { in: [...accountIds] } },
      select: { accountId: true, supplierId: true, supplier: { select: { companyName: true } } },
    });
    const byAccount = new Map(rows.map((m) => [m.accountId, { supplierId: m.supplierId, companyName: m.supplier.companyName }]));
    return accountIds.map((id) => byAccount.get(id) ?? null);
  }).load(accountId);
}

/** The id of the supplier the actor's account acts for, or null. */
export const memberSupplierId = async (ctx: RequestContext): Promise<string | null> => (await membershipOf(ctx))?.supplierId ?? null;

/** The actor's supplier; 403 FORBIDDEN when its account acts for none. */
export async function requireMembership(ctx: RequestContext): Promise<string> {
  const supplierId = await memberSupplierId(ctx);
  if (supplierId === null) {
    throw new AppError('FORBIDDEN', 'The account behind this API key does not act for a supplier', { requiredMembership: 'supplier' });
  }
  return supplierId;
}
