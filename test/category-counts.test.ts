import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';

// What a category says of its products, `_count.products` (active products of its whole subtree)
// and `products` (the subtree's most viewed active products, ties by id), is read from counts
// that triggers on "Product" keep per category and from each category's own most viewed products
// (src/domain/categories/categories.service.ts, migration *_category_product_counts). The
// answers must be the ones the definition gives: here it is computed in SQL over every product,
// and every documented parameter combination of GET /api/categories, GraphQL `categories` and
// `category(slug:)` is checked against it, on the seeded catalogue and after each kind of change
// to products, made straight in SQL as any other tool would.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

interface Subtree {
  count: number;
  /** Ids of its active products, most viewed first, ties by id. */
  ranked: string[];
}

/** The definition, for every category (inactive ones too): its subtree's active products, counted and ranked. */
async function definition(sql: pg.Pool): Promise<Map<string, Subtree>> {
  const { rows } = await sql.query<{ id: string; ranked: string[] }>(`
    WITH RECURSIVE tree AS (
      SELECT id AS root, id FROM "Category"
      UNION SELECT t.root, c.id FROM "Category" c JOIN tree t ON c."parentId" = t.id)
    SELECT c.id, COALESCE(array_agg(p.id ORDER BY p."viewCount" DESC, p.id) FILTER (WHERE p.id IS NOT NULL), '{}') AS ranked
    FROM "Category" c
    JOIN tree t ON t.root = c.id
    LEFT JOIN "Product" p ON p."categoryId" = t.id AND p."isActive"
    GROUP BY c.id`);
  return new Map(rows.map((r) => [r.id, { count: r.ranked.length, ranked: r.ranked }]));
}

