import { accountOf } from '../../context/actor.js';
import type { RequestContext } from '../../context/context.js';
import { membershipOf } from '../../auth/membership.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { AppError } from '../../shared/errors.js';
import type { OrderOwner } from './orders.service.js';
import type { OrderStatus } from './transitions.js';

// Orders as a person reads them in the dashboard: read-only views (orders move through the API),
// plain data with amounts as fixed-point text. Whose orders a view shows comes from the context:
// the buyer side is the actor's account's own, the supplier side its supplier's, when the account
// acts for one. Each page is one statement for its orders, history included (relationJoins:
// LATERAL joins, no N+1).

/** Whose side of an order a view shows: the buyer's own, or its supplier's (to a member). */
export type OrderSide = 'buyer' | 'supplier';

export const ORDERS_PER_PAGE = 20;

export interface OrderRow {
  orderNumber: string;
  status: OrderStatus;
  total: string;
  currency: string;
  createdAt: Date;
  /** The supplier's name (buyer side) or the buyer's (supplier side). */
  party: string;
  items: number;
  /** When it took its present status (its last history entry). */
  since: Date | null;
}

export interface OrderListView {
  orders: OrderRow[];
  page: { number: number; hasNext: boolean };
  /** The name of the supplier whose orders these are (supplier side), else null. */
  supplier: string | null;
}

export interface OrderEventView {
  status: OrderStatus;
  actor: 'BUYER' | 'SUPPLIER';
  accountId: string | null;
  note: string | null;
  at: Date;
}

export interface OrderView {
  id: string;
  orderNumber: string;
  status: OrderStatus;
  currency: string;
  subtotal: string;
  discount: string;
  shippingCost: string;
  tax: string;
  total: string;
  createdAt: Date;
  party: string;
  trackingNumber: string | null;
  trackingCarrier: string | null;
  trackingUrl: string | null;
  items: ReadonlyArray<{ name: string; sku: string | null; quantity: number; price: string; total: string }>;
  /** Oldest first: its placing, then each change. */
  history: readonly OrderEventView[];
}

/**
 * Whose orders `side` shows to the context's actor, with the supplier's name on the supplier side.
 * 403 for the supplier side of an account acting for none, before any order is looked up (as the
 * API answers a non-member's key).
 */
async function ownerOf(ctx: RequestContext, side: OrderSide): Promise<{ owner: OrderOwner; supplier: string | null }> {
  const accountId = accountOf(ctx.actor);
  // The dashboard's order pages are for a signed-in account only: reaching here without one is a route that forgot it.
  if (accountId === null) throw new Error('Order views need an account: the route must be for signed-in visitors');
  if (side === 'buyer') return { owner: { buyerId: accountId }, supplier: null };
  const membership = await membershipOf(ctx);
  if (!membership) {
    throw new AppError(
      'FORBIDDEN',
      "Your account does not act for a supplier, so it has no supplier's orders to show. An operator makes an account a supplier's member (keys command line: member add).",
      { requiredMembership: 'supplier' },
    );
  }
  return { owner: { supplierId: membership.supplierId }, supplier: membership.companyName };
}

const PARTIES = { supplier: { select: { companyName: true } }, buyer: { select: { name: true, companyName: true } } } satisfies Prisma.OrderSelect;

/** The other party of an order, as the reader of `side` names it. */
const partyOf = (side: OrderSide, o: { supplier: { companyName: string }; buyer: { name: string; companyName: string | null } }) =>
  side === 'buyer' ? o.supplier.companyName : [o.buyer.companyName, o.buyer.name].filter(Boolean).join(' · ') || 'A buyer';

/** Page `page` (from 1) of the side's orders, newest first. */
export async function orderListView(ctx: RequestContext, side: OrderSide, page: number): Promise<OrderListView> {
  const { owner, supplier } = await ownerOf(ctx, side);
  const rows = await ctx.prisma.order.findMany({
    where: owner,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    skip: (page - 1) * ORDERS_PER_PAGE,
    take: ORDERS_PER_PAGE + 1,
    select: {
      ...PARTIES,
      orderNumber: true,
      status: true,
      total: true,
      currency: true,
      createdAt: true,
      _count: { select: { items: true } },
      // Its last entry only: when it took its present status.
      history: { orderBy: [{ at: 'desc' }, { id: 'desc' }], take: 1, select: { at: true } },
    },
  });
  const orders = rows.slice(0, ORDERS_PER_PAGE).map((o) => ({
    orderNumber: o.orderNumber,
    status: o.status,
    total: o.total.toFixed(2),
    currency: o.currency,
    createdAt: o.createdAt,
    party: partyOf(side, o),
    items: o._count.items,
    since: o.history[0]?.at ?? null,
  }));
  return { orders, page: { number: page, hasNext: rows.length > ORDERS_PER_PAGE }, supplier };
}

/** One of the side's orders by its number, or null: anyone else's is as absent as one that does not exist. */
export async function orderView(ctx: RequestContext, side: OrderSide, orderNumber: string): Promise<OrderView | null> {
  const { owner } = await ownerOf(ctx, side);
  const o = await ctx.prisma.order.findFirst({
    where: { ...owner, orderNumber },
    select: {
      id: true, orderNumber: true, status: true, currency: true, createdAt: true,
      subtotal: true, discount: true, shippingCost: true, tax: true, total: true,
      trackingNumber: true, trackingCarrier: true, trackingUrl: true,
      ...PARTIES,
      items: { orderBy: { id: 'asc' }, select: { quantity: true, price: true, total: true, product: { select: { name: true, sku: true } } } },
      history: { orderBy: [{ at: 'asc' }, { id: 'asc' }], select: { status: true, actor: true, accountId: true, note: true, at: true } },
    },
  });
  if (!o) return null;
  return {
    id: o.id,
    orderNumber: o.orderNumber,
    status: o.status,
    currency: o.currency,
    createdAt: o.createdAt,
    trackingNumber: o.trackingNumber,
    trackingCarrier: o.trackingCarrier,
    trackingUrl: o.trackingUrl,
    history: o.history,
    subtotal: o.subtotal.toFixed(2),
    discount: o.discount.toFixed(2),
    shippingCost: o.shippingCost.toFixed(2),
    tax: o.tax.toFixed(2),
    total: o.total.toFixed(2),
    party: partyOf(side, o),
    items: o.items.map((i) => ({ name: i.product.name, sku: i.product.sku, quantity: i.quantity, price: i.price.toFixed(2), total: i.total.toFixed(2) })),
  };
}
