import { z } from 'zod';
import { requireMembership } from '../../auth/membership.js';
import { keyCaller } from '../../context/actor.js';
import type { ApiContext } from '../../context/context.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { validationError } from '../../shared/errors.js';
import { CONTROL_CHARS_BUT_LINES } from '../../shared/text.js';
import { declareRule, enumParam, HTTP_URL_RULE, idParam, withoutControlChars } from '../../shared/validation.js';
import { completeClaim, notRecorded, onceForKey } from './idempotency.js';
import { buyerOf, line, lockProducts, orderById, type OrderOwner } from './orders.service.js';
import { CANCELLED, checkTransition, orderStatuses, SHIPPED, type Actor, type OrderStatus } from './transitions.js';

// Moving an order along its life (transitions.ts): the buyer cancels, the supplier's members do
// the rest. Each change is one transaction that locks the order's row, checks the move against
// the status it finds there, records it in the order's history and, on cancelling, gives back
// the stock the order took: of two changes racing, the second sees what the first did.

/** The longest note a change can carry (a cancellation's reason, a supplier's note). */
export const MAX_NOTE = 500;

/** A note: lines allowed, other control characters not; blank means none. */
const noteInput = withoutControlChars(z.string({ error: 'must be a string' }).max(MAX_NOTE, `must be at most ${MAX_NOTE} characters`), CONTROL_CHARS_BUT_LINES)
  .transform((v) => v.trim() || null)
  .nullable()
  .optional();

export const cancelOrderInput = z.object({ id: idParam, reason: noteInput }).strict();
export type CancelOrderInput = z.output<typeof cancelOrderInput>;

const TRACKING = ['trackingNumber', 'trackingCarrier', 'trackingUrl'] as const;
const TRACKING_REQUIRED = ['trackingNumber', 'trackingCarrier'] as const;

const trackingUrl = declareRule(
  z
    .string({ error: 'must be a string' })
    .max(500, 'must be at most 500 characters')
    .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), 'must be an http or https URL'),
  HTTP_URL_RULE,
)
  .nullable()
  .optional();

// Which tracking fields a change needs depends on the status it moves to, and is judged only once
// the move itself is allowed (trackingFor): a move that may not be made is the 409 naming the moves
// that may, not a 400 asking for the tracking of a shipment that cannot happen.
export const orderStatusInput = declareRule(
  z
    .object({
      status: enumParam(orderStatuses),
      trackingNumber: line(100).nullable().optional(),
      trackingCarrier: line(100).nullable().optional(),
      trackingUrl,
      note: noteInput,
    })
    .strict(),
  // trackingFor's rule, declared: the document cannot say it is judged after the move (409 first).
  {
    if: { properties: { status: { const: SHIPPED } }, required: ['status'] },
    then: { required: [...TRACKING_REQUIRED], properties: Object.fromEntries(TRACKING_REQUIRED.map((n) => [n, { type: 'string' }])) },
    else: { properties: Object.fromEntries(TRACKING.map((n) => [n, { type: 'null' }])) },
  },
);
export type OrderStatusInput = z.output<typeof orderStatusInput>;

const STATUS_CHANGE_MESSAGE = 'Invalid status change';

/** updateOrderStatus's rule for its `input` argument, which is also the REST body. */
export const orderStatusRule = { schema: orderStatusInput, argument: 'input', message: STATUS_CHANGE_MESSAGE, unknownKey: 'is not a recognised field' };

/**
 * The tracking a move to `input.status` records: required with SHIPPED, refused with any other
 * status (400, a refusal of the body: its Idempotency-Key is not used up).
 */
function trackingFor(input: OrderStatusInput): Tracking | undefined {
  const details: Record<string, string> = {};
  if (input.status === SHIPPED) {
    for (const name of TRACKING_REQUIRED) if (input[name] == null) details[name] = `is required when status is ${SHIPPED}`;
  } else {
    for (const name of TRACKING) if (input[name] != null) details[name] = `can only be given with status ${SHIPPED}`;
  }
  if (Object.keys(details).length) throw notRecorded(validationError(details, STATUS_CHANGE_MESSAGE));
  return input.status === SHIPPED ? { trackingNumber: input.trackingNumber!, trackingCarrier: input.trackingCarrier!, trackingUrl: input.trackingUrl ?? null } : undefined;
}

const ACTOR_COLUMN = { buyer: 'BUYER', supplier: 'SUPPLIER' } as const satisfies Record<Actor, string>;
const OWNER_COLUMN = { buyerId: '"buyerId"', supplierId: '"supplierId"' } as const;

