import { builder } from '../../graphql/builder.js';
import { accountContactFields } from '../account-fields.js';
import { withInput, withInputQuery } from '../../graphql/field-rules.js';
import type { ApiContext } from '../../context/context.js';
import { implementNode } from '../../graphql/nodes.js';
import { metaFor, pageArgs, PaginationMetaRef } from '../../graphql/pagination-types.js';
import { cancelOrder, cancelOrderInput, MAX_NOTE, orderStatusRule, supplierOwner, updateOrderStatus } from './lifecycle.js';
import {
  buyerOf,
  countOrders,
  createOrder,
  createOrderRule,
  listOrders,
  MAX_ITEMS,
  MAX_QUANTITY,
  orderById,
  orderFilterInput,
  orderFilterWhere,
  orderWindow,
  readableOrders,
  type OrderFilter,
  type OrderOwner,
  orderListInput,
  orderPage,
  orderStatuses,
  READ_ORDERS,
  shippingAddressOf,
  type OrderPage,
  type ShippingAddress,
  WRITE_ORDERS,
} from './orders.service.js';
import { SHIPPED } from './transitions.js';

export const OrderStatusRef = builder.enumType('OrderStatus', { values: orderStatuses });

// Lower-case values: the history reads the same over REST and GraphQL ("actor": "buyer").
const OrderActorRef = builder.enumType('OrderActor', {
  description: "Who changed an order's status: its buyer, or a member of its supplier",
  values: { buyer: { value: 'BUYER' }, supplier: { value: 'SUPPLIER' } } as const,
});

// Each of these loads only the columns a query asks for (a `select` type, as Product): an
// order's list page no longer reads every column of its orders, lines, events and buyer accounts.
builder.prismaObject('OrderEvent', {
  name: 'OrderHistoryEntry',
  select: { id: true },
  description: 'A status the order took, its placing (PENDING) included',
  fields: (t) => ({
    status: t.expose('status', { type: OrderStatusRef }),
    at: t.expose('at', { type: 'DateTime' }),
    actor: t.expose('actor', { type: OrderActorRef }),
    note: t.exposeString('note', { nullable: true, description: "The buyer's reason for cancelling, or the supplier's note" }),
  }),
});

const ShippingAddressRef = builder.objectRef<ShippingAddress>('ShippingAddress').implement({
  description: 'Where the order is delivered: a copy made when the order was placed',
  fields: (t) => ({
    fullName: t.exposeString('fullName', { nullable: true }),
    companyName: t.exposeString('companyName', { nullable: true }),
    phone: t.exposeString('phone', { nullable: true }),
    email: t.exposeString('email', { nullable: true }),
    address: t.exposeString('address', { nullable: true }),
    city: t.exposeString('city', { nullable: true }),
    county: t.exposeString('county', { nullable: true }),
    postalCode: t.exposeString('postalCode', { nullable: true }),
  }),
});

// Only the order's buyer and the members of its supplier (who deliver it) can read an order.
export const Buyer = builder.prismaObject('Account', {
  name: 'Buyer',
  select: { id: true },
  description: 'The account that placed an order',
  fields: (t) => accountContactFields(t),
});

export const OrderItem = builder.prismaObject('OrderItem', {
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    productId: t.exposeID('productId'),
    quantity: t.exposeInt('quantity'),
    price: t.expose('price', { type: 'Decimal', description: 'Unit price when the order was placed (RON)' }),
    total: t.expose('total', { type: 'Decimal', description: 'price × quantity' }),
    vatRate: t.expose('vatRate', { type: 'Decimal', description: "The product's VAT rate when the order was placed" }),
    tax: t.expose('tax', { type: 'Decimal', description: "VAT of this line after its share of the order's discount" }),
    product: t.relation('product'),
  }),
});