/** Active categories in display order, top-level ones only with parentOnly. */
async function listed(sql: pg.Pool, parentOnly: boolean): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM "Category" WHERE "isActive" ${parentOnly ? 'AND "parentId" IS NULL' : ''} ORDER BY "order", id`,
  );
  return rows.map((r) => r.id);
}

const PARENT_ONLY = [undefined, 'true', 'false'] as const;
const INCLUDE_PRODUCTS = [undefined, 'true', 'false'] as const;
const PAGES = [undefined, { page: 1, limit: 12 }, { page: 2, limit: 5 }] as const;

interface Item {
  id: string;
  _count: { products: number };
  products?: { id: string; name: string; slug: string; price: number; images: string[] }[];
}

/** Every combination of both interfaces answers what the definition gives, as the database is now. */
async function expectDefinition() {
  const subtrees = await definition(app.sql);
  const products = new Map(
    (await app.sql.query<{ id: string; name: string; slug: string; price: string; images: string[] }>(`SELECT id, name, slug, price::text, images FROM "Product"`)).rows.map((p) => [p.id, p]),
  );
  const of = (id: string) => subtrees.get(id) ?? { count: 0, ranked: [] };

  for (const parentOnly of PARENT_ONLY) {
    const all = await listed(app.sql, parentOnly === 'true');
    for (const page of PAGES) {
      const ids = page ? all.slice((page.page - 1) * page.limit, page.page * page.limit) : all;
      for (const includeProducts of INCLUDE_PRODUCTS) {
        const query = new URLSearchParams({
          ...(parentOnly ? { parentOnly } : {}),
          ...(includeProducts ? { includeProducts } : {}),
          ...(page ? { page: String(page.page), limit: String(page.limit) } : {}),
        });
        const res = await app.get(`/api/categories?${query}`);
        const where = `GET /api/categories?${query}`;
        expect(res.status, where).toBe(200);
        const items = res.body.data as Item[];
        expect(items.map((c) => c.id), where).toEqual(ids);
        for (const item of items) {
          expect(item._count.products, `${where} ${item.id}`).toBe(of(item.id).count);
          if (includeProducts !== 'true') {
            expect(item, where).not.toHaveProperty('products');
            continue;
          }
          expect(item.products, `${where} ${item.id}`).toEqual(
            of(item.id).ranked.slice(0, 4).map((id) => {
              const p = products.get(id)!;
              return { id, name: p.name, slug: p.slug, price: Number(p.price), images: p.images };
            }),
          );
        }
      }

      // GraphQL: the same arguments, and samples of other sizes (1, and more than any category holds of its own).
      const args = [...(parentOnly ? [`parentOnly: ${parentOnly}`] : []), ...(page ? [`page: ${page.page}`, `limit: ${page.limit}`] : [])];
      const gql = await app.graphql(`{ categories${args.length ? `(${args.join(', ')})` : ''} {
        items { id _count { products } products { id } one: products(limit: 1) { id } many: products(limit: 100) { id } } } }`);
      const where = `categories(${args.join(', ')})`;
      expect(gql.body.errors, where).toBeUndefined();
      const gqlItems = gql.body.data.categories.items as (Item & { one: { id: string }[]; many: { id: string }[] })[];
      expect(gqlItems.map((c) => c.id), where).toEqual(ids);
      for (const item of gqlItems) {
        const { count, ranked } = of(item.id);
        expect(item._count.products, `${where} ${item.id}`).toBe(count);
        expect(item.products!.map((p) => p.id), `${where} ${item.id}`).toEqual(ranked.slice(0, 4));
        expect(item.one.map((p) => p.id), `${where} ${item.id}`).toEqual(ranked.slice(0, 1));
        expect(item.many.map((p) => p.id), `${where} ${item.id}`).toEqual(ranked.slice(0, 100));
      }
    }
  }

  // One category by slug, and each of its subcategories (what GET /api/categories/{slug} counts too).
  const { rows: roots } = await app.sql.query<{ id: string; slug: string }>(`SELECT id, slug FROM "Category" WHERE "isActive" AND "parentId" IS NULL ORDER BY "order", id`);
  for (const root of roots) {
    // withReviews: a selection with a list of its own, which the products are loaded for by a way of their own (two statements).
    const res = await app.graphql(
      `query($slug: String!) { category(slug: $slug) { id _count { products } products { id } withReviews: products { id reviews(limit: 1) { id } }
        children { id _count { products } products(limit: 2) { id } } } }`,
      { slug: root.slug },
    );
    expect(res.body.errors).toBeUndefined();
    const category = res.body.data.category as Item & { children: Item[] };
    expect(category._count.products).toBe(of(root.id).count);
    expect(category.products!.map((p) => p.id)).toEqual(of(root.id).ranked.slice(0, 4));
    expect((category as unknown as { withReviews: { id: string }[] }).withReviews.map((p) => p.id)).toEqual(of(root.id).ranked.slice(0, 4));
    for (const child of category.children) {
      expect(child._count.products).toBe(of(child.id).count);
      expect(child.products!.map((p) => p.id)).toEqual(of(child.id).ranked.slice(0, 2));
    }
    expect((await app.get(`/api/categories/${root.slug}`)).body.data._count.products).toBe(of(root.id).count);
  }
}

let copies = 0;

/** `n` new products in `categoryId`, copied from an existing one, with their own ids and slugs; their ids. */
async function insertProducts(client: pg.Pool | pg.PoolClient, categoryId: string, n: number, o: { viewCount: number; isActive?: boolean }): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO "Product" (id, name, "nameEn", slug, description, price, "minOrder", stock, images, "isActive", "viewCount",
       "vatRate", "vatCategory", "searchText", "supplierId", "categoryId", "createdAt", "updatedAt")
     SELECT 'countcopy' || $1 || 'x' || g, name, "nameEn", slug || '-countcopy' || $1 || 'x' || g, description, price, "minOrder", stock, images,
       $2, $3, "vatRate", "vatCategory", "searchText", "supplierId", $4, now(), now()
     FROM (SELECT * FROM "Product" ORDER BY id LIMIT 1) AS template, generate_series(1, $5) AS g
     RETURNING id`,
    [`${++copies}${Date.now().toString(36)}`, o.isActive ?? true, o.viewCount, categoryId, n],
  );
  return rows.map((r) => r.id);
}

/** A top-level category with an active subcategory, and that subcategory (display order, the first such). */
async function rootWithChild(): Promise<{ root: string; child: string }> {
  const { rows } = await app.sql.query<{ root: string; child: string }>(
    `SELECT r.id AS root, c.id AS child FROM "Category" r JOIN "Category" c ON c."parentId" = r.id
      WHERE r."isActive" AND c."isActive" AND r."parentId" IS NULL ORDER BY r."order", r.id, c."order", c.id LIMIT 1`,
  );
  return rows[0]!;
}

/** Another top-level category's active subcategory. */
async function childOfAnotherRoot(root: string): Promise<string> {
  const { rows } = await app.sql.query<{ id: string }>(
    `SELECT c.id FROM "Category" c JOIN "Category" r ON r.id = c."parentId"
      WHERE r.id <> $1 AND r."parentId" IS NULL AND r."isActive" AND c."isActive" ORDER BY r."order", r.id, c."order", c.id LIMIT 1`,
    [root],
  );
  return rows[0]!.id;
}

