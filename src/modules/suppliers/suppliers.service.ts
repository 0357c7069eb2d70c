import { z } from 'zod';
import type { ApiContext } from '../../context/context.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { findPage, rowsInOrder } from '../../db/pages.js';
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

export async function supplierById<Q extends object>(ctx: ApiContext, id: string, query: Q) {
  return ctx.prisma.supplier.findFirst({ ...query, where: { id, isActive: true } });
}


export interface SupplierCounts {
  products: number;
  reviews: number;
}
