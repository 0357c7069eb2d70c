import { z } from 'zod';
import { requireMembership } from '../../auth/membership.js';
import type { Scope } from '../../auth/scopes.js';
import type { ApiContext } from '../../context/context.js';
import { Prisma } from '../../generated/prisma/client.js';
import { exactDecimal, money, type Money } from '../../rules/money.js';
import { pageWindow, type PageInput } from '../../shared/pagination.js';
import { validationError } from '../../shared/errors.js';
import { declareRule, idParam, moneyParam, withoutControlChars } from '../../shared/validation.js';
import { VAT_RATES, type VatCategory } from '../../rules/vat.js';

// Stock and prices: views of every product, active or not (the record carries isActive), behind
// their own scopes (docs/api.md, "Stock and prices"). One rule for both: a productId or a sku
// names one record, both must name the same product, neither lists them all. Written by the
// members of a product's supplier only, one product at a time.

export const READ_STOCK: Scope = 'read:stock';
export const READ_PRICES: Scope = 'read:prices';
export const WRITE_PRODUCTS: Scope = 'write:products';

/** The largest stock or low-stock threshold a supplier can set (the column is a 32-bit integer). */
export const STOCK_MAX = 1_000_000_000;

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
const skuParam = withoutControlChars(z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters'));

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

export const stockRecord = (ctx: ApiContext, key: RecordKey): Promise<StockRecord | null> =>
  ctx.prisma.product.findFirst({ where: keyWhere(key), select: stockFields });

export const priceRecord = (ctx: ApiContext, key: RecordKey): Promise<PriceRecord | null> =>
  ctx.prisma.product.findFirst({ where: keyWhere(key), select: priceFields });

export async function stockRecords(ctx: ApiContext, page: PageInput): Promise<StockRecord[]> {
  const window = pageWindow(page);
  return window ? ctx.prisma.product.findMany({ select: stockFields, orderBy: { id: 'asc' }, ...window }) : [];
}

export async function priceRecords(ctx: ApiContext, page: PageInput): Promise<PriceRecord[]> {
  const window = pageWindow(page);
  return window ? ctx.prisma.product.findMany({ select: priceFields, orderBy: { id: 'asc' }, ...window }) : [];
}

export const countRecords = (ctx: ApiContext) => ctx.totals.products([]);

/** The records of the products among `ids`, active or not (node refetch: stockRecord's and priceRecord's rule, batched). */
export const stockRecordsByIds = (ctx: ApiContext, ids: string[]): Promise<StockRecord[]> =>
  ctx.prisma.product.findMany({ where: { id: { in: ids } }, select: stockFields });
export const priceRecordsByIds = (ctx: ApiContext, ids: string[]): Promise<PriceRecord[]> =>
  ctx.prisma.product.findMany({ where: { id: { in: ids } }, select: priceFields });

// ----- writing -----

const countMessage = `must be an integer between 0 and ${STOCK_MAX}`;
const countInput = z.number({ error: countMessage }).int(countMessage).min(0, countMessage).max(STOCK_MAX, countMessage);

const changesSomething = (fields: readonly string[]) => (v: Record<string, unknown>) => fields.some((name) => v[name] !== undefined);

const STOCK_FIELDS = ['stock', 'lowStockThreshold', 'trackInventory'] as const;

export const stockUpdateInput = z
  .object({ stock: countInput.optional(), lowStockThreshold: countInput.optional(), trackInventory: z.boolean({ error: 'must be true or false' }).optional() })
  .strict()
  .refine(changesSomething(STOCK_FIELDS), { message: `must set at least one of ${STOCK_FIELDS.join(', ')}` });

/** updateStock's rule for its `input` argument, which is also the REST body. */
export const stockUpdateRule = { schema: stockUpdateInput, argument: 'input', message: 'Invalid stock update', unknownKey: 'is not a recognised field', nullIsValue: true } as const;

const positiveMoney = moneyParam({ positive: true });

const vatRateMessage = `must be one of the VAT rates ${Object.values(VAT_RATES).map(Number).join(', ')}`;
/** A rate as the client wrote it (0.21, "0.21", 0.210): one of VAT_RATES, compared exactly. */
const vatRateInput = declareRule(
  z.unknown().transform((v, ctx) => {
    const rate = exactDecimal(v);
    if (!rate || !Object.values(VAT_RATES).some((r) => rate.equals(r))) {
      ctx.addIssue({ code: 'custom', message: vatRateMessage });
      return z.NEVER;
    }
    return rate;
  }),
  // As a typed client sends them: numbers (a rate's text, "0.21", is taken too).
  { enum: Object.values(VAT_RATES).map(Number) },
);

const PRICE_FIELDS = ['price', 'compareAtPrice', 'vatRate'] as const;

export const priceUpdateInput = z
  .object({ price: positiveMoney.optional(), compareAtPrice: positiveMoney.nullable().optional(), vatRate: vatRateInput.optional() })
  .strict()
  .refine(changesSomething(PRICE_FIELDS), { message: `must set at least one of ${PRICE_FIELDS.join(', ')}` })
  .superRefine((v, ctx) => {
    if (v.price && v.compareAtPrice && !v.compareAtPrice.greaterThan(v.price)) {
      ctx.addIssue({ code: 'custom', path: ['compareAtPrice'], message: 'must be greater than price, or null' });
    }
  });

/** updatePrice's rule for its `input` argument, which is also the REST body. */
export const priceUpdateRule = { schema: priceUpdateInput, argument: 'input', message: 'Invalid price update', unknownKey: 'is not a recognised field', nullIsValue: true } as const;

/**
 * Sets a product's stock fields, for a member of its supplier; null when the supplier has no such
 * product. The row is read under a lock, so the low-stock event compares the stock this change
 * found with the one it left.
 */
export async function updateStock(ctx: ApiContext, productId: string, input: z.output<typeof stockUpdateInput>): Promise<StockRecord | null> {
  const supplierId = await requireMembership(ctx);
  return ctx.prisma.$transaction(async (tx) => {
    const [before] = await tx.$queryRaw<{ stock: number }[]>`
      SELECT stock FROM "Product" WHERE id = ${productId} AND "supplierId" = ${supplierId} FOR UPDATE`;
    if (!before) return null;
    const record = await tx.product.update({ where: { id: productId }, data: input, select: stockFields });
    await ctx.events.stockChanged(tx, supplierId, [
      { productId, before: before.stock, after: record.stock, lowStockThreshold: record.lowStockThreshold, trackInventory: record.trackInventory },
    ]);
    return record;
  });
}

/**
 * Sets a product's price fields, for a member of its supplier; null when the supplier has no such
 * product. A reference price must stay above the price once both are applied, judged on the row
 * as it is under a lock (a change racing this one is seen). A rate brings its VAT class with it.
 */
export async function updatePrice(ctx: ApiContext, productId: string, input: z.output<typeof priceUpdateInput>): Promise<PriceRecord | null> {
  const supplierId = await requireMembership(ctx);
  return ctx.prisma.$transaction(async (tx) => {
    const [current] = await tx.$queryRaw<{ price: Prisma.Decimal; compareAtPrice: Prisma.Decimal | null }[]>`
      SELECT price, "compareAtPrice" FROM "Product" WHERE id = ${productId} AND "supplierId" = ${supplierId} FOR UPDATE`;
    if (!current) return null;
    const price: Money = input.price ?? money(current.price);
    const compareAtPrice = input.compareAtPrice !== undefined ? input.compareAtPrice : current.compareAtPrice && money(current.compareAtPrice);
    if (compareAtPrice && !compareAtPrice.greaterThan(price)) {
      throw validationError(
        input.compareAtPrice !== undefined
          ? { compareAtPrice: `must be greater than the price (${price.toFixed(2)}), or null` }
          : { price: `must be below the reference price compareAtPrice (${compareAtPrice.toFixed(2)}): send a new compareAtPrice, or null to remove it` },
        'Invalid price update',
      );
    }
    const vatCategory = input.vatRate && (Object.keys(VAT_RATES) as VatCategory[]).find((c) => input.vatRate!.equals(VAT_RATES[c]));
    return tx.product.update({
      where: { id: productId },
      data: {
        ...(input.price ? { price: price.toFixed(2) } : {}),
        ...(input.compareAtPrice !== undefined ? { compareAtPrice: compareAtPrice?.toFixed(2) ?? null } : {}),
        ...(vatCategory ? { vatRate: VAT_RATES[vatCategory], vatCategory } : {}),
      },
      select: priceFields,
    });
  });
}
