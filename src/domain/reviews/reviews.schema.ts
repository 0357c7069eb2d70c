import { builder } from '../../graphql/builder.js';
import { withInput } from '../../graphql/field-rules.js';
import { implementNode } from '../../graphql/nodes.js';
import { metaFor, pageArgs, PaginationMetaRef, sortEnum } from '../../graphql/pagination-types.js';
import {
  countReviews,
  listReviews,
  productReviewPage,
  productReviewsInput,
  RATING_MAX,
  RATING_MIN,
  type RatingBucket,
  type ReviewPage,
  reviewSorts,
  reviewsByIds,
  type ReviewSummary,
  supplierReviewPage,
  supplierReviewsInput,
} from './reviews.service.js';

export const Review = builder.prismaObject('Review', {
  // Load only the columns a query asks for (not searchText, descriptions… on every list).
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    rating: t.exposeInt('rating', { description: '1 to 5' }),
    title: t.exposeString('title'),
    comment: t.exposeString('comment'),
    images: t.exposeStringList('images'),
    isVerified: t.exposeBoolean('isVerified'),
    verifiedPurchase: t.exposeBoolean('verifiedPurchase'),
    supplierResponse: t.exposeString('supplierResponse', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    product: t.relation('product'),
  }),
});

implementNode(Review, { load: reviewsByIds });

export const ReviewSortRef = sortEnum('ReviewSort', reviewSorts);

const RatingBucketRef = builder.objectRef<RatingBucket>('RatingBucket').implement({
  fields: (t) => ({
    rating: t.exposeInt('rating', { description: `${RATING_MIN} to ${RATING_MAX}` }),
    count: t.exposeInt('count', { description: 'Reviews with this rating' }),
  }),
});

export const ReviewSummaryRef = builder.objectRef<ReviewSummary>('ReviewSummary').implement({
  description: 'Ratings of a set of reviews, counted when asked (not the stored Supplier.rating and reviewCount)',
  fields: (t) => ({
    average: t.expose('average', {
      type: 'Decimal',
      nullable: true,
      description: 'Mean rating, rounded half up to 2 decimals (exact, like Supplier.rating); null when there are no reviews',
    }),
    count: t.exposeInt('count', { description: 'Number of reviews' }),
    histogram: t.field({
      type: [RatingBucketRef],
      description: `One bucket per rating, ${RATING_MIN} to ${RATING_MAX} in that order, empty ones included`,
      resolve: (s) => s.histogram,
    }),
  }),
});

const ReviewList = builder.objectRef<ReviewPage>('ReviewList').implement({
  fields: (t) => ({
    items: t.prismaField({ type: ['Review'], resolve: (query, page, _args, ctx) => listReviews(ctx, page, query) }),
    meta: t.field({ type: PaginationMetaRef, resolve: (page, _args, ctx) => metaFor(page, countReviews(ctx, page)) }),
  }),
});

const reviewFilterArgs = builder.args((t) => ({
  rating: t.int({ required: false, description: `Only reviews of this rating, ${RATING_MIN}–${RATING_MAX}` }),
  sortBy: t.field({ type: ReviewSortRef, required: false, description: 'Default NEWEST; ties broken by newest first, then id' }),
}));

// Open like the rest of the catalogue: no scopes (a key with read:reviews is accepted like any other).
builder.queryFields((t) => ({
  productReviews: t.field({
    type: ReviewList,
    nullable: true,
    description: "An active product's reviews, offset-paginated, as GET /api/products/{slug}/reviews; null when there is no such product",
    args: { slug: t.arg.string({ required: true }), ...pageArgs, ...reviewFilterArgs },
    lookupBy: 'slug',
    ...withInput(productReviewsInput, (input, ctx) => productReviewPage(ctx, input)),
  }),
  supplierReviews: t.field({
    type: ReviewList,
    nullable: true,
    description:
      "The reviews of an active supplier's active products (a hidden product's reviews are left out), offset-paginated, as GET /api/suppliers/{id}/reviews; null when there is no such supplier",
    args: { id: t.arg.id({ required: true }), ...pageArgs, ...reviewFilterArgs },
    lookupBy: 'id',
    ...withInput(supplierReviewsInput, (input, ctx) => supplierReviewPage(ctx, input)),
  }),
}));
