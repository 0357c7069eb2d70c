import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { checkEmail, CONTROL_CHARS, CONTROL_CHARS_BUT_LINES, CONTROL_CHARS_MESSAGE, nameProblem } from '../../shared/text.js';
import type { Scope } from '../../auth/scopes.js';
import { memberSupplierId } from '../../auth/membership.js';
import { keyCaller, type KeyCaller } from '../../context/actor.js';
import type { ApiContext, EventsOfChange, StockChange } from '../../context/context.js';
import { AppError, validationError, type ErrorDetails } from '../../shared/errors.js';
import { Prisma } from '../../generated/prisma/client.js';
import { MONEY_MAX, toColumn } from '../../rules/money.js';
import { findPage } from '../../db/direct-reads.js';
import { pageParams, pageWindow, type PageInput } from '../../shared/pagination.js';
import { declareRule, enumParam, idParam, withoutControlChars } from '../../shared/validation.js';
import { completeClaim, onceForKey } from './idempotency.js';
import { priceOrder } from './pricing.js';
import { orderStatuses } from './transitions.js';

export { orderStatuses, type OrderStatus } from './transitions.js';

// Who may see and create orders, and how an order is made (docs/api.md, "Orders"). Both interfaces
// come through here: REST routes are GraphQL operations on the fields that call these functions.

export const READ_ORDERS: Scope = 'read:orders';
export const WRITE_ORDERS: Scope = 'write:orders';

/** Items per order, and units per item: bounds that keep every amount inside NUMERIC(12, 2). */
export const MAX_ITEMS = 100;
export const MAX_QUANTITY = 1_000_000;

// ----- reading -----

const orderFilterParams = { status: enumParam(orderStatuses).optional() };
export const orderListInput = z.object({ ...pageParams, ...orderFilterParams }).strict();
/** A connection's filters: the offset list's, without its page. */
export const orderFilterInput = z.object(orderFilterParams).strict();
export type OrderFilter = z.output<typeof orderFilterInput>;

/** One page of orders, with whose they are (a buyer's, a supplier's) already fixed. */
export interface OrderPage extends PageInput {
  where: Prisma.OrderWhereInput;
}

/** The orders the caller sees: as their buyer, or as a member of their supplier. */
export type OrderOwner = { buyerId: string } | { supplierId: string };

export const buyerOf = (ctx: ApiContext): OrderOwner => ({ buyerId: keyCaller(ctx.actor).accountId });

export function orderPage(owner: OrderOwner, { page, limit, status }: z.output<typeof orderListInput>): OrderPage {
  return { page, limit, where: { ...owner, ...(status ? { status } : {}) } };
}

/** A list of orders: newest first, ties broken by id. */
const ORDERS_NEWEST_FIRST: Prisma.OrderOrderByWithRelationInput[] = [{ createdAt: 'desc' }, { id: 'asc' }];

/** An owner's orders matching a connection's filters. */
export const orderFilterWhere = (owner: OrderOwner, { status }: OrderFilter): Prisma.OrderWhereInput => ({
  ...owner,
  ...(status ? { status } : {}),
});

/** A connection's window of orders (plugin-prisma's cursor, skip and take in `query`), in the list's order. */
export const orderWindow = <Q extends object>(ctx: ApiContext, where: Prisma.OrderWhereInput, query: Q) =>
  ctx.prisma.order.findMany({ ...query, where, orderBy: ORDERS_NEWEST_FIRST });

export async function listOrders<Q extends object>(ctx: ApiContext, page: OrderPage, query: Q) {
  const window = pageWindow(page);
  if (!window) return [];
  return findPage(ctx.prisma, 'Order', ctx.prisma.order, { where: page.where, orderBy: ORDERS_NEWEST_FIRST, ...window }, query);
}

export const countOrders = (ctx: ApiContext, page: OrderPage) => ctx.prisma.order.count({ where: page.where });

/**
 * One of the owner's orders by id, or null. Anyone else's order is exactly as absent as one that
 * does not exist: the same null, so the same 404 over REST.
 */
export async function orderById<Q extends object>(ctx: ApiContext, owner: OrderOwner, id: string, query: Q) {
  return ctx.prisma.order.findFirst({ ...query, where: { id, ...owner } });
}

