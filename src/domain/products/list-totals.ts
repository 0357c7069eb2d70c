import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { readDirect, type PrismaClient } from '../../db/prisma.js';
import type { ListedCondition } from '../../db/catalog-changes.js';
import { coalescedRead } from '../../shared/coalesced-read.js';
import type { TotalsOfRequest } from '../../context/context.js';

// Exact product-list totals without counting every matching product each time. Counting is what
// a product page costs most at catalogue scale: every match is visited, ~6 ms for all active
// products at 100,000, ~0.8 s for a common search word at 1,000,000 (BENCHMARKS.md).
//
// A total is kept with the catalogue revision it is exact at. Statement triggers on "Product"
// bump the revision in the same transaction as any change that can alter a list's total and log
// each product leaving (-1) or entering (+1) the catalogue under it, with the columns lists
// filter on (prisma/migrations/*_catalog_changes). A total kept at revision r is carried to the
// current revision R by adding the logged changes in (r, R] that match its filter: exact,
// whichever instance or tool made the change, at the price of reading a few log rows.
//
// Totals are kept in memory and saved in "ListTotal", so another instance, or this one after a
// restart, carries them on instead of counting again. Saving is out of the request's way: a GET
// writes nothing itself (it may be served by a read replica); the totals it brought up to date
// are written together every FLUSH_MS, and when the service stops. A count is needed only for a filter never
// counted before, or when the log no longer reaches back to the kept revision (it keeps the last
// 1,000 revisions; a statement changing more than 1,000 products is not logged at all).
//
// The revision row's epoch is drawn anew whenever the row is inserted (restored from a backup,
// put back by hand), so totals kept under another lineage are never carried over.

export interface ListTotals {
  /**
   * A view for one request: the revision is read once per client, however many totals it asks
   * for. `reader` is the client the request reads with (a read replica's, or the primary's, as the
   * request's reads were routed: src/db/replicas.ts); totals brought up to date through a replica
   * are kept in memory but not saved, so that the primary sees no write from catalogue reads.
   */
  forRequest(reader?: () => PrismaClient): TotalsOfRequest;
  /** Saves the totals not saved yet (waits for a save under way). */
  flush(): Promise<void>;
  /** Stops the periodic save, after a last one. */
  close(): Promise<void>;
}

/** Where the catalogue is: its lineage, its revision, and how far back its change log reaches. */
interface Catalogue {
  epoch: string;
  revision: bigint;
  changesFrom: bigint;
}

/** A total, exact at a revision of a lineage. */
interface Kept {
  epoch: string;
  revision: bigint;
  total: number;
}

/** Different filters kept in memory at once; each is a 43-character key and a few numbers. */
const MAX_KEPT = 10_000;
/** Saved totals not brought up to date for this long are deleted (every SAVES_PER_PRUNE saves). */
const SAVED_FOR_MS = 24 * 60 * 60 * 1000;
const SAVES_PER_PRUNE = 1_000;
/** How often the totals brought up to date since the last save are saved, together. */
export const FLUSH_MS = 1_000;

interface CatalogueRow {
  epoch: string;
  revision: string;
  changesFrom: string;
}

const READ_CATALOGUE = `SELECT "epoch"::text AS epoch, "revision"::text AS revision, "changesFrom"::text AS "changesFrom"
  FROM "CatalogRevision" WHERE "id" = 1`;

const toCatalogue = (rows: CatalogueRow[]): Catalogue | null => {
  const row = rows[0];
  return row ? { epoch: row.epoch, revision: BigInt(row.revision), changesFrom: BigInt(row.changesFrom) } : null;
};

const keyOf = (conditions: ListedCondition[]) => createHash('sha256').update(JSON.stringify(conditions)).digest('base64url');

