import { builder } from '../../graphql/builder.js';
import { PriceRecordRef, StockRecordRef } from '../inventory/inventory.schema.js';
import { priceRecord, READ_PRICES, READ_STOCK, stockRecord } from '../inventory/inventory.service.js';
import { orderById, READ_ORDERS } from '../orders/orders.service.js';
import { ORDER_EVENT_TYPES, type OrderSignal } from '../../context/context.js';
import { changedProduct, eventFor, orderEventsOf, productChangesOf, READ_PRODUCTS } from './live.service.js';

// GraphQL subscriptions, served over SSE by /graphql (docs/api.md, "Subscriptions"): the events
// come from src/background/live-hub.ts as ids, and every field below reads its row as the subscriber.

const OrderEventTypeRef = builder.enumType('OrderEventType', {
  description: 'What happened to an order',
  values: {
    CREATED: { description: 'The order was placed' },
    STATUS_CHANGED: { description: 'The order moved to another status (other than CANCELLED)' },
    CANCELLED: { description: 'The order was cancelled' },
  } satisfies Record<(typeof ORDER_EVENT_TYPES)[number], object>,
});

const OrderEventRef = builder.objectRef<OrderSignal>('OrderEvent').implement({
  description: "An event of one of the caller's orders",
  fields: (t) => ({
    type: t.field({ type: OrderEventTypeRef, resolve: (e) => e.type }),
    order: t.prismaField({
      type: 'Order',
      nullable: true,
      description: 'The order as it is now, as the `order` (buyer) or `supplierOrder` (supplier member) query shows it',
      resolve: (query, e, _args, ctx) => orderById(ctx, e.owner, e.orderId, query),
    }),
  }),
});

const ProductChangeRef = builder.objectRef<{ id: string; isActive: boolean }>('ProductChange').implement({
  description: "A product's price, stock or active state changed",
  fields: (t) => ({
    id: t.exposeID('id'),
    isActive: t.exposeBoolean('isActive', { description: 'false: the product left the catalogue (`product` is then null)' }),
    product: t.prismaField({
      type: 'Product',
      nullable: true,
      description: 'The product as the catalogue shows it now; null while it is not active',
      resolve: (query, p, _args, ctx) => ctx.prisma.product.findFirst({ ...query, where: { id: p.id, isActive: true } }),
    }),
    stock: t.field({
      type: StockRecordRef,
      nullable: true,
      description: 'Its stock record, as the `stockRecord` query shows it',
      scopes: [READ_STOCK],
      resolve: (p, _args, ctx) => stockRecord(ctx, { productId: p.id }),
    }),
    price: t.field({
      type: PriceRecordRef,
      nullable: true,
      description: 'Its price record, as the `priceRecord` query shows it',
      scopes: [READ_PRICES],
      resolve: (p, _args, ctx) => priceRecord(ctx, { productId: p.id }),
    }),
  }),
});

builder.subscriptionFields((t) => ({
  orderEvents: t.field({
    type: OrderEventRef,
    nullable: true,
    description: "Events of the caller's orders (created, status changed, cancelled), and of its supplier's orders for a member of a supplier",
    scopes: [READ_ORDERS],
    subscribe: (_root, _args, ctx) => orderEventsOf(ctx),
    resolve: (item, _args, ctx) => eventFor(ctx, item),
  }),
  productChanged: t.field({
    type: ProductChangeRef,
    nullable: true,
    description: "A product (active or not) each time its price, stock or active state changes; NOT_FOUND when there is no such product",
    args: { id: t.arg.id({ required: true }) },
    scopes: [READ_PRODUCTS],
    subscribe: (_root, args, ctx) => productChangesOf(ctx, args),
    resolve: (item, _args, ctx) => changedProduct(ctx, eventFor(ctx, item)),
  }),
}));
