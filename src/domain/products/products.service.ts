import { z } from 'zod';
import type { ApiContext } from '../../context/context.js';
import type { ListedCondition } from '../../db/catalog-changes.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { Money } from '../../rules/money.js';
import { findPage, findUnique, rowsInOrder } from '../../db/direct-reads.js';
import { pageParams, pageWindow, type PageInput } from '../../shared/pagination.js';
import { searchWords } from './search.js';
import { booleanParam, enumParam, moneyParam, idParam, textParam } from '../../shared/validation.js';
import { subtreeIds } from '../categories/categories.service.js';

export const productSorts = ['newest', 'price_asc', 'price_desc', 'popular'] as const;
export type ProductSort = (typeof productSorts)[number];

const filterParams = {
  search: textParam().optional(),
  categoryId: idParam.optional(),
  supplierId: idParam.optional(),
  minPrice: moneyParam().optional(),
  maxPrice: moneyParam().optional(),
  featured: booleanParam.optional(),
  sortBy: enumParam(productSorts).default('newest'),
};

const checkPriceRange = (v: { minPrice?: Money | undefined; maxPrice?: Money | undefined }, ctx: z.RefinementCtx) => {
  if (v.minPrice !== undefined && v.maxPrice !== undefined && v.minPrice.greaterThan(v.maxPrice)) {
    ctx.addIssue({ code: 'custom', path: ['maxPrice'], message: 'must be ≥ minPrice' });
  }
};

export const productFilterInput = z.object(filterParams).strict().superRefine(checkPriceRange);
export const productListInput = z.object({ ...pageParams, ...filterParams }).strict().superRefine(checkPriceRange);

export type ProductFilter = z.output<typeof productFilterInput>;
export type ProductListInput = z.output<typeof productListInput>;


const productOrders: Record<ProductSort, Prisma.ProductOrderByWithRelationInput[]> = {
  newest: [{ createdAt: 'desc' }, { id: 'asc' }],
  price_asc: [{ price: 'asc' }, { id: 'asc' }],
  price_desc: [{ price: 'desc' }, { id: 'asc' }],
  popular: [{ viewCount: 'desc' }, { id: 'asc' }],
};

/** A validated product query resolved to Prisma terms, shared by the items and the count. */
export interface ProductQuery {
  where: { AND: ListedCondition[] };
  orderBy: Prisma.ProductOrderByWithRelationInput[];
  /** Words to search for are among the conditions. */
  searched: boolean;
}

/** Every product list's first condition: only active products are listed. */
const LISTED: ListedCondition = { isActive: true };

/** Only active products are ever listed; every filter of the API narrows that set. */
export async function productQuery(ctx: ApiContext, filter: ProductFilter): Promise<ProductQuery> {
  const and: ListedCondition[] = [LISTED];
  if (filter.categoryId) and.push({ categoryId: { in: await subtreeIds(ctx, filter.categoryId) } });
  if (filter.supplierId) and.push({ supplierId: filter.supplierId });
  if (filter.minPrice !== undefined) and.push({ price: { gte: filter.minPrice } });
  if (filter.maxPrice !== undefined) and.push({ price: { lte: filter.maxPrice } });
  if (filter.featured) and.push({ isFeatured: true });
  // Every word must appear somewhere in name, nameEn, description or sku.
  const words = filter.search ? searchWords(filter.search) : [];
  for (const word of words) and.push({ searchText: { contains: word } });
  return { where: { AND: and }, orderBy: productOrders[filter.sortBy], searched: words.length > 0 };
}

/** One page of products; with no page, the query's own window (a Relay connection's cursor and take). */
export async function listProducts<Q extends object>(ctx: ApiContext, q: ProductQuery, page: PageInput | null, query: Q) {
  const list = { ...query, where: q.where, orderBy: q.orderBy };
  if (!page) return ctx.prisma.product.findMany(list);
  const window = pageWindow(page);
  if (!window) return [];
  if (q.searched) return searchedPage(ctx, q, window, query);
  return findPage(ctx.prisma, 'Product', ctx.prisma.product, { where: q.where, orderBy: q.orderBy, ...window }, query);
}

/**
 * A searched page: the ids on a plan chosen from the known totals, then the page's products by id.
 *
 * The planner guesses how many products a word matches from a sample, off by 10-100× either way
 * ("220": 55 matches at 1,000,000 products, guessed 3,754; "laptop core": 7,009, guessed 165).
 * Guessing many, it walks the sort's index to the first matches and for a rare word reads most
 * of the catalogue (~1 s); guessing few, it collects every match and, as Prisma loads relations
 * in the same statement, builds supplier, category and counts for all of them before sorting
 * (120 ms). With the totals known: walking the index in sort order visits about
 * (skip + take) × active ÷ total products until the page is full, collecting visits total; the
 * plan that visits fewer is imposed for the ids, and relations are loaded for the page only.
 */
async function searchedPage<Q extends object>(ctx: ApiContext, q: ProductQuery, window: { skip: number; take: number }, query: Q) {
  const [total, active] = await Promise.all([countProducts(ctx, q), ctx.totals.products([LISTED])]);
  if (window.skip >= total) return [];
  const walk = (window.skip + window.take) * active <= total * total;
  const [, matches] = await ctx.prisma.$transaction([
    ctx.prisma.$executeRawUnsafe(walk ? 'SET LOCAL enable_bitmapscan = off' : 'SET LOCAL enable_indexscan = off'),
    ctx.prisma.product.findMany({ where: q.where, orderBy: q.orderBy, select: { id: true }, ...window }),
  ]);
  return rowsInOrder(ctx.prisma.product, q.where, matches.map((m) => m.id), query);
}

export const countProducts = (ctx: ApiContext, q: ProductQuery) => ctx.totals.products(q.where.AND);

export async function productBySlug<Q extends object>(ctx: ApiContext, slug: string, query: Q) {
  return findUnique(ctx.prisma, 'Product', ctx.prisma.product, { slug, isActive: true }, query);
}

/** The active products among `ids` (node refetch: product(slug:)'s rule, batched). */
export const productsByIdsVisible = (ctx: ApiContext, ids: string[]) =>
  ctx.prisma.product.findMany({ where: { id: { in: ids }, isActive: true }, select: { id: true } });

export interface ProductCounts {
  reviews: number;
  favorites: number;
}