/**
 * The orders the caller may read by id: its own as their buyer and, for an account acting for a
 * supplier, that supplier's (what order(id:) and supplierOrder(id:) answer between them).
 */
export async function readableOrders(ctx: ApiContext): Promise<Prisma.OrderWhereInput> {
  const own = buyerOf(ctx);
  const supplierId = await memberSupplierId(ctx);
  return supplierId === null ? own : { OR: [own, { supplierId }] };
}

// ----- the CreateOrder body -----

/** A line of an address (a name among them: the supplier reads it), checked as every name is (src/shared/text.ts). */
export const line = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .overwrite((v) => v.normalize('NFC'))
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .superRefine((v, ctx) => {
      const problem = nameProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

export const optionalLine = (max: number) => line(max).nullable().optional();

export const shippingAddressInput = z
  .object({
    fullName: line(200),
    companyName: optionalLine(200),
    phone: line(50),
    // Kept as written (the supplier writes to it), but refused when it is no address or a look-alike.
    email: optionalLine(254).superRefine((v, ctx) => {
      const checked = v == null ? null : checkEmail(v);
      if (checked && 'problem' in checked) ctx.addIssue({ code: 'custom', message: checked.problem });
    }),
    address: line(500),
    city: line(100),
    county: line(100),
    postalCode: line(20),
  })
  .strict();

const quantityMessage = `must be an integer between 1 and ${MAX_QUANTITY}`;
const quantityInput = z.number({ error: quantityMessage }).int(quantityMessage).min(1, quantityMessage).max(MAX_QUANTITY, quantityMessage);

const couponCodeInput = withoutControlChars(z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(50, 'must be at most 50 characters'));

export const orderItemInput = z
  .object({
    productId: idParam,
    quantity: quantityInput,
    variantId: z.null({ error: 'must be absent or null: no product has variants' }).optional(),
  })
  .strict();

export const createOrderInput = declareRule(z
  .object({
    supplierId: idParam,
    items: z
      .array(orderItemInput, { error: 'must be an array of items' })
      .min(1, 'must contain at least one item')
      .max(MAX_ITEMS, `must contain at most ${MAX_ITEMS} items`)
      .superRefine((items, ctx) => {
        const seen = new Set<string>();
        items.forEach((item, i) => {
          if (seen.has(item.productId)) ctx.addIssue({ code: 'custom', path: [i, 'productId'], message: 'is already in the order: list each product once' });
          seen.add(item.productId);
        });
      }),
    addressId: idParam.optional(),
    shippingAddress: shippingAddressInput.optional(),
    // Notes may span lines.
    notes: withoutControlChars(z.string({ error: 'must be a string' }).max(2000, 'must be at most 2000 characters'), CONTROL_CHARS_BUT_LINES)
      .transform((v) => v.trim() || undefined)
      .optional(),
    couponCode: couponCodeInput.optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.addressId !== undefined && v.shippingAddress !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['shippingAddress'], message: 'cannot be combined with addressId: send one or the other' });
    }
  }),
  // properties too: a strict validator wants each required name defined beside it.
  { not: { required: ['addressId', 'shippingAddress'], properties: { addressId: true, shippingAddress: true } } });

export type CreateOrderInput = z.output<typeof createOrderInput>;
export type ShippingAddress = { [K in keyof z.output<typeof shippingAddressInput>]-?: string | null };

/**
 * createOrder's rule for its `input` argument, which is also the REST body. A body the schema
 * refuses is also checked against the database, as far as it is well-formed, so that one 400
 * names every broken rule (docs/api.md, Orders).
 */
export const createOrderRule = {
  schema: createOrderInput,
  argument: 'input',
  message: 'Invalid order',
  unknownKey: 'is not a recognised field',
  databaseProblems: async (raw: Readonly<Record<string, unknown>>, ctx: ApiContext) =>
    (await checkReferences(ctx.prisma, keyCaller(ctx.actor).accountId, wellFormedReferences(raw), ctx.now())).details,
};

