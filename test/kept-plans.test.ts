import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import { execute, parse, type DocumentNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, type PrismaClient } from '../src/db/prisma.js';
import type PrismaTypes from '../src/generated/pothos-prisma-types.js';
import { getDatamodel } from '../src/generated/pothos-prisma-types.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { createTestKey } from './helpers/keys.js';
import { byTable, isKeyLookup, sentSince, without } from './helpers/statements.js';

// plugin-prisma's plan of a field is kept across requests (vendor/README.md, change 4) and played
// again for the next execution of the same document's field: it must answer each execution as a
// fresh walk would, whatever its variables beneath the field and whatever its context.

describe('kept plans over the API', () => {
  let app: TestApp;
  let key = '';
  /** An active product with at least three reviews. */
  let slug = '';

  beforeAll(async () => {
    app = await startTestApp({ env: { RESPONSE_CACHE: 'off' } });
    key = (await createTestKey(app.url, { owner: 'kept-plans@example.com', scopes: ['read:stock'] })).key;
    const { rows } = await app.sql.query<{ slug: string }>(
      `SELECT p.slug FROM "Product" p WHERE p."isActive" AND (SELECT count(*) FROM "Review" r WHERE r."productId" = p.id) >= 3 ORDER BY p.id LIMIT 1`,
    );
    slug = rows[0]!.slug;
  });
  afterAll(() => app?.close());

  const graphql = async (query: string, variables: Record<string, unknown>) => {
    const res = await fetch(`${app.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ query, variables }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data?: any; errors?: unknown };
    expect(body.errors).toBeUndefined();
    return body.data;
  };

  it('plays a plan again only for the same values of the variables beneath the field', async () => {
    const query = `query Kept($slug: String!, $n: Int, $withSupplier: Boolean!) {
      product(slug: $slug) { id reviews(limit: $n) { id } ...S @include(if: $withSupplier) }
    }
    fragment S on Product { supplier { id companyName } }`;
    // The same document text: Yoga hands the executor the same parsed document each time.
    const answers = [];
    for (const [n, withSupplier] of [[1, false], [3, true], [1, true], [2, false], [3, true]] as const) {
      const before = app.statements.length;
      const data = await graphql(query, { slug, n, withSupplier });
      answers.push(data);
      expect(data.product.reviews).toHaveLength(n);
      expect('supplier' in data.product).toBe(withSupplier);
      if (withSupplier) expect(data.product.supplier.id).toEqual(expect.any(String));
      // One planned query, however often the plan was kept or played: no relation falls back to loading on its own
      // (the key is looked up on its first use).
      expect(without(byTable(sentSince(app.statements, before)), 'ApiKey')).toEqual({ Product: 1, Review: 1, ...(withSupplier ? { Supplier: 1 } : {}) });
    }
    expect(answers[4]).toEqual(answers[1]);
  });

  it('answers a REST read of each product with its own row, in one statement, however many times its route ran', async () => {
    const { rows } = await app.sql.query<{ slug: string; id: string }>(`SELECT slug, id FROM "Product" WHERE "isActive" ORDER BY id LIMIT 5`);
    for (const row of [...rows, ...rows]) {
      const before = app.statements.length;
      const res = await app.get(`/api/products/${row.slug}`, { headers: { 'x-api-key': key } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: row.id, slug: row.slug, supplier: { id: expect.any(String) }, category: { id: expect.any(String) } });
      // The key's own lookup left out, as above: it is cached from the test before only when that test ran
      // (not under -t), the cache listened from the start, and not 60 s (KEY_CACHE_SECONDS) went by.
      expect(sentSince(app.statements, before).filter((sql) => !isKeyLookup(sql))).toHaveLength(1);
    }
  });
});

describe('kept plans and the context', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  let productId = '';
  let productReviews = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrisma({ url: db.url, poolMax: 2 });
    const [row] = await prisma.$queryRawUnsafe<{ id: string; reviews: number }[]>(
      `SELECT p.id, (SELECT count(*)::int FROM "Review" r WHERE r."productId" = p.id) AS reviews FROM "Product" p
        WHERE (SELECT count(*) FROM "Review" r WHERE r."productId" = p.id) >= 3 ORDER BY p.id LIMIT 1`,
    );
    productId = row!.id;
    productReviews = row!.reviews;
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await db?.drop();
  });

  /** A schema of its own whose relation reads the context (ours read none), and the queries its resolver was handed. */
  function schemaReadingContext() {
    interface Context {
      prisma: PrismaClient;
      reviewsTake: number;
    }
    const builder = new SchemaBuilder<{ Context: Context; PrismaTypes: PrismaTypes }>({
      plugins: [PrismaPlugin],
      prisma: { client: (ctx: Context) => ctx.prisma, dmmf: getDatamodel(), onUnusedQuery: null },
    } as never);
    builder.prismaObject('Review', { fields: (t) => ({ id: t.exposeID('id') }) });
    builder.prismaObject('Product', {
      fields: (t) => ({
        id: t.exposeID('id'),
        name: t.exposeString('name'),
        fromContext: t.relation('reviews', { query: (_args, ctx) => ({ take: ctx.reviewsTake, orderBy: { id: 'asc' } }) }),
        plain: t.relation('reviews', { query: { take: 1, orderBy: { id: 'asc' } } }),
        taking: t.relation('reviews', { args: { n: t.arg.int({ required: true }) }, query: (args) => ({ take: args.n, orderBy: { id: 'asc' } }) }),
      }),
    });
    const handed: object[] = [];
    builder.queryType({
      fields: (t) => ({
        product: t.prismaField({
          type: 'Product',
          nullable: true,
          args: { id: t.arg.id({ required: true }) },
          resolve: (query, _root, args, ctx) => {
            handed.push(query);
            return ctx.prisma.product.findUnique({ ...query, where: { id: String(args.id) } });
          },
        }),
      }),
    });
    return { schema: builder.toSchema(), handed };
  }

  const run = async (schema: ReturnType<typeof schemaReadingContext>['schema'], document: DocumentNode, reviewsTake: number, variables: Record<string, unknown> = {}) => {
    const result = await execute({ schema, document, variableValues: { id: productId, ...variables }, contextValue: { prisma, reviewsTake } });
    expect(result.errors).toBeUndefined();
    return result.data as { product: { fromContext?: unknown[]; plain?: unknown[]; taking?: unknown[] } };
  };

  it('never keeps a plan whose walk read the context', async () => {
    const { schema, handed } = schemaReadingContext();
    const document = parse(`query ($id: ID!) { product(id: $id) { id fromContext { id } } }`);
    for (const take of [1, 3, 2]) expect((await run(schema, document, take)).product.fromContext).toHaveLength(take);
    // Each execution was planned afresh: a query of its own, never the shared, frozen one of a kept plan.
    expect(new Set(handed).size).toBe(3);
    expect(handed.some((q) => Object.isFrozen(q))).toBe(false);
  });

  it('keeps a plan that read nothing of the context, and hands every execution the same frozen query', async () => {
    const { schema, handed } = schemaReadingContext();
    const document = parse(`query ($id: ID!) { product(id: $id) { id name plain { id } } }`);
    const first = await run(schema, document, 1);
    expect(first.product.plain).toHaveLength(1);
    expect(await run(schema, document, 2)).toEqual(first);
    expect(handed).toHaveLength(2);
    expect(handed[1]).toBe(handed[0]);
    expect(Object.isFrozen(handed[0])).toBe(true);
    // Another document's field has plans of its own.
    await run(schema, parse(`query ($id: ID!) { product(id: $id) { id plain { id } } }`), 1);
    expect(handed[2]).not.toBe(handed[0]);
  });

  it('keeps at most 8 plans of a field, one per value of its variables; past them each execution is planned afresh', async () => {
    const { schema, handed } = schemaReadingContext();
    const document = parse(`query ($id: ID!, $n: Int!) { product(id: $id) { id taking(n: $n) { id } } }`);
    for (const n of [1, 2, 3, 1, 2, 3]) expect((await run(schema, document, 1, { n })).product.taking).toHaveLength(n);
    // The same values: the same kept query.
    expect(handed.slice(3)).toEqual(handed.slice(0, 3));
    for (let i = 0; i < 3; i++) expect(handed[3 + i]).toBe(handed[i]);
    handed.length = 0;
    // Five more values fill the field's 8 plans; a ninth is planned afresh each time, its query the request's own.
    for (const n of [4, 5, 6, 7, 8, 9, 9]) expect((await run(schema, document, 1, { n })).product.taking).toHaveLength(Math.min(n, productReviews));
    expect(handed.map((q) => Object.isFrozen(q))).toEqual([true, true, true, true, true, false, false]);
    expect(handed[6]).not.toBe(handed[5]);
  });
});
