import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allReadSql, findAll, findPage, findUnique, pageIdsSql, pageReadSql, uniqueReadSql, type PageQuery } from '../src/db/direct-reads.js';
import { createPrisma, type PrismaClient } from '../src/db/prisma.js';
import { Prisma } from '../src/generated/prisma/client.js';
import { productQuery, productSorts } from '../src/domain/products/products.service.js';
import { money } from '../src/rules/money.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { testContexts } from './helpers/context.js';

// An offset page's ids are read with a statement of our own when its filters and order are plain
// column conditions (src/db/direct-reads.ts): it must pick exactly the ids Prisma's findMany picks, for
// every filter and order the lists use, on any page, ties included.

let db: TestDatabase;
let prisma: PrismaClient;
const statements: string[] = [];
let close: () => Promise<void>;
let contexts: ReturnType<typeof testContexts>['contexts'];

beforeAll(async () => {
  db = await createTestDatabase('seeded');
  prisma = createPrisma({ url: db.url, poolMax: 4, onQuery: (sql) => statements.push(sql) });
  ({ contexts, close } = testContexts(prisma));
});
afterAll(async () => {
  await close?.();
  await prisma?.$disconnect();
  await db?.drop();
});

type Delegate = { findMany(args: object): Promise<{ id: string }[]> };

/** The ids of a page both ways: our statement's and Prisma's findMany's. */
async function bothWays(model: Prisma.ModelName, page: PageQuery<unknown>) {
  const sql = pageIdsSql(model, page);
  expect(sql, `${model} ${JSON.stringify(page.where)} is written in SQL`).not.toBeNull();
  const ours = await prisma.$queryRawUnsafe<{ id: string }[]>(sql!.text, ...sql!.values);
  const delegate = (prisma as unknown as Record<string, Delegate>)[model[0]!.toLowerCase() + model.slice(1)]!;
  const theirs = await delegate.findMany({ where: page.where, orderBy: page.orderBy, select: { id: true }, skip: page.skip, take: page.take });
  return { ours: ours.map((r) => r.id), theirs: theirs.map((r) => r.id) };
}

/** Windows from the first page to past the end. */
const WINDOWS = [
  { skip: 0, take: 12 },
  { skip: 12, take: 12 },
  { skip: 37, take: 50 },
  { skip: 400, take: 100 },
  { skip: 1_000_000, take: 10 },
];

