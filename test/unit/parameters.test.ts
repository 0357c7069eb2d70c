import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/shared/errors.js';
import { LIMIT_DEFAULT, LIMIT_MAX, PAGE_DEFAULT, PAGE_MAX, pageInput, pageWindow, paginationMeta } from '../../src/shared/pagination.js';
import { booleanParam, enumParam, fieldPath, idParam, illFormedStringAt, intParam, parseInput, textParam } from '../../src/shared/validation.js';

// The parameters both faces take (src/shared/validation.ts, pagination.ts): REST's strings and
// GraphQL's typed values read by one rule each, and every bad one named in one refusal.

/** What `schema` makes of `value`, or the message it refuses it with. */
function read(schema: z.ZodType, value: unknown): unknown {
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : { refused: parsed.error.issues[0]?.message };
}

/** The details of parseInput's VALIDATION_ERROR. */
function details(schema: z.ZodType, raw: object, nullIsValue = false): unknown {
  try {
    parseInput(schema, raw, undefined, nullIsValue);
  } catch (error) {
    if (error instanceof AppError) return error.details;
    throw error;
  }
  throw new Error('accepted');
}

describe('integers', () => {
  const page = intParam(1, 100);
  it('take a number, or text of plain decimal digits', () => {
    expect([read(page, 7), read(page, '7'), read(page, '100'), read(page, '1')]).toEqual([7, 7, 100, 1]);
  });

  it.each(['07', '+7', ' 7', '7 ', '7.0', '1e1', '0x7', '٧', '', '-1'])('refuse the text %j', (text) => {
    expect(read(page, text)).toEqual({ refused: 'must be an integer between 1 and 100' });
  });

  it('refuse numbers out of range or with a fraction', () => {
    for (const n of [0, 101, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) expect(read(page, n)).toEqual({ refused: 'must be an integer between 1 and 100' });
  });

  it('without an upper bound, say only the lower one', () => {
    expect(read(intParam(0), -1)).toEqual({ refused: 'must be an integer ≥ 0' });
  });
});

describe('booleans', () => {
  it('take true and false, and the words true, false, 1 and 0 in any case', () => {
    expect([true, false, 'true', 'FALSE', ' 1 ', '0'].map((v) => read(booleanParam, v))).toEqual([true, false, true, false, true, false]);
  });

  it('refuse other words, an object’s members among them', () => {
    for (const word of ['yes', 'on', '', 'constructor', 'toString', '__proto__']) expect(read(booleanParam, word)).toEqual({ refused: 'must be one of true, false, 1, 0' });
  });
});

describe('enumerations', () => {
  const sort = enumParam(['NEWEST', 'PRICE_ASC']);
  it('take only their values, spelt exactly', () => {
    expect(read(sort, 'NEWEST')).toBe('NEWEST');
    expect(read(sort, 'newest')).toEqual({ refused: 'must be one of NEWEST, PRICE_ASC' });
    expect(read(sort, 'toString')).toEqual({ refused: 'must be one of NEWEST, PRICE_ASC' });
  });
});

describe('free text (a search term)', () => {
  const search = textParam(10);
  it('reads a blank term as none, and trims the rest', () => {
    expect(read(search, '   ')).toBeUndefined();
    expect(read(search, '  laptop ')).toBe('laptop');
  });

  it('refuses control characters, tabs and line breaks included', () => {
    for (const char of ['\u0000', '\t', '\n', '\r', '\u001f', '\u007f']) expect(read(search, `a${char}b`)).toEqual({ refused: 'must not contain control characters' });
  });

  it('refuses text over its length', () => {
    expect(read(search, 'x'.repeat(11))).toEqual({ refused: 'must be at most 10 characters' });
  });
});

describe('identifiers', () => {
  it('are 1 to 100 letters, digits, - or _', () => {
    expect(idParam.safeParse('ck_abc-123').success).toBe(true);
    expect(idParam.safeParse('x'.repeat(100)).success).toBe(true);
    for (const bad of ['', 'x'.repeat(101), 'a b', 'a/b', '../etc', 'ă']) expect(idParam.safeParse(bad).success, bad).toBe(false);
  });
});

describe('reading a request’s parameters', () => {
  const schema = z.object({ page: intParam(1, 10).default(1), sort: enumParam(['A', 'B']).optional(), search: textParam(5).optional() }).strict();

  it('names every bad parameter at once, in the house wording', () => {
    expect(details(schema, { page: '0', sort: 'C', search: 'toolong' })).toEqual({
      page: 'must be an integer between 1 and 10',
      sort: 'must be one of A, B',
      search: 'must be at most 5 characters',
    });
  });

  it('names a parameter it does not know as such, whatever it is called', () => {
    expect(details(schema, JSON.parse('{"pgae":"2","__proto__":"x","constructor":"y"}'))).toEqual(
      JSON.parse('{"pgae":"is not a recognised parameter","__proto__":"is not a recognised parameter","constructor":"is not a recognised parameter"}'),
    );
  });

  it('reads null as not given, unless null is a value (an update clearing a field)', () => {
    expect(parseInput(schema, { page: null, sort: null })).toEqual({ page: 1 });
    const update = z.object({ note: z.string().nullable().optional() }).strict();
    expect(parseInput(update, { note: null }, undefined, true)).toEqual({ note: null });
  });

  it('says a missing field is required, and a wrong type what it must be', () => {
    const body = z.object({ quantity: z.number().int(), items: z.array(z.object({ id: z.string() })) }).strict();
    expect(details(body, { items: [{ id: 1 }] })).toEqual({ quantity: 'is required', 'items[0].id': 'must be a string' });
  });

  it('writes a nested field as a client would', () => {
    expect(fieldPath(['items', 1, 'quantity'])).toBe('items[1].quantity');
    expect(fieldPath(['shippingAddress', 'city'])).toBe('shippingAddress.city');
    expect(fieldPath([0])).toBe('[0]');
  });
});

describe('well-formed Unicode', () => {
  it('finds the first string holding a lone surrogate, by its path', () => {
    expect(illFormedStringAt({ items: [{ name: 'ok' }, { name: 'bad\ud800' }] })).toBe('items[1].name');
    expect(illFormedStringAt('\udc00')).toBe('');
    expect(illFormedStringAt({ ['key\ud800']: 1 })).toBe('key\ufffd');
  });

  it('takes well-formed pairs (an emoji) and every other value', () => {
    expect(illFormedStringAt({ a: '🌻', b: [1, null, true, { c: 'ă' }] })).toBeNull();
  });

  it('walks a value nested far deeper than the call stack would allow', () => {
    let deep: unknown = 'bottom\ud800';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(illFormedStringAt(deep)).toMatch(/^(\[0\]){200000}$/);
  });
});

describe('pages', () => {
  it('default to page 1 of 12, and take at most 100 a page', () => {
    expect([PAGE_DEFAULT, LIMIT_DEFAULT, LIMIT_MAX, PAGE_MAX]).toEqual([1, 12, 100, 2 ** 31 - 1]);
    expect(pageInput.parse({})).toEqual({ page: 1, limit: 12 });
    expect(pageInput.safeParse({ limit: 101 }).success).toBe(false);
    expect(pageInput.safeParse({ page: 2 ** 31 }).success).toBe(false);
  });

  it('skip the pages before, and know a page past any table without asking', () => {
    expect(pageWindow({ page: 3, limit: 20 })).toEqual({ skip: 40, take: 20 });
    expect(pageWindow({ page: PAGE_MAX, limit: 100 })).toBeNull();
  });

  it('count the pages a total makes, rounding up', () => {
    expect(paginationMeta({ page: 1, limit: 12 }, 25)).toEqual({ page: 1, limit: 12, total: 25, totalPages: 3 });
    expect(paginationMeta({ page: 1, limit: 12 }, 24).totalPages).toBe(2);
    expect(paginationMeta({ page: 1, limit: 12 }, 0).totalPages).toBe(0);
  });
});
