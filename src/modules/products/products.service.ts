import { z } from 'zod';
import type { Context } from '../../context.js';
import type { Prisma, Product } from '../../generated/prisma/client.js';
import { requestLoader } from '../../loaders.js';
import { pageParams, pageWindow, type PageInput } from '../../pagination.js';
import { searchWords } from '../../search.js';
import { booleanParam, decimalParam, enumParam, idParam, parseInput, textParam } from '../../validation.js';
import { subtreeIds } from '../categories/categories.service.js';

export const productSorts = ['newest', 'price_asc', 'price_desc', 'popular'] as const;
export type ProductSort = (typeof productSorts)[number];

const filterParams = {
  search: textParam().optional(),
  categoryId: idParam.optional(),
  supplierId: idParam.optional(),
  minPrice: decimalParam().optional(),
  maxPrice: decimalParam().optional(),
  featured: booleanParam.optional(),
  sortBy: enumParam(productSorts).default('newest'),
};

const checkPriceRange = (v: { minPrice?: number | undefined; maxPrice?: number | undefined }, ctx: z.RefinementCtx) => {
  if (v.minPrice !== undefined && v.maxPrice !== undefined && v.minPrice > v.maxPrice) {
    ctx.addIssue({ code: 'custom', path: ['maxPrice'], message: 'must be ≥ minPrice' });
  }
};

export const productFilterInput = z.object(filterParams).strict().superRefine(checkPriceRange);
export const productListInput = z.object({ ...pageParams, ...filterParams }).strict().superRefine(checkPriceRange);

export type ProductFilter = z.output<typeof productFilterInput>;
export type ProductListInput = z.output<typeof productListInput>;

export const parseProductFilter = (raw: object) => parseInput(productFilterInput, raw);
export const parseProductListInput = (raw: object) => parseInput(productListInput, raw);

const productOrders: Record<ProductSort, Prisma.ProductOrderByWithRelationInput[]> = {
  newest: [{ createdAt: 'desc' }, { id: 'asc' }],
  price_asc: [{ price: 'asc' }, { id: 'asc' }],
  price_desc: [{ price: 'desc' }, { id: 'asc' }],
  popular: [{ viewCount: 'desc' }, { id: 'asc' }],
};

/** A validated product query resolved to Prisma terms, shared by the items and the count. */
export interface ProductQuery {
  where: Prisma.ProductWhereInput;
  orderBy: Prisma.ProductOrderByWithRelationInput[];
}

/** Only active products are ever listed; every filter of the API narrows that set. */
export async function productQuery(ctx: Context, filter: ProductFilter): Promise<ProductQuery> {
  const and: Prisma.ProductWhereInput[] = [{ isActive: true }];
  if (filter.categoryId) and.push({ categoryId: { in: await subtreeIds(ctx, filter.categoryId) } });
  if (filter.supplierId) and.push({ supplierId: filter.supplierId });
  if (filter.minPrice !== undefined) and.push({ price: { gte: filter.minPrice } });
  if (filter.maxPrice !== undefined) and.push({ price: { lte: filter.maxPrice } });
  if (filter.featured) and.push({ isFeatured: true });
  if (filter.search) {
    // Every word must appear somewhere in name, nameEn, description or sku.
    for (const word of searchWords(filter.search)) and.push({ searchText: { contains: word } });
  }
  return { where: { AND: and }, orderBy: productOrders[filter.sortBy] };
}

/** One page of products; with no page, the query's own window (a Relay connection's cursor and take). */
export async function listProducts<Q extends object>(ctx: Context, q: ProductQuery, page: PageInput | null, query: Q) {
  const window = page ? pageWindow(page) : {};
  if (!window) return [];
  return ctx.prisma.product.findMany({ ...query, where: q.where, orderBy: q.orderBy, ...window });
}

export const countProducts = (ctx: Context, q: ProductQuery) =>
  ctx.totals.count(`products:${JSON.stringify(q.where)}`, () => ctx.prisma.product.count({ where: q.where }));

export async function productBySlug<Q extends object>(ctx: Context, slug: string, query: Q) {
  if (!idParam.safeParse(slug).success) return null;
  return ctx.prisma.product.findFirst({ ...query, where: { slug, isActive: true } });
}

/**
 * Active products by id, in the order given (ids from a ranked query). Calls made while one
 * GraphQL list resolves are batched into one statement per selection.
 */
export async function productsByIds<Q extends object>(ctx: Context, ids: readonly string[], query: Q) {
  if (ids.length === 0) return [];
  const loader = requestLoader<string, Product | null>(ctx, `product.byId:${JSON.stringify(query)}`, async (keys) => {
    const rows = await ctx.prisma.product.findMany({ ...query, where: { id: { in: [...keys] }, isActive: true } });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return keys.map((id) => byId.get(id) ?? null);
  });
  const rows = await loader.loadMany(ids);
  return rows.filter((r): r is Product => r !== null && !(r instanceof Error));
}

export interface ProductCounts {
  reviews: number;
  favorites: number;
}