export const Order = builder.prismaObject('Order', {
  select: { id: true },
  fields: (t) => ({
    id: t.exposeID('id'),
    orderNumber: t.exposeString('orderNumber', { description: 'ORD-<creation time in ms>-<6 random characters>' }),
    status: t.expose('status', { type: OrderStatusRef }),
    currency: t.exposeString('currency', { description: 'Always RON' }),
    subtotal: t.expose('subtotal', { type: 'Decimal', description: 'Σ item totals' }),
    discount: t.expose('discount', { type: 'Decimal', description: 'Coupon discount' }),
    shippingCost: t.expose('shippingCost', { type: 'Decimal', description: 'No VAT is charged on shipping' }),
    tax: t.expose('tax', { type: 'Decimal', description: 'Σ item VAT' }),
    total: t.expose('total', { type: 'Decimal', description: 'subtotal − discount + shippingCost + tax' }),
    notes: t.exposeString('notes', { nullable: true }),
    shippingAddress: t.field({
      type: ShippingAddressRef,
      nullable: true,
      select: { shippingAddress: true },
      resolve: (o) => shippingAddressOf(o.shippingAddress),
    }),
    trackingNumber: t.exposeString('trackingNumber', { nullable: true }),
    trackingCarrier: t.exposeString('trackingCarrier', { nullable: true }),
    trackingUrl: t.exposeString('trackingUrl', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    items: t.relation('items', { query: { orderBy: { id: 'asc' } } }),
    buyer: t.relation('buyer'),
    supplier: t.relation('supplier'),
    history: t.relation('history', { description: 'Every status the order took, oldest first', query: { orderBy: [{ at: 'asc' }, { id: 'asc' }] } }),
  }),
});

// Refetched with read:orders, as order(id:) and supplierOrder(id:): an order, its lines and its
// buyer are seen only by that buyer and by the members of its supplier.
implementNode(Order, {
  scopes: [READ_ORDERS],
  load: async (ctx, ids) => ctx.prisma.order.findMany({ where: { id: { in: ids }, ...(await readableOrders(ctx)) }, select: { id: true } }),
});
implementNode(OrderItem, {
  scopes: [READ_ORDERS],
  load: async (ctx, ids) => ctx.prisma.orderItem.findMany({ where: { id: { in: ids }, order: await readableOrders(ctx) }, select: { id: true } }),
});
implementNode(Buyer, {
  scopes: [READ_ORDERS],
  load: async (ctx, ids) => ctx.prisma.account.findMany({ where: { id: { in: ids }, orders: { some: await readableOrders(ctx) } }, select: { id: true } }),
});

const OrderList = builder.objectRef<OrderPage>('OrderList').implement({
  fields: (t) => ({
    items: t.prismaField({ type: ['Order'], resolve: (query, page, _args, ctx) => listOrders(ctx, page, query) }),
    meta: t.field({ type: PaginationMetaRef, resolve: (page, _args, ctx) => metaFor(page, countOrders(ctx, page)) }),
  }),
});

const ShippingAddressInput = builder.inputType('ShippingAddressInput', {
  fields: (t) => ({
    fullName: t.string({ required: true }),
    companyName: t.string(),
    phone: t.string({ required: true }),
    email: t.string(),
    address: t.string({ required: true }),
    city: t.string({ required: true }),
    county: t.string({ required: true }),
    postalCode: t.string({ required: true }),
  }),
});

const OrderItemInput = builder.inputType('OrderItemInput', {
  fields: (t) => ({
    productId: t.id({ required: true }),
    quantity: t.int({ required: true, description: `1–${MAX_QUANTITY}, and at least the product's minOrder` }),
    variantId: t.id({ description: 'Must be absent or null: no product has variants' }),
  }),
});

export const CreateOrderInput = builder.inputType('CreateOrderInput', {
  fields: (t) => ({
    supplierId: t.id({ required: true, description: 'An active supplier; every product must be theirs' }),
    items: t.field({ type: [OrderItemInput], required: true, description: `1–${MAX_ITEMS} items, each product once` }),
    addressId: t.id({ description: "One of the caller's saved addresses; not together with shippingAddress" }),
    shippingAddress: t.field({ type: ShippingAddressInput }),
    notes: t.string({ description: 'At most 2000 characters' }),
    couponCode: t.string({ description: 'Valid for this supplier, today and this subtotal' }),
  }),
});

const OrderStatusInput = builder.inputType('OrderStatusInput', {
  fields: (t) => ({
    status: t.field({ type: OrderStatusRef, required: true, description: 'The status to move to (see the order lifecycle)' }),
    trackingNumber: t.string({ description: `Required with ${SHIPPED}, refused otherwise; at most 100 characters` }),
    trackingCarrier: t.string({ description: `Required with ${SHIPPED}, refused otherwise; at most 100 characters` }),
    trackingUrl: t.string({ description: `Optional with ${SHIPPED}: an http or https URL` }),
    note: t.string({ description: `Kept in the order's history, seen by the buyer; at most ${MAX_NOTE} characters` }),
  }),
});

const orderFilterArgs = builder.args((t) => ({ status: t.field({ type: OrderStatusRef, required: false }) }));

/** A Relay connection of an owner's orders, with the offset list's filters and order (newest first, ties by id). */
function orderConnection(owner: (ctx: ApiContext) => OrderOwner | Promise<OrderOwner>) {
  return {
    ...withInputQuery(orderFilterInput, async (query, filter, ctx) => orderWindow(ctx, orderFilterWhere(await owner(ctx), filter), query)),
    // Called with the arguments resolve received: the input rule's output (and the cursor arguments).
    totalCount: async (_root: unknown, args: object, ctx: ApiContext) =>
      ctx.prisma.order.count({ where: orderFilterWhere(await owner(ctx), args as OrderFilter) }),
  };
}

builder.queryFields((t) => ({
  ordersConnection: t.prismaConnection({
    type: 'Order',
    cursor: 'id',
    description: "The caller's orders as a Relay connection, newest first (ties by id), with the same filter as `orders`",
    args: orderFilterArgs,
    scopes: [READ_ORDERS],
    ...orderConnection(buyerOf),
  }),
  supplierOrdersConnection: t.prismaConnection({
    type: 'Order',
    cursor: 'id',
    description: 'The orders of the supplier the caller acts for as a Relay connection, newest first (ties by id), with the same filter as `supplierOrders`',
    args: orderFilterArgs,
    scopes: [READ_ORDERS],
    member: true,
    ...orderConnection(supplierOwner),
  }),
  orders: t.field({
    type: OrderList,
    description: "The caller's orders, newest first",
    args: { ...pageArgs, status: t.arg({ type: OrderStatusRef, required: false }) },
    scopes: [READ_ORDERS],
    ...withInput(orderListInput, (input, ctx) => orderPage(buyerOf(ctx), input)),
  }),
  order: t.prismaField({
    type: 'Order',
    nullable: true,
    description: "One of the caller's orders; null when it does not exist or is another account's",
    args: { id: t.arg.id({ required: true }) },
    lookupBy: 'id',
    scopes: [READ_ORDERS],
    resolve: (query, _root, args, ctx) => orderById(ctx, buyerOf(ctx), String(args.id), query),
  }),
  supplierOrders: t.field({
    type: OrderList,
    description: 'The orders of the supplier the caller acts for, newest first',
    args: { ...pageArgs, status: t.arg({ type: OrderStatusRef, required: false }) },
    scopes: [READ_ORDERS],
    member: true,
    ...withInput(orderListInput, async (input, ctx) => orderPage(await supplierOwner(ctx), input)),
  }),
  supplierOrder: t.prismaField({
    type: 'Order',
    nullable: true,
    description: "One of the orders of the supplier the caller acts for; null when it does not exist or is another supplier's",
    args: { id: t.arg.id({ required: true }) },
    lookupBy: 'id',
    scopes: [READ_ORDERS],
    member: true,
    resolve: async (query, _root, args, ctx) => orderById(ctx, await supplierOwner(ctx), String(args.id), query),
  }),
}));

builder.mutationFields((t) => ({
  createOrder: t.prismaField({
    type: 'Order',
    description: 'Places an order; send an Idempotency-Key header to make retries safe',
    args: { input: t.arg({ type: CreateOrderInput, required: true }) },
    scopes: [WRITE_ORDERS],
    ...withInputQuery(createOrderRule, async (query, input, ctx, parent, info) => {
      await ctx.limitField({ parent, args: { input }, info }, 'createOrder');
      return createOrder(ctx, input, query);
    }),
  }),
  cancelOrder: t.prismaField({
    type: 'Order',
    nullable: true,
    description:
      "Cancels one of the caller's orders while it is PENDING or CONFIRMED, giving back its stock; null when the caller has no such order. Send an Idempotency-Key header to make retries safe",
    args: { id: t.arg.id({ required: true }), reason: t.arg.string({ description: `Kept in the order's history; at most ${MAX_NOTE} characters` }) },
    lookupBy: 'id',
    scopes: [WRITE_ORDERS],
    ...withInputQuery(cancelOrderInput, (query, input, ctx) => cancelOrder(ctx, input, query)),
  }),
  updateOrderStatus: t.prismaField({
    type: 'Order',
    nullable: true,
    description:
      "Moves an order of the supplier the caller acts for to its next status (see the order lifecycle); null when the supplier has no such order. Send an Idempotency-Key header to make retries safe",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: OrderStatusInput, required: true }) },
    lookupBy: 'id',
    scopes: [WRITE_ORDERS],
    member: true,
    ...withInputQuery(orderStatusRule, (query, input, ctx, _parent, _info, args) => updateOrderStatus(ctx, String(args.id), input, query)),
  }),
}));
