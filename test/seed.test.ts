import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COUNTY_OF_CITY } from '../src/seed/data/geo.js';
import { SEED_BASE_DATE, SeedConflictError, demoProductId, seedDatabase, type SeedSummary } from '../src/seed/seed.js';
import { isValidCui } from '../src/rules/cui.js';
import { productSearchText, searchKey, supplierSearchText } from '../src/domain/products/search.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { entryArgs } from './helpers/entry.js';
import { unusedPort } from './helpers/processes.js';

// Primary key of every table, to hash each table's rows in a stable order.
const TABLE_KEYS: Record<string, string> = {
  Category: '"id"',
  Supplier: '"id"',
  Product: '"id"',
  Review: '"id"',
  Favorite: '"accountId", "productId"',
  Account: '"id"',
  Address: '"id"',
  Coupon: '"id"',
  ApiKey: '"id"',
  Order: '"id"',
  OrderItem: '"id"',
  IdempotencyRecord: '"id"',
};

type Snapshot = Record<string, { rows: number; md5: string }>;

const databases: TestDatabase[] = [];

async function freshDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase('migrated');
  databases.push(db);
  return db;
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

async function snapshot(url: string): Promise<Snapshot> {
  const result: Snapshot = {};
  for (const [table, key] of Object.entries(TABLE_KEYS)) {
    const [row] = await query<{ rows: number; md5: string }>(
      url,
      `SELECT count(*)::int AS rows, md5(coalesce(string_agg(t::text, E'\\n' ORDER BY ${key}), '')) AS md5 FROM "${table}" t`,
    );
    result[table] = row!;
  }
  return result;
}

afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
});

describe('seedDatabase: determinism and top-up', () => {
  let a: TestDatabase;
  let b: TestDatabase;
  let other: TestDatabase;
  let direct: TestDatabase;
  let first: SeedSummary;

  beforeAll(async () => {
    [a, b, other, direct] = await Promise.all([freshDatabase(), freshDatabase(), freshDatabase(), freshDatabase()]);
    first = await seedDatabase(a.url, { seed: 42, products: 300 });
    await seedDatabase(b.url, { seed: 42, products: 300 });
    await seedDatabase(other.url, { seed: 7, products: 300 });
    await seedDatabase(direct.url, { seed: 42, products: 500 });
  });

  it('reports what it inserted', () => {
    expect(first.productsBefore).toBe(0);
    expect(first.productsRequested).toBe(300);
    expect(first.inserted.products).toBe(300);
    expect(first.inserted.categories).toBeGreaterThanOrEqual(8 * 4);
    expect(first.inserted.suppliers).toBeGreaterThanOrEqual(40);
    expect(first.inserted.reviews).toBeGreaterThan(0);
    expect(first.inserted.coupons).toBeGreaterThan(0);
  });

  it('writes identical rows in every table for the same seed', async () => {
    const [sa, sb] = await Promise.all([snapshot(a.url), snapshot(b.url)]);
    expect(sa).toEqual(sb);
    expect(sa.Product!.rows).toBe(300);
  });

  it('writes different rows for another seed', async () => {
    const [sa, so] = await Promise.all([snapshot(a.url), snapshot(other.url)]);
    for (const table of ['Category', 'Supplier', 'Product', 'Review']) expect(so[table]!.md5, table).not.toBe(sa[table]!.md5);
    const ids = await query<{ id: string }>(other.url, 'SELECT id FROM "Product" WHERE id = $1', [demoProductId(42, 0)]);
    expect(ids).toEqual([]);
  });

  it('tops 300 products up to 500, ending identical to a direct 500 seed', async () => {
    const progress: [number, number][] = [];
    const summary = await seedDatabase(b.url, { seed: 42, products: 500, onProgress: (done, total) => progress.push([done, total]) });
    expect(summary.productsBefore).toBe(300);
    expect(summary.inserted).toMatchObject({ products: 200, categories: 0, suppliers: 0, accounts: 0, addresses: 0, coupons: 0 });
    expect(progress[0]).toEqual([300, 500]);
    expect(progress.at(-1)).toEqual([500, 500]);
    expect(await snapshot(b.url)).toEqual(await snapshot(direct.url));
  });

  it('changes nothing when the database already holds at least the requested products', async () => {
    const before = await snapshot(direct.url);
    for (const products of [500, 400, 0]) {
      const summary = await seedDatabase(direct.url, { seed: 42, products });
      expect(Object.values(summary.inserted).every((n) => n === 0)).toBe(true);
    }
    expect(await snapshot(direct.url)).toEqual(before);
  });

  it('fills the gaps an interrupted run can leave in its last batches', async () => {
    // Parallel batches can commit out of order: a crash may leave holes just below the highest
    // seeded product. Simulated by deleting some (reviews and favorites go with them).
    const holes = [3, 150, 290, 299].map((i) => demoProductId(42, i));
    await query(a.url, 'DELETE FROM "Product" WHERE id = ANY($1)', [holes]);
    const summary = await seedDatabase(a.url, { seed: 42, products: 500 });
    expect(summary.inserted.products).toBe(204);
    expect(await snapshot(a.url)).toEqual(await snapshot(direct.url));
  });

  it('refuses to mix another seed into a seeded database', async () => {
    const before = await snapshot(other.url);
    await expect(seedDatabase(other.url, { seed: 42, products: 10 })).rejects.toBeInstanceOf(SeedConflictError);
    expect(await snapshot(other.url)).toEqual(before);
  });

  it('rejects invalid options', async () => {
    await expect(seedDatabase(a.url, { seed: -1, products: 1 })).rejects.toBeInstanceOf(RangeError);
    await expect(seedDatabase(a.url, { seed: 1.5, products: 1 })).rejects.toBeInstanceOf(RangeError);
    await expect(seedDatabase(a.url, { seed: 42, products: -1 })).rejects.toBeInstanceOf(RangeError);
    await expect(seedDatabase(a.url, { seed: 42, products: Number.NaN })).rejects.toBeInstanceOf(RangeError);
  });
});

