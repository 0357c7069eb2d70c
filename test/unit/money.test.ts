import { describe, expect, it } from 'vitest';
import { allocate, exactDecimal, money, MONEY_MAX, round2, sum, toColumn, ZERO } from '../../src/rules/money.js';
import { moneyParam } from '../../src/shared/validation.js';

// Money (src/rules/money.ts): exact decimals from the client's text to the column, rounded to the
// cent only on purpose, a tie away from zero; a discount split over lines to the exact cent.

const cents = (values: { toFixed(n: number): string }[]) => values.map((v) => v.toFixed(2));

describe('reading a client’s number', () => {
  it('reads decimal text digit for digit, never through a binary float', () => {
    expect(exactDecimal('0.1')!.plus(exactDecimal('0.2')!).toString()).toBe('0.3');
    expect(exactDecimal('90.99')!.times(3).toString()).toBe('272.97');
    expect(exactDecimal('12345678901234567890.12')!.toFixed(2)).toBe('12345678901234567890.12');
  });

  it('reads a JSON number as the shortest decimal that reads back as it', () => {
    expect(exactDecimal(0.1)!.toString()).toBe('0.1');
    expect(exactDecimal(90.99)!.toString()).toBe('90.99');
    expect(exactDecimal(1e21)!.toString()).toBe('1e+21');
  });

  it('takes the forms JSON and GraphQL write numbers in, with spaces around', () => {
    for (const [text, value] of [['.5', '0.5'], ['5.', '5'], ['1e3', '1000'], ['2.5E-1', '0.25'], ['-7', '-7'], ['+7', '7'], [' 12.30 ', '12.3']]) {
      expect(exactDecimal(text)?.toString(), text).toBe(value);
    }
  });

  it('refuses anything else as no number', () => {
    for (const value of ['', ' ', 'abc', '1,5', '0x10', '1 000', 'Infinity', 'NaN', '1e', '--1', '1e12345678901', '1'.repeat(101), NaN, Infinity, -Infinity, null, undefined, true, {}, [1]]) {
      expect(exactDecimal(value), String(value)).toBeUndefined();
    }
  });

  it('takes a decimal already parsed, if it is finite', () => {
    expect(exactDecimal(money('4.20'))!.toString()).toBe('4.2');
    expect(exactDecimal(money(Infinity))).toBeUndefined();
  });
});

describe('rounding', () => {
  it('rounds to the cent, a tie away from zero on either side', () => {
    expect(cents([round2('0.005'), round2('-0.005'), round2('0.0049999'), round2('10.125'), round2('-10.125')])).toEqual(['0.01', '-0.01', '0.00', '10.13', '-10.13']);
  });

  it('writes exactly two decimals into a NUMERIC(12, 2) column', () => {
    expect(toColumn('5')).toBe('5.00');
    expect(toColumn('1.999')).toBe('2.00');
    expect(toColumn(0.1)).toBe('0.10');
    expect(toColumn(MONEY_MAX)).toBe('9999999999.99');
  });

  it('multiplies the largest price by the largest quantity and a VAT rate without rounding on the way', () => {
    const product = MONEY_MAX.times(9_999_999).times('0.21');
    // 21 significant digits, where a double keeps 17.
    expect(product.toFixed()).toBe('20999997899979000.0021');
  });

  it('rounds half away from zero, exactly', () => {
    expect(round2('2.345').toFixed(2)).toBe('2.35');
    expect(round2('-2.345').toFixed(2)).toBe('-2.35');
    expect(round2('2.3449999').toFixed(2)).toBe('2.34');
    // 1.005 is 1.00499999999999989… as a binary float: decimal money must not care.
    expect(round2('1.005').toFixed(2)).toBe('1.01');
  });
});

describe('sums', () => {
  it('adds exactly, and an empty list is zero', () => {
    expect(sum(['0.1', '0.2', 0.3]).toString()).toBe('0.6');
    expect(sum([]).equals(ZERO)).toBe(true);
  });
});