interface Tracking {
  trackingNumber: string;
  trackingCarrier: string;
  trackingUrl: string | null;
}

interface Move {
  owner: OrderOwner;
  actor: Actor;
  accountId: string;
  to: OrderStatus;
  note: string | null;
  /** Judged once the move is known to be allowed: what it records, or a refusal (400). */
  tracking?: () => Tracking | undefined;
}

/** The buyer cancels one of their orders; null when they have no such order. */
export async function cancelOrder<Q extends object>(ctx: ApiContext, input: CancelOrderInput, query: Q) {
  const { accountId } = keyCaller(ctx.actor);
  const owner = buyerOf(ctx);
  const move: Move = { owner, actor: 'buyer', accountId, to: CANCELLED, note: input.reason ?? null };
  const id = await onceForKey(ctx, accountId, { cancelOrder: input }, (claimId) => moveOrder(ctx, input.id, move, claimId));
  return id === null ? null : orderById(ctx, owner, id, query);
}

/** A member of the order's supplier moves it on; null when the supplier has no such order. */
export async function updateOrderStatus<Q extends object>(ctx: ApiContext, id: string, input: OrderStatusInput, query: Q) {
  const { accountId } = keyCaller(ctx.actor);
  const owner: OrderOwner = { supplierId: await requireMembership(ctx) };
  const move: Move = {
    owner,
    actor: 'supplier',
    accountId,
    to: input.status,
    note: input.note ?? null,
    tracking: () => trackingFor(input),
  };
  const changed = await onceForKey(ctx, accountId, { updateOrderStatus: { id, ...input } }, (claimId) => moveOrder(ctx, id, move, claimId));
  return changed === null ? null : orderById(ctx, owner, changed, query);
}

/** The orders a member of a supplier sees: its supplier's (403 for an account acting for none). */
export const supplierOwner = async (ctx: ApiContext): Promise<OrderOwner> => ({ supplierId: await requireMembership(ctx) });

/** One status change in one transaction; null when the owner has no order `id`. */
async function moveOrder(ctx: ApiContext, id: string, move: Move, claimId: string | null): Promise<string | null> {
  const [ownerKey, ownerId] = Object.entries(move.owner)[0] as [keyof typeof OWNER_COLUMN, string];
  return ctx.prisma.$transaction(
    async (tx) => {
      // The row lock orders racing changes: the second reads the status the first left.
      const [order] = await tx.$queryRawUnsafe<{ status: OrderStatus }[]>(
        `SELECT status FROM "Order" WHERE id = $1 AND ${OWNER_COLUMN[ownerKey]} = $2 FOR UPDATE`,
        id,
        ownerId,
      );
      if (!order) return null;
      checkTransition(order.status, move.to, move.actor);
      const tracking = move.tracking?.();
      await tx.order.update({
        where: { id },
        data: {
          status: move.to,
          ...tracking,
          history: { create: { status: move.to, actor: ACTOR_COLUMN[move.actor], accountId: move.accountId, note: move.note } },
        },
        select: { id: true },
      });
      if (move.to === CANCELLED) await giveBackStock(tx, id);
      await ctx.events.orderStatusChanged(tx, id, { from: order.status, to: move.to, actor: move.actor });
      if (claimId) await completeClaim(tx, claimId, id, 200);
      return id;
    },
    // Changes may queue for the pool and for the order's and its products' row locks.
    { maxWait: 10_000, timeout: 15_000 },
  );
}

/**
 * Puts back on the shelf the units the order took, once: the lines are marked as given back in
 * the same transaction. The products are locked as placing an order locks them (lockProducts).
 */
async function giveBackStock(tx: Prisma.TransactionClient, orderId: string): Promise<void> {
  const lines = await tx.orderItem.findMany({ where: { orderId, stockTaken: true }, select: { productId: true } });
  if (!lines.length) return;
  await lockProducts(tx, lines.map((l) => l.productId));
  // Capped at the column's range rather than failing: stock set by its supplier since may be near it.
  await tx.$executeRawUnsafe(
    `UPDATE "Product" AS p SET stock = LEAST(p.stock::bigint + i.quantity, 2147483647)::int, "updatedAt" = now()
     FROM "OrderItem" AS i WHERE i."orderId" = $1 AND i."stockTaken" AND p.id = i."productId"`,
    orderId,
  );
  await tx.orderItem.updateMany({ where: { orderId, stockTaken: true }, data: { stockTaken: false } });
}