describe('seeded catalogue (seed 42, 1200 products)', () => {
  let url: string;

  beforeAll(async () => {
    const db = await freshDatabase();
    url = db.url;
    await seedDatabase(url, { seed: 42, products: 1200 });
  });

  it('has at least 8 top-level categories, each with 3 to 6 subcategories, one or two inactive', async () => {
    const rows = await query<{ id: string; name: string; nameEn: string; slug: string; description: string; image: string | null; parentId: string | null; isActive: boolean; order: number }>(
      url,
      'SELECT * FROM "Category"',
    );
    const top = rows.filter((c) => c.parentId === null);
    expect(top.length).toBeGreaterThanOrEqual(8);
    for (const t of top) {
      const children = rows.filter((c) => c.parentId === t.id);
      expect(children.length, t.name).toBeGreaterThanOrEqual(3);
      expect(children.length, t.name).toBeLessThanOrEqual(6);
      expect(new Set(children.map((c) => c.order)).size, t.name).toBe(children.length);
    }
    // Two levels only.
    const topIds = new Set(top.map((t) => t.id));
    expect(rows.every((c) => c.parentId === null || topIds.has(c.parentId))).toBe(true);
    const inactive = rows.filter((c) => !c.isActive);
    expect(inactive.length).toBeGreaterThanOrEqual(1);
    expect(inactive.length).toBeLessThanOrEqual(2);
    expect(inactive.every((c) => c.parentId !== null)).toBe(true);
    for (const c of rows) {
      expect(c.slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(c.slug).toBe(searchKey(c.name).replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, ''));
      expect(c.nameEn).toMatch(/^[\x20-\x7e]+$/);
      expect(c.description.length).toBeGreaterThan(20);
      expect(c.image).toMatch(/^https:\/\/images\.example\.com\/\S+$/);
    }
    expect(rows.filter((c) => /[ăâîșțĂÂÎȘȚ]/.test(c.name)).length).toBeGreaterThan(rows.length / 3);
  });

  it('has at least 40 suppliers with valid CUIs, matching counties and search keys', async () => {
    const rows = await query<{
      companyName: string;
      cui: string;
      city: string;
      county: string;
      cityKey: string;
      countyKey: string;
      searchText: string;
      description: string;
      phone: string;
      email: string;
      website: string;
      logo: string;
      verified: boolean;
      isActive: boolean;
      rating: string;
      shippingFee: string;
      freeShippingThreshold: string | null;
    }>(url, 'SELECT * FROM "Supplier"');
    expect(rows.length).toBeGreaterThanOrEqual(40);
    for (const s of rows) {
      expect(isValidCui(s.cui), s.cui).toBe(true);
      expect(s.cui).toMatch(/^[1-9]\d{1,9}$/);
      expect(COUNTY_OF_CITY.get(s.city), s.city).toBe(s.county);
      expect(s.cityKey).toBe(searchKey(s.city));
      expect(s.countyKey).toBe(searchKey(s.county));
      expect(s.searchText).toBe(supplierSearchText(s));
      expect(s.companyName).toMatch(/ (S\.R\.L\.|S\.A\.)$/);
      expect(s.phone).toMatch(/^\+40 \d{2,3} \d{3} \d{3,4}$/);
      expect(s.email).toMatch(/^[a-z]+@[a-z0-9.-]+\.[a-z]+$/);
      expect(s.website).toMatch(/^https:\/\/\S+$/);
      expect(s.logo).toMatch(/^https:\/\/images\.example\.com\/\S+$/);
      expect(Number(s.rating)).toBeGreaterThanOrEqual(0);
      expect(Number(s.rating)).toBeLessThanOrEqual(5);
      expect(Number(s.shippingFee)).toBeGreaterThanOrEqual(0);
      if (s.freeShippingThreshold !== null) expect(Number(s.freeShippingThreshold)).toBeGreaterThan(Number(s.shippingFee));
    }
    expect(new Set(rows.map((s) => s.companyName)).size).toBe(rows.length);
    const inactive = rows.filter((s) => !s.isActive).length;
    expect(inactive).toBeGreaterThanOrEqual(2);
    expect(inactive).toBeLessThanOrEqual(3);
    const verified = rows.filter((s) => s.verified).length;
    expect(verified).toBeGreaterThan(0);
    expect(verified).toBeLessThan(rows.length);
    expect(rows.some((s) => /[ăâîșț]/i.test(s.city))).toBe(true);
  });

  it('keeps supplier ratings and review counts equal to their reviews', async () => {
    const mismatches = await query(
      url,
      `SELECT s.id FROM "Supplier" s LEFT JOIN "Review" r ON r."supplierId" = s.id
       GROUP BY s.id HAVING s."reviewCount" <> count(r.id) OR s.rating <> COALESCE(round(avg(r.rating), 2), 0)`,
    );
    expect(mismatches).toEqual([]);
    const [spread] = await query<{ lo: string; hi: string }>(url, 'SELECT min(rating) AS lo, max(rating) AS hi FROM "Supplier" WHERE "reviewCount" > 20');
    expect(Number(spread!.hi) - Number(spread!.lo)).toBeGreaterThan(0.3);
  });

  it('has products with consistent prices, VAT, stock and search text', async () => {
    const rows = await query<{
      id: string;
      name: string;
      nameEn: string;
      slug: string;
      description: string;
      sku: string | null;
      price: string;
      compareAtPrice: string | null;
      vatRate: string;
      vatCategory: string;
      images: string[];
      specifications: Record<string, unknown>;
      stock: number;
      lowStockThreshold: number;
      minOrder: number;
      isFeatured: boolean;
      isActive: boolean;
      viewCount: number;
      searchText: string;
      createdAt: Date;
      updatedAt: Date;
    }>(url, 'SELECT * FROM "Product"');
    expect(rows.length).toBe(1200);
    expect(new Set(rows.map((p) => p.sku)).size).toBe(1200);
    expect(new Set(rows.map((p) => p.slug)).size).toBe(1200);
    const vat: Record<string, string> = { STANDARD: '0.21', REDUCED: '0.11', EXEMPT: '0.00' };
    const twoYearsBefore = SEED_BASE_DATE.getTime() - 2 * 366 * 86_400_000;
    for (const p of rows) {
      expect(p.slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(p.sku).toMatch(/^[A-Z0-9-]+$/);
      expect(p.id).toMatch(/^c[a-z0-9]{24}$/);
      expect(p.price).toMatch(/^\d+\.\d{2}$/);
      expect(Number(p.price)).toBeGreaterThan(0);
      if (p.compareAtPrice !== null) expect(Number(p.compareAtPrice)).toBeGreaterThan(Number(p.price));
      expect(p.vatRate).toBe(vat[p.vatCategory]);
      expect(p.images.length).toBeGreaterThanOrEqual(1);
      expect(p.images.length).toBeLessThanOrEqual(4);
      for (const image of p.images) expect(image).toMatch(/^https:\/\/images\.example\.com\/\S+$/);
      expect(typeof p.specifications).toBe('object');
      expect(Array.isArray(p.specifications)).toBe(false);
      expect(Object.keys(p.specifications).length).toBeGreaterThanOrEqual(3);
      expect(p.stock).toBeGreaterThanOrEqual(0);
      expect(p.minOrder).toBeGreaterThanOrEqual(1);
      expect(p.viewCount).toBeGreaterThanOrEqual(0);
      expect(p.searchText).toBe(productSearchText(p));
      expect(p.nameEn).not.toBe(p.name);
      expect(p.createdAt.getTime()).toBeLessThanOrEqual(SEED_BASE_DATE.getTime());
      expect(p.createdAt.getTime()).toBeGreaterThan(twoYearsBefore);
      expect(p.updatedAt.getTime()).toBeGreaterThanOrEqual(p.createdAt.getTime());
      expect(p.updatedAt.getTime()).toBeLessThanOrEqual(SEED_BASE_DATE.getTime());
    }
    const share = (f: (p: (typeof rows)[number]) => boolean) => rows.filter(f).length / rows.length;
    expect(share((p) => /[ăâîșțĂÂÎȘȚ]/.test(p.name))).toBeGreaterThan(0.5);
    expect(share((p) => /[ăâîșț]/.test(p.description))).toBeGreaterThan(0.9);
    // English names keep only the diacritics of brand names ("Editura Universitară").
    expect(share((p) => /[ăâîșțĂÂÎȘȚ]/.test(p.nameEn))).toBeLessThan(0.1);
    expect(share((p) => p.vatCategory === 'STANDARD')).toBeGreaterThan(0.7);
    expect(share((p) => p.vatCategory === 'REDUCED')).toBeGreaterThan(0.03);
    expect(share((p) => p.vatCategory === 'EXEMPT')).toBeGreaterThan(0);
    expect(share((p) => p.vatCategory === 'EXEMPT')).toBeLessThan(0.03);
    expect(share((p) => p.compareAtPrice === null)).toBeGreaterThan(0.3);
    expect(share((p) => p.compareAtPrice !== null)).toBeGreaterThan(0.1);
    expect(share((p) => p.isFeatured)).toBeGreaterThan(0.02);
    expect(share((p) => p.isFeatured)).toBeLessThan(0.1);
    expect(share((p) => !p.isActive)).toBeGreaterThan(0.02);
    expect(share((p) => !p.isActive)).toBeLessThan(0.12);
    expect(share((p) => p.stock === 0)).toBeGreaterThan(0);
    expect(share((p) => p.stock > 0 && p.stock <= p.lowStockThreshold)).toBeGreaterThan(0);
    expect(share((p) => p.minOrder === 1)).toBeGreaterThan(0.6);
    expect(rows.some((p) => [5, 10, 50].includes(p.minOrder))).toBe(true);
    const views = rows.map((p) => p.viewCount).sort((x, y) => x - y);
    expect(views.at(-1)!).toBeGreaterThan(10 * views[Math.floor(views.length / 2)]!);
  });

  it('deactivates every product of an inactive supplier or category', async () => {
    const [counts] = await query<{ hidden: number; leaked: number }>(
      url,
      `SELECT count(*) FILTER (WHERE NOT s."isActive" OR NOT c."isActive")::int AS hidden,
              count(*) FILTER (WHERE (NOT s."isActive" OR NOT c."isActive") AND p."isActive")::int AS leaked
       FROM "Product" p JOIN "Supplier" s ON s.id = p."supplierId" JOIN "Category" c ON c.id = p."categoryId"`,
    );
    expect(counts!.hidden).toBeGreaterThan(0);
    expect(counts!.leaked).toBe(0);
    const onTopLevel = await query(url, 'SELECT p.id FROM "Product" p JOIN "Category" c ON c.id = p."categoryId" WHERE c."parentId" IS NULL');
    expect(onTopLevel).toEqual([]);
  });

  it('has 0 to 4 reviews per product, by the product’s supplier, after the product was created', async () => {
    const [perProduct] = await query<{ max: number; none: number }>(
      url,
      `SELECT max(n)::int AS max, count(*) FILTER (WHERE n = 0)::int AS none
       FROM (SELECT count(r.id) AS n FROM "Product" p LEFT JOIN "Review" r ON r."productId" = p.id GROUP BY p.id) x`,
    );
    expect(perProduct!.max).toBeLessThanOrEqual(4);
    expect(perProduct!.none).toBeGreaterThan(0);
    const wrong = await query(
      url,
      `SELECT r.id FROM "Review" r JOIN "Product" p ON p.id = r."productId"
       WHERE r."supplierId" <> p."supplierId" OR r.rating NOT BETWEEN 1 AND 5 OR r."createdAt" < p."createdAt" OR r."createdAt" > $1`,
      [SEED_BASE_DATE],
    );
    expect(wrong).toEqual([]);
    const [mix] = await query<{ responses: number; verified: number; purchases: number; byAccount: number; ratings: number; diacritics: number; total: number }>(
      url,
      `SELECT count(*) FILTER (WHERE "supplierResponse" IS NOT NULL)::int AS responses,
              count(*) FILTER (WHERE "isVerified")::int AS verified,
              count(*) FILTER (WHERE "verifiedPurchase")::int AS purchases,
              count(*) FILTER (WHERE "accountId" IS NOT NULL)::int AS "byAccount",
              count(DISTINCT rating)::int AS ratings,
              count(*) FILTER (WHERE comment ~ '[ăâîșț]')::int AS diacritics,
              count(*)::int AS total
       FROM "Review"`,
    );
    expect(mix!.ratings).toBe(5);
    for (const n of [mix!.responses, mix!.verified, mix!.purchases, mix!.byAccount]) {
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThan(mix!.total);
    }
    expect(mix!.diacritics).toBeGreaterThan(mix!.total / 2);
  });

  it('has demo accounts with saved addresses and favorites, and no API keys or orders', async () => {
    const accounts = await query<{ id: string; email: string; companyName: string | null }>(url, 'SELECT id, email, "companyName" FROM "Account"');
    expect(accounts.map((a) => a.email)).toContain('buyer@example.com');
    expect(accounts.filter((a) => a.companyName !== null).length).toBeGreaterThanOrEqual(3);
    const addresses = await query<{ accountId: string; city: string; county: string; postalCode: string; isDefault: boolean }>(url, 'SELECT * FROM "Address"');
    for (const account of accounts) {
      const own = addresses.filter((a) => a.accountId === account.id);
      expect(own.length, account.email).toBeGreaterThanOrEqual(1);
      expect(own.filter((a) => a.isDefault).length, account.email).toBe(1);
    }
    for (const a of addresses) {
      expect(COUNTY_OF_CITY.get(a.city)).toBe(a.county);
      expect(a.postalCode).toMatch(/^\d{6}$/);
    }
    const [favorites] = await query<{ n: number; inactive: number }>(
      url,
      'SELECT count(*)::int AS n, count(*) FILTER (WHERE NOT p."isActive")::int AS inactive FROM "Favorite" f JOIN "Product" p ON p.id = f."productId"',
    );
    expect(favorites!.n).toBeGreaterThan(0);
    expect(favorites!.inactive).toBe(0);
    const [others] = await query<{ keys: number; orders: number }>(url, 'SELECT (SELECT count(*) FROM "ApiKey")::int AS keys, (SELECT count(*) FROM "Order")::int AS orders');
    expect(others).toEqual({ keys: 0, orders: 0 });
  });

  it('has coupons of both types, for all or one supplier, expired, current and open-ended', async () => {
    const coupons = await query<{ code: string; type: string; value: string; supplierId: string | null; minSubtotal: string; validFrom: Date; validUntil: Date | null; isActive: boolean }>(
      url,
      'SELECT * FROM "Coupon"',
    );
    const base = SEED_BASE_DATE.getTime();
    const now = Date.now();
    expect(new Set(coupons.map((c) => c.type))).toEqual(new Set(['PERCENTAGE', 'FIXED']));
    expect(coupons.some((c) => c.supplierId !== null)).toBe(true);
    expect(coupons.some((c) => c.supplierId === null)).toBe(true);
    expect(coupons.some((c) => c.validUntil !== null && c.validUntil.getTime() < base)).toBe(true);
    expect(coupons.some((c) => c.validFrom.getTime() < base && c.validUntil !== null && c.validUntil.getTime() > base)).toBe(true);
    // Usable whatever today's date: no end, or an end far ahead.
    expect(coupons.some((c) => c.isActive && c.validFrom.getTime() < now && (c.validUntil === null || c.validUntil.getTime() > now))).toBe(true);
    expect(coupons.some((c) => Number(c.minSubtotal) > 0)).toBe(true);
    for (const c of coupons) {
      expect(c.code).toMatch(/^[A-Z0-9]+$/);
      if (c.type === 'PERCENTAGE') expect(Number(c.value)).toBeLessThanOrEqual(100);
      expect(Number(c.value)).toBeGreaterThan(0);
      if (c.validUntil !== null) expect(c.validUntil.getTime()).toBeGreaterThan(c.validFrom.getTime());
    }
    const boundToInactive = await query(url, 'SELECT c.code FROM "Coupon" c JOIN "Supplier" s ON s.id = c."supplierId" WHERE NOT s."isActive"');
    expect(boundToInactive).toEqual([]);
  });
});

describe('npm run seed', () => {
  // Its arguments, read without a process: test/unit/seed.test.ts. Each run is a process of its
  // own and the tests share nothing: they run at once.
  const run = (args: string[], env: Record<string, string> = {}) =>
    promisify(execFile)(process.execPath, [...entryArgs('cli/seed-command.ts'), ...args], {
      env: { ...process.env, ...env, SEED: '', SEED_PRODUCTS: '' },
      timeout: 60_000,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? -1, stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
    );

  it.concurrent('exits 1 with a message on a bad argument', async ({ expect }) => {
    const result = await run(['--products', 'many']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('Error: --products must be a non-negative integer, got "many" (see `npm run seed -- --help`)\n');
  });

  it.concurrent('exits 1 with one line naming DATABASE_URL (password hidden) when its server cannot be reached', async ({ expect }) => {
    const port = await unusedPort();
    const result = await run(['--products', '40'], { DATABASE_URL: `postgresql://ops:s3cret-pass@127.0.0.1:${port}/shop` });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`Error: DATABASE_URL postgresql://ops:***@127.0.0.1:${port}/shop: connection refused\n`);
    expect(result.stdout).toBe('');
  });

  it.concurrent('migrates and seeds the configured database, then tops it up', async ({ expect }) => {
    const db = await createTestDatabase('empty');
    databases.push(db);
    const first = await run(['--products', '40', '--seed', '42'], { DATABASE_URL: db.url });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('added 40 products');
    const second = await run(['--products', '60', '--seed', '42'], { DATABASE_URL: db.url });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('added 20 products');
    const [row] = await query<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM "Product"');
    expect(row!.n).toBe(60);
  });
});