/** The stored and returned form: every field present, null when not given. */
export function shippingAddressOf(value: unknown): ShippingAddress | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  const str = (k: string) => (typeof v[k] === 'string' ? (v[k] as string) : null);
  return {
    fullName: str('fullName'),
    companyName: str('companyName'),
    phone: str('phone'),
    email: str('email'),
    address: str('address'),
    city: str('city'),
    county: str('county'),
    postalCode: str('postalCode'),
  };
}

// ----- creating -----

const SUFFIX_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Order numbers; a seam so a test can force a collision. */
export const orderNumbers = {
  next(now: number = Date.now()): string {
    let suffix = '';
    for (let i = 0; i < 6; i++) suffix += SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)];
    return `ORD-${now}-${suffix}`;
  },
};

const ORDER_NUMBER_ATTEMPTS = 5;

/**
 * Creates an order for the caller and returns it (with `query`'s selection). With an
 * Idempotency-Key the first request's outcome is replayed to every retry (idempotency.ts).
 */
export async function createOrder<Q extends object>(ctx: ApiContext, input: CreateOrderInput, query: Q) {
  const caller = keyCaller(ctx.actor);
  // The body is hashed as it always was, so keys stored before other operations took keys still replay.
  const orderId = await onceForKey(ctx, caller.accountId, input, (claimId) => placeOrder(ctx, caller, input, claimId));
  return ctx.prisma.order.findFirstOrThrow({ ...query, where: { id: orderId!, buyerId: caller.accountId } });
}

/** Runs the order's transaction, again with a fresh number in the unlikely event of a collision. */
async function placeOrder(ctx: ApiContext, caller: KeyCaller, input: CreateOrderInput, claimId: string | null): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ctx.prisma.$transaction((tx) => orderTransaction(tx, ctx.events, caller, input, claimId, ctx.now()), {
        // Many orders may queue for the pool and for a popular product's row lock.
        maxWait: 10_000,
        timeout: 15_000,
      });
    } catch (error) {
      if (attempt < ORDER_NUMBER_ATTEMPTS && isUniqueViolation(error, 'orderNumber')) continue;
      throw error;
    }
  }
}

function isUniqueViolation(error: unknown, field: string): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002' && JSON.stringify(error.meta ?? {}).includes(field);
}

const productFields = {
  id: true,
  supplierId: true,
  isActive: true,
  price: true,
  vatRate: true,
  minOrder: true,
  trackInventory: true,
} satisfies Prisma.ProductSelect;

/** What of an order the database judges: references to rows, and the minimum order of each product. */
interface OrderReferences {
  supplierId?: string;
  /** By position, as problems are named (`items[1].quantity`); an item too malformed to look up is a hole. */
  items: readonly ({ productId: string; quantity?: number } | undefined)[];
  addressId?: string;
  couponCode?: string;
}

/**
 * Checks an order's references (written once, for a well-formed order inside its transaction and
 * for the well-formed parts of a refused one): the supplier is active, each product active, of
 * that supplier and ordered at least at its minimum, the address the caller's, the coupon valid
 * for the supplier now. Answers the problems by field, and the rows it read.
 */
async function checkReferences(db: Prisma.TransactionClient, accountId: string, refs: OrderReferences, now: Date) {
  const items = refs.items.flatMap((item, index) => (item ? [{ ...item, index }] : []));
  const [supplier, products, address, coupon] = await Promise.all([
    refs.supplierId ? db.supplier.findUnique({ where: { id: refs.supplierId }, select: { isActive: true, shippingFee: true, freeShippingThreshold: true } }) : null,
    items.length ? db.product.findMany({ where: { id: { in: items.map((i) => i.productId) } }, select: productFields }) : [],
    refs.addressId ? db.address.findFirst({ where: { id: refs.addressId, accountId } }) : null,
    refs.couponCode
      ? db.coupon.findFirst({ where: { code: { equals: literalPattern(refs.couponCode), mode: 'insensitive' } }, orderBy: { code: 'asc' } })
      : null,
  ]);

  const details: ErrorDetails = {};
  if (refs.supplierId && !supplier?.isActive) details.supplierId = 'is not an active supplier';
  const byId = new Map(products.map((p) => [p.id, p]));
  for (const item of items) {
    const product = byId.get(item.productId);
    if (!product?.isActive) details[`items[${item.index}].productId`] = 'is not an active product';
    else if (supplier?.isActive && product.supplierId !== refs.supplierId) details[`items[${item.index}].productId`] = 'is sold by another supplier';
    else if (item.quantity !== undefined && item.quantity < Math.max(1, product.minOrder)) {
      details[`items[${item.index}].quantity`] = `must be at least ${product.minOrder}, the product's minimum order`;
    }
  }
  if (refs.addressId && !address) details.addressId = 'is not one of your saved addresses';
  // The minimum subtotal of a coupon can only be judged once every item is known to be valid.
  const couponIssue = refs.couponCode ? couponProblem(coupon, refs.supplierId, now, null) : null;
  if (couponIssue) details.couponCode = couponIssue;
  return { details, supplier, byId, address, coupon };
}

