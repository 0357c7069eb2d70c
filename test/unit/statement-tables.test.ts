import { describe, expect, it } from 'vitest';
import { byTable, classify, isCount, NO_TABLE, TABLES, tablesOf, without } from '../helpers/statements.js';

// The helper the statement-count tests rely on (test/helpers/statements.ts): statements told apart
// by the tables they touch, whichever way the SQL is worded.

describe('statements by table', () => {
  it('knows the tables of prisma/schema.prisma', () => {
    expect([...TABLES]).toEqual(expect.arrayContaining(['Product', 'Supplier', 'Category', 'Review', 'ApiKey', 'Order', 'OrderItem', 'CatalogChange']));
  });

  it('reads tables after FROM and JOIN, schema-qualified or not, Prisma 6 or 7 style, each once', () => {
    // Prisma 7: aliased tables, relation joins as LATERAL subqueries.
    expect(
      classify(
        'SELECT "t0"."id", "Product_reviews"."__prisma_data__" FROM "public"."Product" AS "t0" LEFT JOIN LATERAL (SELECT "t1".* FROM "public"."Review" AS "t1" WHERE "t0"."id" = "t1"."productId") AS "Product_reviews" ON true',
      ),
    ).toMatchObject({ kind: 'query', reads: ['Product', 'Review'], writes: [] });
    // Prisma 6: no aliases, the table named again in every column.
    expect(tablesOf('SELECT "public"."Product"."id" FROM "public"."Product" WHERE "public"."Product"."isActive" = $1 LIMIT $2 OFFSET $3')).toEqual(['Product']);
    expect(tablesOf('SELECT COUNT(*) AS "_count$_all" FROM (SELECT "public"."Product"."id" FROM "public"."Product" WHERE 1=1 OFFSET $1) AS "sub"')).toEqual(['Product']);
    // The app's own SQL: unquoted CTE names and aliases are not tables.
    expect(
      classify(`WITH RECURSIVE tree AS (SELECT id AS root, id FROM "Category" WHERE id = ANY($1)
        UNION SELECT t.root, c.id FROM "Category" c JOIN tree t ON c."parentId" = t.id)
        SELECT t.root, count(p.id)::int AS n FROM tree t JOIN "Product" p ON p."categoryId" = t.id GROUP BY t.root`),
    ).toMatchObject({ reads: ['Category', 'Product'], writes: [] });
  });

  it('tells writes from reads', () => {
    expect(classify('INSERT INTO "public"."Order" ("id") VALUES ($1) RETURNING "public"."Order"."id"')).toMatchObject({ reads: [], writes: ['Order'] });
    expect(classify('UPDATE "Product" AS p SET stock = p.stock - w.quantity FROM unnest($1::text[], $2::int[]) AS w(id, quantity) WHERE p.id = w.id')).toMatchObject({
      reads: [],
      writes: ['Product'],
    });
    expect(classify('DELETE FROM "public"."ListTotal" WHERE "savedAt" < $1')).toMatchObject({ reads: [], writes: ['ListTotal'] });
    // Upserts and row locks write only what they name as written.
    expect(
      classify('INSERT INTO "ListTotal" ("key") VALUES ($1) ON CONFLICT ("key") DO UPDATE SET "total" = EXCLUDED."total" WHERE "ListTotal"."epoch" <> EXCLUDED."epoch"'),
    ).toMatchObject({ reads: [], writes: ['ListTotal'] });
    expect(classify('SELECT id, stock FROM "Product" WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE')).toMatchObject({ reads: ['Product'], writes: [] });
    expect(classify('SELECT "t0"."id" FROM "public"."Order" AS "t0" FOR NO KEY UPDATE OF "t0"')).toMatchObject({ reads: ['Order'], writes: [] });
  });

  it('does not take columns, literals or comments for tables', () => {
    expect(tablesOf(`SELECT EXTRACT(EPOCH FROM "t0"."createdAt") FROM "public"."Review" AS "t0" WHERE "t0"."body" IS DISTINCT FROM "t0"."title"`)).toEqual(['Review']);
    expect(tablesOf(`SELECT 'FROM "Product"' AS x /* JOIN "Supplier" */ -- FROM "Category"\nFROM "public"."Coupon"`)).toEqual(['Coupon']);
  });

  it('counts statements per table, with transaction control and settings under their keyword', () => {
    const sent = [
      'SELECT "t0"."id" FROM "public"."ApiKey" AS "t0" WHERE "t0"."hash" = $1',
      'BEGIN',
      'SET LOCAL enable_bitmapscan = off',
      'SELECT "t0"."id" FROM "public"."Product" AS "t0" LEFT JOIN "public"."Supplier" AS "t1" ON "t1"."id" = "t0"."supplierId"',
      'SELECT COUNT(*) FROM (SELECT "public"."Product"."id" FROM "public"."Product") AS "sub"',
      'COMMIT',
      'SELECT 1',
    ];
    expect(byTable(sent)).toEqual({ ApiKey: 1, BEGIN: 1, COMMIT: 1, Product: 2, SET: 1, Supplier: 1, [NO_TABLE]: 1 });
    expect(without(byTable(sent), 'ApiKey', NO_TABLE)).toEqual({ BEGIN: 1, COMMIT: 1, Product: 2, SET: 1, Supplier: 1 });
    expect(sent.map(isCount)).toEqual([false, false, false, false, true, false, false]);
  });
});
