import { builder } from '../../graphql/builder.js';
import { withInput, withInputQuery } from '../../graphql/field-rules.js';
import { implementNode } from '../../graphql/nodes.js';
import { listLimitArgs, metaFor, pageArgs, PaginationMetaRef, sortEnum } from '../../graphql/pagination-types.js';
import type { PageInput } from '../../shared/pagination.js';
import { ReviewSummaryRef } from '../reviews/reviews.schema.js';
import { NEWEST_REVIEWS_FIRST, productReviewSummary } from '../reviews/reviews.service.js';
import {
  countProducts,
  listProducts,
  productBySlug,
  productsByIdsVisible,
  productFilterInput,
  productListInput,
  type ProductCounts,
  type ProductFilter,
  productQuery,
  productSorts,
  type ProductQuery,
} from './products.service.js';

export const VatCategory = builder.enumType('VatCategory', { values: ['STANDARD', 'REDUCED', 'EXEMPT'] as const });

export const ProductSortRef = sortEnum('ProductSort', productSorts);

const ProductCountsRef = builder.objectRef<ProductCounts>('ProductCounts').implement({
  fields: (t) => ({ reviews: t.exposeInt('reviews'), favorites: t.exposeInt('favorites') }),
});

const REVIEWS_DEFAULT = 10;

export const Product = builder.prismaObject('Product', {
  // Load only the columns a query asks for (not searchText, descriptions… on every list).
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    nameEn: t.exposeString('nameEn', { description: 'English name' }),
    slug: t.exposeString('slug'),
    description: t.exposeString('description'),
    price: t.expose('price', { type: 'Decimal' }),
    compareAtPrice: t.expose('compareAtPrice', { type: 'Decimal', nullable: true, description: 'Reference price' }),
    minOrder: t.exposeInt('minOrder', { description: 'Minimum order quantity' }),
    stock: t.exposeInt('stock'),
    sku: t.exposeString('sku', { nullable: true }),
    images: t.exposeStringList('images'),
    specifications: t.expose('specifications', { type: 'JSON' }),
    isActive: t.exposeBoolean('isActive'),
    isFeatured: t.exposeBoolean('isFeatured'),
    viewCount: t.exposeInt('viewCount'),
    vatRate: t.expose('vatRate', { type: 'Decimal', description: 'VAT as a fraction, e.g. 0.21' }),
    vatCategory: t.expose('vatCategory', { type: VatCategory }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    supplier: t.relation('supplier'),
    category: t.relation('category'),
    reviews: t.relation('reviews', {
      description: 'Newest reviews first',
      args: listLimitArgs(REVIEWS_DEFAULT),
      query: (args) => ({ take: args.limit ?? REVIEWS_DEFAULT, orderBy: NEWEST_REVIEWS_FIRST }),
    }),
    reviewSummary: t.field({
      type: ReviewSummaryRef,
      description: "Average, count and histogram of the product's reviews",
      resolve: (p, _args, ctx) => productReviewSummary(ctx, p.id),
    }),
    reviewsConnection: t.relatedConnection('reviews', {
      cursor: 'id',
      totalCount: true,
      query: () => ({ orderBy: NEWEST_REVIEWS_FIRST }),
    }),
    // In the list's own statement: with relationJoins each count is a correlated subquery on the index.
    _count: t.field({
      type: ProductCountsRef,
      select: { _count: { select: { reviews: true, favorites: true } } },
      resolve: (p) => p._count,
    }),
  }),
});

implementNode(Product, { load: productsByIdsVisible });

// The list's filters are resolved once (category subtree included) and shared by items and meta.
interface ProductPage extends PageInput {
  q: ProductQuery;
}

const ProductList = builder.objectRef<ProductPage>('ProductList').implement({
  fields: (t) => ({
    items: t.prismaField({
      type: ['Product'],
      resolve: (query, page, _args, ctx) => listProducts(ctx, page.q, page, query),
    }),
    meta: t.field({ type: PaginationMetaRef, resolve: (page, _args, ctx) => metaFor(page, countProducts(ctx, page.q)) }),
  }),
});

const productFilterArgs = builder.args((t) => ({
  search: t.string({ required: false, description: 'Words to find in name, nameEn, description or sku (case- and diacritics-insensitive)' }),
  categoryId: t.id({ required: false, description: 'Only this category and its subcategories' }),
  supplierId: t.id({ required: false }),
  minPrice: t.field({ type: 'Decimal', required: false, description: 'Inclusive, compared exactly; at most 2 decimals' }),
  maxPrice: t.field({ type: 'Decimal', required: false, description: 'Inclusive, compared exactly; at most 2 decimals' }),
  featured: t.boolean({ required: false, description: 'true: only featured products' }),
  sortBy: t.field({ type: ProductSortRef, required: false, description: 'Default NEWEST; ties broken by id' }),
}));

builder.queryFields((t) => ({
  products: t.field({
    type: ProductList,
    description: 'Active products, offset-paginated, with the same filters and sorts as GET /api/products',
    args: { ...pageArgs, ...productFilterArgs },
    ...withInput(productListInput, async ({ page, limit, ...filter }, ctx) => ({ page, limit, q: await productQuery(ctx, filter) })),
  }),
  productsConnection: t.prismaConnection({
    type: 'Product',
    cursor: 'id',
    description: 'Active products as a Relay connection, with the same filters and sorts as `products`',
    args: productFilterArgs,
    ...withInputQuery(productFilterInput, async (query, filter, ctx) => listProducts(ctx, await productQuery(ctx, filter), null, query)),
    // Called with the arguments resolve received: the input rule's output (and the cursor arguments).
    totalCount: async (_root, args, ctx) => countProducts(ctx, await productQuery(ctx, args as ProductFilter)),
  }),
  product: t.prismaField({
    type: 'Product',
    nullable: true,
    description: 'An active product by slug; null when there is none',
    args: { slug: t.arg.string({ required: true }) },
    lookupBy: 'slug',
    resolve: (query, _root, args, ctx) => productBySlug(ctx, args.slug, query),
  }),
}));
