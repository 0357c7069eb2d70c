import { builder } from '../../graphql/builder.js';
import { withInput, withInputQuery } from '../../graphql/field-rules.js';
import { implementNode } from '../../graphql/nodes.js';
import type { PageInput } from '../../shared/pagination.js';
import { listLimitArgs, metaFor, pageArgs, PaginationMetaRef, sortEnum } from '../../graphql/pagination-types.js';
import { ReviewSummaryRef } from '../reviews/reviews.schema.js';
import { NEWEST_REVIEWS_FIRST, OF_ACTIVE_PRODUCTS, supplierReviewSummary } from '../reviews/reviews.service.js';
import {
  countSuppliers,
  listSuppliers,
  supplierConnectionInput,
  supplierListInput,
  suppliersByIds,
  supplierWindow,
  type SupplierFilter,
  supplierById,
  type SupplierCounts,
  supplierQuery,
  supplierSorts,
  type SupplierQuery,
} from './suppliers.service.js';

const SUPPLIER_PRODUCTS_DEFAULT = 12;
const SUPPLIER_REVIEWS_DEFAULT = 10;

export const SupplierSortRef = sortEnum('SupplierSort', supplierSorts);

const SupplierCountsRef = builder.objectRef<SupplierCounts>('SupplierCounts').implement({
  fields: (t) => ({
    products: t.exposeInt('products', { description: 'Active products' }),
    reviews: t.exposeInt('reviews', { description: 'Reviews of its products' }),
  }),
});

export const Supplier = builder.prismaObject('Supplier', {
  // Load only the columns a query asks for (not searchText, descriptions… on every list).
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    companyName: t.exposeString('companyName'),
    cui: t.exposeString('cui', { description: 'Company tax identifier (CUI)' }),
    address: t.exposeString('address'),
    city: t.exposeString('city'),
    county: t.exposeString('county'),
    phone: t.exposeString('phone'),
    email: t.exposeString('email'),
    description: t.exposeString('description'),
    logo: t.exposeString('logo', { nullable: true }),
    website: t.exposeString('website', { nullable: true }),
    verified: t.exposeBoolean('verified'),
    rating: t.expose('rating', { type: 'Decimal' }),
    reviewCount: t.exposeInt('reviewCount'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    products: t.relation('products', {
      description: 'Newest active products first',
      args: listLimitArgs(SUPPLIER_PRODUCTS_DEFAULT),
      query: (args) => ({
        where: { isActive: true },
        orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
        take: args.limit ?? SUPPLIER_PRODUCTS_DEFAULT,
      }),
    }),
    productsConnection: t.relatedConnection('products', {
      cursor: 'id',
      totalCount: true,
      query: () => ({ where: { isActive: true }, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }] }),
    }),
    reviews: t.relation('reviews', {
      description: "Newest reviews of its active products first (a hidden product's reviews are left out)",
      args: listLimitArgs(SUPPLIER_REVIEWS_DEFAULT),
      query: (args) => ({
        where: OF_ACTIVE_PRODUCTS,
        orderBy: NEWEST_REVIEWS_FIRST,
        take: args.limit ?? SUPPLIER_REVIEWS_DEFAULT,
      }),
    }),
    reviewSummary: t.field({
      type: ReviewSummaryRef,
      description: 'Average, count and histogram of the reviews of its active products, counted live (unlike the stored rating and reviewCount)',
      resolve: (s, _args, ctx) => supplierReviewSummary(ctx, s.id),
    }),
    _count: t.field({
      type: SupplierCountsRef,
      select: { _count: { select: { products: { where: { isActive: true } }, reviews: true } } },
      resolve: (s) => s._count,
    }),
  }),
});

implementNode(Supplier, { load: suppliersByIds });

interface SupplierPage extends PageInput {
  q: SupplierQuery;
}

const SupplierList = builder.objectRef<SupplierPage>('SupplierList').implement({
  fields: (t) => ({
    items: t.prismaField({ type: ['Supplier'], resolve: (query, page, _args, ctx) => listSuppliers(ctx, page.q, page, query) }),
    meta: t.field({ type: PaginationMetaRef, resolve: (page, _args, ctx) => metaFor(page, countSuppliers(ctx, page.q)) }),
  }),
});

const supplierFilterArgs = builder.args((t) => ({
  search: t.string({ required: false, description: 'Words to find in company name, description, city or county' }),
  verified: t.boolean({ required: false, description: 'true: only verified suppliers' }),
  city: t.string({ required: false, description: 'Case- and diacritics-insensitive' }),
  county: t.string({ required: false, description: 'Case- and diacritics-insensitive' }),
  sortBy: t.field({ type: SupplierSortRef, required: false, description: 'Default RATING; ties broken by id' }),
}));

builder.queryFields((t) => ({
  suppliers: t.field({
    type: SupplierList,
    description: 'Active suppliers, offset-paginated, with the same filters and sorts as GET /api/suppliers',
    args: { ...pageArgs, ...supplierFilterArgs },
    ...withInput(supplierListInput, ({ page, limit, ...filter }) => ({ page, limit, q: supplierQuery(filter) })),
  }),
  suppliersConnection: t.prismaConnection({
    type: 'Supplier',
    cursor: 'id',
    description: 'Active suppliers as a Relay connection, with the same filters and sorts as `suppliers` but PRODUCTS (offset list only)',
    args: supplierFilterArgs,
    ...withInputQuery(supplierConnectionInput, (query, filter, ctx) => supplierWindow(ctx, supplierQuery(filter), query)),
    // Called with the arguments resolve received: the input rule's output (and the cursor arguments).
    totalCount: (_root, args, ctx) => countSuppliers(ctx, supplierQuery(args as SupplierFilter)),
  }),
  supplier: t.prismaField({
    type: 'Supplier',
    nullable: true,
    description: 'An active supplier by id; null when there is none',
    args: { id: t.arg.id({ required: true }) },
    lookupBy: 'id',
    resolve: (query, _root, args, ctx) => supplierById(ctx, String(args.id), query),
  }),
}));