describe("a category's product count and most viewed products", () => {
  it('are the definition on the seeded catalogue, for every parameter combination', async () => {
    const { rows } = await app.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "Category" WHERE NOT "isActive"`);
    // Inactive categories are part of their parent's subtree (their active products count there).
    expect(rows[0]!.n).toBeGreaterThan(0);
    await expectDefinition();
  });

  it('follow ties in views (broken by id) across a category and its subcategories', async () => {
    const { root, child } = await rootWithChild();
    // Products of the parent and the child tie with the most viewed of the catalogue.
    const { rows } = await app.sql.query<{ top: number }>(`SELECT max("viewCount") + 1 AS top FROM "Product"`);
    await insertProducts(app.sql, root, 3, { viewCount: rows[0]!.top });
    await insertProducts(app.sql, child, 3, { viewCount: rows[0]!.top });
    await app.sql.query(`UPDATE "Product" SET "viewCount" = $1 WHERE id IN (SELECT id FROM "Product" WHERE "categoryId" = $2 AND "isActive" ORDER BY id DESC LIMIT 2)`, [rows[0]!.top, child]);
    await expectDefinition();
  });

  it('follow products added, inactive ones left out, deactivated, reactivated and deleted', async () => {
    const { root, child } = await rootWithChild();
    const added = await insertProducts(app.sql, child, 5, { viewCount: 10_000_000 });
    await insertProducts(app.sql, root, 2, { viewCount: 20_000_000, isActive: false });
    await expectDefinition();
    await app.sql.query(`UPDATE "Product" SET "isActive" = false WHERE id = ANY($1)`, [added.slice(0, 2)]);
    await expectDefinition();
    await app.sql.query(`UPDATE "Product" SET "isActive" = true WHERE id = $1`, [added[0]]);
    await app.sql.query(`DELETE FROM "Product" WHERE id = ANY($1)`, [added.slice(1)]);
    await expectDefinition();
  });

  it('follow products moved to another category, and a subcategory deactivated', async () => {
    const { root, child } = await rootWithChild();
    const elsewhere = await childOfAnotherRoot(root);
    await app.sql.query(`UPDATE "Product" SET "categoryId" = $1 WHERE id IN (SELECT id FROM "Product" WHERE "categoryId" = $2 ORDER BY "viewCount" DESC, id LIMIT 3)`, [elsewhere, child]);
    // Moved and deactivated in one statement, and the other way round.
    await app.sql.query(`UPDATE "Product" SET "categoryId" = $1, "isActive" = NOT "isActive" WHERE id IN (SELECT id FROM "Product" WHERE "categoryId" = $2 ORDER BY id LIMIT 4)`, [child, elsewhere]);
    await expectDefinition();
    // Its products stay in its parent's subtree: counted and sampled there.
    await app.sql.query(`UPDATE "Category" SET "isActive" = false WHERE id = $1`, [child]);
    await expectDefinition();
    await app.sql.query(`UPDATE "Category" SET "isActive" = true WHERE id = $1`, [child]);
  });

  it('follow one statement changing products of every category, and a change rolled back', async () => {
    await app.sql.query(`UPDATE "Product" SET "isActive" = NOT "isActive" WHERE "viewCount" % 3 = 0`);
    await expectDefinition();
    const client = await app.sql.connect();
    try {
      await client.query('BEGIN');
      await client.query(`UPDATE "Product" SET "isActive" = false`);
      await insertProducts(client, (await rootWithChild()).root, 3, { viewCount: 1 });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await expectDefinition();
  });

  it('stay exact under transactions writing the same categories at once, in opposite orders', async () => {
    const { root, child } = await rootWithChild();
    const elsewhere = await childOfAnotherRoot(root);
    const categories = [root, child, elsewhere];
    // A connection each (the test's own pool holds two).
    const pool = new pg.Pool({ connectionString: app.url, max: 6 });
    pool.on('error', () => undefined);
    await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const order = i % 2 ? [...categories].reverse() : categories;
          for (const category of order) await insertProducts(client, category, 2, { viewCount: i });
          await client.query(`UPDATE "Product" SET "isActive" = false WHERE id IN (SELECT id FROM "Product" WHERE "categoryId" = $1 AND "isActive" ORDER BY id LIMIT 1)`, [order[0]]);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      }),
    ).finally(() => pool.end());
    await expectDefinition();
  });

  it('are zero after TRUNCATE, and follow the products added after it', async () => {
    // CASCADE: order items, reviews and favorites refer to products.
    await app.sql.query(`TRUNCATE "Product" CASCADE`);
    await expectDefinition();
    const { root, child } = await rootWithChild();
    // A template row is needed to copy from: the first is made from nothing.
    await app.sql.query(
      `INSERT INTO "Product" (id, name, "nameEn", slug, price, images, "vatRate", "vatCategory", "searchText", "supplierId", "categoryId", "updatedAt")
       SELECT 'countfresh', 'Fresh', 'Fresh', 'countfresh', 10, '{}', 0.21, 'STANDARD', 'fresh', (SELECT id FROM "Supplier" ORDER BY id LIMIT 1), $1, now()`,
      [child],
    );
    await insertProducts(app.sql, root, 3, { viewCount: 7 });
    await expectDefinition();
  });
});
