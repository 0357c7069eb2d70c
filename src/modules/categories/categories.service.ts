import { z } from 'zod';
import type { Context } from '../../context.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { LIMIT_DEFAULT, limitParam, PAGE_DEFAULT, pageParam, pageWindow, type PageInput } from '../../pagination.js';
import { requestLoader } from '../../loaders.js';
import { booleanParam, idParam, parseInput } from '../../validation.js';

export const categoryListInput = z
  .object({
    page: pageParam.optional(),
    limit: limitParam.optional(),
    parentOnly: booleanParam.optional(),
    includeProducts: booleanParam.optional(),
  })
  .strict();

export type CategoryListInput = z.output<typeof categoryListInput>;

export const parseCategoryListInput = (raw: object) => parseInput(categoryListInput, raw);

/** Without page or limit the whole list is returned (CONTRACT: categories are a small tree). */
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

export async function listCategories<Q extends object>(ctx: Context, input: CategoryListInput, query: Q) {
  const page = categoryPage(input);
  const window = page ? pageWindow(page) : {};
  if (!window) return [];
  return ctx.prisma.category.findMany({ ...query, where: categoryWhere(input), orderBy: categoryOrder, ...window });
}

export const countCategories = (ctx: Context, input: CategoryListInput) =>
  ctx.prisma.category.count({ where: categoryWhere(input) });

export async function categoryBySlug<Q extends object>(ctx: Context, slug: string, query: Q) {
  if (!idParam.safeParse(slug).success) return null;
  return ctx.prisma.category.findFirst({ ...query, where: { slug, isActive: true } });
}

/** The category and all its descendants: a product "in" a category is in any of them. */
export async function subtreeIds(ctx: Context, categoryId: string): Promise<string[]> {
  const rows = await ctx.prisma.$queryRaw<{ id: string }[]>`
    WITH RECURSIVE tree AS (
      SELECT id FROM "Category" WHERE id = ${categoryId}
      UNION
      SELECT c.id FROM "Category" c JOIN tree t ON c."parentId" = t.id
    )
    SELECT id FROM tree`;
  return rows.map((r) => r.id);
}

/** Active products in each category's subtree, counted for a whole list in one statement. */
export function subtreeProductCount(ctx: Context, categoryId: string): Promise<number> {
  return requestLoader<string, number>(ctx, 'category.subtreeProductCount', async (ids) => {
    const rows = await ctx.prisma.$queryRaw<{ root: string; n: number }[]>`
      WITH RECURSIVE tree AS (
        SELECT id AS root, id FROM "Category" WHERE id = ANY(${ids as string[]})
        UNION
        SELECT t.root, c.id FROM "Category" c JOIN tree t ON c."parentId" = t.id
      )
      SELECT t.root, count(p.id)::int AS n
      FROM tree t JOIN "Product" p ON p."categoryId" = t.id AND p."isActive"
      GROUP BY t.root`;
    const byRoot = new Map(rows.map((r) => [r.root, r.n]));
    return ids.map((id) => byRoot.get(id) ?? 0);
  }).load(categoryId);
}

/**
 * Ids of up to `limit` active products from each category's subtree, most viewed first, for a
 * whole list of categories in one statement.
 */
export function subtreeProductSampleIds(ctx: Context, categoryId: string, limit: number): Promise<string[]> {
  return requestLoader<string, string[]>(ctx, `category.subtreeProductSample:${limit}`, async (ids) => {
    const rows = await ctx.prisma.$queryRaw<{ root: string; id: string }[]>`
      WITH RECURSIVE tree AS (
        SELECT id AS root, id FROM "Category" WHERE id = ANY(${ids as string[]})
        UNION
        SELECT t.root, c.id FROM "Category" c JOIN tree t ON c."parentId" = t.id
      )
      SELECT root, id FROM (
        SELECT t.root, p.id, row_number() OVER (PARTITION BY t.root ORDER BY p."viewCount" DESC, p.id) AS rn
        FROM tree t JOIN "Product" p ON p."categoryId" = t.id AND p."isActive"
      ) ranked
      WHERE rn <= ${limit}
      ORDER BY root, rn`;
    const byRoot = new Map<string, string[]>();
    for (const r of rows) {
      const list = byRoot.get(r.root) ?? [];
      list.push(r.id);
      byRoot.set(r.root, list);
    }
    return ids.map((id) => byRoot.get(id) ?? []);
  }).load(categoryId);
}