describe('a page of products read by our statement is the page Prisma reads', () => {
  it('for every sort and every filter of the product list', async () => {
    const ctx = contexts.forApi({ anonymous: () => ({ kind: 'anonymous', ip: '127.0.0.1' }), idempotencyKey: null });
    const [category] = await prisma.$queryRawUnsafe<{ id: string }[]>(
      `SELECT c.id FROM "Category" c WHERE c."parentId" IS NULL AND EXISTS (SELECT 1 FROM "Category" k JOIN "Product" p ON p."categoryId" = k.id WHERE k."parentId" = c.id) LIMIT 1`,
    );
    const [top] = await prisma.$queryRawUnsafe<{ supplierId: string }[]>(
      `SELECT "supplierId" FROM "Product" GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`,
    );
    const categoryId = category!.id;
    const supplierId = top!.supplierId;
    const filters = [
      {},
      { categoryId },
      { supplierId },
      { minPrice: money('20'), maxPrice: money('400.50') },
      { featured: true },
      { categoryId, minPrice: money('5'), featured: false },
    ];
    let compared = 0;
    for (const sortBy of productSorts) {
      for (const filter of filters) {
        const q = await productQuery(ctx, { ...filter, sortBy });
        for (const window of WINDOWS) {
          const { ours, theirs } = await bothWays('Product', { where: q.where, orderBy: q.orderBy, ...window });
          expect(ours, `${sortBy} ${JSON.stringify(filter)} ${JSON.stringify(window)}`).toEqual(theirs);
          compared += ours.length;
        }
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it('with ties in the order (many products share a price): the id breaks them the same way', async () => {
    await prisma.$executeRawUnsafe(`UPDATE "Product" SET price = 42 WHERE id IN (SELECT id FROM "Product" ORDER BY id DESC LIMIT 60)`);
    const page = { where: { AND: [{ isActive: true }, { price: { gte: new Prisma.Decimal(42), lte: new Prisma.Decimal(42) } }] }, orderBy: [{ price: 'asc' }, { id: 'asc' }] };
    for (const window of [{ skip: 5, take: 20 }, { skip: 40, take: 30 }]) {
      const { ours, theirs } = await bothWays('Product', { ...page, ...window });
      expect(ours.length).toBeGreaterThan(0);
      expect(ours).toEqual(theirs);
    }
  });
});

describe('the other lists', () => {
  it('categories, suppliers, reviews and orders: equality, null, in and enum conditions', async () => {
    const cases: [Prisma.ModelName, PageQuery<unknown>][] = [
      ['Category', { where: { isActive: true, parentId: null }, orderBy: [{ order: 'asc' }, { id: 'asc' }], skip: 2, take: 5 }],
      ['Category', { where: { isActive: true }, orderBy: [{ order: 'asc' }, { id: 'asc' }], skip: 7, take: 10 }],
      ['Supplier', { where: { AND: [{ isActive: true }] }, orderBy: [{ rating: 'desc' }, { id: 'asc' }], skip: 3, take: 4 }],
      ['Supplier', { where: { isActive: true, verified: true }, orderBy: [{ companyName: 'asc' }, { id: 'asc' }], skip: 1, take: 3 }],
      ['Review', { where: { rating: { in: undefined }, product: undefined }, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], skip: 10, take: 20 }],
      ['Review', { where: { rating: 5 }, orderBy: [{ rating: 'desc' }, { createdAt: 'desc' }, { id: 'asc' }], skip: 4, take: 8 }],
      ['Order', { where: { status: { in: ['PENDING', 'CONFIRMED'] } }, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], skip: 1, take: 5 }],
      ['Order', { where: { status: 'CANCELLED' }, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], skip: 1, take: 5 }],
    ];
    for (const [model, page] of cases) {
      const { ours, theirs } = await bothWays(model, page);
      expect(ours, `${model} ${JSON.stringify(page)}`).toEqual(theirs);
    }
  });

  it('leaves to Prisma what is more than plain column conditions', () => {
    const orderBy = [{ createdAt: 'desc' }, { id: 'asc' }];
    const window = { skip: 10, take: 10 };
    for (const where of [
      { OR: [{ isActive: true }] },
      { NOT: { isActive: false } },
      { supplier: { verified: true } },
      { searchText: { contains: 'x' } },
      { name: { equals: 'x', mode: 'insensitive' } },
      { createdAt: { gte: new Date() } },
      { nonexistent: 1 },
      { price: { in: [new Prisma.Decimal(1)] } },
    ]) {
      expect(pageIdsSql('Product', { where, orderBy, ...window }), JSON.stringify(where)).toBeNull();
    }
    expect(pageIdsSql('Product', { where: {}, orderBy: [{ supplier: { companyName: 'asc' } }], ...window })).toBeNull();
    expect(pageIdsSql('Product', { where: {}, orderBy: [{ _relevance: { fields: ['name'], search: 'x', sort: 'asc' } }], ...window })).toBeNull();
  });
});

// A page read whole in one statement of our own (pageReadSql, for plain queries) must be the rows
// and values Prisma's findMany answers: the same ids in the same order, every column with the
// same type (JSON, lists, enums, nulls; a Decimal and a DateTime as the graph sends them),
// relations (a missing optional one as null) and relation counts.

/** A findMany result as a direct read holds it: every Decimal and Date as the Decimal and DateTime scalars send them. */
function decimalsSent(value: unknown): unknown {
  if (Prisma.Decimal.isDecimal(value)) return Number(value.toString());
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(decimalsSent);
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, decimalsSent(v)]));
  }
  return value;
}
describe('a page read in one statement is the page Prisma reads', () => {
  const NEWEST: unknown = [{ createdAt: 'desc' }, { id: 'asc' }];
  /** plugin-prisma's query for the REST product representation (src/domain/representations.ts). */
  const REST_PRODUCT = {
    select: {
      supplier: { select: { id: true, companyName: true, verified: true, rating: true } },
      category: { select: { id: true, name: true, slug: true } },
      _count: { select: { reviews: true, favorites: true } },
      id: true, name: true, nameEn: true, slug: true, description: true, price: true, compareAtPrice: true, minOrder: true,
      stock: true, sku: true, images: true, specifications: true, isActive: true, isFeatured: true, viewCount: true,
      vatRate: true, vatCategory: true, createdAt: true, updatedAt: true,
    },
  };
  const cases: [Prisma.ModelName, PageQuery<unknown>, object][] = [
    ['Product', { where: { isActive: true }, orderBy: NEWEST, skip: 0, take: 12 }, REST_PRODUCT],
    ['Product', { where: { isActive: true }, orderBy: NEWEST, skip: 317, take: 100 }, REST_PRODUCT],
    ['Product', { where: { AND: [{ isActive: true }, { isFeatured: false }] }, orderBy: [{ price: 'desc' }, { id: 'asc' }], skip: 30, take: 40 }, REST_PRODUCT],
    // Every column, as findMany answers without a select.
    ['Product', { where: { isActive: true }, orderBy: NEWEST, skip: 5, take: 20 }, {}],
    // An optional relation (top-level categories have no parent: null), a count over a self-relation.
    ['Category', { where: { isActive: true }, orderBy: [{ order: 'asc' }, { id: 'asc' }], skip: 0, take: 50 },
      { select: { id: true, name: true, image: true, parent: { select: { id: true, name: true } }, _count: { select: { children: true, products: true } } } }],
    // A relation within a relation, and a whole related row (`true`).
    ['Review', { where: {}, orderBy: NEWEST, skip: 3, take: 25 },
      { select: { id: true, rating: true, images: true, createdAt: true, product: { select: { id: true, supplier: { select: { companyName: true, rating: true } } } }, account: true } }],
    ['Supplier', { where: { isActive: true }, orderBy: [{ rating: 'desc' }, { id: 'asc' }], skip: 2, take: 10 },
      { select: { id: true, companyName: true, rating: true, shippingFee: true, freeShippingThreshold: true, website: true, _count: { select: { products: true, reviews: true } } } }],
  ];

  it('for products, categories, reviews and suppliers, first and deep pages', async () => {
    let rows = 0;
    for (const [model, page, query] of cases) {
      const delegate = (prisma as unknown as Record<string, Delegate>)[model[0]!.toLowerCase() + model.slice(1)]!;
      expect(pageReadSql(model, page, query), `${model} ${JSON.stringify(query)} is read in one statement`).not.toBeNull();
      const before = statements.length;
      const ours = await findPage(prisma, model, delegate as never, page as never, query);
      expect(statements.length - before, 'one statement').toBe(1);
      const theirs = await delegate.findMany({ ...query, where: page.where, orderBy: page.orderBy, skip: page.skip, take: page.take });
      expect(ours.length, `${model} ${JSON.stringify(page)}`).toBeGreaterThan(0);
      expect(ours, `${model} ${JSON.stringify(page)} ${JSON.stringify(query)}`).toStrictEqual(decimalsSent(theirs));
      // The decimals compared are the columns' own: prices, ratings and rates are read and sent.
      if (model === 'Product' && 'select' in query) expect(ours.every((row) => typeof (row as { price?: unknown }).price === 'number')).toBe(true);
      rows += ours.length;
    }
    // The cases reach a missing optional relation and a product with reviews and favourites.
    const categories = (await findPage(prisma, 'Category', prisma.category as never, cases[4]![1] as never, cases[4]![2])) as unknown as { parent: unknown }[];
    expect(categories.some((c) => c.parent === null) && categories.some((c) => c.parent !== null)).toBe(true);
    expect(rows).toBeGreaterThan(200);
  });

  it('a product by its slug, as findFirst finds it: active, inactive and unknown', async () => {
    const [active] = await prisma.$queryRawUnsafe<{ slug: string }[]>(`SELECT slug FROM "Product" WHERE "isActive" ORDER BY id LIMIT 1`);
    const [inactive] = await prisma.$queryRawUnsafe<{ slug: string }[]>(`UPDATE "Product" SET "isActive" = false WHERE id = (SELECT id FROM "Product" WHERE "isActive" ORDER BY id DESC LIMIT 1) RETURNING slug`);
    for (const slug of [active!.slug, inactive!.slug, 'no-such-product']) {
      const where = { slug, isActive: true };
      expect(uniqueReadSql('Product', where, REST_PRODUCT)).not.toBeNull();
      const before = statements.length;
      const ours = await findUnique(prisma, 'Product', prisma.product, where, REST_PRODUCT);
      expect(statements.length - before, 'one statement').toBe(1);
      expect(ours, slug).toStrictEqual(decimalsSent(await prisma.product.findFirst({ ...REST_PRODUCT, where })));
      expect(ours === null, slug).toBe(slug !== active!.slug);
    }
  });

  it('a whole list (the category tree), as findMany reads it', async () => {
    const order: Prisma.CategoryOrderByWithRelationInput[] = [{ order: 'asc' }, { id: 'asc' }];
    // With a to-many relation (its active children, in display order), as the REST representation has.
    const children = { select: { id: true, name: true, slug: true, isActive: true }, where: { isActive: true }, orderBy: order };
    const query = { select: { id: true, name: true, slug: true, order: true, image: true, parentId: true, createdAt: true, parent: { select: { id: true, name: true } }, children } };
    // Some children inactive, so that the relation's filter is seen to apply.
    await prisma.$executeRawUnsafe(`UPDATE "Category" SET "isActive" = false WHERE id IN (SELECT id FROM "Category" WHERE "parentId" IS NOT NULL ORDER BY id LIMIT 3)`);
    for (const where of [{ isActive: true }, { isActive: true, parentId: null }]) {
      expect(allReadSql('Category', where, order, query), JSON.stringify(where)).not.toBeNull();
      const before = statements.length;
      const ours = await findAll(prisma, 'Category', prisma.category as never, where, order, query);
      expect(statements.length - before, 'one statement').toBe(1);
      const theirs = await prisma.category.findMany({ ...query, where, orderBy: order as never });
      expect(ours.length).toBeGreaterThan(0);
      expect(ours, JSON.stringify(where)).toStrictEqual(decimalsSent(theirs));
    }
    const all = await findAll(prisma, 'Category', prisma.category as never, {}, order, query);
    expect(all.some((c) => (c as { children: unknown[] }).children.length > 0) && all.some((c) => (c as { children: unknown[] }).children.length === 0)).toBe(true);
    // An order that is not total, or a filter that is not plain, is Prisma's; so is a relation
    // read in pages, or filtered by anything but a boolean, or with a relation beneath it.
    expect(allReadSql('Category', { isActive: true }, [{ order: 'asc' }], query)).toBeNull();
    expect(allReadSql('Category', { OR: [{ isActive: true }] }, order, query)).toBeNull();
    const withChildren = (relation: object) => ({ select: { id: true, children: { ...children, ...relation } } });
    expect(allReadSql('Category', {}, order, withChildren({}))).not.toBeNull();
    expect(allReadSql('Category', {}, order, withChildren({ take: 2 }))).toBeNull();
    expect(allReadSql('Category', {}, order, withChildren({ where: { name: 'x' } }))).toBeNull();
    expect(allReadSql('Category', {}, order, withChildren({ orderBy: [{ order: 'asc' }] }))).toBeNull();
    expect(allReadSql('Category', {}, order, withChildren({ select: { id: true, parent: { select: { id: true } } } }))).toBeNull();
    expect(allReadSql('Category', {}, order, withChildren({ select: { id: true, createdAt: true } }))).toBeNull();
  });

  it('leaves to Prisma what is more than columns, to-one relations and counts', () => {
    const page = { where: { isActive: true }, orderBy: NEWEST, skip: 10, take: 10 };
    for (const query of [
      { include: { supplier: true } },
      { select: { id: true, reviews: { select: { id: true } } } },
      { select: { id: true, _count: { select: { reviews: { where: { rating: 5 } } } } } },
      { select: { id: true, supplier: { select: { id: true }, where: { verified: true } } } },
      { select: { id: true }, distinct: ['name'] },
    ]) {
      expect(pageReadSql('Product', page, query), JSON.stringify(query)).toBeNull();
    }
    // An order that is not total (no id at its end) could let the page and its rows disagree.
    expect(pageReadSql('Product', { ...page, orderBy: [{ createdAt: 'desc' }] }, REST_PRODUCT)).toBeNull();
    expect(pageReadSql('Product', { ...page, where: { OR: [{ isActive: true }] } }, REST_PRODUCT)).toBeNull();
  });
});