describe('splitting an amount over lines', () => {
  /** A small deterministic generator, so a failure can be replayed. */
  function* randomCases(seed: number, count: number) {
    let state = seed;
    const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < count; i++) {
      const weights = Array.from({ length: 1 + Math.floor(next() * 6) }, () => (Math.floor(next() * 100_000) / 100).toFixed(2));
      const amount = (Math.floor(next() * 50_000) / 100).toFixed(2);
      yield { amount, weights };
    }
  }

  it('gives shares that add up to the amount exactly, each in whole cents', () => {
    for (const { amount, weights } of randomCases(7, 300)) {
      const shares = allocate(amount, weights);
      expect(sum(shares).toFixed(2), `${amount} over ${weights}`).toBe(money(amount).toFixed(2));
      for (const share of shares) expect(share.decimalPlaces()).toBeLessThanOrEqual(2);
    }
  });

  it('keeps each share within a cent of its exact proportion', () => {
    for (const { amount, weights } of randomCases(11, 300)) {
      const total = sum(weights);
      if (total.isZero()) continue;
      allocate(amount, weights).forEach((share, i) => {
        const exact = money(amount).times(weights[i]!).dividedBy(total);
        expect(share.minus(exact).abs().lessThan('0.01'), `${amount} over ${weights}, line ${i}`).toBe(true);
      });
    }
  });

  it('gives the cents left over to the largest weights, the earlier line on a tie', () => {
    expect(cents(allocate('0.02', ['1', '3', '3', '2']))).toEqual(['0.00', '0.01', '0.01', '0.00']);
    expect(cents(allocate('1.00', ['1', '1', '1']))).toEqual(['0.34', '0.33', '0.33']);
  });

  it('gives nothing to lines of no weight, and nothing at all when every weight is zero', () => {
    expect(cents(allocate('5.00', ['0', '2', '0']))).toEqual(['0.00', '5.00', '0.00']);
    expect(cents(allocate('5.00', ['0', '0']))).toEqual(['0.00', '0.00']);
    expect(allocate('5.00', [])).toEqual([]);
  });

  it('allocates a discount to the cent, the leftover cents to the largest lines', () => {
    expect(allocate('0.05', ['1', '1', '1']).map((m) => m.toFixed(2))).toEqual(['0.02', '0.02', '0.01']);
    expect(allocate('10.97', ['59.97', '37.25', '12.50']).map((m) => m.toFixed(2))).toEqual(['6.00', '3.73', '1.24']);
    expect(allocate('0.01', ['1', '5', '5']).map((m) => m.toFixed(2))).toEqual(['0.00', '0.01', '0.00']);
    expect(allocate('0', ['0', '0']).map((m) => m.toFixed(2))).toEqual(['0.00', '0.00']);
  });
});

describe('a money parameter (price bounds)', () => {
  const param = moneyParam();
  const read = (value: unknown) => {
    const parsed = param.safeParse(value);
    return parsed.success ? parsed.data.toString() : parsed.error.issues[0]!.message;
  };
  const REFUSED = 'must be a decimal number from 0 to 9999999999.99 with at most 2 decimals';

  it('takes amounts from 0 to the largest price, as numbers or text', () => {
    expect([read(0), read('9999999999.99'), read(12.5), read('12.50')]).toEqual(['0', '9999999999.99', '12.5', '12.5']);
  });

  it('refuses negative amounts, amounts over the largest price and fractions of a cent', () => {
    for (const value of [-0.01, '10000000000', '0.001', '1e-3', 'ten', '']) expect(read(value), String(value)).toBe(REFUSED);
  });

  it('reads 10, 10.0 and 10.00 as one amount', () => {
    expect(new Set([read(10), read('10.0'), read('10.00'), read('1e1')])).toEqual(new Set(['10']));
  });
});
