import type { PrismaClient } from '../db/prisma.js';
import { AppError } from '../shared/errors.js';
import type { Caller } from './identity.js';

// Acting for a supplier (keys CLI `member`): the supplier a key's account is a member of is what
// its supplier-side operations may see and change (its orders, its products' stock and prices).
// Read once per request, on the request's first need, and never kept longer: a membership removed
// by the CLI holds for the very next request on every instance.

interface Asker {
  prisma: PrismaClient;
  caller: Caller;
}

const perRequest = new WeakMap<Asker, Promise<string | null>>();

/** The id of the supplier the caller's account acts for, or null (no key, or not a member). */
export function memberSupplierId(ctx: Asker): Promise<string | null> {
  const { caller } = ctx;
  if (caller.kind !== 'key') return Promise.resolve(null);
  let found = perRequest.get(ctx);
  if (!found) {
    found = ctx.prisma.supplierMember
      .findUnique({ where: { accountId: caller.accountId }, select: { supplierId: true } })
      .then((m) => m?.supplierId ?? null);
    perRequest.set(ctx, found);
  }
  return found;
}

/** The caller's supplier; 403 FORBIDDEN when its account acts for none. */
export async function requireMembership(ctx: Asker): Promise<string> {
  const supplierId = await memberSupplierId(ctx);
  if (supplierId === null) {
    throw new AppError('FORBIDDEN', 'The account behind this API key does not act for a supplier', { requiredMembership: 'supplier' });
  }
  return supplierId;
}
