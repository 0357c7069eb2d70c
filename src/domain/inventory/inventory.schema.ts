import { builder } from '../../graphql/builder.js';
import { withInput } from '../../graphql/field-rules.js';
import { implementNode } from '../../graphql/nodes.js';
import { metaFor, pageArgs, PaginationMetaRef } from '../../graphql/pagination-types.js';
import { pageInput, type PageInput } from '../../shared/pagination.js';
import {
  countRecords,
  priceRecord,
  priceRecordsByIds,
  stockRecordsByIds,
  priceUpdateRule,
  STOCK_MAX,
  stockUpdateRule,
  updatePrice,
  updateStock,
  WRITE_PRODUCTS,
  priceRecords,
  READ_PRICES,
  READ_STOCK,
  recordKeyInput,
  stockRecord,
  stockRecords,
  type PriceRecord,
  type StockRecord,
} from './inventory.service.js';

export const StockRecordRef = builder.objectRef<StockRecord>('StockRecord').implement({
  description: "A product's stock level; `id` is the product's id",
  fields: (t) => ({
    id: t.exposeID('id'),
    sku: t.exposeString('sku', { nullable: true }),
    stock: t.exposeInt('stock'),
    lowStockThreshold: t.exposeInt('lowStockThreshold'),
    trackInventory: t.exposeBoolean('trackInventory', { description: 'false: stock is not counted and never runs out' }),
    minOrder: t.exposeInt('minOrder'),
    isActive: t.exposeBoolean('isActive'),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

export const PriceRecordRef = builder.objectRef<PriceRecord>('PriceRecord').implement({
  description: "A product's price; `id` is the product's id",
  fields: (t) => ({
    id: t.exposeID('id'),
    sku: t.exposeString('sku', { nullable: true }),
    price: t.expose('price', { type: 'Decimal' }),
    compareAtPrice: t.expose('compareAtPrice', { type: 'Decimal', nullable: true }),
    vatRate: t.expose('vatRate', { type: 'Decimal', description: 'VAT as a fraction, e.g. 0.21' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

implementNode(StockRecordRef, { scopes: [READ_STOCK], load: stockRecordsByIds });
implementNode(PriceRecordRef, { scopes: [READ_PRICES], load: priceRecordsByIds });

const StockRecordList = builder.objectRef<PageInput>('StockRecordList').implement({
  fields: (t) => ({
    items: t.field({ type: [StockRecordRef], resolve: (page, _args, ctx) => stockRecords(ctx, page) }),
    meta: t.field({ type: PaginationMetaRef, resolve: (page, _args, ctx) => metaFor(page, countRecords(ctx)) }),
  }),
});

const PriceRecordList = builder.objectRef<PageInput>('PriceRecordList').implement({
  fields: (t) => ({
    items: t.field({ type: [PriceRecordRef], resolve: (page, _args, ctx) => priceRecords(ctx, page) }),
    meta: t.field({ type: PaginationMetaRef, resolve: (page, _args, ctx) => metaFor(page, countRecords(ctx)) }),
  }),
});

const recordKeyArgs = builder.args((t) => ({
  productId: t.id({ required: false }),
  sku: t.string({ required: false }),
}));

builder.queryFields((t) => ({
  stockRecord: t.field({
    type: StockRecordRef,
    nullable: true,
    description: 'The stock of one product, active or not, by productId or sku (both: they must agree); null when none',
    args: recordKeyArgs,
    scopes: [READ_STOCK],
    ...withInput(recordKeyInput, (key, ctx) => stockRecord(ctx, key)),
  }),
  stockRecords: t.field({
    type: StockRecordList,
    description: 'The stock of every product, active or not, by id',
    args: pageArgs,
    scopes: [READ_STOCK],
    ...withInput(pageInput, (page) => page),
  }),
  priceRecord: t.field({
    type: PriceRecordRef,
    nullable: true,
    description: 'The price of one product, active or not, by productId or sku (both: they must agree); null when none',
    args: recordKeyArgs,
    scopes: [READ_PRICES],
    ...withInput(recordKeyInput, (key, ctx) => priceRecord(ctx, key)),
  }),
  priceRecords: t.field({
    type: PriceRecordList,
    description: 'The price of every product, active or not, by id',
    args: pageArgs,
    scopes: [READ_PRICES],
    ...withInput(pageInput, (page) => page),
  }),
}));

const StockUpdateInput = builder.inputType('StockUpdateInput', {
  description: 'The stock fields to change; at least one',
  fields: (t) => ({
    stock: t.int({ description: `0–${STOCK_MAX}` }),
    lowStockThreshold: t.int({ description: `0–${STOCK_MAX}` }),
    trackInventory: t.boolean({ description: 'false: stock is not counted and never runs out' }),
  }),
});

const PriceUpdateInput = builder.inputType('PriceUpdateInput', {
  description: 'The price fields to change; at least one',
  fields: (t) => ({
    price: t.field({ type: 'Decimal', description: 'RON, > 0, at most 2 decimals' }),
    compareAtPrice: t.field({ type: 'Decimal', description: 'Reference price: above the price, or null to remove it' }),
    vatRate: t.field({ type: 'Decimal', description: 'One of the VAT rates in use (0.21, 0.11, 0); the VAT class follows it' }),
  }),
});

const productIdArg = builder.args((t) => ({ productId: t.id({ required: true }) }));

builder.mutationFields((t) => ({
  updateStock: t.field({
    type: StockRecordRef,
    nullable: true,
    description: "Changes the stock of a product of the supplier the caller acts for; null when the supplier has no such product",
    args: { ...productIdArg, input: t.arg({ type: StockUpdateInput, required: true }) },
    lookupBy: 'productId',
    scopes: [WRITE_PRODUCTS],
    member: true,
    ...withInput(stockUpdateRule, (input, ctx, _parent, _info, args) => updateStock(ctx, String(args.productId), input)),
  }),
  updatePrice: t.field({
    type: PriceRecordRef,
    nullable: true,
    description:
      'Changes the price of a product of the supplier the caller acts for; null when the supplier has no such product. Product lists, totals and searches see it from the next request on',
    args: { ...productIdArg, input: t.arg({ type: PriceUpdateInput, required: true }) },
    lookupBy: 'productId',
    scopes: [WRITE_PRODUCTS],
    member: true,
    ...withInput(priceUpdateRule, (input, ctx, _parent, _info, args) => updatePrice(ctx, String(args.productId), input)),
  }),
}));
