import { z } from 'zod';
import type { ApiContext } from '../../context/context.js';
import { findPage } from '../../db/pages.js';
import { Prisma, type Product } from '../../generated/prisma/client.js';
import { LIMIT_DEFAULT, limitParam, PAGE_DEFAULT, pageParam, pageWindow, type PageInput } from '../../shared/pagination.js';
import { requestLoader } from '../../context/loaders.js';
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
  if (!page) return ctx.prisma.category.findMany({ ...query, where: categoryWhere(input), orderBy: categoryOrder });
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
 * `tree(root, id)`: each of the given categories with itself and all its descendants. What is
 * "in" a category (the product filter, counts, samples) is what is in this tree.
 */
const subtree = (rootIds: readonly string[]) => Prisma.sql`
  WITH RECURSIVE tree AS (
    SELECT id AS root, id FROM "Category" WHERE id = ANY(${rootIds as string[]})
    UNION
    SELECT t.root, c.id FROM "Category" c JOIN tree t ON c."parentId" = t.id
  )`;

/** Rows grouped by `root`, in the order of `ids`: a DataLoader batch result. */
function byRoot<R extends { root: string }, V>(ids: readonly string[], rows: R[], value: (rows: R[]) => V): V[] {
  const groups = new Map<string, R[]>();
  for (const row of rows) {
    const group = groups.get(row.root) ?? [];
    group.push(row);
    groups.set(row.root, group);
  }
  return ids.map((id) => value(groups.get(id) ?? []));
}

/**
 * The category and all its descendants. Cached for the request, so a list's items and its
 * count (or a connection's page and totalCount) walk the tree once.
 */
export function subtreeIds(ctx: ApiContext, categoryId: string): Promise<string[]> {
  return requestLoader<string, string[]>(ctx, 'category.subtreeIds', async (ids) => {
    const rows = await ctx.prisma.$queryRaw<{ root: string; id: string }[]>`${subtree(ids)} SELECT root, id FROM tree`;
    return byRoot(ids, rows, (group) => group.map((r) => r.id));
  }).load(categoryId);
}

/** Active products in each category's subtree, counted for a whole list in one statement. */
export function subtreeProductCount(ctx: ApiContext, categoryId: string): Promise<number> {
  return requestLoader<string, number>(ctx, 'category.subtreeProductCount', async (ids) => {
    const rows = await ctx.prisma.$queryRaw<{ root: string; n: number }[]>`${subtree(ids)}
      SELECT t.root, count(p.id)::int AS n
      FROM tree t JOIN "Product" p ON p."categoryId" = t.id AND p."isActive"
      GROUP BY t.root`;
    return byRoot(ids, rows, (group) => group[0]?.n ?? 0);
  }).load(categoryId);
}

/**
 * Ids of up to `limit` active products from each category's subtree, most viewed first, for a
 * whole list of categories in one statement.
 */
export function subtreeProductSampleIds(ctx: ApiContext, categoryId: string, limit: number): Promise<string[]> {
  return requestLoader<string, string[]>(ctx, `category.subtreeProductSample:${limit}`, async (ids) => {
    const rows = await ctx.prisma.$queryRaw<{ root: string; id: string }[]>`${subtree(ids)}
      SELECT root, id FROM (
        SELECT t.root, p.id, row_number() OVER (PARTITION BY t.root ORDER BY p."viewCount" DESC, p.id) AS rn
        FROM tree t JOIN "Product" p ON p."categoryId" = t.id AND p."isActive"
      ) ranked
      WHERE rn <= ${limit}
      ORDER BY root, rn`;
    return byRoot(ids, rows, (group) => group.map((r) => r.id));
  }).load(categoryId);
}

/**
 * Active products by id, in the order given (ids from a ranked query). Calls made while one
 * GraphQL list resolves are batched into one statement per selection.
 */
export async function productsByIds<Q extends object>(ctx: ApiContext, ids: readonly string[], query: Q) {
  if (ids.length === 0) return [];
  const loader = requestLoader<string, Product | null>(ctx, `product.byId:${JSON.stringify(query)}`, async (keys) => {
    const rows = await ctx.prisma.product.findMany({ ...query, where: { id: { in: [...keys] }, isActive: true } });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return keys.map((id) => byId.get(id) ?? null);
  });
  const rows = await loader.loadMany(ids);
  return rows.filter((r): r is Product => r !== null && !(r instanceof Error));
}
