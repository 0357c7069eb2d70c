import { builder } from '../../graphql/builder.js';
import { withInput } from '../../graphql/field-rules.js';
import { metaFor, pageArgs, PaginationMetaRef } from '../../graphql/pagination.js';
import { pageInput, type PageInput } from '../../shared/pagination.js';
import {
  countRecords,
  priceRecord,
  priceRecords,
  READ_PRICES,
  READ_STOCK,
  recordKeyInput,
  stockRecord,
  stockRecords,
  type PriceRecord,
  type StockRecord,
} from './inventory.service.js';

const StockRecordRef = builder.objectRef<StockRecord>('StockRecord').implement({
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

const PriceRecordRef = builder.objectRef<PriceRecord>('PriceRecord').implement({
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