export function createListTotals(prisma: PrismaClient, log: (error: unknown) => void = () => undefined): ListTotals {
  const kept = new LRUCache<string, Kept>({ max: MAX_KEPT });
  const pending = new Map<string, Promise<number>>();
  /** Totals brought up to date and not saved yet, by key (the newest of each). */
  let unsaved = new Map<string, Kept>();
  let saving: Promise<void> = Promise.resolve();
  let saves = 0;

  // null when the row is missing (a database not migrated by us): every total is counted then.
  // Read with every list request: past Prisma where it can be (its raw query costs several times the statement's own CPU).
  const readCatalogue = async (db: PrismaClient) => {
    const direct = await readDirect(db, READ_CATALOGUE, []);
    if (!direct) return toCatalogue(await db.$queryRawUnsafe<CatalogueRow[]>(READ_CATALOGUE));
    return toCatalogue(direct.map(([epoch, revision, changesFrom]) => ({ epoch, revision, changesFrom }) as CatalogueRow));
  };

  // Concurrent requests share a read of each client's revision (one begun after they asked).
  const catalogueReads = new WeakMap<PrismaClient, () => Promise<Catalogue | null>>();
  const catalogueOf = (db: PrismaClient) => {
    let read = catalogueReads.get(db);
    if (!read) catalogueReads.set(db, (read = coalescedRead(() => readCatalogue(db))));
    return read;
  };

  const countProducts = (db: PrismaClient, conditions: ListedCondition[]) => db.product.count({ where: { AND: conditions } });

  /** Counted in one snapshot with the revision it is exact at. */
  const countNow = async (db: PrismaClient, conditions: ListedCondition[]): Promise<{ at: Catalogue | null; total: number }> => {
    const [rows, total] = await db.$transaction(
      [db.$queryRawUnsafe<CatalogueRow[]>(READ_CATALOGUE), countProducts(db, conditions)],
      { isolationLevel: 'RepeatableRead' },
    );
    return { at: toCatalogue(rows), total };
  };

  /** The net number of matching products that entered the catalogue after `from`, up to `to`. */
  const changesBetween = async (db: PrismaClient, conditions: ListedCondition[], from: bigint, to: bigint) => {
    const { _sum } = await db.catalogChange.aggregate({
      _sum: { sign: true },
      where: { AND: [...conditions, { revision: { gt: from, lte: to } }] },
    });
    return _sum.sign ?? 0;
  };

  const loadSaved = (db: PrismaClient, key: string): Promise<Kept | null> =>
    db.listTotal.findUnique({ where: { key }, select: { epoch: true, revision: true, total: true } });

  // One statement for every unsaved total (no transaction around it: it may land between a
  // request's statements). A slower instance never overwrites a newer total with an older one. A
  // saved total is only a cache: one lost in a crash costs a count, so the save does not wait for
  // the disk (synchronous_commit off for this statement's own transaction).
  const saveAll = async (totals: Map<string, Kept>) => {
    const rows = [...totals];
    await prisma.$executeRawUnsafe(
      `INSERT INTO "ListTotal" ("key", "epoch", "revision", "total", "savedAt")
       SELECT s.k, s.e::uuid, s.r::bigint, s.t, now()
         FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS s(k, e, r, t)
         CROSS JOIN (SELECT set_config('synchronous_commit', 'off', true)) AS no_wait
       ON CONFLICT ("key") DO UPDATE SET "epoch" = EXCLUDED."epoch", "revision" = EXCLUDED."revision",
         "total" = EXCLUDED."total", "savedAt" = EXCLUDED."savedAt"
       WHERE "ListTotal"."epoch" <> EXCLUDED."epoch" OR "ListTotal"."revision" < EXCLUDED."revision"`,
      rows.map(([key]) => key),
      rows.map(([, k]) => k.epoch),
      rows.map(([, k]) => String(k.revision)),
      rows.map(([, k]) => k.total),
    );
    saves += rows.length;
    if (saves >= SAVES_PER_PRUNE) {
      saves = 0;
      await prisma.listTotal.deleteMany({ where: { savedAt: { lt: new Date(Date.now() - SAVED_FOR_MS) } } });
    }
  };

  const flush = () => {
    saving = saving.then(async () => {
      if (!unsaved.size) return;
      const totals = unsaved;
      unsaved = new Map();
      await saveAll(totals).catch(log);
    });
    return saving;
  };
  const timer = setInterval(() => void flush(), FLUSH_MS);
  timer.unref();

  /** A kept total the change log can bring up to date, or null. */
  const carriable = (k: Kept | null | undefined, now: Catalogue) =>
    k && k.epoch === now.epoch && k.revision >= now.changesFrom ? k : null;

  const bringUpToDate = async (db: PrismaClient, now: Catalogue, key: string, conditions: ListedCondition[], known: Kept | undefined) => {
    const base = carriable(known, now) ?? carriable(await loadSaved(db, key), now);
    let current: Kept;
    if (base && base.revision >= now.revision) {
      // Already as new as this request's view of the catalogue (or newer: another request's).
      current = base;
    } else if (base) {
      const added = await changesBetween(db, conditions, base.revision, now.revision);
      current = { epoch: now.epoch, revision: now.revision, total: base.total + added };
    } else {
      const { at, total } = await countNow(db, conditions);
      if (!at) return total;
      current = { epoch: at.epoch, revision: at.revision, total };
    }
    kept.set(key, current);
    if (current !== base && db === prisma) unsaved.set(key, current);
    return current.total;
  };

  const products = async (db: PrismaClient, now: Catalogue | null, conditions: ListedCondition[]) => {
    if (!now) return countProducts(db, conditions);
    const key = keyOf(conditions);
    const known = kept.get(key);
    if (known && known.epoch === now.epoch && known.revision === now.revision) return known.total;
    const id = `${now.epoch}/${now.revision}/${key}`;
    let total = pending.get(id);
    if (!total) {
      total = bringUpToDate(db, now, key, conditions, known).finally(() => pending.delete(id));
      pending.set(id, total);
    }
    return total;
  };

  return {
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
    forRequest(reader = () => prisma) {
      // Per client: a read that fell back from a replica to the primary reads the primary's revision.
      const catalogue = new Map<PrismaClient, Promise<Catalogue | null>>();
      return {
        products: async (conditions) => {
          const db = reader();
          let at = catalogue.get(db);
          if (!at) catalogue.set(db, (at = catalogueOf(db)()));
          return products(db, await at, conditions);
        },
      };
    },
  };
}
