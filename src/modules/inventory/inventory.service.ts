import { z } from 'zod';
import type { Scope } from '../../auth/scopes.js';
import type { Context } from '../../graphql/context.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { pageWindow, type PageInput } from '../../shared/pagination.js';
import { idParam } from '../../shared/validation.js';

// Stock and prices: read-only views of every product, active or not (the record carries
// isActive), behind their own scopes (docs/api.md, "Stock and prices"). One rule for both: a
// productId or a sku names one record, both must name the same product, neither lists them all.

export const READ_STOCK: Scope = 'read:stock';
export const READ_PRICES: Scope = 'read:prices';

export const stockFields = {
  id: true,
  sku: true,
  stock: true,
  lowStockThreshold: true,
  trackInventory: true,
  minOrder: true,
  isActive: true,
  updatedAt: true,
} satisfies Prisma.ProductSelect;

export const priceFields = {
  id: true,
  sku: true,
  price: true,
  compareAtPrice: true,
  vatRate: true,
  updatedAt: true,
} satisfies Prisma.ProductSelect;

export type StockRecord = Prisma.ProductGetPayload<{ select: typeof stockFields }>;
export type PriceRecord = Prisma.ProductGetPayload<{ select: typeof priceFields }>;

// SKUs are free text in the catalogue: any printable value up to 100 characters, matched exactly.
const skuParam = z
  .string()
  .min(1, 'must not be empty')
  .max(100, 'must be at most 100 characters')
  .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), 'must not contain control characters');

export const recordKeyInput = z
  .object({ productId: idParam.optional(), sku: skuParam.optional() })
  .strict()
  .refine((v) => v.productId !== undefined || v.sku !== undefined, { path: ['productId'], message: 'productId or sku is required' });

type RecordKey = z.output<typeof recordKeyInput>;

// Both given: the record must match both, so disagreeing keys find nothing (404).
const keyWhere = ({ productId, sku }: RecordKey): Prisma.ProductWhereInput => ({
  ...(productId !== undefined ? { id: productId } : {}),
  ...(sku !== undefined ? { sku } : {}),
});

export const stockRecord = (ctx: Context, key: RecordKey): Promise<StockRecord | null> =>
  ctx.prisma.product.findFirst({ where: keyWhere(key), select: stockFields });

export const priceRecord = (ctx: Context, key: RecordKey): Promise<PriceRecord | null> =>
  ctx.prisma.product.findFirst({ where: keyWhere(key), select: priceFields });

export async function stockRecords(ctx: Context, page: PageInput): Promise<StockRecord[]> {
  const window = pageWindow(page);
  return window ? ctx.prisma.product.findMany({ select: stockFields, orderBy: { id: 'asc' }, ...window }) : [];
}

export async function priceRecords(ctx: Context, page: PageInput): Promise<PriceRecord[]> {
  const window = pageWindow(page);
  return window ? ctx.prisma.product.findMany({ select: priceFields, orderBy: { id: 'asc' }, ...window }) : [];
}

export const countRecords = (ctx: Context) => ctx.totals.products([]);
