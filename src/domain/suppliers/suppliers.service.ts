import { z } from 'zod';
import type { ApiContext } from '../../context/context.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { findPage, rowsInOrder } from '../../db/direct-reads.js';
import { pageParams, pageWindow, type PageInput } from '../../shared/pagination.js';
import { searchKey, searchWords } from '../products/search.js';
import { booleanParam, enumParam, textParam } from '../../shared/validation.js';

export const supplierSorts = ['rating', 'name', 'newest', 'products'] as const;
export type SupplierSort = (typeof supplierSorts)[number];

const filterParams = {
  search: textParam().optional(),
  verified: booleanParam.optional(),
  city: textParam(100).optional(),
  county: textParam(100).optional(),
  sortBy: enumParam(supplierSorts).default('rating'),
};

export const supplierFilterInput = z.object(filterParams).strict();
export const supplierListInput = z.object({ ...pageParams, ...filterParams }).strict();
export type SupplierFilter = z.output<typeof supplierFilterInput>;

/**
 * A connection's filters: the offset list's. Its pages follow the cursor's row in a Prisma order,
 * which the count of active products ("products") is not: that sort is the offset list's only.
 */
export const supplierConnectionInput = supplierFilterInput.refine((f) => f.sortBy !== 'products', {
  path: ['sortBy'],
  message: 'PRODUCTS is offered by the offset list (suppliers) only: use RATING, NAME or NEWEST here',
});


// "products" is ordered by the number of active products, which Prisma cannot express; see listSuppliers.
const supplierOrders: Record<Exclude<SupplierSort, 'products'>, Prisma.SupplierOrderByWithRelationInput[]> = {
  rating: [{ rating: 'desc' }, { id: 'asc' }],
  name: [{ companyName: 'asc' }, { id: 'asc' }],
  newest: [{ createdAt: 'desc' }, { id: 'asc' }],
};

export interface SupplierQuery {
  where: Prisma.SupplierWhereInput;
  sortBy: SupplierSort;
}

export function supplierQuery(filter: SupplierFilter): SupplierQuery {
  const and: Prisma.SupplierWhereInput[] = [{ isActive: true }];
  if (filter.verified) and.push({ verified: true });
  if (filter.city) and.push({ cityKey: searchKey(filter.city) });
  if (filter.county) and.push({ countyKey: searchKey(filter.county) });
  if (filter.search) {
    for (const word of searchWords(filter.search)) and.push({ searchText: { contains: word } });
  }
  return { where: { AND: and }, sortBy: filter.sortBy };
}

export async function listSuppliers<Q extends object>(ctx: ApiContext, q: SupplierQuery, page: PageInput, query: Q) {
  const window = pageWindow(page);
  if (!window) return [];
  if (q.sortBy !== 'products') {
    return findPage(ctx.prisma, 'Supplier', ctx.prisma.supplier, { where: q.where, orderBy: supplierOrders[q.sortBy], ...window }, query);
  }
  // Rank the matching suppliers by active product count in SQL, then load that page.
  const matching = await ctx.prisma.supplier.findMany({ where: q.where, select: { id: true } });
  const ranked = await ctx.prisma.$queryRaw<{ id: string }[]>`
    SELECT s.id FROM unnest(${matching.map((s) => s.id)}::text[]) AS s(id)
    LEFT JOIN "Product" p ON p."supplierId" = s.id AND p."isActive"
    GROUP BY s.id
    ORDER BY count(p.id) DESC, s.id
    OFFSET ${window.skip} LIMIT ${window.take}`;
  return rowsInOrder(ctx.prisma.supplier, q.where, ranked.map((r) => r.id), query);
}

export const countSuppliers = (ctx: ApiContext, q: SupplierQuery) => ctx.prisma.supplier.count({ where: q.where });

/** A connection's window of suppliers (plugin-prisma's cursor, skip and take in `query`), in the sort's order (ties by id). */
export const supplierWindow = <Q extends object>(ctx: ApiContext, q: SupplierQuery, query: Q) =>
  ctx.prisma.supplier.findMany({ ...query, where: q.where, orderBy: supplierOrders[q.sortBy === 'products' ? 'rating' : q.sortBy] });

/** The active suppliers among `ids` (node refetch: supplier(id:)'s rule, batched). */
export const suppliersByIds = (ctx: ApiContext, ids: string[]) =>
  ctx.prisma.supplier.findMany({ where: { id: { in: ids }, isActive: true }, select: { id: true } });

export async function supplierById<Q extends object>(ctx: ApiContext, id: string, query: Q) {
  return ctx.prisma.supplier.findFirst({ ...query, where: { id, isActive: true } });
}


export interface SupplierCounts {
  products: number;
  reviews: number;
}
