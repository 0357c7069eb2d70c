import { z } from 'zod';
import type { ApiContext } from '../../context/context.js';
import { requestLoader } from '../../context/loaders.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { money, type Money } from '../../rules/money.js';
import { findPage } from '../../db/direct-reads.js';
import { pageParams, pageWindow, type PageInput } from '../../shared/pagination.js';
import { enumParam, idParam, intParam } from '../../shared/validation.js';
import { productBySlug } from '../products/products.service.js';
import { supplierById } from '../suppliers/suppliers.service.js';

export const reviewSorts = ['newest', 'rating_desc', 'rating_asc'] as const;
export type ReviewSort = (typeof reviewSorts)[number];

export const RATING_MIN = 1;
export const RATING_MAX = 5;

const listParams = {
  ...pageParams,
  rating: intParam(RATING_MIN, RATING_MAX).optional(),
  sortBy: enumParam(reviewSorts).default('newest'),
};

// The owner (slug, id) is in each rule because a field's arguments are parsed whole; REST takes it
// from the path (src/rest/derive.ts leaves path arguments out of the query string).
export const productReviewsInput = z.object({ slug: idParam, ...listParams }).strict();
export const supplierReviewsInput = z.object({ id: idParam, ...listParams }).strict();
type ReviewListInput = Omit<z.output<typeof productReviewsInput>, 'slug'>;

/** Reviews newest first, then by id (as every list of the API ends): every list of reviews, and every tie. */
export const NEWEST_REVIEWS_FIRST: Prisma.ReviewOrderByWithRelationInput[] = [{ createdAt: 'desc' }, { id: 'asc' }];

const reviewOrders: Record<ReviewSort, Prisma.ReviewOrderByWithRelationInput[]> = {
  newest: NEWEST_REVIEWS_FIRST,
  rating_desc: [{ rating: 'desc' }, ...NEWEST_REVIEWS_FIRST],
  rating_asc: [{ rating: 'asc' }, ...NEWEST_REVIEWS_FIRST],
};

/**
 * Of a supplier's reviews, only those of its active products are shown (its list, its summary and
 * Supplier.reviews): a hidden product is hidden with its reviews.
 */
export const OF_ACTIVE_PRODUCTS = { product: { isActive: true } } as const satisfies Prisma.ReviewWhereInput;

/** The reviews among `ids` of active products (node refetch: what an active product's reviews list shows). */
export const reviewsByIds = (ctx: ApiContext, ids: string[]) =>
  ctx.prisma.review.findMany({ where: { id: { in: ids }, ...OF_ACTIVE_PRODUCTS }, select: { id: true } });

/** One page of an owner's reviews, with the owner already found. */
export interface ReviewPage extends PageInput {
  where: Prisma.ReviewWhereInput;
  orderBy: Prisma.ReviewOrderByWithRelationInput[];
}

function reviewPage(owner: Prisma.ReviewWhereInput, { page, limit, rating, sortBy }: ReviewListInput): ReviewPage {
  return { page, limit, where: { ...owner, ...(rating === undefined ? {} : { rating }) }, orderBy: reviewOrders[sortBy] };
}

/** The reviews of an active product; null when the slug names none (as `product` answers). */
export async function productReviewPage(ctx: ApiContext, { slug, ...input }: z.output<typeof productReviewsInput>): Promise<ReviewPage | null> {
  const product = await productBySlug(ctx, slug, { select: { id: true } });
  return product && reviewPage({ productId: product.id }, input);
}

/** The reviews of an active supplier's active products; null when the id names no active supplier. */
export async function supplierReviewPage(ctx: ApiContext, { id, ...input }: z.output<typeof supplierReviewsInput>): Promise<ReviewPage | null> {
  const supplier = await supplierById(ctx, id, { select: { id: true } });
  return supplier && reviewPage({ supplierId: supplier.id, ...OF_ACTIVE_PRODUCTS }, input);
}

export async function listReviews<Q extends object>(ctx: ApiContext, page: ReviewPage, query: Q) {
  const window = pageWindow(page);
  if (!window) return [];
  return findPage(ctx.prisma, 'Review', ctx.prisma.review, { where: page.where, orderBy: page.orderBy, ...window }, query);
}

export const countReviews = (ctx: ApiContext, page: ReviewPage) => ctx.prisma.review.count({ where: page.where });

// ----- summaries -----

export interface RatingBucket {
  rating: number;
  count: number;
}

export interface ReviewSummary {
  /** Mean rating rounded half up to 2 decimals; null without reviews. */
  average: Money | null;
  count: number;
  /** One bucket per rating RATING_MIN..RATING_MAX, empty ones included. */
  histogram: RatingBucket[];
}

const RATINGS = Array.from({ length: RATING_MAX - RATING_MIN + 1 }, (_, i) => RATING_MIN + i);

function summaryOf(countByRating: ReadonlyMap<number, number>): ReviewSummary {
  let count = 0;
  let sum = 0;
  for (const [rating, n] of countByRating) {
    count += n;
    sum += rating * n;
  }
  return {
    // Exact decimal arithmetic: a binary float would round 4.145 down.
    average: count ? money(sum).div(count).toDecimalPlaces(2) : null,
    count,
    histogram: RATINGS.map((rating) => ({ rating, count: countByRating.get(rating) ?? 0 })),
  };
}

/** Summaries for each owner id, from (owner, rating, count) rows. */
function summariesByOwner(ids: readonly string[], rows: readonly { owner: string; rating: number; count: number }[]): ReviewSummary[] {
  const counts = new Map<string, Map<number, number>>();
  for (const { owner, rating, count } of rows) {
    const byRating = counts.get(owner) ?? new Map<number, number>();
    byRating.set(rating, count);
    counts.set(owner, byRating);
  }
  return ids.map((id) => summaryOf(counts.get(id) ?? new Map()));
}

/** A product's review summary; the products of one request are summarised in one grouped query. */
export function productReviewSummary(ctx: ApiContext, productId: string): Promise<ReviewSummary> {
  return requestLoader<string, ReviewSummary>(ctx, 'review.productSummary', async (ids) => {
    const groups = await ctx.prisma.review.groupBy({ by: ['productId', 'rating'], where: { productId: { in: [...ids] } }, _count: { _all: true } });
    return summariesByOwner(ids, groups.map((g) => ({ owner: g.productId, rating: g.rating, count: g._count._all })));
  }).load(productId);
}

/** A supplier's review summary (its active products' reviews); batched like productReviewSummary. */
export function supplierReviewSummary(ctx: ApiContext, supplierId: string): Promise<ReviewSummary> {
  return requestLoader<string, ReviewSummary>(ctx, 'review.supplierSummary', async (ids) => {
    const groups = await ctx.prisma.review.groupBy({
      by: ['supplierId', 'rating'],
      where: { supplierId: { in: [...ids] }, ...OF_ACTIVE_PRODUCTS },
      _count: { _all: true },
    });
    return summariesByOwner(ids, groups.map((g) => ({ owner: g.supplierId, rating: g.rating, count: g._count._all })));
  }).load(supplierId);
}
