import { AppError } from '../../shared/errors.js';

// The order's life: every status change it can make and who may make it, declared once here.
// The REST and GraphQL operations, the README's table (test/order-lifecycle.test.ts compares
// them) and the 409 details all read this table.

export const orderStatuses = ['PENDING', 'CONFIRMED', 'PROCESSING', 'SHIPPED', 'DELIVERED', 'CANCELLED', 'REFUNDED'] as const;
export type OrderStatus = (typeof orderStatuses)[number];

/** Who moves an order: its buyer's account, or an account acting for its supplier. */
export const actors = ['buyer', 'supplier'] as const;
export type Actor = (typeof actors)[number];

/** From each status, the statuses it may move to and who may move it there. Nothing else is allowed. */
export const TRANSITIONS: Readonly<Record<OrderStatus, Readonly<Partial<Record<OrderStatus, readonly Actor[]>>>>> = {
  PENDING: { CONFIRMED: ['supplier'], CANCELLED: ['buyer', 'supplier'] },
  CONFIRMED: { PROCESSING: ['supplier'], CANCELLED: ['buyer', 'supplier'] },
  PROCESSING: { SHIPPED: ['supplier'], CANCELLED: ['supplier'] },
  SHIPPED: { DELIVERED: ['supplier'] },
  DELIVERED: { REFUNDED: ['supplier'] },
  CANCELLED: {},
  REFUNDED: {},
};

/** The status that needs the parcel's tracking (trackingNumber and trackingCarrier; trackingUrl optional). */
export const SHIPPED: OrderStatus = 'SHIPPED';
/** The status that gives back the stock the order took. */
export const CANCELLED: OrderStatus = 'CANCELLED';

/** The statuses `actor` may move an order in `status` to, in the order of orderStatuses. */
export function allowedNext(status: OrderStatus, actor: Actor): OrderStatus[] {
  const next = TRANSITIONS[status];
  return orderStatuses.filter((to) => next[to]?.includes(actor));
}

/** Throws 409 CONFLICT unless `actor` may move an order in `status` to `requested`. */
export function checkTransition(status: OrderStatus, requested: OrderStatus, actor: Actor): void {
  const allowed = allowedNext(status, actor);
  if (allowed.includes(requested)) return;
  const why = allowed.length ? `it can only become ${allowed.join(' or ')}` : `the ${actor} cannot change it any more`;
  throw new AppError('CONFLICT', `The order is ${status} and cannot become ${requested}: ${why}`, { status, requested, allowed });
}