/**
 * The parts of a refused body that its schema would accept, each on its own: they are still
 * checked against the database. More items than an order may hold are not looked up at all.
 */
function wellFormedReferences(raw: Readonly<Record<string, unknown>>): OrderReferences {
  const valid = <T>(schema: z.ZodType<T>, value: unknown): T | undefined => {
    const parsed = schema.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  };
  const items = Array.isArray(raw.items) && raw.items.length <= MAX_ITEMS ? (raw.items as unknown[]) : [];
  return {
    supplierId: valid(idParam, raw.supplierId),
    items: items.map((item) => {
      if (item === null || typeof item !== 'object') return undefined;
      const { productId, quantity } = item as Record<string, unknown>;
      const id = valid(idParam, productId);
      return id === undefined ? undefined : { productId: id, quantity: valid(quantityInput, quantity) };
    }),
    addressId: valid(idParam, raw.addressId),
    couponCode: valid(couponCodeInput, raw.couponCode),
  };
}

/** The order's transaction; `now`, the context's time, is its creation time and what the coupon is judged at. */
async function orderTransaction(tx: Prisma.TransactionClient, events: EventsOfChange, caller: KeyCaller, input: CreateOrderInput, claimId: string | null, now: Date): Promise<string> {
  const { details, supplier, byId, address, coupon } = await checkReferences(tx, caller.accountId, input, now);
  if (!supplier?.isActive || Object.keys(details).length) throw validationError(details, 'Invalid order');

  const lines = input.items.map((item) => {
    const product = byId.get(item.productId)!;
    return { product, price: product.price, quantity: item.quantity, vatRate: product.vatRate };
  });
  const shipping = { fee: supplier.shippingFee, freeThreshold: supplier.freeShippingThreshold };
  const subtotalIssue = coupon ? couponProblem(coupon, input.supplierId, now, priceOrder(lines, null, shipping).subtotal) : null;
  if (subtotalIssue) throw validationError({ couponCode: subtotalIssue }, 'Invalid order');
  const priced = priceOrder(lines, coupon, shipping);
  for (const [i, l] of priced.lines.entries()) {
    if (l.total.greaterThan(MONEY_MAX)) details[`items[${i}].quantity`] = 'makes the line total exceed 9999999999.99 RON';
  }
  if (priced.total.greaterThan(MONEY_MAX)) details.items = 'make the order total exceed 9999999999.99 RON';
  if (Object.keys(details).length) throw validationError(details, 'Invalid order');

  const stockChanges = await takeStock(
    tx,
    lines.flatMap((l, index) => (l.product.trackInventory ? [{ productId: l.product.id, quantity: l.quantity, index }] : [])),
  );

  const shippingAddress = address ? shippingAddressOf(address) : input.shippingAddress ? shippingAddressOf(input.shippingAddress) : null;
  const order = await tx.order.create({
    data: {
      orderNumber: orderNumbers.next(now.getTime()),
      status: 'PENDING',
      currency: 'RON',
      subtotal: toColumn(priced.subtotal),
      discount: toColumn(priced.discount),
      shippingCost: toColumn(priced.shippingCost),
      tax: toColumn(priced.tax),
      total: toColumn(priced.total),
      notes: input.notes ?? null,
      couponCode: coupon?.code ?? null,
      shippingAddress: shippingAddress ?? Prisma.DbNull,
      buyerId: caller.accountId,
      supplierId: input.supplierId,
      createdAt: now,
      items: {
        create: priced.lines.map((l, i) => ({
          productId: lines[i]!.product.id,
          quantity: l.quantity,
          price: toColumn(l.price),
          total: toColumn(l.total),
          vatRate: l.vatRate.toFixed(2),
          tax: toColumn(l.tax),
          stockTaken: lines[i]!.product.trackInventory,
        })),
      },
      history: { create: { status: 'PENDING', actor: 'BUYER', accountId: caller.accountId, at: now } },
    },
    select: { id: true },
  });
  await events.orderCreated(tx, order.id);
  await events.stockChanged(tx, input.supplierId, stockChanges);
  if (claimId) await completeClaim(tx, claimId, order.id, 201);
  return order.id;
}

