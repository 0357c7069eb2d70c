import { LRUCache } from 'lru-cache';
import type { PrismaClient } from './db/prisma.js';

// Exact product-list totals without counting every time. Counting is what a product page costs
// most at catalogue scale (every active product's index entry is visited: ~6 ms at 100,000
// products, ten times that at 1,000,000), and the same filters come back again and again.
//
// A total is kept with the catalogue revision it was counted at. Statement triggers on "Product"
// bump that revision in the same transaction as any change that can alter a product list's total
// (prisma/migrations/*_catalog_revision), so a kept total is served only while nothing it
// depends on has changed: exact, whichever instance or tool made the change. The price is one
// primary-key read of the revision per request that needs a total.
//
// The revision number alone could come back (the row deleted and inserted again, a backup
// restored), so a total is kept under the number and the row version's xmin, the transaction that
// wrote it: a row written again never matches a total kept before.

export interface TotalsOfRequest {
  /**
   * The total for `key` (the list and its resolved filter), from `countNow` unless it was
   * counted at the current revision. Requests that miss together share one count.
   */
  count(key: string, countNow: () => Promise<number>): Promise<number>;
}

export interface ListTotals {
  /** A view for one request: the revision is read once, however many totals it asks for. */
  forRequest(): TotalsOfRequest;
}

interface Kept {
  stamp: string;
  total: number;
}

/** Different filters kept at once; each entry is a key of a few hundred bytes and a number. */
const MAX_KEPT = 10_000;

export function createListTotals(prisma: PrismaClient): ListTotals {
  const kept = new LRUCache<string, Kept>({ max: MAX_KEPT });
  const counting = new Map<string, Promise<number>>();

  // null when the row is missing (a database not migrated by us): nothing is kept then.
  const readStamp = async () => {
    const rows = await prisma.$queryRaw<{ stamp: string }[]>`
      SELECT "revision"::text || '/' || xmin::text AS stamp FROM "CatalogRevision" WHERE "id" = 1`;
    return rows[0]?.stamp ?? null;
  };

  const count = async (stamp: string | null, key: string, countNow: () => Promise<number>) => {
    if (stamp === null) return countNow();
    const known = kept.get(key);
    if (known?.stamp === stamp) return known.total;
    const id = `${stamp}\u0000${key}`;
    let pending = counting.get(id);
    if (!pending) {
      // The stamp was read before counting starts, so the count is at least as new as it. A
      // slower, older count may replace a newer one: that costs a recount, never a wrong total.
      pending = countNow()
        .then((total) => {
          kept.set(key, { stamp, total });
          return total;
        })
        .finally(() => counting.delete(id));
      counting.set(id, pending);
    }
    return pending;
  };

  return {
    forRequest() {
      let stamp: Promise<string | null> | undefined;
      return {
        count: async (key, countNow) => count(await (stamp ??= readStamp()), key, countNow),
      };
    },
  };
}
