import { describe, expect, it } from 'vitest';
import { cancelOrderInput, MAX_NOTE, orderStatusInput } from '../../src/domain/orders/lifecycle.js';
import { actors, allowedNext, checkTransition, orderStatuses, TRANSITIONS, type Actor, type OrderStatus } from '../../src/domain/orders/transitions.js';
import { AppError } from '../../src/shared/errors.js';

// The order's life (src/domain/orders/transitions.ts): which status may follow which, and who may
// make each move. The table is the rule; these tests state what it must keep meaning.

/** Every (from, to, actor) the table allows. */
const allowedMoves = orderStatuses.flatMap((from) => actors.flatMap((actor) => allowedNext(from, actor).map((to) => `${from}→${to} by ${actor}`)));

/** The error checkTransition throws, or undefined when the move is allowed. */
function refusal(from: OrderStatus, to: OrderStatus, actor: Actor): AppError | undefined {
  try {
    checkTransition(from, to, actor);
    return undefined;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

describe('the transition table', () => {
  it('allows exactly these moves, and nothing else', () => {
    expect(allowedMoves.sort()).toEqual(
      [
        'PENDING→CONFIRMED by supplier',
        'PENDING→CANCELLED by buyer',
        'PENDING→CANCELLED by supplier',
        'CONFIRMED→PROCESSING by supplier',
        'CONFIRMED→CANCELLED by buyer',
        'CONFIRMED→CANCELLED by supplier',
        'PROCESSING→SHIPPED by supplier',
        'PROCESSING→CANCELLED by supplier',
        'SHIPPED→DELIVERED by supplier',
        'DELIVERED→REFUNDED by supplier',
      ].sort(),
    );
  });

  it('names only known statuses and actors', () => {
    for (const [from, next] of Object.entries(TRANSITIONS)) {
      expect(orderStatuses).toContain(from);
      for (const [to, who] of Object.entries(next)) {
        expect(orderStatuses).toContain(to);
        expect(who!.every((actor) => (actors as readonly string[]).includes(actor))).toBe(true);
      }
    }
    expect(Object.keys(TRANSITIONS).sort()).toEqual([...orderStatuses].sort());
  });

  it.each(['CANCELLED', 'REFUNDED'] as const)('%s is final: nobody moves it anywhere', (status) => {
    for (const actor of actors) expect(allowedNext(status, actor)).toEqual([]);
  });

  it('never lets a status move to itself', () => {
    for (const status of orderStatuses) for (const actor of actors) expect(allowedNext(status, actor)).not.toContain(status);
  });

  it('never moves an order back to PENDING', () => {
    for (const status of orderStatuses) for (const actor of actors) expect(allowedNext(status, actor)).not.toContain('PENDING');
  });

  it('lets the buyer only cancel, and only before processing starts', () => {
    const byBuyer = orderStatuses.flatMap((from) => allowedNext(from, 'buyer').map((to) => [from, to]));
    expect(byBuyer).toEqual([
      ['PENDING', 'CANCELLED'],
      ['CONFIRMED', 'CANCELLED'],
    ]);
  });

  it('lets nobody cancel a shipped or delivered order (a delivered one is refunded instead)', () => {
    for (const status of ['SHIPPED', 'DELIVERED'] as const) for (const actor of actors) expect(allowedNext(status, actor)).not.toContain('CANCELLED');
    expect(allowedNext('DELIVERED', 'supplier')).toEqual(['REFUNDED']);
  });

  it('reaches every status from PENDING, and DELIVERED only through SHIPPED', () => {
    const reached = new Set<OrderStatus>(['PENDING']);
    const queue: OrderStatus[] = ['PENDING'];
    const into = new Map<OrderStatus, Set<OrderStatus>>();
    while (queue.length) {
      const from = queue.shift()!;
      for (const to of allowedNext(from, 'supplier')) {
        into.set(to, (into.get(to) ?? new Set()).add(from));
        if (reached.has(to)) continue;
        reached.add(to);
        queue.push(to);
      }
    }
    expect([...reached].sort()).toEqual([...orderStatuses].sort());
    expect([...into.get('DELIVERED')!]).toEqual(['SHIPPED']);
  });

  it('lists the allowed next statuses in the order of the lifecycle', () => {
    for (const status of orderStatuses) {
      const next = allowedNext(status, 'supplier');
      expect(next).toEqual([...next].sort((a, b) => orderStatuses.indexOf(a) - orderStatuses.indexOf(b)));
    }
    expect(allowedNext('PENDING', 'supplier')).toEqual(['CONFIRMED', 'CANCELLED']);
  });
});

describe('checking a move', () => {
  it('lets every move of the table through', () => {
    for (const from of orderStatuses) for (const actor of actors) for (const to of allowedNext(from, actor)) expect(refusal(from, to, actor)).toBeUndefined();
  });

  it('refuses every other move with 409 CONFLICT', () => {
    let refused = 0;
    for (const from of orderStatuses) {
      for (const to of orderStatuses) {
        for (const actor of actors) {
          if (allowedNext(from, actor).includes(to)) continue;
          const error = refusal(from, to, actor);
          expect(error?.code, `${from}→${to} by ${actor}`).toBe('CONFLICT');
          expect(error?.status).toBe(409);
          refused++;
        }
      }
    }
    expect(refused).toBe(orderStatuses.length ** 2 * actors.length - allowedMoves.length);
  });

  it('tells the caller what the order is, what was asked and what it may become instead', () => {
    const error = refusal('PENDING', 'SHIPPED', 'supplier')!;
    expect(error.message).toBe('The order is PENDING and cannot become SHIPPED: it can only become CONFIRMED or CANCELLED');
    expect(error.details).toEqual({ status: 'PENDING', requested: 'SHIPPED', allowed: ['CONFIRMED', 'CANCELLED'] });
  });

  it('says when the actor can change the order no more', () => {
    const error = refusal('PROCESSING', 'CANCELLED', 'buyer')!;
    expect(error.message).toBe('The order is PROCESSING and cannot become CANCELLED: the buyer cannot change it any more');
    expect(error.details).toEqual({ status: 'PROCESSING', requested: 'CANCELLED', allowed: [] });
  });

  it('gives the buyer a supplier’s move as a conflict, not as permission', () => {
    expect(refusal('PENDING', 'CONFIRMED', 'buyer')?.details).toEqual({ status: 'PENDING', requested: 'CONFIRMED', allowed: ['CANCELLED'] });
  });
});

describe('a status change’s body', () => {
  it('takes only the statuses of the lifecycle', () => {
    expect(orderStatusInput.safeParse({ status: 'CONFIRMED' }).success).toBe(true);
    const wrong = orderStatusInput.safeParse({ status: 'confirmed' });
    expect(wrong.success).toBe(false);
    expect(wrong.error?.issues[0]?.message).toBe(`must be one of ${orderStatuses.join(', ')}`);
  });

  it('refuses fields it does not know', () => {
    expect(orderStatusInput.safeParse({ status: 'SHIPPED', carrier: 'x' }).success).toBe(false);
    expect(cancelOrderInput.safeParse({ id: 'o1', why: 'x' }).success).toBe(false);
  });

  it('takes a tracking link only over http or https', () => {
    expect(orderStatusInput.safeParse({ status: 'SHIPPED', trackingUrl: 'https://track.example/1' }).success).toBe(true);
    expect(orderStatusInput.safeParse({ status: 'SHIPPED', trackingUrl: 'javascript:alert(1)' }).success).toBe(false);
    expect(orderStatusInput.safeParse({ status: 'SHIPPED', trackingUrl: 'not a url' }).success).toBe(false);
  });

  it('takes a note of several lines up to its length, but no other control character', () => {
    expect(cancelOrderInput.parse({ id: 'o1', reason: 'line one\r\nline two\ttabbed' }).reason).toBe('line one\r\nline two\ttabbed');
    expect(cancelOrderInput.safeParse({ id: 'o1', reason: 'bell\u0007' }).success).toBe(false);
    expect(cancelOrderInput.safeParse({ id: 'o1', reason: 'nul\u0000' }).success).toBe(false);
    expect(cancelOrderInput.safeParse({ id: 'o1', reason: 'x'.repeat(MAX_NOTE) }).success).toBe(true);
    expect(cancelOrderInput.safeParse({ id: 'o1', reason: 'x'.repeat(MAX_NOTE + 1) }).success).toBe(false);
  });

  it('reads a blank note as no note', () => {
    expect(cancelOrderInput.parse({ id: 'o1', reason: '  \n ' }).reason).toBeNull();
    expect(cancelOrderInput.parse({ id: 'o1', reason: '  changed my mind ' }).reason).toBe('changed my mind');
  });
});
