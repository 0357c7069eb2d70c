import { describe, expect, it } from 'vitest';
import type { ApiContext } from '../../src/context/context.js';
import { canonicalJson, idempotencyKey, requestHash, storedError } from '../../src/domain/orders/idempotency.js';
import { AppError } from '../../src/shared/errors.js';

// The pure half of the Idempotency-Key protocol (src/domain/orders/idempotency.ts): which keys are
// taken, when two requests are "the same body", and how a stored refusal is answered again.

const withKey = (key: string | null) => ({ idempotencyKey: key }) as ApiContext;

describe('the Idempotency-Key header', () => {
  it('is optional', () => {
    expect(idempotencyKey(withKey(null))).toBeNull();
  });

  it('takes 1 to 255 printable ASCII characters, as sent', () => {
    expect(idempotencyKey(withKey('order-2026-03-01-0001'))).toBe('order-2026-03-01-0001');
    expect(idempotencyKey(withKey(' spaced key ~!'))).toBe(' spaced key ~!');
    expect(idempotencyKey(withKey('k'.repeat(255)))).toHaveLength(255);
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['non-ASCII', 'clé'],
    ['a control character', 'key\u0001'],
    ['a line break', 'key\n'],
  ])('is refused %s, with 400 naming the header', (_what, key) => {
    let refused: unknown;
    try {
      idempotencyKey(withKey(key));
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'VALIDATION_ERROR', message: 'Invalid Idempotency-Key header', details: { 'Idempotency-Key': 'must be 1–255 printable ASCII characters' } });
  });
});

describe('the same request', () => {
  it('is the same however its members are ordered, at every level', () => {
    const a = { supplierId: 's', items: [{ productId: 'p', quantity: 2 }], notes: 'x' };
    const b = { notes: 'x', items: [{ quantity: 2, productId: 'p' }], supplierId: 's' };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(requestHash(a)).toBe(requestHash(b));
  });

  it('is the same whether a member is null, absent or undefined (null means not given)', () => {
    expect(requestHash({ a: 1, couponCode: null, notes: undefined })).toBe(requestHash({ a: 1 }));
  });

  it('differs by the order of a list’s items, and by any value', () => {
    expect(requestHash({ items: [1, 2] })).not.toBe(requestHash({ items: [2, 1] }));
    expect(requestHash({ quantity: 2 })).not.toBe(requestHash({ quantity: '2' }));
  });

  it('keeps a list’s holes as nulls, so that they still count', () => {
    expect(canonicalJson([1, undefined, null])).toBe('[1,null,null]');
  });

  it('writes keys as JSON, so that no member name can pass for another', () => {
    expect(canonicalJson({ 'a":1,"b': 2 })).toBe('{"a\\":1,\\"b":2}');
    expect(canonicalJson({ b: 1, a: { d: 1, c: 2 } })).toBe('{"a":{"c":2,"d":1},"b":1}');
  });

  it('hashes to SHA-256 hex', () => {
    expect(requestHash({})).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('a stored refusal', () => {
  it('is answered again as the same error', () => {
    const again = storedError({ error: { code: 'CONFLICT', message: 'Out of stock', details: { items: 'x' } } });
    expect(again).toBeInstanceOf(AppError);
    expect(again).toMatchObject({ code: 'CONFLICT', status: 409, message: 'Out of stock', details: { items: 'x' } });
  });

  it('with a code the service does not know is a corrupted record, not an answer', () => {
    expect(() => storedError({ error: { code: 'TEAPOT' as 'CONFLICT', message: 'x' } })).toThrow('Unknown stored error code TEAPOT');
    expect(() => storedError({ error: { code: 'toString' as 'CONFLICT', message: 'x' } })).toThrow(/Unknown stored error code/);
  });
});
