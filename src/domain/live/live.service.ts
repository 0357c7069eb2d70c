import { z } from 'zod';
import { keyCaller } from '../../context/actor.js';
import type { ApiContext, KeyEnded, LiveFeed } from '../../context/context.js';
import { hasScope, PUBLISHABLE_STOCK_SCOPE, type Scope } from '../../auth/scopes.js';
import { AppError } from '../../shared/errors.js';
import { idParam } from '../../shared/validation.js';
import { parseWithRule } from '../../graphql/field-rules.js';

// The subscriptions' rules (docs/api.md, "Subscriptions"). A stream carries ids; each event is
// read by its resolvers in the subscriber's own context, as a query would read it.

/** productChanged's scope; the price and stock inside an event keep the queries' own (read:prices, read:stock). */
export const READ_PRODUCTS: Scope = 'read:products';

export const productChangedInput = z.object({ id: idParam }).strict();

function feedOf(ctx: ApiContext): LiveFeed {
  if (!ctx.live) throw new AppError('SERVICE_UNAVAILABLE', 'Subscriptions are not served by this process');
  return ctx.live;
}

/**
 * Aborted when the subscriber has gone: the signal of the HTTP request the subscription came in,
 * which Yoga puts on every context (and aborts when the client's connection closes), read as
 * Yoga's own execution cancellation reads it. Absent elsewhere: the transport then ends the stream.
 */
const goneSignal = (ctx: ApiContext): AbortSignal | undefined => {
  const signal = (ctx as { request?: { signal?: Partial<AbortSignal> } }).request?.signal;
  // Node's server adapter gives its own AbortSignal-like object, not an instance of AbortSignal.
  return typeof signal?.aborted === 'boolean' && typeof signal.addEventListener === 'function' ? (signal as AbortSignal) : undefined;
};

/** The caller's orders' events: as buyer, and as a member of a supplier for that supplier's orders. */
export function orderEventsOf(ctx: ApiContext) {
  return feedOf(ctx).orders(keyCaller(ctx.actor), goneSignal(ctx));
}

/** A product's changes; VALIDATION_ERROR for an id that cannot be one, NOT_FOUND for a product that does not exist (active or not). */
export async function productChangesOf(ctx: ApiContext, args: object) {
  const feed = feedOf(ctx);
  const { id: productId } = parseWithRule(productChangedInput, args) as z.output<typeof productChangedInput>;
  const found = await ctx.prisma.product.findUnique({ where: { id: productId }, select: { id: true } });
  if (!found) throw new AppError('NOT_FOUND', `No product with id ${productId}`);
  const key = keyCaller(ctx.actor);
  const changes = await feed.product(key, productId, goneSignal(ctx));
  // A publishable key without stock (its owner did not allow it) hears of price and catalogue
  // changes only: a change of stock alone would tell its pages when stock moves.
  if (!key.publishable || hasScope(key.scopes, PUBLISHABLE_STOCK_SCOPE)) return changes;
  const shown = async () => {
    const row = await ctx.prisma.product.findUnique({ where: { id: productId }, select: { price: true, compareAtPrice: true, isActive: true } });
    return JSON.stringify(row);
  };
  let last = await shown();
  return keptOnly(changes, async (item) => {
    if (typeof item === 'object' && item !== null) return true; // the key ended: always told
    const now = await shown();
    if (now === last) return false;
    last = now;
    return true;
  });
}

/**
 * `source`'s items that `keep` accepts. Ending it ends `source` at once (a generator would wait
 * for the source's next item to notice), so the stream's place in the hub is freed.
 */
function keptOnly<T>(source: AsyncIterable<T>, keep: (item: T) => Promise<boolean>): AsyncIterableIterator<T> {
  const inner = source[Symbol.asyncIterator]();
  const ended = (value?: unknown): IteratorResult<T> => ({ done: true, value: value as undefined });
  return {
    async next() {
      for (;;) {
        const step = await inner.next();
        if (step.done || (await keep(step.value))) return step;
      }
    },
    return: (value?: unknown) => (inner.return ? inner.return(value) : Promise.resolve(ended(value))),
    throw: (error?: unknown) => (inner.throw ? inner.throw(error) : Promise.reject(error)),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * An event about to be resolved: the request's loaders are emptied (a stream's context lives for
 * many events, and each must read the rows as they are now), and a stream whose key stopped
 * working ends with UNAUTHORIZED.
 */
export function eventFor<T>(ctx: ApiContext, item: T | KeyEnded): T {
  if (typeof item === 'object' && item !== null && 'keyEnded' in item) throw new AppError('UNAUTHORIZED', 'The API key of this subscription was revoked, has expired or had its scopes changed: the subscription has ended (subscribe again with a valid key)');
  ctx.loaders.clear();
  return item;
}

/** The product an event is about as productChanged shows it: its id and whether it is in the catalogue. */
export async function changedProduct(ctx: ApiContext, productId: string) {
  return ctx.prisma.product.findUnique({ where: { id: productId }, select: { id: true, isActive: true } });
}
