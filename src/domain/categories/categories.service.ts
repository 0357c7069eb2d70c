import { z } from 'zod';
import type { ApiContext } from '../../context/context.js';
import { findAll, findPage, plainRead } from '../../db/direct-reads.js';
import { readDirect } from '../../db/prisma.js';
import type { Prisma, Product } from '../../generated/prisma/client.js';
import { LIMIT_DEFAULT, limitParam, PAGE_DEFAULT, pageParam, pageWindow, type PageInput } from '../../shared/pagination.js';
import { queryKey, requestLoader } from '../../context/loaders.js';
import { booleanParam } from '../../shared/validation.js';

export const categoryListInput = z
  .object({
    page: pageParam.optional(),
    limit: limitParam.optional(),
    parentOnly: booleanParam.optional(),
  })
  .strict();

export type CategoryListInput = z.output<typeof categoryListInput>;

/** A connection's filters: the offset list's, without its page. */
export const categoryFilterInput = categoryListInput.omit({ page: true, limit: true });


/** Without page or limit the whole list is returned (docs/api.md, Pagination: categories are a small tree). */
export function categoryPage(input: CategoryListInput): PageInput | null {
  if (input.page === undefined && input.limit === undefined) return null;
  return { page: input.page ?? PAGE_DEFAULT, limit: input.limit ?? LIMIT_DEFAULT };
}

export function categoryWhere(input: CategoryListInput): Prisma.CategoryWhereInput {
  const where: Prisma.CategoryWhereInput = { isActive: true };
  if (input.parentOnly) where.parentId = null;
  return where;
}

export const categoryOrder: Prisma.CategoryOrderByWithRelationInput[] = [{ order: 'asc' }, { id: 'asc' }];

export async function listCategories<Q extends object>(ctx: ApiContext, input: CategoryListInput, query: Q) {
  const page = categoryPage(input);
  if (!page) return findAll(ctx.prisma, 'Category', ctx.prisma.category, categoryWhere(input), categoryOrder, query);
  const window = pageWindow(page);
  if (!window) return [];
  return findPage(ctx.prisma, 'Category', ctx.prisma.category, { where: categoryWhere(input), orderBy: categoryOrder, ...window }, query);
}

export const countCategories = (ctx: ApiContext, input: CategoryListInput) =>
  ctx.prisma.category.count({ where: categoryWhere(input) });

/** A connection's window of categories (plugin-prisma's cursor, skip and take in `query`), in display order. */
export const categoryWindow = <Q extends object>(ctx: ApiContext, input: CategoryListInput, query: Q) =>
  ctx.prisma.category.findMany({ ...query, where: categoryWhere(input), orderBy: categoryOrder });

/** The active categories among `ids` (node refetch: category(slug:)'s rule, batched). */
export const categoriesByIds = (ctx: ApiContext, ids: string[]) =>
  ctx.prisma.category.findMany({ where: { id: { in: ids }, isActive: true }, select: { id: true } });

export async function categoryBySlug<Q extends object>(ctx: ApiContext, slug: string, query: Q) {
  return ctx.prisma.category.findFirst({ ...query, where: { slug, isActive: true } });
}

/**
 * `tree(root, id)`: each of the categories in the array parameter $1 with itself and all its
 * descendants. What is "in" a category (the product filter, counts, samples) is what is in this tree.
 */
const SUBTREE = `WITH RECURSIVE tree AS (
    SELECT id AS root, id FROM "Category" WHERE id = ANY($1::text[])
    UNION
    SELECT t.root, c.id FROM "Category" c JOIN tree t ON c."parentId" = t.id
  )`;

/**
 * `ranked(root, id, rn)`, after SUBTREE: each root's first $2 active products by views (ties by
 * id), rn counting from 1. Each category of a subtree gives its own first $2 from the index on
 * (categoryId, isActive, viewCount DESC, id), and the subtree's first $2 are among those: a few
 * index entries per category, instead of every product of the subtree ranked.
 */
const RANKED = `SELECT root, id, rn FROM (
    SELECT s.root, top.id, row_number() OVER (PARTITION BY s.root ORDER BY top."viewCount" DESC, top.id) AS rn
    FROM tree s CROSS JOIN LATERAL (
      SELECT p.id, p."viewCount" FROM "Product" p
      WHERE p."categoryId" = s.id AND p."isActive"
      ORDER BY p."viewCount" DESC, p.id
      LIMIT $2
    ) top
  ) numbered
  WHERE rn <= $2`;

/**
 * One statement of ours as rows of its columns' values, in order: past Prisma where it can be
 * (readDirect: Prisma's raw query costs several times these statements' own time), through
 * Prisma on a transaction's client.
 */
async function readRows(ctx: ApiContext, text: string, values: unknown[]): Promise<unknown[][]> {
  const direct = await readDirect(ctx.prisma, text, values);
  if (direct) return direct;
  const rows = await ctx.prisma.$queryRawUnsafe<Record<string, unknown>[]>(text, ...values);
  return rows.map((row) => Object.values(row));
}