/**
 * Prisma compares case-insensitively with ILIKE, where `%` and `_` are wildcards: escaped, a
 * guessed "B%" cannot match a real code.
 */
const literalPattern = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Why a coupon does not apply to this order, or null when it does. */
export function couponProblem(
  coupon: { isActive: boolean; supplierId: string | null; validFrom: Date; validUntil: Date | null; minSubtotal: Prisma.Decimal } | null,
  /** undefined: the order names no valid supplier, so whether the coupon is for it is not judged. */
  supplierId: string | undefined,
  now: Date,
  /** null: do not judge the minimum subtotal yet. */
  subtotal: Prisma.Decimal | null,
): string | null {
  if (!coupon || !coupon.isActive) return 'is not a valid coupon';
  if (coupon.supplierId !== null && supplierId !== undefined && coupon.supplierId !== supplierId) return 'does not apply to this supplier';
  if (now < coupon.validFrom) return 'is not valid yet';
  if (coupon.validUntil !== null && now > coupon.validUntil) return 'has expired';
  if (subtotal !== null && subtotal.lessThan(coupon.minSubtotal)) return `requires a subtotal of at least ${coupon.minSubtotal.toFixed(2)} RON`;
  return null;
}

/**
 * Locks products' rows for the rest of the transaction and reads their stock under the lock. Every
 * transaction that changes several products' stock (placing an order, cancelling one) locks them
 * through here, in id order, so two of them sharing products cannot deadlock.
 */
export const lockProducts = (tx: Prisma.TransactionClient, ids: readonly string[]) =>
  tx.$queryRawUnsafe<{ id: string; stock: number; lowStockThreshold: number; trackInventory: boolean }[]>(
    `SELECT id, stock, "lowStockThreshold", "trackInventory" FROM "Product" WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`,
    ids,
  );

/**
 * Takes the units off the shelf in the order's transaction. Rows are locked in id order (so two
 * orders sharing products cannot deadlock) and read under the lock, so `available` is the truth
 * and no concurrent order can sell the same units: not enough → 409 naming every short item.
 * Answers each product's stock before and after, for the low-stock event.
 */
async function takeStock(tx: Prisma.TransactionClient, wanted: { productId: string; quantity: number; index: number }[]): Promise<StockChange[]> {
  if (wanted.length === 0) return [];
  const ids = wanted.map((w) => w.productId);
  const locked = new Map((await lockProducts(tx, ids)).map((r) => [r.id, r]));
  const short: ErrorDetails = {};
  for (const w of wanted) {
    const available = Math.max(0, locked.get(w.productId)?.stock ?? 0);
    if (available < w.quantity) short[`items[${w.index}]`] = { productId: w.productId, requested: w.quantity, available };
  }
  if (Object.keys(short).length) throw new AppError('CONFLICT', 'Not enough stock for this order', short);
  const updated = await tx.$executeRawUnsafe(
    `UPDATE "Product" AS p SET stock = p.stock - w.quantity, "updatedAt" = now()
     FROM unnest($1::text[], $2::int[]) AS w(id, quantity)
     WHERE p.id = w.id AND p.stock >= w.quantity`,
    ids,
    wanted.map((w) => w.quantity),
  );
  // The rows are locked, so this cannot happen; if it ever did, selling anyway would oversell.
  if (updated !== wanted.length) throw new Error('Stock changed under a row lock');
  return wanted.map((w) => {
    const row = locked.get(w.productId)!;
    return { productId: w.productId, before: row.stock, after: row.stock - w.quantity, lowStockThreshold: row.lowStockThreshold, trackInventory: row.trackInventory };
  });
}