/** Rows grouped by their first column, a root, in the order of `ids`: a DataLoader batch result. */
function byRoot<V>(ids: readonly string[], rows: unknown[][], value: (rows: unknown[][]) => V): V[] {
  const groups = new Map<unknown, unknown[][]>();
  for (const row of rows) {
    const group = groups.get(row[0]) ?? [];
    group.push(row);
    groups.set(row[0], group);
  }
  return ids.map((id) => value(groups.get(id) ?? []));
}

/**
 * The category and all its descendants. Cached for the request, so a list's items and its
 * count (or a connection's page and totalCount) walk the tree once.
 */
export function subtreeIds(ctx: ApiContext, categoryId: string): Promise<string[]> {
  return requestLoader<string, string[]>(ctx, 'category.subtreeIds', async (ids) => {
    const rows = await readRows(ctx, `${SUBTREE} SELECT root, id FROM tree`, [ids]);
    return byRoot(ids, rows, (group) => group.map((r) => r[1] as string));
  }).load(categoryId);
}

/**
 * Active products in each category's subtree, for a whole list in one statement: the subtree's
 * rows of "CategoryProductCount" (each category's own active products, kept by triggers on
 * "Product": migration *_category_product_counts) added up, never its products counted.
 */
export function subtreeProductCount(ctx: ApiContext, categoryId: string): Promise<number> {
  return requestLoader<string, number>(ctx, 'category.subtreeProductCount', async (ids) => {
    const rows = await readRows(
      ctx,
      `${SUBTREE} SELECT t.root, sum(k."activeProducts")::int FROM tree t JOIN "CategoryProductCount" k ON k."categoryId" = t.id GROUP BY t.root`,
      [ids],
    );
    return byRoot(ids, rows, (group) => (group[0]?.[1] as number | undefined) ?? 0);
  }).load(categoryId);
}

/**
 * Up to `limit` active products from the category's subtree, most viewed first (ties by id), as
 * `query` (plugin-prisma's selection) loads them, for a whole list of categories in one
 * statement: the ranking (RANKED) joined to the products' rows, read past Prisma (src/db/direct-reads.ts,
 * plainRead). A selection more than plain takes two statements: the ranked ids, then the rows
 * through Prisma.
 */
export async function subtreeProducts<Q extends object>(ctx: ApiContext, categoryId: string, limit: number, query: Q): Promise<Product[]> {
  const read = plainRead('Product', query);
  if (!read) return productsByIds(ctx, await subtreeProductSampleIds(ctx, categoryId, limit), query);
  return requestLoader<string, Product[]>(ctx, `category.subtreeProducts:${limit}:${queryKey(query)}`, async (ids) => {
    // Each ranked product looked up by its id, LIMIT 1 keeping the lookup a subquery of its own:
    // joined plainly, the planner, which takes the subtrees for ten times their size (a recursive
    // query's guess), hashed every product to match a few hundred.
    const text = `${SUBTREE} SELECT ranked.root, ${read.columns}
      FROM (${RANKED}) ranked CROSS JOIN LATERAL (SELECT * FROM "Product" p WHERE p.id = ranked.id LIMIT 1) t${read.joins}
      ORDER BY ranked.root, ranked.rn`;
    const rows = await readDirect(ctx.prisma, text, [ids, limit]);
    if (!rows) return Promise.all(ids.map(async (id) => productsByIds(ctx, await subtreeProductSampleIds(ctx, id, limit), query)));
    return byRoot(ids, rows, (group) => group.map((row) => read.row(row.slice(1)) as unknown as Product));
  }).load(categoryId);
}

/** Ids of up to `limit` active products from each category's subtree, ranked as subtreeProducts ranks them. */
export function subtreeProductSampleIds(ctx: ApiContext, categoryId: string, limit: number): Promise<string[]> {
  return requestLoader<string, string[]>(ctx, `category.subtreeProductSample:${limit}`, async (ids) => {
    const rows = await readRows(ctx, `${SUBTREE} SELECT root, id FROM (${RANKED}) ranked ORDER BY root, rn`, [ids, limit]);
    return byRoot(ids, rows, (group) => group.map((r) => r[1] as string));
  }).load(categoryId);
}

/**
 * Active products by id, in the order given (ids from a ranked query). Calls made while one
 * GraphQL list resolves are batched into one statement per selection.
 */
export async function productsByIds<Q extends object>(ctx: ApiContext, ids: readonly string[], query: Q) {
  if (ids.length === 0) return [];
  const loader = requestLoader<string, Product | null>(ctx, `product.byId:${queryKey(query)}`, async (keys) => {
    const rows = await ctx.prisma.product.findMany({ ...query, where: { id: { in: [...keys] }, isActive: true } });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return keys.map((id) => byId.get(id) ?? null);
  });
  const rows = await loader.loadMany(ids);
  return rows.filter((r): r is Product => r !== null && !(r instanceof Error));
}
